"""Headline statistics of the evaluation protocol, thin over :mod:`scipy.stats`.

Two arms (a baseline and a method) are measured on the same items (seeds sharing initialization and data, or
test items); the headline is the per-item paired effect:

* :func:`paired_comparison`: per-item effects $e_i$ (the difference $m_i - b_i$, or the speedup
  $100\\,(1 - m_i / b_i)$ in percent), their median with a percentile-bootstrap CI over items
  (``scipy.stats.bootstrap``), the Wilcoxon signed-rank test of the differences $m_i - b_i$
  (``scipy.stats.wilcoxon``) and the sign test (``scipy.stats.binomtest`` on the non-zero signs).
* :func:`wilson_interval` / :func:`rate`: every rate with its Wilson score interval
  (``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``).
* :func:`time_to_event`: times to a target where some runs never reach it within the run length $h$ (the
  horizon): those runs are right-censored at $h$, not given the value $h$. Per arm: the fraction that reached
  the target (Wilson CI), the Kaplan–Meier median (``scipy.stats.ecdf`` on ``scipy.stats.CensoredData``;
  ``None`` when fewer than half reach the target) and the restricted mean time
  $\\mathrm{RMST}(h) = \\int_0^h S(t)\\,dt$ of the Kaplan–Meier survival curve $S$; between arms: the log-rank
  test (``scipy.stats.logrank``), the restricted-mean speedup $100\\,(1 - \\mathrm{RMST}_m / \\mathrm{RMST}_b)$
  with a paired percentile-bootstrap CI, and the paired order test (which arm of each pair reached the target
  first; a sign test). When every run reaches the target the paired comparison is the headline, otherwise the
  censored one (:func:`time_to_event` says which in ``"headline"``).

All runs here are censored at the same horizon (the run length), so $\\mathrm{RMST}(h)$ equals the mean of
$\\min(T_i, h)$; it is a restricted mean (a statement about the first $h$ steps), not an estimate of the
unrestricted mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from jaxkit._validate import align_pairs, seed_rng

from .._validate import check_choice, check_int, check_range, check_size

Effect = Literal["difference", "speedup"]
Values = Sequence[float | int] | np.ndarray | pd.Series  # a Series pairs by label (align_pairs)
Times = Sequence[float | int | None] | np.ndarray | pd.Series


def _values(name: str, x: Any) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a sequence of numbers, received {type(x).__name__}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence (one value per item), received shape {arr.shape}")
    return arr


def wilson_interval(successes: int, trials: int, *, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the rate ``successes / trials`` at confidence ``level``
    (``scipy.stats.binomtest(successes, trials).proportion_ci(level, method="wilson")``)."""
    check_int("trials", trials, minimum=1)
    check_int("successes", successes, minimum=0)
    if successes > trials:
        raise ValueError(f"successes: expected at most trials = {trials}, received {successes}")
    check_range("level", level, 0.0, 1.0, closed=False)
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def rate(successes: int, trials: int, *, level: float = 0.95) -> dict[str, object]:
    """``{"k", "n", "rate", "ci_low", "ci_high"}``: a rate with its Wilson interval (:func:`wilson_interval`)."""
    lo, hi = wilson_interval(successes, trials, level=level)
    return {"k": int(successes), "n": int(trials), "rate": successes / trials, "ci_low": lo, "ci_high": hi}


def _median(x, axis=-1):
    return np.median(x, axis=axis)


def _bootstrap_ci(data: tuple, statistic, *, paired: bool, level: float, n_resamples: int, seed: int):
    """Percentile bootstrap CI (``scipy.stats.bootstrap``); a constant statistic gives the point CI.

    ``scipy`` draws all ``n_resamples`` resamples of the ``n`` items at once (a float64 and an index array each):
    a request above the size cap is refused up front, naming the memory it would need."""
    check_int("seed", seed, minimum=0)
    n_items = sum(int(np.size(d)) for d in data)
    check_size(
        "n_resamples",
        16 * n_resamples * n_items,
        hint=f"lower n_resamples ({n_resamples} resamples of {n_items} values)",
    )
    with np.errstate(all="ignore"):
        res = stats.bootstrap(
            data,
            statistic,
            paired=paired,
            vectorized=True,
            confidence_level=level,
            n_resamples=n_resamples,
            method="percentile",
            rng=seed_rng(seed),
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def paired_comparison(
    baseline: Values,
    method: Values,
    *,
    effect: Effect = "difference",
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, object]:
    """Paired per-item comparison of ``method`` against ``baseline`` (item ``i`` of both belongs together).

    Args:
        baseline, method: one value per item, equal lengths ``n >= 2``, finite; two ``pandas.Series`` are paired
            by label, anything else by position.
        effect: ``"difference"`` ($e_i = m_i - b_i$) or ``"speedup"`` ($e_i = 100(1 - m_i/b_i)$ percent, for
            positive costs such as steps to a target; positive means the method is cheaper).
        level: confidence level of the bootstrap CI.
        n_resamples, seed: percentile bootstrap over items of the median of $e_i$.

    Returns:
        ``{"effect", "n", "per_item", "median", "mean", "ci_low", "ci_high", "excludes_zero", "wilcoxon_p",
        "sign_p", "n_positive", "n_negative", "n_zero"}``. ``wilcoxon_p`` and ``sign_p`` are two-sided tests of
        the differences $m_i - b_i$ (zero differences dropped; ``1.0`` when all are zero); ``n_positive`` counts
        $m_i > b_i$.
    """
    baseline, method = align_pairs("baseline", baseline, "method", method)
    b, m = _values("baseline", baseline), _values("method", method)
    if b.shape != m.shape or b.size < 2:
        raise ValueError(
            f"method: expected one value per baseline item (paired, n >= 2), received {m.size} and {b.size}"
        )
    if not (np.isfinite(b).all() and np.isfinite(m).all()):
        raise ValueError(
            "baseline, method: expected finite values; a run that never reached its target is censored, "
            "compare such runs with time_to_event"
        )
    check_choice("effect", effect, ("difference", "speedup"))
    check_range("level", level, 0.0, 1.0, closed=False)
    check_int("n_resamples", n_resamples, minimum=100)
    check_int("seed", seed, minimum=0)
    if effect == "speedup":
        if (b <= 0).any():
            raise ValueError("baseline: the speedup 100(1 - m/b) needs positive baseline values")
        e = 100.0 * (1.0 - m / b)
    else:
        e = m - b
    d = m - b
    n_pos, n_neg = int((d > 0).sum()), int((d < 0).sum())
    if n_pos + n_neg == 0:
        wil, sign = 1.0, 1.0
    else:
        wil = float(stats.wilcoxon(m, b, zero_method="wilcox").pvalue)
        sign = float(stats.binomtest(n_pos, n_pos + n_neg).pvalue)
    if np.ptp(e) == 0:
        lo = hi = float(e[0])
    else:
        lo, hi = _bootstrap_ci((e,), _median, paired=False, level=level, n_resamples=n_resamples, seed=seed)
    return {
        "effect": effect,
        "n": int(e.size),
        "per_item": [float(v) for v in e],
        "median": float(np.median(e)),
        "mean": float(np.mean(e)),
        "ci_low": lo,
        "ci_high": hi,
        "excludes_zero": bool(lo > 0 or hi < 0),
        "wilcoxon_p": wil,
        "sign_p": sign,
        "n_positive": n_pos,
        "n_negative": n_neg,
        "n_zero": int(e.size - n_pos - n_neg),
    }


def _times(name: str, x: Times, horizon: float | int) -> tuple[np.ndarray, np.ndarray]:
    """(time, reached) with ``None``/NaN = not reached (censored at ``horizon``)."""
    vals = [math.nan if v is None else float(v) for v in x]
    t = _values(name, vals)
    reached = np.isfinite(t)
    if (t[reached] < 0).any() or (t[reached] > horizon).any():
        raise ValueError(f"{name}: expected times in [0, horizon = {horizon:g}] or None, received {list(x)}")
    return np.where(reached, t, horizon), reached


def _km(t: np.ndarray, reached: np.ndarray, horizon: float | int) -> dict:
    """Kaplan–Meier median and restricted mean up to ``horizon`` (``scipy.stats.ecdf``)."""
    if not reached.any():
        return {"km_median": None, "rmst": float(horizon)}
    data = stats.CensoredData(uncensored=t[reached], right=t[~reached])
    sf = stats.ecdf(data).sf
    q, p = np.asarray(sf.quantiles, float), np.asarray(sf.probabilities, float)
    below = np.nonzero(p <= 0.5)[0]
    median = float(q[below[0]]) if below.size else None
    # integral of the right-continuous step function S over [0, horizon]
    edges = np.concatenate([[0.0], np.minimum(q, horizon), [horizon]])
    levels = np.concatenate([[1.0], p])
    rmst = float(np.sum(np.diff(edges) * levels))
    return {"km_median": median, "rmst": rmst}


def survival(times: Times, horizon: float | int, *, level: float = 0.95) -> dict[str, object]:
    """One arm's times to a target, ``None`` (or NaN) = not reached within ``horizon`` (right-censored there).

    Returns ``{"reached": rate(...), "km_median", "rmst"}``: the fraction that reached the target with its Wilson
    interval (:func:`rate`), the Kaplan–Meier median (``scipy.stats.ecdf``; ``None`` when fewer than half reach
    the target) and the restricted mean $\\int_0^h S(t)\\,dt$ of the Kaplan–Meier survival curve up to ``horizon``.
    """
    check_range("horizon", horizon, 0.0, np.inf, closed=False)
    t, r = _times("times", times, horizon)
    if t.size < 1:
        raise ValueError("times: expected at least one run, received none")
    return {"reached": rate(int(r.sum()), int(t.size), level=level)} | _km(t, r, horizon)


def time_to_event(
    baseline: Times,
    method: Times,
    horizon: float | int,
    *,
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, object]:
    """Paired comparison of times to a target with right-censoring at ``horizon``.

    Args:
        baseline, method: per item (paired), the time at which the target was first reached, or ``None``
            (or NaN) if it was not reached within ``horizon`` (censored).
        horizon: the run length; every censored run is censored there.

    Returns:
        ``{"headline", "baseline", "method", "logrank_p", "rmst_speedup", "order", "paired"}``:

        * ``baseline``/``method``: :func:`survival` of each arm.
        * ``logrank_p``: two-sided log-rank p-value (``None`` when neither arm reaches the target).
        * ``rmst_speedup``: ``{"value", "ci_low", "ci_high", "excludes_zero"}``, the restricted-mean speedup $100(1 - \\mathrm{RMST}_m/\\mathrm{RMST}_b)$ in percent with a paired percentile-bootstrap CI.
        * ``order``: ``{"method_first", "baseline_first", "ties", "sign_p"}``: per pair, which arm reached the target first (both censored, or equal times, is a tie); sign test on the non-ties.
        * ``paired``: :func:`paired_comparison` (``effect="speedup"``) over every pair when no run is censored, else ``None``.
        * ``headline``: ``"paired"`` when no run is censored, else ``"censored"``.
    """
    check_range("horizon", horizon, 0.0, np.inf, closed=False)
    baseline, method = align_pairs("baseline", baseline, "method", method)
    tb, rb = _times("baseline", baseline, horizon)
    tm, rm = _times("method", method, horizon)
    if tb.shape != tm.shape or tb.size < 2:
        raise ValueError(
            f"method: expected one time per baseline item (paired, n >= 2), received {tm.size} and {tb.size}"
        )
    check_range("level", level, 0.0, 1.0, closed=False)
    check_int("n_resamples", n_resamples, minimum=100)
    check_int("seed", seed, minimum=0)
    n = tb.size
    arms = {
        "baseline": survival(baseline, horizon, level=level),
        "method": survival(method, horizon, level=level),
    }
    if rb.any() or rm.any():
        data = [stats.CensoredData(uncensored=t[r], right=t[~r]) for t, r in ((tm, rm), (tb, rb))]
        with np.errstate(all="ignore"):
            p = float(stats.logrank(data[0], data[1]).pvalue)
        logrank_p = None if math.isnan(p) else p
    else:
        logrank_p = None

    # RMST with every censoring at the horizon = mean of min(T, h): the paired bootstrap resamples items
    def speed(b, m, axis=-1):
        return 100.0 * (1.0 - np.mean(m, axis=axis) / np.mean(b, axis=axis))

    value = float(speed(tb, tm))
    if np.ptp(tb) == 0 and np.ptp(tm) == 0:
        lo = hi = value
    else:
        lo, hi = _bootstrap_ci((tb, tm), speed, paired=True, level=level, n_resamples=n_resamples, seed=seed)
    m_first = int((tm < tb).sum())
    b_first = int((tb < tm).sum())
    ties = n - m_first - b_first
    sign_p = 1.0 if m_first + b_first == 0 else float(stats.binomtest(m_first, m_first + b_first).pvalue)
    censored = bool((~rb).any() or (~rm).any())
    return {
        "headline": "censored" if censored else "paired",
        "baseline": arms["baseline"],
        "method": arms["method"],
        "logrank_p": logrank_p,
        "rmst_speedup": {
            "value": value,
            "ci_low": lo,
            "ci_high": hi,
            "excludes_zero": bool(lo > 0 or hi < 0),
        },
        "order": {"method_first": m_first, "baseline_first": b_first, "ties": ties, "sign_p": sign_p},
        "paired": None
        if censored
        else paired_comparison(tb, tm, effect="speedup", level=level, n_resamples=n_resamples, seed=seed),
    }
