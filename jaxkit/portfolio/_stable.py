r"""STABLE's allocation (ICLR 2026, OpenReview VltZQpfarw), exactly as published, and the long-only variant.

Views from ``k`` sampled return paths per asset (``paths``: (k, H, N)): each path's mean return
$m_j = \frac1H\sum_h r_{j,h}$, then $\mu_v = \frac1k\sum_j m_j$ and the unbiased covariance across samples
$\Sigma_v = \frac1{k-1}\sum_j (m_j-\mu_v)(m_j-\mu_v)^\top$ (singular unless $k > N$). Fusion in precision form with
$P = I$ and no $\tau$: $\Phi=\Sigma_0^{-1}$, $\Omega=\Sigma_v^{-1}$,

$$
\mu_{BL} = (\Phi+\Omega)^{-1}(\Phi\mu_0 + \Omega\mu_v), \qquad \Sigma_{BL} = (\Phi+\Omega)^{-1},
$$

and tangency weights $w = \Sigma_{BL}^{-1}\mu_{BL} / \mathbf 1^\top\Sigma_{BL}^{-1}\mu_{BL}$ (no long-only
constraint stated; shorts allowed).

Two things the paper leaves open, with our documented choices:

- **Guard.** With $z=\Sigma_{BL}^{-1}\mu_{BL}$, the normalization $z/\mathbf 1^\top z$ explodes when the net
  exposure $\mathbf 1^\top z$ is near zero, and flips the portfolio onto the inefficient branch (negative expected
  return) when it is negative. If $\mathbf 1^\top z \le \delta\,\|z\|_1$ (``min_net_exposure`` $\delta$,
  default 0.05) we hold the global minimum-variance portfolio of $\Sigma_{BL}$,
  $\Sigma_{BL}^{-1}\mathbf 1/\mathbf 1^\top\Sigma_{BL}^{-1}\mathbf 1$, instead.
- **Leverage cap.** If the gross exposure $\|w\|_1$ exceeds ``leverage_cap`` $\ell$ (default 3, e.g. 200% long /
  100% short) the weights are scaled by $\ell/\|w\|_1$ and the rest is held in cash at 0% (scaling leaves the
  Sharpe ratio unchanged and caps the risk).

The long-only variant (used by this project before) is the long-only maximum-Sharpe portfolio of
$(\mu_{BL}, \Sigma_0 + \Sigma_{BL})$ (the predictive covariance of returns).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput, DTypeLike
from jaxkit._validate import (
    as_float64_numpy,
    check_covariance,
    check_dims,
    check_int,
    check_positive,
    check_positive_definite,
    check_vector,
    float_dtype,
)
from jaxkit.portfolio._allocation import _resolve_dtype, max_sharpe
from jaxkit.portfolio._black_litterman import precision_black_litterman_core
from jaxkit.portfolio._labels import LabeledVector, check_labels, labeled, precision

__all__ = [
    "STRATEGIES",
    "stable_long_only_weights",
    "stable_views",
    "stable_weights",
    "stable_weights_core",
    "strategy_weights",
]


def stable_views(paths: ArrayInput) -> tuple[Float[Array, " N"], Float[Array, "N N"]]:
    """``(mu_view, Sigma_view)`` from sampled paths (k, H, N) or horizon means (k, N); needs ``k > N``. Units:
    the paths' per-period returns (a path's mean over its ``H`` steps is a per-period return)."""
    x = as_float64_numpy("paths", paths)
    if x.ndim not in (2, 3):
        raise ValueError(f"paths: expected (k, H, N) paths or (k, N) path means, received shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("paths: expected finite values")
    m = x.mean(1) if x.ndim == 3 else x
    k, n = m.shape
    if k <= n:
        raise ValueError(f"paths: expected more samples than assets (k > {n}) for an invertible view covariance, "
                         f"received k = {k}")  # fmt: skip
    dt = float_dtype(paths)
    return jnp.asarray(m.mean(0), dt), jnp.asarray(np.cov(m.T, ddof=1).reshape(n, n), dt)


@jax.jit
def stable_weights_core(
    prior_mean: Float[Array, " N"],
    prior_cov: Float[Array, "N N"],
    view_mean: Float[Array, " N"],
    view_cov: Float[Array, "N N"],
    min_net_exposure: float | Float[Array, ""] = 0.05,
    leverage_cap: float | Float[Array, ""] = 3.0,
) -> tuple[Float[Array, " N"], Float[Array, ""]]:
    """Unchecked, traceable STABLE weights (for ``vmap`` over dates); returns ``(weights, guarded)`` where
    ``guarded`` is 1.0 when the minimum-variance fallback was used. NaN/inf in, or a covariance that is not
    positive definite, gives NaN out (docs/contracts.md); :func:`stable_weights` checks its inputs. Shapes are
    checked here too (known when tracing), naming the argument."""
    check_dims(
        prior_mean=(prior_mean, ("N",)), prior_cov=(prior_cov, ("N", "N")), view_mean=(view_mean, ("N",)),
        view_cov=(view_cov, ("N", "N")),
    )  # fmt: skip
    mu, S = precision_black_litterman_core(prior_mean, prior_cov, view_mean, view_cov)
    n = mu.shape[0]
    z = jnp.linalg.solve(S, mu)
    gmv = jnp.linalg.solve(S, jnp.ones(n, S.dtype))
    net = jnp.sum(z)
    guarded = net <= min_net_exposure * jnp.sum(jnp.abs(z))
    w = jnp.where(guarded, gmv / jnp.sum(gmv), z / jnp.where(guarded, 1.0, net))
    gross = jnp.sum(jnp.abs(w))
    w = w * jnp.minimum(1.0, leverage_cap / gross)
    return w, guarded.astype(S.dtype)


def stable_weights(
    prior_mean: ArrayInput,
    prior_cov: ArrayInput,
    view_mean: ArrayInput,
    view_cov: ArrayInput,
    *,
    min_net_exposure: float = 0.05,
    leverage_cap: float = 3.0,
    dtype: DTypeLike | None = None,
) -> LabeledVector:
    r"""STABLE's published allocation: precision fusion ($P=I$, no $\tau$) then tangency weights, with the
    net-exposure guard and leverage cap of the module docstring. Computed in float64; returned in ``dtype``
    (float32 or float64, as :func:`max_sharpe`'s ``dtype``; ``None``: the inputs' float dtype as JAX holds it,
    float32 unless ``jax_enable_x64``; pass ``dtype=np.float64`` for float64 weights). Weights sum to 1 unless
    the leverage cap moved part of the book to cash. Means and covariances per period, all in the same period
    (the weights do not depend on which); pandas inputs give a Series."""
    check_covariance("prior_cov", prior_cov)
    n = np.shape(prior_cov)[0]
    check_vector("prior_mean", prior_mean, n)
    check_vector("view_mean", view_mean, n)
    check_covariance("view_cov", view_cov, n)
    labels = check_labels(prior_mean=prior_mean, prior_cov=prior_cov, view_mean=view_mean, view_cov=view_cov)
    check_positive("min_net_exposure", min_net_exposure, strict=False)
    check_positive("leverage_cap", leverage_cap)
    if leverage_cap < 1:
        raise ValueError(f"leverage_cap: expected a gross exposure >= 1, received {leverage_cap}")
    for name, c in (("prior_cov", prior_cov), ("view_cov", view_cov)):
        check_positive_definite(
            name, c, why="STABLE inverts it ($\\Phi$, $\\Omega$); for views use k > N paths"
        )
    dt = _resolve_dtype(dtype, prior_mean, prior_cov, view_mean, view_cov)
    with jax.enable_x64(True):
        arr = [jnp.asarray(np.asarray(a, np.float64)) for a in (prior_mean, prior_cov, view_mean, view_cov)]
        w, _ = stable_weights_core(*arr, float(min_net_exposure), float(leverage_cap))
        w = np.asarray(w)
    with precision(dt):
        return labeled(jnp.asarray(w, dt), labels, "weight")


def stable_long_only_weights(
    prior_mean: ArrayInput,
    prior_cov: ArrayInput,
    view_mean: ArrayInput,
    view_cov: ArrayInput,
    *,
    dtype: DTypeLike | None = None,
) -> LabeledVector:
    r"""The long-only variant: long-only maximum Sharpe of $(\mu_{BL}, \Sigma_0 + \Sigma_{BL})$ (falls back to
    long-only minimum variance when no posterior mean is positive, as :func:`max_sharpe` under tracing). Inputs per
    period, all in the same period; pandas inputs give a Series. Computed in float64; returned in ``dtype``
    (``None``: the inputs' float dtype as JAX holds it, float32 unless ``jax_enable_x64``; pass
    ``dtype=np.float64`` for float64 weights)."""
    check_covariance("prior_cov", prior_cov)
    n = np.shape(prior_cov)[0]
    check_vector("prior_mean", prior_mean, n)
    check_vector("view_mean", view_mean, n)
    check_covariance("view_cov", view_cov, n)
    labels = check_labels(prior_mean=prior_mean, prior_cov=prior_cov, view_mean=view_mean, view_cov=view_cov)
    dt = _resolve_dtype(dtype, prior_mean, prior_cov, view_mean, view_cov)
    with jax.enable_x64(True):
        arr = [jnp.asarray(np.asarray(a, np.float64)) for a in (prior_mean, prior_cov, view_mean, view_cov)]
        w = np.asarray(jax.jit(_long_only)(*arr))
    with precision(dt):
        return labeled(jnp.asarray(w, dt), labels, "weight")


def _long_only(prior_mean, prior_cov, view_mean, view_cov):
    mu, S = precision_black_litterman_core(prior_mean, prior_cov, view_mean, view_cov)
    return max_sharpe(mu, S + prior_cov)


STRATEGIES = (
    "1/N",
    "MVO (sample)",
    "MinVar (LW)",
    "BL (hist views)",
    "MVO (diffusion mean)",
    "STABLE (published)",
    "STABLE (long-only)",
)


def strategy_weights(
    window_returns: ArrayInput,
    paths: ArrayInput | None = None,
    *,
    horizon: int,
    risk_aversion: float = 2.5,
    tau: float = 0.05,
    min_net_exposure: float = 0.05,
    leverage_cap: float = 3.0,
) -> dict[str, np.ndarray]:
    r"""Weights (D, N) of every strategy in :data:`STRATEGIES` at ``D`` decision dates, float64, vmapped.

    ``window_returns`` (D, lb, N): the trailing log returns each decision may use; ``paths`` (D, k, H, N):
    sampled future paths (``None``: the diffusion rows are omitted). Per-period prior
    $\mu_0$ = window mean, $\Sigma_0$ = Ledoit–Wolf covariance of the window. Strategies: 1/N; long-only
    max-Sharpe on the sample mean and covariance ("MVO"); long-only min variance (LW); classic BL with the
    equilibrium prior $\delta\Sigma_0 w_{1/N}$, historical-mean views and He–Litterman $\Omega$, then long-only
    max Sharpe; long-only max Sharpe on the diffusion mean with $\Sigma_0$; STABLE as published
    (:func:`stable_weights`) and its long-only variant (:func:`stable_long_only_weights`), both from
    :func:`stable_views` of the paths. Means and covariances are per period ($\times$ ``horizon`` for the
    classic BL, whose views are horizon returns; max-Sharpe weights do not depend on that scale). With paths the
    dict also holds ``"STABLE (published) guard used"`` (D,): 1.0 where the net-exposure guard fired."""
    from jaxkit.portfolio._black_litterman import black_litterman_core, he_litterman_omega
    from jaxkit.portfolio._covariance import ledoit_wolf_core

    check_int("horizon", horizon, minimum=1)
    for name, v in (("risk_aversion", risk_aversion), ("tau", tau)):
        check_positive(name, v)
    X = as_float64_numpy("window_returns", window_returns, ndim=3, what="(dates, lookback, assets)")
    if not np.all(np.isfinite(X)):
        raise ValueError("window_returns: expected finite values")
    D, lb, N = X.shape
    if lb < 2:
        raise ValueError(
            f"window_returns: expected a lookback of at least 2 returns per window, received {lb}"
        )
    flat = np.ptp(X, axis=1) == 0  # (D, N): an asset whose returns do not vary within a window
    if np.any(flat):
        d, n = np.argwhere(flat)[0]
        raise ValueError(
            "window_returns: expected every asset's returns to vary within each window (a constant asset makes "
            "the covariance singular: maximum Sharpe and minimum variance have no unique answer), received "
            f"{int(flat.sum())} constant (window, asset) pairs, the first at window {d}, asset {n}"
        )
    out: dict[str, np.ndarray] = {"1/N": np.full((D, N), 1.0 / N)}
    with jax.enable_x64(True):
        Xj = jnp.asarray(X)
        mu0 = Xj.mean(1)
        S_sample = jax.vmap(lambda x: jnp.cov(x.T))(Xj)
        S_lw = jax.vmap(lambda x: ledoit_wolf_core(x)[0])(Xj)
        ms = jax.jit(jax.vmap(max_sharpe))
        out["MVO (sample)"] = np.asarray(ms(mu0, S_sample))
        out["MinVar (LW)"] = np.asarray(jax.vmap(min_variance_core)(S_lw))
        eye = jnp.eye(N, dtype=jnp.float64)

        def bl_hist(S, q):
            pi = risk_aversion * S @ jnp.full((N,), 1.0 / N)
            return black_litterman_core(pi, S, eye, q, he_litterman_omega(S, eye, tau), tau)

        m_bl, c_bl = jax.vmap(bl_hist)(S_lw * horizon, mu0 * horizon)
        out["BL (hist views)"] = np.asarray(ms(m_bl, c_bl))
        if paths is not None:
            P = as_float64_numpy("paths", paths, ndim=4, what="(dates, k, horizon, assets)")
            if P.shape[0] != D or P.shape[3] != N:
                raise ValueError(f"paths: expected shape ({D}, k, H, {N}), received {P.shape}")
            views = [stable_views(p) for p in P]
            mv = jnp.stack([jnp.asarray(v[0], jnp.float64) for v in views])
            Sv = jnp.stack([jnp.asarray(v[1], jnp.float64) for v in views])
            out["MVO (diffusion mean)"] = np.asarray(ms(mv, S_lw))
            w, guarded = jax.jit(jax.vmap(stable_weights_core, in_axes=(0, 0, 0, 0, None, None)))(
                mu0, S_lw, mv, Sv, min_net_exposure, leverage_cap
            )
            out["STABLE (published)"] = np.asarray(w)
            out["STABLE (published) guard used"] = np.asarray(guarded)
            out["STABLE (long-only)"] = np.asarray(jax.jit(jax.vmap(_long_only))(mu0, S_lw, mv, Sv))
    return out


def min_variance_core(cov: Float[Array, "N N"]) -> Float[Array, " N"]:
    """Traceable long-only minimum variance (no input checks)."""
    from jaxkit.portfolio._allocation import _qp_core

    n = cov.shape[0]
    x, *_ = _qp_core(cov, jnp.zeros(n, cov.dtype), jnp.ones((1, n), cov.dtype), jnp.ones(1, cov.dtype))
    x = jnp.maximum(x, 0.0)
    return x / jnp.sum(x)
