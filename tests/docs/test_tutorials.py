"""Every docs tutorial runs top to bottom (all ```python blocks in one fresh interpreter); so does the README."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted(p for p in (ROOT / "docs" / "tutorials").glob("*.md") if p.name != "index.md")
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> str:
    return "\n\n".join(BLOCK.findall(path.read_text()))


def _run(code: str, tmp_path: Path, env: dict, python: str, name: str) -> None:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    proc = subprocess.run([python, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"{name} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, tmp_path, subprocess_env, python):
    code = python_blocks(path)
    assert code.strip(), f"{path.name} has no python code blocks"
    _run(code, tmp_path, subprocess_env, python, path.stem)


def test_readme_library_snippet_runs(tmp_path, subprocess_env, python):
    code = python_blocks(ROOT / "README.md")
    assert "fit(" in code
    _run(code + "\nimport jax.numpy as jnp\nerr = float(jnp.mean((jax.vmap(result.model)(x) - x**2) ** 2))\n"
         "assert err < 1e-2, err\n", tmp_path, subprocess_env, python, "readme")


def test_every_tutorial_is_linked_from_the_index():
    index = (ROOT / "docs" / "tutorials" / "index.md").read_text()
    for p in TUTORIALS:
        assert f"({p.name})" in index, f"{p.name} is not linked from docs/tutorials/index.md"
