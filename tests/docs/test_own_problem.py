"""Each tutorial ends with "Your own problem" (executed with the docs, see test_tutorials.py), and the public
constants that name what a subpackage offers are documented as what they hold: in the subpackage docstring, in
the API pages (the attribute docstring griffe reads, as mkdocstrings renders it) and in ``help()``."""

import importlib
import pydoc
import re
from pathlib import Path

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted(p for p in (ROOT / "docs" / "tutorials").glob("*.md") if p.name != "index.md")

# constant -> (subpackage, words its documentation must use to say what it holds)
CONSTANTS = {
    "VARIANTS": (
        "ssm",
        ["time_invariant", "selective_nonneg", "selective_signed", "selective_complex", "dense"],
    ),
    "TASKS": ("ssm", ["task", "register_task"]),
    "NETWORKS": ("dynamics", ["linear", "relu_scalar", "attention_merged", "quadratic"]),
    "DATASETS": ("pde", ["make_dataset", "register_dataset", "burgers"]),
}


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_ends_with_your_own_problem(path):
    text = path.read_text()
    sections = re.split(r"^## ", text, flags=re.M)
    last = sections[-1]
    title = last.splitlines()[0]
    assert re.match(r"(\d+\. )?Your own problem", title), f"{path.name}: last section is {title!r}"
    assert "```python" in last, f"{path.name}: the 'Your own problem' section has no executed code block"


@pytest.fixture(scope="module")
def griffe_jaxkit():
    return griffe.load("jaxkit", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False)


@pytest.mark.parametrize("name", sorted(CONSTANTS))
def test_constant_documented_as_what_it_holds(name, griffe_jaxkit):
    sub, words = CONSTANTS[name]
    pkg = importlib.import_module(f"jaxkit.{sub}")
    value = getattr(pkg, name)
    # the subpackage docstring names the constant and says what it holds
    init_doc = pkg.__doc__
    assert name in init_doc, f"jaxkit.{sub} docstring does not mention {name}"
    paragraph = next(p for p in init_doc.split("\n\n") if name in p)
    assert any(w in paragraph for w in words), f"jaxkit.{sub} docstring names {name} without its contents"
    # the API page's entry: the attribute docstring mkdocstrings renders
    doc = griffe_jaxkit[f"{sub}.{name}"].docstring
    assert doc is not None, f"jaxkit.{sub}.{name} has no attribute docstring"
    assert all(w in doc.value for w in words), (name, doc.value)
    # help() describes it, not the builtin tuple/dict
    rendered = pydoc.render_doc(value)
    assert "Built-in immutable sequence" not in rendered and "new empty dictionary" not in rendered
    assert words[0] in pydoc.plain(rendered)
    # and what is documented is what it holds
    keys = list(value)
    assert keys and all(isinstance(k, str) for k in keys)
    if name in ("VARIANTS", "NETWORKS"):
        assert all(k in doc.value for k in keys), (name, keys)
