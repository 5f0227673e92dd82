r"""Probabilistic forecast metrics (reporting; NumPy float64).

- ``mse``: squared error of the sample mean, :math:`\overline{(\bar x - y)^2}`.
- ``crps``: CSDI's quantile-loss form (Tashiro et al. 2021),
  :math:`\mathrm{CRPS} \approx \frac{1}{|A|}\sum_{\alpha\in A} \frac{2\sum_i |(y_i - q_{\alpha,i})
  (\mathbf 1[y_i\le q_{\alpha,i}] - \alpha)|}{\sum_i |y_i|}`, :math:`A=\{0.05, 0.10, \dots, 0.95\}`,
  :math:`q_{\alpha,i}` the empirical sample quantile; ``crps_sum`` is the same on the sum over assets.
- ``coverage``: fraction of outcomes inside the central ``level`` sample interval.
- ``energy_distance``: :math:`2E\|X-Y\| - E\|X-X'\| - E\|Y-Y'\|` (V-statistic; Székely & Rizzo 2013).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["QUANTILE_LEVELS", "coverage", "crps", "crps_sum", "energy_distance", "mse"]

QUANTILE_LEVELS = tuple(np.round(np.arange(0.05, 0.951, 0.05), 2))


def _pair(samples: Any, truth: Any, sample_axis: int) -> tuple[np.ndarray, np.ndarray]:
    s = np.moveaxis(np.asarray(samples, dtype=np.float64), sample_axis, 0)
    y = np.asarray(truth, dtype=np.float64)
    if s.shape[1:] != y.shape:
        raise ValueError(
            f"samples, truth: expected samples of shape (k, *{y.shape}) along sample_axis={sample_axis}, "
            f"received {np.shape(samples)}"
        )
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(y))):
        raise ValueError("samples, truth: expected finite values")
    return s, y


def mse(samples: Any, truth: Any, *, sample_axis: int = 0) -> float:
    s, y = _pair(samples, truth, sample_axis)
    return float(np.mean((s.mean(0) - y) ** 2))


def crps(samples: Any, truth: Any, *, sample_axis: int = 0, levels: tuple = QUANTILE_LEVELS) -> float:
    s, y = _pair(samples, truth, sample_axis)
    denom = np.sum(np.abs(y))
    total = 0.0
    for a in levels:
        q = np.quantile(s, a, axis=0)
        total += 2 * np.sum(np.abs((y - q) * ((y <= q) - a))) / denom
    return float(total / len(levels))


def crps_sum(samples: Any, truth: Any, *, sample_axis: int = 0, levels: tuple = QUANTILE_LEVELS) -> float:
    """CRPS of the sum over the last (asset) axis."""
    s, y = _pair(samples, truth, sample_axis)
    return crps(s.sum(-1), y.sum(-1), levels=levels)


def coverage(samples: Any, truth: Any, *, level: float = 0.9, sample_axis: int = 0) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), received {level}")
    s, y = _pair(samples, truth, sample_axis)
    lo, hi = np.quantile(s, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return float(np.mean((y >= lo) & (y <= hi)))


def energy_distance(x: Any, y: Any) -> float:
    """Energy distance between two samples of shape (n, d) and (m, d)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    x, y = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x, y: expected the same dimension, received {x.shape} and {y.shape}")

    def mean_dist(a, b):
        return np.mean(np.sqrt(np.maximum(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1), 0.0)))

    return float(2 * mean_dist(x, y) - mean_dist(x, x) - mean_dist(y, y))
