"""Baseline path forecasters from a trailing window of log returns (T, N): historical block bootstrap, rolling
Gaussian, EWMA-volatility Gaussian with the window's correlation, and per-asset GARCH(1,1) from the ``arch``
package. Each returns ``(n_samples, horizon, N)`` paths."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_int, check_size, seed_rng

__all__ = ["ewma_gaussian", "garch_paths", "historical_bootstrap", "rolling_gaussian"]


def _window(returns: Any, horizon: int, n_samples: int) -> np.ndarray:
    check_int("horizon", horizon, minimum=1)
    check_int("n_samples", n_samples, minimum=1)
    r = np.asarray(returns, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"returns: expected a (time, assets) window, received shape {r.shape}")
    if r.shape[0] < horizon + 1:
        raise ValueError(f"returns: expected more than horizon={horizon} rows, received {r.shape[0]}")
    if not np.all(np.isfinite(r)):
        raise ValueError("returns: expected finite values")
    check_size(
        "n_samples",
        8 * n_samples * (horizon * r.shape[1] + 1),
        hint=f"{n_samples} paths x {horizon} steps x {r.shape[1]} assets in float64",
    )
    return r


def historical_bootstrap(returns: ArrayInput, horizon: int, n_samples: int, *, seed: int = 0) -> np.ndarray:
    """Paths are random contiguous blocks of ``horizon`` past rows (keeps cross-asset and short serial
    dependence)."""
    r = _window(returns, horizon, n_samples)
    starts = seed_rng(seed).integers(0, r.shape[0] - horizon + 1, n_samples)
    return np.stack([r[s : s + horizon] for s in starts])


def rolling_gaussian(returns: ArrayInput, horizon: int, n_samples: int, *, seed: int = 0) -> np.ndarray:
    """i.i.d. steps from N(sample mean, sample covariance) of the window."""
    r = _window(returns, horizon, n_samples)
    mu, cov = r.mean(0), np.atleast_2d(np.cov(r.T))
    if np.linalg.eigvalsh(cov).min() <= 1e-12 * max(float(np.trace(cov)), 1e-300):
        raise ValueError(
            "returns: expected a window whose sample covariance is positive definite (assets that vary and are "
            f"not collinear), received eigenvalues down to {np.linalg.eigvalsh(cov).min():.3g}"
        )
    rng = seed_rng(seed)
    return rng.multivariate_normal(mu, cov, size=(n_samples, horizon), method="cholesky")


def ewma_gaussian(
    returns: ArrayInput, horizon: int, n_samples: int, *, decay: float = 0.94, seed: int = 0
) -> np.ndarray:
    r"""i.i.d. zero-mean Gaussian steps with the RiskMetrics volatility at the window's last row and the window's
    correlation (no learning): $x_{h} \sim \mathcal N(0, D R D)$ with $D = \mathrm{diag}(\sigma_T)$,
    $\sigma_T^2 = \sum_{j\ge0}\lambda^j r_{T-j}^2 / \sum_{j\ge0}\lambda^j$ over the window
    (:func:`jaxkit.forecast.ewma_volatility`, J.P. Morgan/Reuters 1996, daily $\lambda = 0.94$) and $R$ the sample
    correlation of the window (constant conditional correlation, Bollerslev 1990)."""
    from jaxkit.forecast._data import ewma_volatility

    r = _window(returns, horizon, n_samples)
    if not 0.0 < decay < 1.0:
        raise ValueError(f"decay: expected a value in (0, 1), received {decay}")
    sd = r.std(axis=0)
    if np.any(sd == 0):
        const = np.flatnonzero(sd == 0).tolist()
        raise ValueError(f"returns: expected every asset to vary in the window, constant columns {const}")
    vol = ewma_volatility(r, decay=decay)[-1]
    cov = vol[:, None] * np.corrcoef(r.T).reshape(r.shape[1], r.shape[1]) * vol[None, :]
    rng = seed_rng(seed)
    return rng.multivariate_normal(np.zeros(r.shape[1]), cov, size=(n_samples, horizon), method="eigh")


def garch_paths(returns: ArrayInput, horizon: int, n_samples: int, *, seed: int = 0) -> np.ndarray:
    """Per-asset constant-mean GARCH(1,1) with normal innovations (``arch.arch_model``), fitted on the window
    (in percent) and simulated ``horizon`` steps ahead; assets are simulated independently."""
    from arch import arch_model

    r = _window(returns, horizon, n_samples)
    out = np.empty((n_samples, horizon, r.shape[1]))
    rng = seed_rng(seed)
    for i in range(r.shape[1]):
        am = arch_model(100 * r[:, i], mean="Constant", vol="GARCH", p=1, q=1, dist="normal", rescale=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = am.fit(disp="off", show_warning=False)
            fc = res.forecast(
                horizon=horizon, method="simulation", simulations=n_samples, reindex=False,
                rng=lambda size: rng.standard_normal(size),
            )  # fmt: skip
        out[:, :, i] = fc.simulations.values[-1] / 100
    return out
