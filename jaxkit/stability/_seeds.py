"""The speed metrics of the experiments: steps to a target per seed, their median and spread, median curves.

The seeds themselves are trained in one compiled call by :func:`jaxkit.stability.train_method`
(:func:`jaxkit.train.fit_ensemble`); its history holds one list entry per seed under each metric.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jaxkit._validate import check_int


def steps_to_target(
    history: Sequence[dict[str, object]], metric: str, target: float, *, mode: str = "max"
) -> list[int | None]:
    """For each seed, the first logged step whose ``metric`` reaches ``target`` (``>=`` for ``mode="max"``,
    ``<=`` for ``"min"``); ``None`` if never. ``history`` records hold per-seed lists under ``metric``."""
    if mode not in ("max", "min"):
        raise ValueError(f"mode: expected 'max' or 'min', received {mode!r}")
    try:
        t = float(target)
    except (TypeError, ValueError):
        raise TypeError(f"target: expected a finite real number, received {target!r}") from None
    if not np.isfinite(t):
        raise ValueError(f"target: expected a finite real number, received {target!r}")
    rows = [r for r in history if metric in r]
    if not rows:
        raise ValueError(
            f"metric: expected a metric logged in history, received {metric!r} (no record of history holds it)"
        )
    n = len(np.atleast_1d(rows[0][metric]))
    out: list[int | None] = [None] * n
    for r in rows:
        vals = np.atleast_1d(r[metric])
        for s in range(n):
            hit = vals[s] >= target if mode == "max" else vals[s] <= target
            if out[s] is None and hit:
                out[s] = int(r["step"])
    return out


def median_spread(steps: Sequence[int | None], censor: int) -> dict[str, object]:
    """Median, quartiles, min/max of steps-to-target; seeds that never reached it count as ``censor``
    (the run length; so the median is a lower bound when they matter), reported in ``reached``. A step above
    ``censor`` is refused."""
    steps = list(steps)
    if not steps:
        raise ValueError(
            "steps: expected the steps-to-target of at least one seed, received an empty sequence"
        )
    check_int("censor", censor, minimum=0)
    for i, s in enumerate(steps):
        if s is not None and (isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0):
            raise ValueError(
                f"steps: expected integers >= 0 or None (not reached), received {s!r} at index {i}"
            )
        if s is not None and s > censor:
            raise ValueError(
                f"steps: expected steps <= censor={censor} (the run length), received {s} at index {i}"
            )
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


def median_curves(runs: dict[str, dict[str, object]], keys: Sequence[str]) -> dict[str, dict[str, object]]:
    """Per method, the logged steps and the median over seeds of each metric in ``keys``."""
    return {
        m: {"step": [r["step"] for r in run["history"]]}
        | {k: [float(np.median(r[k])) for r in run["history"]] for k in keys}
        for m, run in runs.items()
    }
