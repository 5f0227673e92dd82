"""What a user gets from a clone or from the wheel, checked without anything beside the repository.

- The wheel installs the single top-level package ``jaxkit`` (kernels live in ``jaxkit.kernels``; ``experiments/``
  runs from the repository and is not installed) and carries the data the library reads (WikiText-2, the shipped
  docking model).
- ``import jaxkit`` and every subpackage but the extras' own import with only the core dependencies present: a
  subprocess refuses to import any third-party module whose distribution the core requirements do not pull in.
- Every third-party module the library imports is declared (core or an extra).
- A bare copy of the repository (tracked files only, nothing beside it) finds every input of every experiment's
  quick preset: each experiment's ``inputs`` check runs there, and no source names a folder outside the repository.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
WIKITEXT_SHA256 = {
    "valid.txt": "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8",
    "test.txt": "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0",
}
# Subpackages whose import needs an extra (their dependencies are declared there).
EXTRA_SUBPACKAGES = {"docking": "docking"}


def _tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_shipped_wikitext_loads_by_default_with_its_licence():
    """The loader's default is the copy inside the package (no skip: a missing file fails here)."""
    from jaxkit.stability import WIKITEXT2_DIR, load_wikitext2

    assert WIKITEXT2_DIR.is_relative_to(ROOT / "jaxkit")
    for name, digest in WIKITEXT_SHA256.items():
        assert hashlib.sha256((WIKITEXT2_DIR / name).read_bytes()).hexdigest() == digest, name
    assert "CC BY-SA 3.0" in (WIKITEXT2_DIR / "README.md").read_text()
    assert "Attribution-ShareAlike 3.0" in (WIKITEXT2_DIR / "LICENSE").read_text()
    ds = load_wikitext2()
    text = (WIKITEXT2_DIR / "valid.txt").read_text(encoding="utf-8")
    assert len(ds["train"]) == len(text)
    assert "".join(ds["vocab"][i] for i in ds["train"][:3000]) == text[:3000]
    assert len(ds["eval"]) == len((WIKITEXT2_DIR / "test.txt").read_text(encoding="utf-8"))
    assert ds["eval"].max() < ds["vocab_size"]


def test_no_source_reads_a_folder_beside_the_repository():
    """``../shared`` exists on the project's machines only: no code path may name it (or climb above the root)."""
    bad = []
    for rel in _tracked_files():
        if not rel.endswith((".py", ".sh", ".toml", ".yml", ".cfg")) or rel.startswith(
            "tests/test_packaging.py"
        ):
            continue
        text = (ROOT / rel).read_text(encoding="utf-8", errors="replace")
        for needle in ('"shared"', "'shared'", "../shared", "parent.parent.parent"):
            if needle in text:
                bad.append(f"{rel}: {needle}")
    assert bad == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (whl,) = out.glob("jaxkit-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_installs_only_jaxkit_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"jaxkit"}, top
    for needed in (
        "jaxkit/kernels/spectral_mix.py",
        "jaxkit/kernels/linear_scan.py",
        "jaxkit/stability/data/wikitext-2/valid.txt",
        "jaxkit/stability/data/wikitext-2/test.txt",
        "jaxkit/stability/data/wikitext-2/LICENSE",
    ):
        assert needed in names, needed
    assert any(n.startswith("jaxkit/docking/models/") and n.endswith("manifest.json") for n in names) or any(
        n.startswith("jaxkit/docking/models/") for n in names
    )


def _core_distributions() -> set[str]:
    """The distributions ``pip install jaxkit`` (no extras) brings: the core requirements, recursively."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in _pyproject()["project"]["dependencies"]]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = metadata.distribution(req.name).metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        todo += [Requirement(r) for r in (metadata.requires(req.name) or [])]
    return seen


_BLOCKER = r"""
import importlib.abc, importlib.metadata as md, json, sys
allowed = set(json.loads(sys.argv[1]))
owners = md.packages_distributions()
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        dists = {d.lower().replace("_", "-") for d in owners.get(top, [])}
        if top != "jaxkit" and dists and not (dists & allowed):
            raise ModuleNotFoundError(f"{name} (distribution {sorted(dists)}) is not a core dependency", name=name)
        return None
sys.meta_path.insert(0, Block())
import jaxkit
for sub in json.loads(sys.argv[2]):
    __import__(f"jaxkit.{sub}")
print("ok")
"""


def test_import_with_only_the_core_dependencies():
    core = _core_distributions()
    subs = sorted(
        p.name
        for p in (ROOT / "jaxkit").iterdir()
        if (p / "__init__.py").exists() and p.name not in EXTRA_SUBPACKAGES
    )
    r = subprocess.run(
        [sys.executable, "-c", _BLOCKER, json.dumps(sorted(core)), json.dumps(subs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
    # the Flax front-end is an extra: its absence must give an error that says what to install
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _BLOCKER + "\nfrom jaxkit.operators import FlaxFNO\n",
            json.dumps(sorted(core)),
            "[]",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0 and "jaxkit[nnx]" in r.stderr


def _third_party_imports(folder: Path) -> dict[str, set[str]]:
    """Top-level third-party module names imported anywhere under ``folder`` -> the files importing them."""
    stdlib = set(sys.stdlib_module_names)
    found: dict[str, set[str]] = {}
    for p in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                top = n.split(".")[0]
                if top not in stdlib and top not in {"jaxkit", "experiments", "__future__"}:
                    found.setdefault(top, set()).add(str(p.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared():
    project = _pyproject()["project"]
    declared = {Requirement(r).name.lower().replace("_", "-") for r in project["dependencies"]}
    for reqs in project["optional-dependencies"].values():
        declared |= {
            Requirement(r).name.lower().replace("_", "-") for r in reqs if not r.startswith("jaxkit[")
        }
    owners = metadata.packages_distributions()
    missing = {}
    for folder in ("jaxkit", "experiments"):
        for mod, files in _third_party_imports(ROOT / folder).items():
            dists = {d.lower().replace("_", "-") for d in owners.get(mod, [mod])}
            if not dists & declared and not (
                mod == "torch" or mod.startswith(("neuralop", "jax_cfd", "jaxlie"))
            ):
                missing[mod] = sorted(files)[:3]
    assert missing == {}
    assert "chex" not in declared  # declared once and never imported
    assert "flax" not in {Requirement(r).name for r in project["dependencies"]}


@pytest.mark.slow
def test_a_bare_clone_finds_every_experiments_inputs(tmp_path):
    """Copy the tracked files alone into an empty folder (no ``shared/`` beside it) and load every experiment's
    inputs there, for every preset that declares them."""
    clone = tmp_path / "nothing-beside" / "jaxkit"
    for rel in _tracked_files():
        dst = clone / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    code = (
        "import sys, jaxkit; from pathlib import Path\n"
        "assert Path(jaxkit.__file__).resolve().is_relative_to(Path.cwd()), jaxkit.__file__\n"
        "from experiments._registry import EXPERIMENTS, discover\n"
        "discover(); n = 0\n"
        "for name, exp in sorted(EXPERIMENTS.items()):\n"
        "    if exp.inputs is not None:\n"
        "        exp.inputs(exp.presets['quick']); n += 1\n"
        "print('checked', n, 'of', len(EXPERIMENTS))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(clone)},
    )
    assert r.returncode == 0, r.stderr[-4000:]
    assert "checked 5 of" in r.stdout, r.stdout
