r"""Portfolio allocation rules: tangency, long-only max-Sharpe and mean-variance, minimum variance, equal weight,
inverse volatility.

The long-only problems are convex QPs in standard form

$$
\min_x \tfrac12 x^\top H x + c^\top x \quad\text{s.t.}\quad A x = b,\ x \ge 0,
$$

solved by a Mehrotra predictor–corrector primal–dual interior-point method (Nocedal & Wright 2006, §16.6) written
in ``jax.lax`` so it jits and vmaps over rebalance dates. Max-Sharpe uses the Cornuejols–Tütüncü (2006) change of
variables $y = \kappa w$: $\min y^\top\Sigma y$ s.t. $(\mu - r_f)^\top y = 1,\ y\ge 0$, then
$w = y/\mathbf 1^\top y$ (the same problem PyPortfolioOpt hands to cvxpy).

All public functions check concrete inputs and are also traceable (checks that need values are skipped under
``jit``/``vmap``).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    check_covariance,
    check_finite,
    check_int,
    check_positive,
    check_vector,
    float_dtype,
    is_tracer,
)

__all__ = [
    "equal_weight",
    "inverse_volatility",
    "max_sharpe",
    "mean_variance",
    "min_variance",
    "solve_qp_nonneg",
    "tangency",
]


def _max_step(v, dv):
    ratio = jnp.where(dv < 0, -v / jnp.where(dv < 0, dv, -1.0), jnp.inf)
    return jnp.minimum(1.0, jnp.min(ratio))


def solve_qp_nonneg(
    H: ArrayInput,
    c: ArrayInput,
    A: ArrayInput,
    b: ArrayInput,
    *,
    max_iter: int = 60,
) -> Float[Array, " n"]:
    r"""Solve $\min \tfrac12 x^\top H x + c^\top x$ s.t. $Ax=b,\ x\ge0$ (H PSD) by a primal–dual
    interior-point method with Mehrotra's predictor–corrector; stops when the duality measure and residuals fall
    below $10^{-2}\sqrt{\epsilon}$ (scaled problem) or after ``max_iter`` iterations.

    Concrete inputs are checked (finite, shapes, ``H`` symmetric PSD) and a solve that stops before the tolerance
    (``max_iter`` reached, or a non-finite step) raises ``ValueError`` instead of returning the last iterate.
    Traced inputs (inside ``jit``/``vmap``) are not checked: use it there as an unchecked core."""
    check_int("max_iter", max_iter, minimum=1)
    if any(is_tracer(a) for a in (H, c, A, b)):
        return _qp_core(H, c, A, b, max_iter=max_iter)[0]
    check_covariance("H", H)
    n = np.shape(H)[0]
    check_vector("c", c, n)
    if np.ndim(A) != 2 or np.shape(A)[1] != n:
        raise ValueError(f"A: expected shape (m, {n}), received {np.shape(A)}")
    check_vector("b", b, np.shape(A)[0])
    check_finite("A", A)
    dt = _dtype(H, c, A, b)
    x, ok, err, it = _qp_core(*(jnp.asarray(a, dt) for a in (H, c, A, b)), max_iter=max_iter)
    _raise_unless_converged(bool(ok), float(err), int(it), max_iter)
    return x


def _raise_unless_converged(
    ok: bool, err: float, it: int, max_iter: int, what: str = "solve_qp_nonneg"
) -> None:
    if not ok:
        raise ValueError(
            f"max_iter: {what} stopped after {it} of max_iter={max_iter} interior-point iterations "
            f"with residual {err:.3g} above the tolerance; raise max_iter (or check the problem is "
            "convex and feasible)"
        )


@functools.partial(jax.jit, static_argnames=("max_iter",))
def _qp_core(H, c, A, b, *, max_iter: int = 60):
    """The interior-point solve: ``(x, converged, error, iterations)``."""
    n, m = H.shape[0], A.shape[0]
    dtype = H.dtype
    eps = jnp.finfo(dtype).eps
    tol = 1e-2 * jnp.sqrt(eps)
    scale = jnp.maximum(jnp.max(jnp.abs(jnp.diag(H))), jnp.max(jnp.abs(c)))
    scale = jnp.where(scale > 0, scale, 1.0)
    H, c = H / scale, c / scale
    anorm = jnp.maximum(jnp.max(jnp.abs(A), axis=1), jnp.finfo(dtype).tiny)
    A, b = A / anorm[:, None], b / anorm

    def factor(x, s):
        # Schur complement of the KKT system: (H + S/X) dx - A^T dl = r1, A dx = r2, with H + S/X SPD.
        L = jnp.linalg.cholesky(H + jnp.diag(s / x))
        HAt = jax.scipy.linalg.cho_solve((L, True), A.T)
        return L, HAt, jnp.linalg.inv(A @ HAt)

    def solve_newton(fac, x, s, rd, rp, rc):
        L, HAt, schur_inv = fac
        r1, r2 = -rd - rc / x, -rp
        Hr1 = jax.scipy.linalg.cho_solve((L, True), r1)
        dl = schur_inv @ (r2 - A @ Hr1)
        dx = Hr1 + HAt @ dl
        ds = -(rc + s * dx) / x
        return dx, dl, ds

    def residuals(x, lam, s):
        return H @ x + c - A.T @ lam - s, A @ x - b

    def cond(state):
        it, x, lam, s = state
        rd, rp = residuals(x, lam, s)
        err = jnp.maximum(jnp.dot(x, s) / n, jnp.maximum(jnp.max(jnp.abs(rd)), jnp.max(jnp.abs(rp))))
        return (it < max_iter) & (err > tol) & jnp.all(jnp.isfinite(x))

    def body(state):
        it, x, lam, s = state
        rd, rp = residuals(x, lam, s)
        mu = jnp.dot(x, s) / n
        fac = factor(x, s)
        dxa, dla, dsa = solve_newton(fac, x, s, rd, rp, x * s)
        apa, ada = _max_step(x, dxa), _max_step(s, dsa)
        mu_aff = jnp.dot(x + apa * dxa, s + ada * dsa) / n
        sigma = (mu_aff / mu) ** 3
        dx, dl, ds = solve_newton(fac, x, s, rd, rp, x * s + dxa * dsa - sigma * mu)
        ap = 0.99 * _max_step(x, dx)
        ad = 0.99 * _max_step(s, ds)
        new = (it + 1, x + ap * dx, lam + ad * dl, s + ad * ds)
        ok = jnp.all(jnp.isfinite(new[1])) & jnp.all(jnp.isfinite(new[3]))
        return jax.tree.map(lambda a, o: jnp.where(ok, a, o), new, (it + max_iter, x, lam, s))

    def error(x, lam, s):
        rd, rp = residuals(x, lam, s)
        return jnp.maximum(jnp.dot(x, s) / n, jnp.maximum(jnp.max(jnp.abs(rd)), jnp.max(jnp.abs(rp))))

    init = (jnp.asarray(0), jnp.ones(n, dtype), jnp.zeros(m, dtype), jnp.ones(n, dtype))
    it, x, lam, s = jax.lax.while_loop(cond, body, init)
    err = error(x, lam, s)
    ok = (err <= tol) & jnp.all(jnp.isfinite(x))
    return jnp.maximum(x, 0.0), ok, err * scale, jnp.minimum(it, max_iter)


def _solve_checked(H, c, A, b, max_iter: int, what: str):
    x, ok, err, it = _qp_core(H, c, A, b, max_iter=max_iter)
    if not is_tracer(ok):  # traced (a risk aversion under jit): unchecked, like the *_core functions
        _raise_unless_converged(bool(ok), float(err), int(it), max_iter, what)
    return x


def _normalize(w):
    w = jnp.maximum(w, 0.0)
    return w / jnp.sum(w)


def _check_mean_cov(mean: Any, cov: Any) -> None:
    check_covariance("cov", cov)
    check_vector("mean", mean, np.shape(cov)[0])


def _dtype(*xs):
    return float_dtype(*xs)


def min_variance(cov: ArrayInput, *, max_iter: int = 60) -> Float[Array, " n"]:
    r"""Long-only minimum variance: $\min w^\top\Sigma w$ s.t. $\mathbf 1^\top w = 1,\ w\ge 0$."""
    check_covariance("cov", cov)
    check_int("max_iter", max_iter, minimum=1)
    S = jnp.asarray(cov, _dtype(cov))
    n = S.shape[0]
    x = _solve_checked(
        S, jnp.zeros(n, S.dtype), jnp.ones((1, n), S.dtype), jnp.ones(1, S.dtype), max_iter, "min_variance"
    )
    return _normalize(x)


def mean_variance(
    mean: ArrayInput, cov: ArrayInput, risk_aversion: float = 1.0, *, max_iter: int = 60
) -> Float[Array, " n"]:
    r"""Long-only quadratic utility $\max w^\top\mu - \tfrac\delta2 w^\top\Sigma w$ s.t.
    $\mathbf 1^\top w = 1,\ w\ge0$ (PyPortfolioOpt's ``max_quadratic_utility``)."""
    _check_mean_cov(mean, cov)
    if not is_tracer(risk_aversion):
        check_positive("risk_aversion", risk_aversion)
    dt = _dtype(mean, cov)
    mu, S = jnp.asarray(mean, dt), jnp.asarray(cov, dt)
    n = S.shape[0]
    x = _solve_checked(
        risk_aversion * S, -mu, jnp.ones((1, n), dt), jnp.ones(1, dt), max_iter, "mean_variance"
    )
    return _normalize(x)


def max_sharpe(
    mean: ArrayInput, cov: ArrayInput, risk_free_rate: float = 0.0, *, max_iter: int = 60
) -> Float[Array, " n"]:
    r"""Long-only maximum Sharpe ratio $\max (w^\top\mu - r_f)/\sqrt{w^\top\Sigma w}$, $w\ge0$,
    $\mathbf 1^\top w=1$.

    Needs one asset with $\mu_i > r_f$ (``ValueError`` otherwise, on concrete input). Under tracing, a
    date where no asset beats $r_f$ falls back to the long-only minimum variance portfolio.
    """
    _check_mean_cov(mean, cov)
    dt = _dtype(mean, cov)
    mu, S = jnp.asarray(mean, dt), jnp.asarray(cov, dt)
    excess = mu - risk_free_rate
    if not is_tracer(excess) and not bool(jnp.max(excess) > 0):
        raise ValueError(
            f"mean: at least one expected return must exceed risk_free_rate={risk_free_rate}, "
            f"max is {float(jnp.max(mu)):.4g}"
        )
    n = S.shape[0]
    row = jnp.where(
        jnp.max(excess) > 0, excess, jnp.ones(n, dt)
    )  # fallback: min variance (one QP either way)
    y = _solve_checked(S, jnp.zeros(n, dt), row[None, :], jnp.ones(1, dt), max_iter, "max_sharpe")
    return _normalize(y)


def tangency(mean: ArrayInput, cov: ArrayInput, risk_free_rate: float = 0.0) -> Float[Array, " n"]:
    r"""Unconstrained tangency portfolio $w \propto \Sigma^{-1}(\mu - r_f)$, normalized to sum to one."""
    _check_mean_cov(mean, cov)
    if not np.isfinite(float(risk_free_rate)):
        raise ValueError(f"risk_free_rate: expected a finite value, received {risk_free_rate!r}")
    dt = _dtype(mean, cov)
    z = jnp.linalg.solve(jnp.asarray(cov, dt), jnp.asarray(mean, dt) - risk_free_rate)
    return z / jnp.sum(z)


def equal_weight(n: int) -> Float[Array, " n"]:
    """The 1/N portfolio."""
    check_int("n", n, minimum=1)
    return jnp.full((n,), 1.0 / n)


def inverse_volatility(cov: ArrayInput) -> Float[Array, " n"]:
    r"""Weights $w_i \propto 1/\sigma_i$."""
    check_covariance("cov", cov)
    var = np.diag(np.asarray(cov, np.float64))
    if np.any(var <= 0):
        raise ValueError(
            f"cov: expected positive variances on the diagonal (weights are 1/sigma), received "
            f"{int(np.sum(var <= 0))} zero variances at assets {np.flatnonzero(var <= 0).tolist()}"
        )
    inv = 1.0 / jnp.sqrt(jnp.diag(jnp.asarray(cov, _dtype(cov))))
    return inv / jnp.sum(inv)
