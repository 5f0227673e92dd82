"""Test-suite setup: runtime shape/dtype checking of every jaxkit function (jaxtyping + beartype).

The import hook must be installed before ``jaxkit`` is first imported, which is why it lives here.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from jaxtyping import install_import_hook  # noqa: E402

install_import_hook("jaxkit", "beartype.beartype")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def subprocess_env() -> dict:
    """Environment for subprocess tests: the repo on PYTHONPATH, no inherited XLA flags, Agg backend."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("XLA_FLAGS", None)
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("JAX_PLATFORMS", "cpu")
    return env


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable
