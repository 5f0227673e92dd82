"""Runnable reproductions and benchmarks: ``python -m experiments list | run | bench | report``.

Experiment modules live beside this file (``experiments/<name>.py``) and call :func:`register` /
:func:`register_bench` at import time.
"""

from ._context import RunContext, to_jsonable, write_json
from ._registry import BENCHES, EXPERIMENTS, Anchor, Bench, Experiment, discover, register, register_bench

__all__ = [
    "BENCHES",
    "EXPERIMENTS",
    "Anchor",
    "Bench",
    "Experiment",
    "RunContext",
    "discover",
    "register",
    "register_bench",
    "to_jsonable",
    "write_json",
]
