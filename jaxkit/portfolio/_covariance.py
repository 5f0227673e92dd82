r"""Covariance estimators: sample covariance and Ledoit–Wolf shrinkage (Ledoit & Wolf 2004, "A well-conditioned
estimator for large-dimensional covariance matrices").

Ledoit–Wolf shrinks the (maximum-likelihood, ``1/T``) sample covariance $S$ towards $m I$,
$m = \mathrm{tr}(S)/p$: $\hat\Sigma = (1-\delta) S + \delta m I$ with
$\delta = \min(\bar b^2, d^2)/d^2$, $d^2 = \|S - mI\|_F^2/p$,
$\bar b^2 = \frac{1}{pT^2}\sum_t \|x_t x_t^\top - S\|_F^2$ (the same estimator as scikit-learn's
``ledoit_wolf``).

Units: the covariance is per period of the returns given (daily returns give a daily covariance; multiply by 252
to annualise). A pandas DataFrame of returns (dates × tickers) gives a DataFrame labeled by ticker.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import check_finite, check_ndim
from jaxkit.portfolio._labels import LabeledMatrix, labeled

__all__ = ["ledoit_wolf", "ledoit_wolf_core", "sample_covariance"]


def _check_returns(name: str, x: Any) -> None:
    check_ndim(name, x, 2, what="a (time, assets) matrix of returns")
    if np.shape(x)[0] < 2:
        raise ValueError(f"{name}: expected at least 2 observations, received shape {np.shape(x)}")
    check_finite(name, x)


def sample_covariance(returns: ArrayInput, *, ddof: int = 1) -> LabeledMatrix:
    """Sample covariance of a (time, assets) return matrix."""
    _check_returns("returns", returns)
    if (
        isinstance(ddof, bool)
        or not isinstance(ddof, int | np.integer)
        or not 0 <= ddof < np.shape(returns)[0]
    ):
        raise ValueError(
            f"ddof: expected an integer in [0, {np.shape(returns)[0]}) (the number of observations), "
            f"received {ddof!r}"
        )
    labels = _columns(returns)
    x = jnp.asarray(np.asarray(returns)) if labels is not None else jnp.asarray(returns)
    x = x - jnp.mean(x, axis=0)
    return labeled(x.T @ x / (x.shape[0] - ddof), labels)


@jax.jit
def ledoit_wolf_core(returns: Float[Array, "t n"]) -> tuple[Float[Array, "n n"], Float[Array, ""]]:
    """Unchecked, traceable Ledoit–Wolf (centers the data); returns ``(covariance, shrinkage)``.

    Values are not checked (NaN/inf in, NaN/inf out); the shape is, as it is known when tracing: at least 2
    observations of at least 1 asset (``ValueError`` naming ``returns`` otherwise)."""
    t, p = returns.shape
    if t < 2 or p < 1:
        raise ValueError(
            f"returns: expected a (time, assets) matrix with at least 2 observations and 1 asset, received "
            f"shape {returns.shape}"
        )
    x = returns - jnp.mean(returns, axis=0)
    S = x.T @ x / t
    m = jnp.trace(S) / p
    x2 = x**2
    beta_ = jnp.sum(x2.T @ x2) / t  # sum_t sum_ij x_ti^2 x_tj^2 / T
    delta_ = jnp.sum(S**2)
    beta = (beta_ - delta_) / (p * t)
    delta = (delta_ - 2 * m * jnp.trace(S) + p * m**2) / p
    beta = jnp.minimum(beta, delta)
    shrink = jnp.where(beta == 0, 0.0, beta / jnp.where(delta == 0, 1.0, delta))
    # one asset: S is already the target m*I (delta = 0 up to rounding), so no shrinkage, as sklearn's ledoit_wolf
    if p == 1:
        shrink = jnp.zeros_like(shrink)
    cov = (1 - shrink) * S + shrink * m * jnp.eye(p, dtype=S.dtype)
    return 0.5 * (cov + cov.T), shrink


def ledoit_wolf(returns: ArrayInput) -> tuple[LabeledMatrix, Float[Array, ""]]:
    """Ledoit–Wolf shrunk covariance of a (time, assets) return matrix; returns ``(covariance, shrinkage)``."""
    _check_returns("returns", returns)
    labels = _columns(returns)
    x = jnp.asarray(np.asarray(returns)) if labels is not None else jnp.asarray(returns)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(float)
    cov, shrink = ledoit_wolf_core(x)
    return labeled(cov, labels), shrink


def _columns(returns: Any) -> list | None:
    import pandas as pd

    return list(returns.columns) if isinstance(returns, pd.DataFrame) else None
