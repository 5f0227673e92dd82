"""Test-suite setup: runtime shape/dtype checking of every jaxkit function (jaxtyping + beartype), and fast
XLA compilation.

The import hook must be installed before ``jaxkit`` is first imported, which is why it lives here.

``TEST_XLA_FLAGS``: the suite's shapes are small, so XLA:CPU compilation (LLVM optimization passes) dominates
its wall time; tests compile at LLVM optimization level 0 (about half the time of the heavy tests) and with XLA:CPU's
elemental loop emitter instead of its MLIR fusion emitters (``--xla_cpu_use_fusion_emitters=false``: the
``lno_suite`` smoke run 71 s -> 46 s, ``ssm_expressivity`` 75 s -> 56 s, measured 2026-12-06 on 2 cores), in one
LLVM module per program (``--xla_cpu_parallel_codegen_split_count=1``: the suite's two workers already hold both
cores; smoke runs a further 5-10 % faster). This
changes code generation only, not the maths (no fast-math: ``xla_cpu_enable_fast_math`` stays off); tolerances are
unaffected, and bit-identity tests compare runs made under the same flags. Benchmarks and experiments run with
XLA's defaults. Subprocess tests get the same flag through ``subprocess_env`` (tests that need more append to it).
"""

import os

TEST_XLA_FLAGS = " ".join(
    (
        "--xla_backend_optimization_level=0",
        "--xla_cpu_use_fusion_emitters=false",
        "--xla_cpu_parallel_codegen_split_count=1",
    )
)


os.environ["XLA_FLAGS"] = " ".join(f for f in (os.environ.get("XLA_FLAGS", ""), TEST_XLA_FLAGS) if f)
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
    """Environment for subprocess tests: the repo on PYTHONPATH, the suite's XLA flags only, Agg backend."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["XLA_FLAGS"] = TEST_XLA_FLAGS
    env["MPLBACKEND"] = "Agg"
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("JAX_PLATFORMS", "cpu")
    return env


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable


# Tests measured at 20 s or more (wall, 2 cores). They are collected first so that pytest-xdist hands them out
# at the start of the run and the short tests fill in around them; left in file order, one of them starting last
# keeps a worker busy alone at the end of the run.
_LONG = (
    "tests/experiments/test_smoke.py::test_smoke_run_end_to_end_and_report",
    "tests/docking/test_docking_confidence.py",
    "tests/docking/test_docking_batch.py",
    "tests/experiments/test_runner.py::test_run_all_child_process_really_runs",
    "tests/distributed/test_distributed_runs.py",
    "tests/docking/test_docking_cli.py::test_train_then_dock",
    "tests/forecast/test_forecast_model.py::test_trained_on_ar1",
    "tests/forecast/test_forecast_skill.py",
    "tests/ssm/test_ssm_probe.py",
    "tests/docs/test_site.py",
    "tests/train/test_checkpoint.py::test_sigkill",
    "tests/train/test_multiprocess.py",
    "tests/forecast/test_forecast_bad_inputs.py::test_frames_give",
    "tests/docking/test_docking_dock.py",
    "tests/docking/test_docking_model.py::test_rotating",
    "tests/stability/test_stability_seeds.py",
    "tests/operators/test_operators_models.py::test_ensemble",
    "tests/docking/test_docking_rank.py",
    "tests/test_architecture.py::test_public_signatures",
    "tests/docking/test_real_eval.py::test_random_and_model",
    "tests/test_packaging.py::test_a_bare_clone",
)


def pytest_collection_modifyitems(config, items):
    long_first = [it for it in items if it.nodeid.startswith(_LONG) or it.get_closest_marker("slow")]
    chosen = {id(it) for it in long_first}
    items[:] = long_first + [it for it in items if id(it) not in chosen]
