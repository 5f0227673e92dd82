"""Fresh-process worker of the benchmark harness: ``python experiments/_worker.py SPEC.json``.

Runs as a script (not ``-m``) so that ``experiments/__init__.py`` — which imports jaxkit and JAX — is not executed:
the ``experiments`` package is registered as a bare namespace holding only the registry names, and the workload's
module is imported from it. The process then holds exactly what that implementation imports.
"""

import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _bare_package() -> None:
    pkg = types.ModuleType("experiments")
    pkg.__path__ = [str(HERE)]
    sys.modules["experiments"] = pkg
    from experiments import _registry  # stdlib only

    for name in ("Anchor", "Bench", "Experiment", "register", "register_bench", "BENCHES", "EXPERIMENTS"):
        setattr(pkg, name, getattr(_registry, name))


if __name__ == "__main__":
    sys.path = [
        p for p in sys.path if Path(p or ".").resolve() != HERE
    ]  # the repo root comes from PYTHONPATH
    _bare_package()
    from experiments._harness import worker_main

    sys.exit(worker_main(sys.argv[1]))
