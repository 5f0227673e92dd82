"""Every docs tutorial runs top to bottom (all ```python blocks in one fresh interpreter); so does the README.

The tutorials run through ``docs/hooks/tutorials.py:run_tutorial``, the function the docs build uses to show each
block's output and figures, so what is tested here is what the site shows. Running them takes about 8 CPU-minutes,
and the docs build (``mkdocs build --strict``, part of CI) already runs every tutorial with the same checks and
fails on any of them, so the tutorial runs carry the ``tutorials`` marker, which the default test run deselects
(``pytest -m tutorials`` runs them). The README snippet and the hook's own checks run by default.
"""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "jaxkit_docs_tutorials", ROOT / "docs" / "hooks" / "tutorials.py"
)
tutorials_hook = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tutorials_hook)
TUTORIALS = sorted(p for p in (ROOT / "docs" / "tutorials").glob("*.md") if p.name != "index.md")
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> str:
    return "\n\n".join(BLOCK.findall(path.read_text()))


def _run(code: str, tmp_path: Path, env: dict, python: str, name: str) -> None:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    proc = subprocess.run(
        [python, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        pytest.fail(f"{name} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


@pytest.mark.tutorials
@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, tmp_path, subprocess_env, python):
    assert python_blocks(path).strip(), f"{path.name} has no python code blocks"
    run = tutorials_hook.run_tutorial(path, tmp_path, env=subprocess_env, python=python)
    if not run.ok:
        pytest.fail(run.failure())
    # every figure a tutorial saves is captured for the page (the build shows it under the block that saved it)
    assert not tutorials_hook.figure_problems(path, run)


def test_every_tutorial_has_code_and_saves_a_figure():
    for path in TUTORIALS:
        code = python_blocks(path)
        assert code.strip(), f"{path.name} has no python code blocks"
        assert tutorials_hook.SAVEFIG.search(code), f"{path.name} saves no figure"


def _fake_run(path, images):
    blocks = [tutorials_hook.BlockOutput("", {name: b"png" for name in images})]
    return tutorials_hook.TutorialRun(path, blocks, 0, "", "", 0.0)


def test_the_build_refuses_a_tutorial_without_its_figure(tmp_path):
    page = tmp_path / "t.md"
    page.write_text('```python\nfig.savefig("a.png")\nfig.savefig("b.png")\n```\n')
    assert tutorials_hook.figure_problems(page, _fake_run(page, ["a.png", "b.png"])) == []
    missing = tutorials_hook.figure_problems(page, _fake_run(page, ["a.png"]))
    assert len(missing) == 1 and "b.png" in missing[0]
    none = tutorials_hook.figure_problems(page, _fake_run(page, []))
    assert any("draws no figure" in m for m in none)


def test_readme_library_snippet_runs(tmp_path, subprocess_env, python):
    code = python_blocks(ROOT / "README.md")
    assert "fit(" in code
    _run(
        code + "\nimport jax.numpy as jnp\nerr = float(jnp.mean((jax.vmap(result.model)(x) - x**2) ** 2))\n"
        "assert err < 1e-2, err\n",
        tmp_path,
        subprocess_env,
        python,
        "readme",
    )


def test_every_tutorial_is_linked_from_the_index():
    index = (ROOT / "docs" / "tutorials" / "index.md").read_text()
    for p in TUTORIALS:
        assert f"({p.name})" in index, f"{p.name} is not linked from docs/tutorials/index.md"


def test_build_shows_each_blocks_output_and_figures(tmp_path, subprocess_env, python):
    """The hook's contract on a small page: outputs under their block, saved figures linked, errors located."""
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```python\nprint('one')\n```\n\ntext\n\n```python\n"
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nfig.savefig('f.png')\n"
        "print('two')\n```\n\n```python\nx = 1\n```\n"
    )
    run = tutorials_hook.run_tutorial(page, tmp_path / "work", env=subprocess_env, python=python)
    assert run.ok, run.failure()
    assert [b.stdout for b in run.blocks] == ["one\n", "two\n", ""]
    assert [list(b.images) for b in run.blocks] == [[], ["f.png"], []]
    assert run.blocks[1].images["f.png"].startswith(b"\x89PNG")
    md = tutorials_hook.annotate(page.read_text(), run, "figures/page")
    assert md.index("print('one')") < md.index('```text title="output"\none\n```') < md.index("text\n")
    assert md.index("print('two')") < md.index("![f.png](figures/page/f.png)") < md.index("x = 1")
    page.write_text("# t\n\n```python\nimport math\n\nmath.sqrt(-1)\n```\n")
    run = tutorials_hook.run_tutorial(page, tmp_path / "work2", env=subprocess_env, python=python)
    assert not run.ok and f'File "{page}", line 6' in run.stderr and "ValueError" in run.stderr
