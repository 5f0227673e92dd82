r"""Evaluation of path forecasters under one protocol: post-processing fitted on calibration windows only,
trailing-window baselines, one scorer, paired differences with bootstrap intervals.

Post-processing (:class:`PostProcess`, fitted by :func:`fit_postprocess`) is a method applied alike to every
forecaster: *recentering* replaces each date's sample mean by 0 (a "no mean skill" point forecast), *spread
calibration* multiplies each asset's deviations from the (new) center by $f_n = \sqrt{\sum_{b,h}(y_{b,h,n} -
c_{b,h,n})^2 / \sum_{b,h}\widehat{\mathrm{Var}}_j(x_{b,j,h,n})}$, the ratio of realized squared error to predicted
variance on the calibration windows (variance recalibration; Kuleshov et al. 2018). Fitted once on windows whose
outcome is known before the evaluation period starts, then frozen.

Scores (:func:`score_paths`), per date $b$ so that paired differences between forecasters can be resampled:
``mse`` of the sample mean, ``crps`` and ``crps_sum`` in CSDI's normalized quantile-loss form (the per-date
numerator over the normalizer of all dates, so the mean over dates is :func:`crps` / :func:`crps_sum`),
``energy`` the energy score of the joint (horizon × assets) path, $\mathrm{ES}_b = \frac1k\sum_j\|x_j - y\| -
\frac1{2k^2}\sum_{j,j'}\|x_j - x_{j'}\|$ (Gneiting & Raftery 2007; in the returns' units), and ``coverage90``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import align_pairs, check_finite, check_int, check_range, check_size, seed_rng
from jaxkit.forecast._metrics import QUANTILE_LEVELS

__all__ = [
    "BASELINES",
    "PostProcess",
    "baseline_paths",
    "fit_postprocess",
    "paired_difference",
    "score_paths",
]


def _paths(paths: ArrayInput, truth: ArrayInput) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(paths, dtype=np.float64)
    y = np.asarray(truth, dtype=np.float64)
    if x.ndim != 4 or y.shape != (x.shape[0],) + x.shape[2:]:
        raise ValueError(
            f"paths, truth: expected shapes (B, k, H, N) and (B, H, N), received {x.shape} and {y.shape}"
        )
    return x, y


@dataclass(frozen=True)
class PostProcess:
    """Recentering (``recenter``) and per-asset spread factors ``factor`` (N,) fitted by :func:`fit_postprocess`;
    ``post(paths)`` transforms (B, k, H, N) paths: $c + f \\odot (x - \\bar x)$ with $c = 0$ when recentering,
    else the sample mean $\\bar x$ of each date."""

    recenter: bool
    factor: np.ndarray
    n_windows: int = 0

    def __post_init__(self) -> None:
        if np.ndim(self.factor) != 1:
            raise ValueError(
                f"factor: expected shape (n_assets,) (one spread factor per asset), received shape "
                f"{np.shape(self.factor)}"
            )
        check_finite("factor", self.factor)
        check_int("n_windows", self.n_windows, minimum=0)

    def __call__(self, paths: ArrayInput) -> np.ndarray:
        x = np.asarray(paths, dtype=np.float64)
        if x.ndim != 4 or x.shape[-1] != np.shape(self.factor)[0]:
            raise ValueError(
                f"paths: expected shape (B, k, H, {np.shape(self.factor)[0]}), received {x.shape}"
            )
        if not self.recenter and np.all(np.asarray(self.factor) == 1.0):
            return x.copy()  # the identity (raw rows), exactly
        m = x.mean(1, keepdims=True)
        center = np.zeros_like(m) if self.recenter else m
        return center + np.asarray(self.factor) * (x - m)

    def to_dict(self) -> dict:
        return {
            "recenter": self.recenter,
            "factor": np.asarray(self.factor).tolist(),
            "n_windows": self.n_windows,
        }


def fit_postprocess(
    paths: ArrayInput,
    truth: ArrayInput,
    *,
    recenter: bool = True,
    calibrate: bool = True,
    positions: ArrayInput | None = None,
    fit_end: int | None = None,
    horizon: int | None = None,
) -> PostProcess:
    r"""Fit :class:`PostProcess` on calibration windows: ``paths`` (B, k, H, N) sampled for ``B`` dates and their
    realized ``truth`` (B, H, N).

    With ``positions`` (B,) grid positions, ``fit_end`` and ``horizon`` only the windows whose whole target is
    observed before ``fit_end`` ($t_b + H < t_{end}$) are used, so windows of a later evaluation period can be
    passed along and are never seen (their ``truth`` may even be NaN). ``calibrate=False``: factor 1."""
    x, y = _paths(paths, truth)
    if positions is not None or fit_end is not None:
        if positions is None or fit_end is None or horizon is None:
            raise ValueError("positions, fit_end, horizon: pass all three to select calibration windows")
        check_int("horizon", horizon, minimum=1)
        t = np.asarray(positions)
        if t.shape != (x.shape[0],):
            raise ValueError(f"positions: expected shape ({x.shape[0]},), received {t.shape}")
        keep = t + horizon < fit_end
        x, y = x[keep], y[keep]
    if x.shape[0] == 0:
        raise ValueError("paths: no calibration window (every window ends at or after fit_end)")
    if x.shape[1] < 2:
        raise ValueError(
            f"paths: expected at least 2 paths per date to estimate a spread, received {x.shape[1]}"
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paths, truth: expected finite values on the calibration windows")
    N = x.shape[-1]
    if not calibrate:
        return PostProcess(bool(recenter), np.ones(N), int(x.shape[0]))
    m = x.mean(1)
    center = np.zeros_like(m) if recenter else m
    err = ((y - center) ** 2).sum((0, 1))
    var = x.var(1, ddof=1).sum((0, 1))
    if np.any(var <= 0):
        raise ValueError(
            f"paths: zero spread on the calibration windows for assets {np.flatnonzero(var <= 0).tolist()}"
        )
    return PostProcess(bool(recenter), np.sqrt(err / var), int(x.shape[0]))


def score_paths(
    paths: ArrayInput, truth: ArrayInput, *, per_date: bool = False, level: float = 0.9
) -> dict[str, object]:
    """Scores of ``paths`` (B, k, H, N) against ``truth`` (B, H, N): ``mse``, ``crps``, ``crps_sum``, ``energy``,
    ``coverage90`` (see the module docstring). ``per_date=True``: (B,) arrays whose means are the scores."""
    check_range("level", level, 0.0, 1.0)
    x, y = _paths(paths, truth)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paths, truth: expected finite values")
    B, k = x.shape[:2]
    if not np.abs(y).sum() > 0 or not np.abs(y.sum(-1)).sum() > 0:
        raise ValueError(
            "truth: CRPS's normalizer sum(|truth|) is 0 (all outcomes 0), the score is undefined"
        )
    out = {"mse": ((x.mean(1) - y) ** 2).mean((1, 2))}

    def quantile_loss(s, t):  # s (B, k, ...), t (B, ...): per-date numerators over the all-dates normalizer
        num = np.zeros(B)
        for a in QUANTILE_LEVELS:
            q = np.quantile(s, a, axis=1)
            num += 2 * np.abs((t - q) * ((t <= q) - a)).reshape(B, -1).sum(1)
        return num / len(QUANTILE_LEVELS) / np.abs(t).sum() * B

    out["crps"] = quantile_loss(x, y)
    out["crps_sum"] = quantile_loss(x.sum(-1), y.sum(-1))
    v = x.reshape(B, k, -1)
    d_xy = np.sqrt(((v - y.reshape(B, 1, -1)) ** 2).sum(-1)).mean(1)
    d_xx = np.array([np.sqrt(((vb[:, None] - vb[None]) ** 2).sum(-1)).mean() for vb in v])  # O(k^2 HN) memory
    out["energy"] = d_xy - 0.5 * d_xx
    lo, hi = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=1)
    out["coverage90"] = ((y >= lo) & (y <= hi)).mean((1, 2))
    return out if per_date else {name: float(np.mean(s)) for name, s in out.items()}


def paired_difference(
    a: ArrayInput, b: ArrayInput, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> dict[str, object]:
    """Mean of the paired differences ``a - b`` (per-date scores of two forecasters on the same dates) with a
    percentile bootstrap interval over dates (:func:`scipy.stats.bootstrap`, ``paired``); negative = ``a`` lower.
    Two ``pandas.Series`` are paired by label (dates that do not match one to one are refused); arrays pair by
    position."""
    from scipy.stats import bootstrap

    a, b = align_pairs("a", a, "b", b)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(
            f"a, b: expected two equal-length 1-D score series (>= 2), received {a.shape} and {b.shape}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a, b: expected finite scores")
    check_int("n_resamples", n_resamples, minimum=1)
    check_int("seed", seed, minimum=0)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a value in (0, 1), received {confidence}")
    check_size("n_resamples", 8 * n_resamples * a.size, hint=f"{n_resamples} resamples of {a.size} dates")
    d = a - b
    res = bootstrap(
        (d,), np.mean, n_resamples=n_resamples, confidence_level=confidence, method="percentile",
        rng=seed_rng(seed),
    )  # fmt: skip
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"mean": float(d.mean()), "ci": [lo, hi], "excludes_0": bool(hi < 0 or lo > 0), "n": int(d.size)}


BASELINES = ("bootstrap", "gaussian", "ewma_gaussian", "garch")


def baseline_paths(
    log_returns: ArrayInput,
    positions: ArrayInput,
    *,
    lookback: int,
    horizon: int,
    n_samples: int,
    methods: Sequence[str] = BASELINES,
    seed: int = 0,
    ewma_decay: float = 0.94,
    progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
) -> dict[str, np.ndarray]:
    """Baseline paths (B, k, H, N) for decision positions ``positions`` (B,) of a (T, N) log-return grid, each
    fitted on the trailing window ``log_returns[t - lookback + 1 : t + 1]`` (fewer rows near the start) known at
    ``t``: ``methods`` among :data:`BASELINES` (:func:`historical_bootstrap`, :func:`rolling_gaussian`,
    :func:`ewma_gaussian`, :func:`garch_paths`). Date ``j`` draws with seed ``seed + j``. ``progress``: optional
    wrapper of the date iterator (e.g. ``tqdm``)."""
    from jaxkit.forecast._baselines import ewma_gaussian, garch_paths, historical_bootstrap, rolling_gaussian

    check_int("lookback", lookback, minimum=2)
    r = np.asarray(log_returns, dtype=np.float64)
    if r.ndim != 2 or r.shape[0] == 0 or r.shape[1] == 0:
        raise ValueError(
            f"log_returns: expected a (time, assets) grid with at least one row and one asset, received shape "
            f"{r.shape}"
        )
    if not 0.0 < ewma_decay < 1.0:
        raise ValueError(f"ewma_decay: expected a value in (0, 1), received {ewma_decay!r}")
    t = np.asarray(positions)
    if t.size == 0:
        raise ValueError(f"positions: expected at least one decision position, received shape {t.shape}")
    if t.ndim != 1 or (t.size and (t.min() < 0 or t.max() >= r.shape[0])):
        raise ValueError(
            f"positions: expected grid positions in [0, {r.shape[0] - 1}], received {t.tolist()[:5]}..."
        )
    fns = {
        "bootstrap": historical_bootstrap,
        "gaussian": rolling_gaussian,
        "ewma_gaussian": lambda w, h, k, seed: ewma_gaussian(w, h, k, decay=ewma_decay, seed=seed),
        "garch": garch_paths,
    }
    bad = [m for m in methods if m not in fns]
    if bad:
        raise ValueError(f"methods: expected names among {BASELINES}, received {bad}")
    out = {m: [] for m in methods}
    it = enumerate(t) if progress is None else enumerate(progress(t))
    for j, tj in it:
        w = r[max(0, int(tj) - lookback + 1) : int(tj) + 1]
        for m in methods:
            try:
                out[m].append(fns[m](w, horizon, n_samples, seed=seed + j))
            except ValueError as e:  # name the arguments the failing window comes from
                raise ValueError(
                    f"log_returns, positions: the {m!r} baseline cannot be fitted on the trailing window "
                    f"log_returns[{max(0, int(tj) - lookback + 1)}:{int(tj) + 1}] of positions[{j}] = {int(tj)} "
                    f"(lookback={lookback}): {e}"
                ) from None
    return {m: np.stack(v) for m, v in out.items()}
