r"""Probabilistic forecast metrics (reporting; NumPy float64).

- ``mse``: squared error of the sample mean, $\overline{(\bar x - y)^2}$.
- ``crps``: CSDI's quantile-loss form (Tashiro et al. 2021),
  $\mathrm{CRPS} \approx \frac{1}{|A|}\sum_{\alpha\in A} \frac{2\sum_i |(y_i - q_{\alpha,i})
  (\mathbf 1[y_i\le q_{\alpha,i}] - \alpha)|}{\sum_i |y_i|}$, $A=\{0.05, 0.10, \dots, 0.95\}$,
  $q_{\alpha,i}$ the empirical sample quantile; ``crps_sum`` is the same on the sum over assets.
- ``coverage``: fraction of outcomes inside the central ``level`` sample interval.
- ``energy_distance``: $2E\|X-Y\| - E\|X-X'\| - E\|Y-Y'\|$ (V-statistic; Székely & Rizzo 2013).
- ``moment_z_scores``: standardized errors of a sample's mean and covariance against a Gaussian law,
  $z_i = (\bar x_i - \mu_i)/\sqrt{\Sigma_{ii}/k}$ and $z_{ij} = (S_{ij} - \Sigma_{ij})/
  \sqrt{(\Sigma_{ij}^2 + \Sigma_{ii}\Sigma_{jj})/(k-1)}$ (Wishart variance; Anderson 2003, §7.2), ``i <= j``.
- ``energy_test``: the two-sample energy test, $T = \frac{nm}{n+m}\,\mathcal E_{n,m}$ with a permutation
  p-value (Székely & Rizzo 2004, "Testing for equal distributions in high dimension").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import as_float64_numpy, check_finite, check_int, seed_rng

__all__ = [
    "QUANTILE_LEVELS",
    "coverage",
    "crps",
    "crps_sum",
    "energy_distance",
    "energy_test",
    "moment_z_scores",
    "mse",
]

QUANTILE_LEVELS = tuple(np.round(np.arange(0.05, 0.951, 0.05), 2))


def _pair(samples: Any, truth: Any, sample_axis: int) -> tuple[np.ndarray, np.ndarray]:
    s = as_float64_numpy("samples", samples)
    if not -s.ndim <= sample_axis < max(s.ndim, 1):
        raise ValueError(f"sample_axis: expected an axis of samples (ndim {s.ndim}), received {sample_axis}")
    s = np.moveaxis(s, sample_axis, 0)
    if s.shape[0] == 0:
        raise ValueError(
            f"samples: expected at least one sample along sample_axis={sample_axis}, received shape "
            f"{np.shape(samples)}"
        )
    y = as_float64_numpy("truth", truth)
    if s.shape[1:] != y.shape:
        raise ValueError(
            f"samples, truth: expected samples of shape (k, *{y.shape}) along sample_axis={sample_axis}, "
            f"received {np.shape(samples)}"
        )
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(y))):
        raise ValueError("samples, truth: expected finite values")
    return s, y


def mse(samples: ArrayInput, truth: ArrayInput, *, sample_axis: int = 0) -> float:
    s, y = _pair(samples, truth, sample_axis)
    return float(np.mean((s.mean(0) - y) ** 2))


def crps(
    samples: ArrayInput,
    truth: ArrayInput,
    *,
    sample_axis: int = 0,
    levels: tuple[float | int, ...] = QUANTILE_LEVELS,
) -> float:
    r"""CSDI's normalized CRPS (Tashiro et al. 2021): the quantile loss over ``levels`` divided by
    $\sum_i |y_i|$, so unitless — not the CRPS in the units of ``truth`` (e.g. log returns). Empirical sample
    quantiles along ``sample_axis``; ``levels``: a non-empty sequence in ``(0, 1)``; raises when every ``truth``
    is 0 (no normalizer)."""
    lv = np.asarray(levels, dtype=np.float64) if np.ndim(levels) == 1 else None
    if lv is None or lv.size == 0 or not np.all((lv > 0) & (lv < 1)):
        raise ValueError(
            f"levels: expected a non-empty sequence of quantile levels in (0, 1), received {levels!r}"
        )
    s, y = _pair(samples, truth, sample_axis)
    denom = np.sum(np.abs(y))
    if not denom > 0:
        raise ValueError(
            "truth: every value is 0, so CRPS's normalizer sum(|truth|) is 0 (the score is undefined)"
        )
    total = 0.0
    for a in levels:
        q = np.quantile(s, a, axis=0)
        total += 2 * np.sum(np.abs((y - q) * ((y <= q) - a))) / denom
    return float(total / len(levels))


def crps_sum(
    samples: ArrayInput,
    truth: ArrayInput,
    *,
    sample_axis: int = 0,
    levels: tuple[float | int, ...] = QUANTILE_LEVELS,
) -> float:
    """CRPS of the sum over the last (asset) axis."""
    s, y = _pair(samples, truth, sample_axis)
    return crps(s.sum(-1), y.sum(-1), levels=levels)


def coverage(samples: ArrayInput, truth: ArrayInput, *, level: float = 0.9, sample_axis: int = 0) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level: expected a value in (0, 1), received {level}")
    s, y = _pair(samples, truth, sample_axis)
    lo, hi = np.quantile(s, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return float(np.mean((y >= lo) & (y <= hi)))


def _pairwise_distance_sums(a: np.ndarray, b: np.ndarray, chunk: int) -> np.ndarray:
    r"""Row sums $\sum_j \|a_i - b_j\|$ (len(a),), computed in row blocks of ``chunk`` rows (memory
    O(chunk * len(b) * d)) with the direct difference formula (same numbers as the all-at-once version)."""
    out = np.empty(a.shape[0])
    for i in range(0, a.shape[0], chunk):
        blk = a[i : i + chunk]
        out[i : i + chunk] = np.sqrt(np.maximum(((blk[:, None, :] - b[None, :, :]) ** 2).sum(-1), 0.0)).sum(1)
    return out


def _chunk_rows(m: int, d: int, chunk_bytes: int) -> int:
    return max(1, int(chunk_bytes // max(8 * m * d, 1)))


def _two_samples(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    for name, v in (("x", x), ("y", y)):
        if v.ndim < 1 or v.shape[0] == 0 or v.size == 0:
            raise ValueError(f"{name}: expected a non-empty sample (n, d), received shape {v.shape}")
    x, y = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"x, y: expected the same dimension, received {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x, y: expected finite values")
    return x, y


def energy_distance(x: ArrayInput, y: ArrayInput, *, chunk_bytes: int = 64 * 2**20) -> float:
    """Energy distance between two samples of shape (n, d) and (m, d). Pairwise distances are formed in row
    blocks of at most ``chunk_bytes`` of temporaries, so memory stays bounded for large samples."""
    x, y = _two_samples(x, y)
    check_int("chunk_bytes", chunk_bytes, minimum=1)

    def mean_dist(a, b):
        return _pairwise_distance_sums(a, b, _chunk_rows(b.shape[0], a.shape[1], chunk_bytes)).sum() / (
            a.shape[0] * b.shape[0]
        )

    return float(2 * mean_dist(x, y) - mean_dist(x, x) - mean_dist(y, y))


MAX_PERMUTATIONS = 1_000_000


def energy_test(
    x: ArrayInput, y: ArrayInput, *, n_permutations: int = 999, seed: int = 0, chunk_bytes: int = 64 * 2**20
) -> tuple[float, float]:
    """Two-sample energy test of ``x (n, d)`` and ``y (m, d)`` drawn from the same law.

    Returns ``(T, p)``: ``T = n m / (n + m) * energy_distance(x, y)`` and the permutation p-value
    ``(1 + #{T_perm >= T}) / (1 + n_permutations)``, each permutation a random relabeling of the pooled sample.
    The pooled distance matrix is built in row blocks and the permutations are evaluated in blocks, each with at
    most ``chunk_bytes`` of temporaries (the result does not depend on the block sizes)."""
    x, y = _two_samples(x, y)
    check_int("n_permutations", n_permutations, minimum=1)
    check_int("chunk_bytes", chunk_bytes, minimum=1)
    if (
        n_permutations > MAX_PERMUTATIONS
    ):  # a mistyped count used to run (and hold every permutation) for hours
        raise ValueError(
            f"n_permutations: expected at most {MAX_PERMUTATIONS} (p-value resolution 1e-6), "
            f"received {n_permutations}"
        )
    n, m = x.shape[0], y.shape[0]
    z = np.concatenate([x, y])
    N = n + m
    D = np.empty((N, N))
    rows = _chunk_rows(N, z.shape[1], chunk_bytes)
    for i in range(0, N, rows):
        D[i : i + rows] = np.sqrt(np.sum((z[i : i + rows, None, :] - z[None, :, :]) ** 2, -1))
    rng = seed_rng(seed)
    total = D.sum()
    stat = np.empty(n_permutations + 1)
    prow = _chunk_rows(N, 3, chunk_bytes)
    for i in range(0, n_permutations + 1, prow):
        # drawn block by block (same stream as all at once): memory stays O(block), not O(n_permutations)
        block = [
            np.arange(N) if j == 0 else rng.permutation(N)
            for j in range(i, min(i + prow, n_permutations + 1))
        ]
        labels = np.zeros((len(block), N))
        for r, p in enumerate(block):
            labels[r, p[:n]] = 1.0
        DZ = labels @ D  # row sums of distances to the group-x points
        xx = np.sum(DZ * labels, 1)
        xy = np.sum(DZ * (1 - labels), 1)
        yy = total - 2 * xy - xx
        stat[i : i + len(block)] = n * m / N * (2 * xy / (n * m) - xx / n**2 - yy / m**2)
    return float(stat[0]), float((1 + np.sum(stat[1:] >= stat[0])) / (1 + n_permutations))


def moment_z_scores(samples: ArrayInput, mean: ArrayInput, cov: ArrayInput) -> tuple[np.ndarray, np.ndarray]:
    """``(mean_z (d,), cov_z (d(d+1)/2,))`` of ``samples (k, d)`` against ``N(mean, cov)``; each is
    approximately standard normal when the samples come from that law."""
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim < 1 or x.size == 0:
        raise ValueError(f"samples: expected a non-empty (k, d) sample, received shape {x.shape}")
    check_finite("samples", x)
    x = x.reshape(x.shape[0], -1)
    k, d = x.shape
    mu, S = np.asarray(mean, dtype=np.float64), np.asarray(cov, dtype=np.float64)
    if mu.shape != (d,) or S.shape != (d, d):
        raise ValueError(
            f"mean, cov: expected shapes ({d},) and ({d}, {d}), received {mu.shape} and {S.shape}"
        )
    if k < 2:
        raise ValueError(f"samples: expected at least 2 samples, received {k}")
    if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(S))):
        raise ValueError("mean, cov: expected finite values")
    if np.any(np.diag(S) <= 0) or np.linalg.eigvalsh(0.5 * (S + S.T))[0] < -1e-10 * np.abs(S).max():
        raise ValueError(
            f"cov: expected a positive semi-definite covariance with positive variances, received "
            f"diagonal range [{np.diag(S).min():.3g}, {np.diag(S).max():.3g}]"
        )
    mean_z = (x.mean(0) - mu) / np.sqrt(np.diag(S) / k)
    iu = np.triu_indices(d)
    var = (S**2 + np.outer(np.diag(S), np.diag(S))) / (k - 1)
    cov_z = (np.cov(x.T).reshape(d, d) - S)[iu] / np.sqrt(var[iu])
    return mean_z, cov_z
