"""Training several seeds in one compiled call, and the speed metrics of the experiments.

Models for ``S`` seeds are stacked along a leading axis (:func:`jaxkit.stability._models.init_stack`); the loss
of the stack is the *sum* of the per-seed losses (``eqx.filter_vmap``). Because the per-seed losses share no
parameters, the gradient of the sum is the per-seed gradient, and AdamW / Grokfast-EMA act elementwise, so one
:func:`jaxkit.train.fit` run trains ``S`` independent models exactly as ``S`` separate runs would (up to
floating-point reassociation in the batched kernels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def seed_stacked_loss(loss_fn: Callable, n_seeds: int) -> Callable:
    """``loss(models, batch, key) -> (Σ_s loss_s, aux with per-seed arrays)`` for a stack of ``n_seeds`` models.

    ``loss_fn(model, batch, key) -> (loss, aux)``; ``batch`` leaves carry the seed axis first.
    """

    def stacked(models: Any, batch: Any, key: jax.Array):
        losses, aux = eqx.filter_vmap(loss_fn)(models, batch, jax.random.split(key, n_seeds))
        return jnp.sum(losses), {"loss_per_seed": losses, **aux}

    return stacked


def steps_to_target(
    history: Sequence[dict], metric: str, target: float, *, mode: str = "max"
) -> list[int | None]:
    """For each seed, the first logged step whose ``metric`` reaches ``target`` (``>=`` for ``mode="max"``,
    ``<=`` for ``"min"``); ``None`` if never. ``history`` records hold per-seed lists under ``metric``."""
    if mode not in ("max", "min"):
        raise ValueError(f"mode: expected 'max' or 'min', received {mode!r}")
    rows = [r for r in history if metric in r]
    if not rows:
        raise ValueError(f"history: no record holds {metric!r}")
    n = len(np.atleast_1d(rows[0][metric]))
    out: list[int | None] = [None] * n
    for r in rows:
        vals = np.atleast_1d(r[metric])
        for s in range(n):
            hit = vals[s] >= target if mode == "max" else vals[s] <= target
            if out[s] is None and hit:
                out[s] = int(r["step"])
    return out


def median_spread(steps: Sequence[int | None], censor: int) -> dict:
    """Median, quartiles, min/max of steps-to-target; seeds that never reached it count as ``censor``
    (the run length; so the median is a lower bound when they matter), reported in ``reached``."""
    vals = np.asarray([censor if s is None else s for s in steps], float)
    return {
        "median": float(np.median(vals)),
        "q25": float(np.percentile(vals, 25)),
        "q75": float(np.percentile(vals, 75)),
        "min": float(vals.min()),
        "max": float(vals.max()),
        "reached": int(sum(s is not None for s in steps)),
        "n_seeds": len(steps),
        "per_seed": [None if s is None else int(s) for s in steps],
    }


def median_curves(runs: dict[str, dict], keys: Sequence[str]) -> dict:
    """Per method, the logged steps and the median over seeds of each metric in ``keys``."""
    return {
        m: {"step": [r["step"] for r in run["history"]]}
        | {k: [float(np.median(r[k])) for r in run["history"]] for k in keys}
        for m, run in runs.items()
    }
