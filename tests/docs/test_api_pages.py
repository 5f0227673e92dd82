"""API pages: every public name documented under its public path, an example on each subpackage page.

The examples themselves run in `mkdocs build` (docs/hooks/tutorials.py shows their output; a failing example
fails the build, which CI runs with --strict), not here: together they cost ~20 s of CPU.
"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api"
PAGES = sorted(API.glob("*.md"))
PACKAGE_PAGES = [p for p in PAGES if (ROOT / "jaxkit" / p.stem / "__init__.py").is_file()]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(
        f"jaxkit_docs_{name}", ROOT / "docs" / "hooks" / f"{name}.py"
    )
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_hook = _load("api")


def test_every_subpackage_has_a_page():
    packages = sorted(p.parent.name for p in (ROOT / "jaxkit").glob("*/__init__.py"))
    assert [p.stem for p in PACKAGE_PAGES] == packages


@pytest.mark.parametrize("page", PACKAGE_PAGES, ids=[p.stem for p in PACKAGE_PAGES])
def test_page_documents_exactly_the_public_names(page):
    text = page.read_text()
    package = f"jaxkit.{page.stem}"
    assert not re.search(rf"^::: {re.escape(package)}\._", text, re.M), "point at public names, not _modules"
    assert "## Example" in text and "```python" in text, "each subpackage page opens with a short example"
    expanded, missing = api_hook.expand(text, package)
    assert not missing, f"public names of {package} not on docs/api/{page.name}: {missing}"
    shown = set(re.findall(rf"^::: ({re.escape(package)}\.[\w.]+)$", expanded, re.M))
    public = {f"{package}.{name}" for names in api_hook.public_names(package).values() for name in names}
    # every rendered name is public (namespace modules such as jaxkit.pde.burgers show their members)
    for ident in shown:
        head = ".".join(ident.split(".")[:3])
        assert ident in public or head in public or "._" in ident, ident
