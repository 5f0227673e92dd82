"""Fuzz factories for the ``jaxkit.ssm`` exports that had no base call from their signature: each returns the
keyword arguments of one small valid call. Merged into ``_fuzz_factories.FACTORIES`` at its end; helpers of that
module are imported inside the factories (it imports this one)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {}


def _fields(obj: Any) -> dict[str, Any]:
    """Every init field of a dataclass instance (a valid record, built again field by field)."""
    return {
        f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init and not f.name.startswith("_")
    }


def _construction() -> dict[str, Any]:
    from _fuzz_factories import _construction

    return _fields(_construction())


def _parity_dfa() -> Any:
    """The two-state parity automaton over ``{0, 1}`` (accepts an even number of ones)."""
    import numpy as np

    from jaxkit.ssm import DFA

    return DFA(np.array([[0, 1], [1, 0]]), np.array([True, False]), 0)


def _task() -> Any:
    from jaxkit.ssm import get_task

    return get_task("parity")


@functools.cache
def _probe_parts() -> dict[str, Any]:
    """A one-layer SSM probe model (``d_model=4``, ``d_state=2``) for parity, with its config."""
    from _fuzz_factories import KEY

    from jaxkit import ssm

    cfg = ssm.ProbeConfig(tasks=("parity",), model="dense", d_model=4, d_state=2, n_layers=1, n_householder=1)
    return {
        "model": ssm.make_model(cfg, 4, 2, KEY),
        "task": _task(),
        "config": cfg,
        "vocab": 4,
        "n_classes": 2,
    }


def _layer() -> dict[str, Any]:
    from _fuzz_factories import KEY

    return {"variant": "dense", "d_model": 4, "d_state": 2, "key": KEY}


def _model() -> dict[str, Any]:
    from _fuzz_factories import KEY

    return {
        "variant": "dense",
        "vocab": 3,
        "n_classes": 2,
        "key": KEY,
        "d_model": 4,
        "d_state": 2,
        "n_layers": 1,
    }


def _dense_scan() -> dict[str, Any]:
    """Three steps of a 2-state recurrence (contracting transitions)."""
    import jax.numpy as jnp
    from _fuzz_factories import _normal

    return {"A": jnp.asarray(0.5 * _normal(3, 2, 2)), "b": jnp.asarray(_normal(3, 2, seed=1))}


def _register_task() -> dict[str, Any]:
    # a fresh name each call would grow the registry; one fixed name replaced every call leaves it as it was
    return {"name": "fuzz_parity", "task": _task(), "overwrite": True}


FACTORIES.update(
    {
        "jaxkit.ssm.Construction": _construction,
        "jaxkit.ssm.DFA": lambda: _fields(_parity_dfa()),
        "jaxkit.ssm.Formula": lambda: {"op": "prop", "args": (), "name": "a"},
        "jaxkit.ssm.SSMLayer": _layer,
        "jaxkit.ssm.SSMModel": _model,
        "jaxkit.ssm.Task": lambda: _fields(_task()),
        "jaxkit.ssm.TaskRegistry": lambda: {"factories": {"parity": _task}},
        "jaxkit.ssm.TrainedProbe": lambda: dict(_probe_parts()),
        "jaxkit.ssm.dense_scan": _dense_scan,
        "jaxkit.ssm.dfa_task": lambda: {"name": "fuzz_parity", "alphabet": ("0", "1"), "dfa": _parity_dfa()},
        "jaxkit.ssm.formula_task": lambda: {"f": "F p0", "n_props": 2},
        "jaxkit.ssm.in_fragment": lambda: {"f": _parse("F p0"), "fragment": "full"},
        "jaxkit.ssm.register_task": _register_task,
        "jaxkit.ssm.select_runs": lambda: {
            "runs": [
                {"seed": 0, "val_acc": 0.9, "train_acc": 1.0, "val_loss": 0.2},
                {"seed": 0, "val_acc": 0.8, "train_acc": 1.0, "val_loss": 0.3},
                {"seed": 1, "val_acc": 0.7, "train_acc": 0.9},
            ]
        },
    }
)


def _parse(text: str) -> Any:
    from jaxkit.ssm import parse

    return parse(text)
