r"""Black–Litterman posterior returns (Black & Litterman 1992; He & Litterman 1999; Idzorek 2005) and the
precision form used by STABLE (ICLR 2026).

Classic form, with prior $\mu_0, \Sigma$, views $P\mu = Q + \varepsilon$, $\varepsilon\sim
N(0,\Omega)$ and confidence scalar $\tau$:

$$
\mu_{BL} = \mu_0 + \tau\Sigma P^\top (\tau P\Sigma P^\top + \Omega)^{-1}(Q - P\mu_0), \qquad
\Sigma_{BL} = \Sigma + \tau\Sigma - \tau\Sigma P^\top(\tau P\Sigma P^\top + \Omega)^{-1} P\tau\Sigma .
$$

$\Sigma_{BL}$ is the *predictive* covariance of returns (He & Litterman 2002), as PyPortfolioOpt's
``bl_cov``. Precision form (STABLE): with prior precision $\Phi = \Sigma_0^{-1}$ and view precision
$\Omega = \Sigma_v^{-1}$,

$$
\mu = (\Phi+\Omega)^{-1}(\Phi\mu_0 + \Omega\mu_v), \qquad \Sigma = (\Phi+\Omega)^{-1},
$$

computed without inverting either matrix as $\mu = \mu_0 + \Sigma_0(\Sigma_0+\Sigma_v)^{-1}(\mu_v-\mu_0)$,
$\Sigma = \Sigma_0(\Sigma_0+\Sigma_v)^{-1}\Sigma_v$ (so a rank-deficient sample view covariance is fine).
It equals the classic form with ``tau=1, P=I, Q=mu_v, omega=Sigma_v`` (posterior covariance of the mean).

Precision. :func:`black_litterman` and :func:`precision_black_litterman` compute in float64 internally (the
solves are ill-conditioned for near-singular priors: in float32 the posterior degraded to 11-34% error there) and
return the inputs' float dtype (float64 for lists and integers). A system that is singular in float64 (a view on a
zero-variance direction of a rank-deficient prior with zero view uncertainty; $\Sigma_0+\Sigma_v$ singular)
raises ``ValueError`` instead of returning NaN. The ``*_core`` functions are the unchecked traceable versions in
the caller's dtype.

Units. Every mean and covariance is per period, all in the same period (daily, or annualised, ...): the posterior
comes back in the units of the inputs. ``tau`` and the Idzorek confidences are unit-free. A ``pandas`` Series or
DataFrame input labeled by ticker gives labeled outputs (a Series mean, a DataFrame covariance).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    as_float64_numpy,
    check_covariance,
    check_dims,
    check_finite,
    check_int,
    check_ndim,
    check_positive,
    check_positive_definite,
    check_vector,
    float_dtype,
)
from jaxkit.portfolio._labels import LabeledMatrix, LabeledVector, check_axis_labels, check_labels, labeled

__all__ = [
    "black_litterman",
    "black_litterman_core",
    "he_litterman_omega",
    "idzorek_omega",
    "market_implied_prior_returns",
    "market_implied_risk_aversion",
    "precision_black_litterman",
    "precision_black_litterman_core",
]


def market_implied_prior_returns(
    market_weights: ArrayInput, cov: ArrayInput, risk_aversion: float, risk_free_rate: float = 0.0
) -> LabeledVector:
    r"""Equilibrium (reverse-optimized) prior $\Pi = \delta\Sigma w_{mkt} + r_f$; weights are normalized to sum
    to one (their sum must be positive: a market portfolio is net long).

    Units: $\Pi$ is per period in the units of ``cov`` (a daily covariance gives daily prior returns);
    ``risk_free_rate`` must be in the same units and ``risk_aversion`` is unit-free (as
    :func:`market_implied_risk_aversion` returns it)."""
    check_covariance("cov", cov)
    check_vector("market_weights", market_weights, np.shape(cov)[0])
    check_positive("risk_aversion", risk_aversion)
    if not np.isfinite(risk_free_rate):
        raise ValueError(f"risk_free_rate: expected a finite value, received {risk_free_rate!r}")
    labels = check_labels(market_weights=market_weights, cov=cov)
    w64 = np.asarray(market_weights, np.float64)
    if not w64.sum() > 1e-9 * np.abs(w64).sum():
        raise ValueError(
            f"market_weights: expected weights with a positive sum (they are normalized by it), received sum "
            f"{w64.sum():.3g}; pass market capitalizations or long weights"
        )
    dt = float_dtype(market_weights, cov)
    w = jnp.asarray(w64 / w64.sum(), dt)
    return labeled(
        risk_aversion * (jnp.asarray(np.asarray(cov, np.float64), dt) @ w) + risk_free_rate, labels, "prior"
    )


def market_implied_risk_aversion(
    market_returns: ArrayInput, frequency: int = 252, risk_free_rate: float = 0.0
) -> Float[Array, ""]:
    r"""Market price of risk $\delta = (E[r] f - r_f) / (\mathrm{Var}[r] f)$ from periodic market returns.

    ``market_returns`` per period with ``frequency`` periods per year (252: daily); ``risk_free_rate`` annualised.
    $\delta$ is unit-free: the same value serves daily or annualised covariances in
    :func:`market_implied_prior_returns`."""
    check_ndim("market_returns", market_returns, 1)
    if np.shape(market_returns)[0] < 2:
        raise ValueError(
            f"market_returns: expected at least 2 periods, received shape {np.shape(market_returns)}"
        )
    check_finite("market_returns", market_returns)
    if not np.isfinite(risk_free_rate):
        raise ValueError(f"risk_free_rate: expected a finite value, received {risk_free_rate!r}")
    check_int("frequency", frequency, minimum=1)
    var = float(np.var(np.asarray(market_returns, np.float64), ddof=1))
    if not var > 1e-12 * max(float(np.max(np.abs(np.asarray(market_returns, np.float64)))) ** 2, 1e-300):
        raise ValueError(
            f"market_returns: expected returns with non-zero variance (the risk aversion divides by "
            f"it), received variance {var:.3g}"
        )
    r = jnp.asarray(market_returns)
    return (jnp.mean(r) * frequency - risk_free_rate) / (jnp.var(r, ddof=1) * frequency)


def _check_tau(tau: Any) -> None:
    if (
        isinstance(tau, bool)
        or not isinstance(tau, int | float | np.integer | np.floating)
        or not (0 < float(tau) <= 1)
    ):
        raise ValueError(f"tau: expected a value in (0, 1], received {tau!r}")


def _check_cov_and_picks(cov: Any, P: Any) -> None:
    """``cov`` an (n, n) covariance and ``P`` a finite (k, n) pick matrix with ``k >= 1`` views (values checked
    when concrete; shapes also when traced, so the helpers stay usable inside ``jax.jit``/``vmap``)."""
    check_covariance("cov", cov)
    check_ndim("P", P, 2, what="a (k, n) pick matrix")
    n = np.shape(cov)[0]
    if np.shape(P)[0] < 1 or np.shape(P)[1] != n:
        raise ValueError(
            f"P: expected shape (k, {n}) with k >= 1 views on the {n} assets of cov, received {np.shape(P)}"
        )
    check_finite("P", P)


def _check_pick_labels(P: Any, labels: Any, cov_name: str) -> None:
    """A pick matrix given as a DataFrame: its columns are the assets of ``cov_name``, in its order."""
    if isinstance(P, pd.DataFrame):
        check_axis_labels("P", P.columns, labels, "the columns of the pick matrix", f"P[{cov_name}.columns]")


def _check_view_labels(name: str, v: Any, P: Any) -> None:
    """A per-view Series (``Q``, ``confidences``) against the rows of a DataFrame pick matrix ``P``."""
    if isinstance(v, pd.Series) and isinstance(P, pd.DataFrame):
        check_axis_labels(
            name, v.index, P.index, "its index (one entry per view, the rows of P)", f"{name}.loc[P.index]"
        )


def he_litterman_omega(cov: ArrayInput, P: ArrayInput, tau: float) -> Float[Array, "k k"]:
    r"""He–Litterman view uncertainty $\Omega = \mathrm{diag}(\tau P\Sigma P^\top)$."""
    _check_tau(tau)
    _check_cov_and_picks(cov, P)
    _check_pick_labels(P, check_labels(cov=cov), "cov")
    S, P = jnp.asarray(cov), jnp.asarray(P)
    return jnp.diag(jnp.diag(tau * P @ S @ P.T))


def idzorek_omega(confidences: ArrayInput, cov: ArrayInput, P: ArrayInput, tau: float) -> Float[Array, "k k"]:
    r"""Idzorek (2005) Ω from percentage confidences $c_k\in[0,1]$, Walters' closed form:
    $\Omega_{kk} = \tau\,\frac{1-c_k}{c_k}\,P_k\Sigma P_k^\top$ (``1e6`` for zero confidence, like
    PyPortfolioOpt)."""
    c = np.asarray(confidences, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(c)) or np.any(c < 0) or np.any(c > 1):
        raise ValueError(f"confidences: expected values in [0, 1], received {c.tolist()}")
    _check_tau(tau)
    _check_cov_and_picks(cov, P)
    _check_pick_labels(P, check_labels(cov=cov), "cov")
    _check_view_labels("confidences", confidences, P)
    if c.shape[0] != np.shape(P)[0]:
        raise ValueError(
            f"confidences: expected one confidence per view, {np.shape(P)[0]} (the rows of P), received "
            f"{c.shape[0]}"
        )
    S, P = jnp.asarray(cov), jnp.asarray(P)
    var = jnp.einsum("ki,ij,kj->k", P, S, P)
    cj = jnp.asarray(c, dtype=var.dtype)
    alpha = jnp.where(cj > 0, (1 - cj) / jnp.where(cj > 0, cj, 1.0), 0.0)
    return jnp.diag(jnp.where(cj > 0, tau * alpha * var, 1e6))


@jax.jit
def _bl_core(mu0, S, P, Q, omega, tau):
    tSP = tau * S @ P.T
    A = P @ tSP + omega
    mean = mu0 + tSP @ jnp.linalg.solve(A, Q - P @ mu0)
    M = tau * S - tSP @ jnp.linalg.solve(A, tSP.T)
    cov = S + M
    return mean, 0.5 * (cov + cov.T)


def black_litterman(
    prior_mean: ArrayInput,
    prior_cov: ArrayInput,
    P: ArrayInput,
    Q: ArrayInput,
    *,
    tau: float = 0.05,
    omega: str | ArrayInput = "he-litterman",
    confidences: ArrayInput | None = None,
) -> tuple[LabeledVector, LabeledMatrix]:
    """Classic Black–Litterman posterior mean and predictive covariance.

    Args:
        prior_mean: (n,) prior expected returns (e.g. :func:`market_implied_prior_returns`).
        prior_cov: (n, n) PSD covariance of returns.
        P: (k, n) pick matrix (rows of absolute views are unit vectors, relative views e.g. ``[1, -1, 0]``).
        Q: (k,) view returns.
        tau: scalar uncertainty of the prior mean, in (0, 1].
        omega: ``"he-litterman"``, ``"idzorek"`` (needs ``confidences``) or a (k, k) PSD array.
        confidences: (k,) Idzorek confidences in [0, 1].
    Returns:
        ``(mean, cov)``; ``cov`` is Σ + M as in He & Litterman (2002) and PyPortfolioOpt's ``bl_cov``.
    """
    check_covariance("prior_cov", prior_cov)
    n = np.shape(prior_cov)[0]
    check_vector("prior_mean", prior_mean, n)
    labels = check_labels(prior_mean=prior_mean, prior_cov=prior_cov)
    _check_pick_labels(P, labels, "prior_cov")
    _check_view_labels("Q", Q, P)
    _check_view_labels("confidences", confidences, P)
    as_float64_numpy("P", P)
    as_float64_numpy("Q", Q)
    check_ndim("P", P, 2, what="a (k, n) pick matrix")
    if np.shape(P)[1] != n:
        raise ValueError(f"P: expected shape (k, {n}) for {n} assets, received shape {np.shape(P)}")
    k = np.shape(P)[0]
    check_finite("P", P)
    check_ndim("Q", Q, 1, what="a (k,) vector of view returns")
    if np.shape(Q)[0] != k:
        raise ValueError(f"Q: expected shape ({k},) to match P's {k} views, received shape {np.shape(Q)}")
    check_finite("Q", Q)
    _check_tau(tau)
    # Omega in float64 too: tau * Sigma rounded to float32 loses a near-singular direction (6% error in the mean)
    S64_, P64_ = np.asarray(prior_cov, np.float64), np.asarray(P, np.float64)
    if isinstance(omega, str):
        if omega == "he-litterman":
            om = np.diag(np.diag(float(tau) * P64_ @ S64_ @ P64_.T))
        elif omega == "idzorek":
            if confidences is None:
                raise ValueError("confidences: required (k values in [0, 1]) when omega='idzorek'")
            if np.size(confidences) != k:
                raise ValueError(f"confidences: expected {k} values, received shape {np.shape(confidences)}")
            with jax.enable_x64(True):
                om = np.asarray(idzorek_omega(confidences, S64_, P64_, tau))
        else:
            raise ValueError(
                f"omega: expected 'he-litterman', 'idzorek' or a (k, k) array, received {omega!r}"
            )
    else:
        check_covariance("omega", omega, k)
        om = jnp.asarray(omega)
    dtype = float_dtype(prior_mean, prior_cov, P, Q, *(() if isinstance(omega, str) else (omega,)))
    S64, P64, om64 = (np.asarray(a, np.float64) for a in (prior_cov, P, om))
    check_positive_definite(
        "omega", float(tau) * P64 @ S64 @ P64.T + om64,
        scale=float(tau) * np.max(np.abs(S64)) * max(np.max(np.abs(P64)), 1e-300) ** 2,
        why="tau P Sigma P^T + omega must be invertible; a view on a zero-variance direction of the prior "
        "(prior_cov) needs an explicit omega > 0",
    )  # fmt: skip
    with jax.enable_x64(True):
        arr = [jnp.asarray(np.asarray(a, np.float64)) for a in (prior_mean, prior_cov, P, Q, om)]
        mean, cov = _bl_core(*arr, jnp.asarray(float(tau), jnp.float64))
        mean, cov = np.asarray(mean), np.asarray(cov)
    return labeled(jnp.asarray(mean, dtype), labels, "mean"), labeled(jnp.asarray(cov, dtype), labels)


@jax.jit
def _precision_core(mu0, S0, muv, Sv):
    A = S0 + Sv
    mean = mu0 + S0 @ jnp.linalg.solve(A, muv - mu0)
    cov = S0 @ jnp.linalg.solve(A, Sv)
    return mean, 0.5 * (cov + cov.T)


def precision_black_litterman(
    prior_mean: ArrayInput,
    prior_cov: ArrayInput,
    view_mean: ArrayInput,
    view_cov: ArrayInput,
    *,
    predictive: bool = False,
) -> tuple[LabeledVector, LabeledMatrix]:
    r"""Precision-form Black–Litterman (STABLE): $\Sigma = (\Phi+\Omega)^{-1}$,
    $\mu = \Sigma(\Phi\mu_0 + \Omega\mu_v)$ with $\Phi=\Sigma_0^{-1}$, $\Omega=\Sigma_v^{-1}$.

    ``predictive=True`` returns $\Sigma_0 + \Sigma$ (the covariance of returns rather than of the mean).
    Inputs per period, all in the same period; outputs in those units.
    Works on a batch of dates through :func:`jax.vmap` of :func:`precision_black_litterman_core`.
    """
    check_covariance("prior_cov", prior_cov)
    n = np.shape(prior_cov)[0]
    check_vector("prior_mean", prior_mean, n)
    check_vector("view_mean", view_mean, n)
    check_covariance("view_cov", view_cov, n)
    labels = check_labels(prior_mean=prior_mean, prior_cov=prior_cov, view_mean=view_mean, view_cov=view_cov)
    dtype = float_dtype(prior_mean, prior_cov, view_mean, view_cov)
    check_positive_definite(
        "prior_cov + view_cov", np.asarray(prior_cov, np.float64) + np.asarray(view_cov, np.float64),
        scale=float(np.max(np.abs(np.asarray(prior_cov, np.float64)))),
        why="the prior and view precisions share a zero-variance direction",
    )  # fmt: skip
    with jax.enable_x64(True):
        arr = [jnp.asarray(np.asarray(a, np.float64)) for a in (prior_mean, prior_cov, view_mean, view_cov)]
        mean, cov = _precision_core(*arr)
        if predictive:
            cov = cov + arr[1]
        mean, cov = np.asarray(mean), np.asarray(cov)
    return labeled(jnp.asarray(mean, dtype), labels, "mean"), labeled(jnp.asarray(cov, dtype), labels)


def precision_black_litterman_core(
    prior_mean: Float[Array, " n"],
    prior_cov: Float[Array, "n n"],
    view_mean: Float[Array, " n"],
    view_cov: Float[Array, "n n"],
) -> tuple[Float[Array, " n"], Float[Array, "n n"]]:
    """Unchecked, traceable precision-form posterior (for ``jit``/``vmap`` over dates): NaN/inf in, or a
    covariance that is not positive definite, gives NaN out (docs/contracts.md); the checked public function
    is :func:`precision_black_litterman`. Shapes are checked (known when tracing), naming the argument."""
    check_dims(
        prior_mean=(prior_mean, ("n",)), prior_cov=(prior_cov, ("n", "n")), view_mean=(view_mean, ("n",)),
        view_cov=(view_cov, ("n", "n")),
    )  # fmt: skip
    return _precision_core(prior_mean, prior_cov, view_mean, view_cov)


def black_litterman_core(
    prior_mean: Float[Array, " n"],
    prior_cov: Float[Array, "n n"],
    P: Float[Array, "k n"],
    Q: Float[Array, " k"],
    omega: Float[Array, "k k"],
    tau: float | Float[Array, ""],
) -> tuple[Float[Array, " n"], Float[Array, "n n"]]:
    """Unchecked, traceable classic posterior with an explicit Ω (for ``jit``/``vmap`` over dates); values are
    not checked, shapes are (known when tracing), naming the argument."""
    check_dims(
        prior_mean=(prior_mean, ("n",)), prior_cov=(prior_cov, ("n", "n")), P=(P, ("k", "n")), Q=(Q, ("k",)),
        omega=(omega, ("k", "k")), tau=(tau, ()),
    )  # fmt: skip
    return _bl_core(prior_mean, prior_cov, P, Q, omega, jnp.asarray(tau, prior_cov.dtype))
