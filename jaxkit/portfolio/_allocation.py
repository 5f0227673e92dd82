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

Units. Every function takes per-period quantities (a mean and a covariance of returns over the same period:
daily, monthly or annualised, as long as ``mean``, ``cov`` and ``risk_free_rate`` agree). No weight depends on
that period: scaling the mean and the covariance by the same factor leaves every rule's solution unchanged
(:func:`mean_variance`'s ``risk_aversion`` is unit-free). Mixing periods (daily mean, annual covariance) does change
the weights.

Precision. The interior-point solves are rescaled internally (each asset by its volatility, the mean and the
budget row to unit size), so float32 inputs at daily scale (variances ~1e-4, means ~1e-4) solve to float32
accuracy. Each solve ends by polishing (OSQP's *solution polishing*): the equality-constrained QP on the support
the iterate identifies ($x_i > s_i$) is solved exactly and accepted only if it satisfies the KKT conditions, a
certificate of optimality; this settles degenerate vertex solutions (one asset beating $r_f$ by a hair, daily
float32 views) where the float32 iterates stall. ``dtype=`` chooses the precision per call (``jnp.float64`` computes in float64 without the global
``jax_enable_x64`` flag); the default is the inputs' float dtype. If a solve cannot reach the tolerance the error
says whether more iterations would help (still improving at ``max_iter``) or the precision is the limit (stalled:
pass ``dtype=jnp.float64``).

pandas. A ``mean`` Series or ``cov`` DataFrame (labels = tickers, as PyPortfolioOpt and skfolio take them) gives
a Series of weights with the same labels; arrays give arrays.

All public functions check concrete inputs and are also traceable (``dtype`` and labels then follow the traced
inputs). Under ``jit``/``vmap`` the value checks that decide whether an answer exists (finite inputs, a converged
solve, a tangency portfolio with positive net exposure) raise a run-time error (``eqx.error_if``); the shape and
PSD checks run on concrete values only.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput, DTypeLike
from jaxkit._validate import (
    check_covariance,
    check_finite,
    check_int,
    check_positive,
    check_size,
    check_vector,
    error_if_invalid,
    finite_checked,
    float_dtype,
    is_tracer,
)
from jaxkit.portfolio._labels import LabeledVector, check_labels, labeled, precision

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


STALL_ITERATIONS = 8  # iterations without a 1% drop of the residual after which a solve counts as stalled


def _resolve_dtype(dtype: Any, *xs: Any) -> Any:
    """``dtype`` (float32 or float64) or the inputs' float dtype."""
    if dtype is None:
        return _dtype(*xs)
    d = np.dtype(dtype)
    if d not in (np.float32, np.float64):
        raise ValueError(
            f"dtype: expected float32 or float64 (or None: the inputs' dtype), received {dtype!r}"
        )
    return d


def solve_qp_nonneg(
    H: ArrayInput,
    c: ArrayInput,
    A: ArrayInput,
    b: ArrayInput,
    *,
    max_iter: int = 60,
    dtype: DTypeLike | None = None,
) -> Float[Array, " n"]:
    r"""Solve $\min \tfrac12 x^\top H x + c^\top x$ s.t. $Ax=b,\ x\ge0$ (H PSD) by a primal–dual
    interior-point method with Mehrotra's predictor–corrector; stops when the duality measure and residuals fall
    below $10^{-2}\sqrt{\epsilon}$ (scaled problem) or after ``max_iter`` iterations.

    Concrete inputs are checked (finite, shapes, ``H`` symmetric PSD) and a solve that stops before the tolerance
    raises ``ValueError`` instead of returning the last iterate, saying whether more iterations would help or the
    precision is the limit (pass ``dtype=jnp.float64``). Infeasible constraints (no ``x >= 0`` with ``A x = b``)
    and an objective unbounded below raise ``ValueError`` up front saying so; redundant consistent rows of ``A``
    are dropped. Under ``jit``/``vmap`` (traced inputs, ``A`` of full row rank) non-finite inputs and a solve that
    stops before the tolerance raise a run-time error (``eqx.error_if``) instead. No units: ``H``, ``c``, ``A``,
    ``b`` as the problem states."""
    check_int("max_iter", max_iter, minimum=1)
    if any(is_tracer(a) for a in (H, c, A, b)):
        H, c, A, b = (finite_checked(nm, jnp.asarray(a)) for nm, a in zip("HcAb", (H, c, A, b)))
        x, ok, *_ = _qp_core(H, c, A, b, max_iter=max_iter)
        return _error_unless_converged(x, ok, "solve_qp_nonneg")
    check_covariance("H", H)
    n = np.shape(H)[0]
    check_vector("c", c, n)
    if np.ndim(A) != 2 or np.shape(A)[1] != n:
        raise ValueError(f"A: expected shape (m, {n}), received {np.shape(A)}")
    if np.ndim(b) != 1 or np.shape(b)[0] != np.shape(A)[0]:
        raise ValueError(
            f"b: expected shape ({np.shape(A)[0]},), one entry per row of A, received shape {np.shape(b)}"
        )
    check_vector("b", b, np.shape(A)[0])
    check_finite("A", A)
    dt = _resolve_dtype(dtype, H, c, A, b)
    A, b = _independent_feasible(np.asarray(H, np.float64), np.asarray(c, np.float64), A, b)
    with precision(dt):
        x, ok, err, it, stalled = _qp_core(
            *(jnp.asarray(np.asarray(a, np.float64), dt) for a in (H, c, A, b)), max_iter=max_iter
        )
        _raise_unless_converged(bool(ok), float(err), int(it), max_iter, "solve_qp_nonneg", bool(stalled), dt)
    return x


def _independent_feasible(H: np.ndarray, c: np.ndarray, A: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Concrete ``(A, b)`` reduced to linearly independent rows, after checking that ``A x = b, x >= 0`` has a
    solution and that the objective is bounded below on it (``ValueError`` saying which fails; the interior-point
    iteration needs independent rows and would otherwise only report that it did not converge)."""
    import scipy.linalg
    import scipy.optimize

    A, b = np.asarray(A, np.float64), np.asarray(b, np.float64)
    m, n = A.shape
    scale = max(float(np.abs(A).max(initial=0.0)), float(np.abs(b).max(initial=0.0)), 1e-300)
    if m:
        _, r, piv = scipy.linalg.qr(A.T, mode="economic", pivoting=True)
        diag = np.abs(np.diag(r))
        rank = int(np.sum(diag > 1e-10 * max(diag.max(initial=0.0), 1e-300)))
        keep = np.sort(piv[:rank])
        if rank < m:
            x_ls = np.linalg.lstsq(A[keep], b[keep], rcond=None)[0] if rank else np.zeros(n)
            gap = float(np.abs(A @ x_ls - b).max())
            if gap > 1e-8 * scale:
                raise ValueError(
                    f"A, b: the equality constraints A x = b are inconsistent (rank(A) = {rank} < {m} rows and "
                    f"no x satisfies all of them, residual {gap:.3g}): the problem is infeasible"
                )
            A, b = A[keep], b[keep]
    lp = scipy.optimize.linprog(np.zeros(n), A_eq=A if len(A) else None, b_eq=b if len(A) else None,
                                bounds=(0, None), method="highs")  # fmt: skip
    if lp.status == 2:
        raise ValueError(
            "A, b: no x >= 0 satisfies A x = b (the constraints are infeasible); check the signs and the "
            f"right-hand side b = {np.array2string(b, precision=4, threshold=8)}"
        )
    # unbounded below iff a direction d >= 0 with A d = 0, H d = 0 and c.d < 0 exists (H PSD)
    hs = max(float(np.abs(H).max(initial=0.0)), float(np.abs(c).max(initial=0.0)), 1e-300)
    rows = np.vstack([A, H / hs]) if len(A) else H / hs
    ray = scipy.optimize.linprog(c / hs, A_eq=rows, b_eq=np.zeros(len(rows)), A_ub=np.ones((1, n)),
                                 b_ub=[1.0], bounds=(0, None), method="highs")  # fmt: skip
    if ray.status == 0 and ray.fun < -1e-9:
        raise ValueError(
            "H, c: the objective is unbounded below on the feasible set (a direction d >= 0 with A d = 0, "
            "H d = 0 and c.d < 0 exists); add a constraint or curvature"
        )
    return A, b


# the problem data of each solver entry point, named in a stall's message
_DATA = {
    "solve_qp_nonneg": "H, c, A, b",
    "min_variance": "cov",
    "mean_variance": "mean, cov, risk_aversion",
    "max_sharpe": "mean, cov",
}


def _raise_unless_converged(
    ok: bool, err: float, it: int, max_iter: int, what: str = "solve_qp_nonneg", stalled: bool = False,
    dtype: Any = None,
) -> None:  # fmt: skip
    if ok:
        return
    if stalled:
        cause = (
            "the problem is infeasible or unbounded, or float32 precision is the limit: pass dtype=jnp.float64 "
            "to tell them apart"
            if np.dtype(dtype) != np.float64
            else "check that the problem is convex and feasible"
        )
        raise ValueError(
            f"{_DATA.get(what, what)}: {what}'s interior-point iteration stalled on these inputs after {it} "
            f"iterations at residual {err:.3g} (no progress for {STALL_ITERATIONS} iterations, or iterates running "
            f"away: a larger max_iter does not help); {cause}"
        )
    raise ValueError(
        f"max_iter: {what} stopped after {it} of max_iter={max_iter} interior-point iterations on these inputs "
        f"({_DATA.get(what, what)}) with residual {err:.3g} above the tolerance while still improving; raise max_iter"
    )


@functools.partial(jax.jit, static_argnames=("max_iter",))
def _qp_core(H, c, A, b, *, max_iter: int = 60):
    """The interior-point solve: ``(x, converged, error, iterations, stalled)``."""
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

    def error(x, lam, s):
        rd, rp = residuals(x, lam, s)
        return jnp.maximum(jnp.dot(x, s) / n, jnp.maximum(jnp.max(jnp.abs(rd)), jnp.max(jnp.abs(rp))))

    def cond(state):
        it, x, lam, s, best, since = state
        err = error(x, lam, s)
        return (it < max_iter) & (err > tol) & jnp.all(jnp.isfinite(x)) & (since < STALL_ITERATIONS)

    def body(state):
        it, x, lam, s, best, since = state
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
        new = (x + ap * dx, lam + ad * dl, s + ad * ds)
        ok = jnp.all(jnp.isfinite(new[0])) & jnp.all(jnp.isfinite(new[2]))
        x, lam, s = jax.tree.map(lambda a, o: jnp.where(ok, a, o), new, (x, lam, s))
        err = error(x, lam, s)
        better = err < 0.99 * best
        it = jnp.where(ok, it + 1, it + max_iter)
        return it, x, lam, s, jnp.where(better, err, best), jnp.where(better, 0, since + 1)

    init_x, init_s = jnp.ones(n, dtype), jnp.ones(n, dtype)
    init = (jnp.asarray(0), init_x, jnp.zeros(m, dtype), init_s, jnp.asarray(jnp.inf, dtype), jnp.asarray(0))
    it, x, lam, s, best, since = jax.lax.while_loop(cond, body, init)
    err = error(x, lam, s)
    ok = (err <= tol) & jnp.all(jnp.isfinite(x))
    # no progress for STALL_ITERATIONS, or iterates that have run away from their best point (infeasible/unbounded)
    stalled = (since >= STALL_ITERATIONS) | (err > 1e3 * best) | (jnp.max(jnp.abs(x)) > 1e12)
    # Polish (as OSQP's solution polishing): guess the support from the iterate (x_i > s_i), solve the
    # equality-constrained QP on it exactly, and accept the result when it satisfies the KKT conditions -- a
    # certificate of optimality for a convex QP, independent of how the iteration ended. In float32 the iterates
    # of a degenerate problem (a vertex solution: inactive x_i -> 1e-35, s_i/x_i overflowing) stall far above the
    # tolerance although the support is already right; the polished point then certifies the solution.
    xp, kkt = _polish(H, c, A, b, x > s)
    polished = jnp.isfinite(kkt) & (kkt <= jnp.maximum(tol, 10 * jnp.sqrt(eps)))
    # A converged iterate stays when the polished point lies away from it: the reduced KKT system is then singular
    # (the minimizer is not unique, e.g. duplicate assets), its solution one arbitrary point of the optimal set,
    # while the central path ends at that set's analytic center (an equal split between duplicates).
    polished = polished & (~ok | (jnp.max(jnp.abs(xp - x)) <= 10 * jnp.sqrt(tol)))
    x = jnp.where(polished, xp, x)
    err = jnp.where(polished, jnp.minimum(kkt, err), err)
    ok = ok | polished
    stalled = stalled & ~polished
    return jnp.maximum(x, 0.0), ok, err * scale, jnp.minimum(it, max_iter), stalled


def _polish(H, c, A, b, support):
    r"""Solve $\min \tfrac12 x^\top Hx + c^\top x$ s.t. $Ax=b$, $x_i = 0$ off ``support``, from the KKT system
    (one step of iterative refinement), and return ``(x, kkt)``: ``kkt`` is the largest violation of primal
    feasibility ($|Ax-b|$, $x\ge0$) and dual feasibility ($s = Hx + c - A^\top\lambda \ge 0$ off the support;
    $s = 0$ on it by construction, so complementarity holds exactly); ``inf`` when the reduced system is
    singular or the support empty."""
    n, m = H.shape[0], A.shape[0]
    on = support.astype(H.dtype)
    Hm = H * on[:, None] * on[None, :] + jnp.diag(1.0 - on)
    Am = A * on[None, :]
    K = jnp.block([[Hm, Am.T], [Am, jnp.zeros((m, m), H.dtype)]])
    rhs = jnp.concatenate([-c * on, b])
    sol = jnp.linalg.solve(K, rhs)
    sol = sol + jnp.linalg.solve(K, rhs - K @ sol)  # one step of iterative refinement
    x, lam = sol[:n] * on, -sol[n:]
    s = H @ x + c - A.T @ lam
    kkt = jnp.maximum(
        jnp.maximum(jnp.max(jnp.abs(A @ x - b)), jnp.max(jnp.maximum(-x, 0.0))),
        jnp.max(jnp.maximum(-s, 0.0) * (1.0 - on)),
    )
    kkt = jnp.where(jnp.all(jnp.isfinite(sol)) & jnp.any(support), kkt, jnp.inf)
    return x, kkt


def _solve_checked(H, c, A, b, max_iter: int, what: str):
    x, ok, err, it, stalled = _qp_core(H, c, A, b, max_iter=max_iter)
    if is_tracer(ok):  # under jit/vmap: the same contract as eagerly, as a run-time error
        return _error_unless_converged(x, ok, what)
    _raise_unless_converged(bool(ok), float(err), int(it), max_iter, what, bool(stalled), H.dtype)
    return x


def _error_unless_converged(x: Array, ok: Array, what: str) -> Array:
    return error_if_invalid(
        x,
        ~ok,
        f"{_DATA.get(what, what)}: {what}'s interior-point solve did not reach its tolerance (under jit: "
        "infeasible or unbounded "
        "problem, too few max_iter, or float32 precision; call it eagerly for the diagnosis)",
    )


def _normalize(w):
    w = jnp.maximum(w, 0.0)
    return w / jnp.sum(w)


def _check_mean_cov(mean: Any, cov: Any) -> list | None:
    check_covariance("cov", cov)
    check_vector("mean", mean, np.shape(cov)[0])
    return check_labels(mean=mean, cov=cov)


def _dtype(*xs):
    return float_dtype(*xs)


def _arr(x: Any, dt: Any, name: str = "") -> Array:
    """``x`` in ``dt``; a traced ``x`` gets a run-time finite check naming ``name`` (the eager check holds under jit)."""
    if is_tracer(x):
        x = x.astype(dt)
        return finite_checked(name, x) if name else x
    return jnp.asarray(np.asarray(x, np.float64), dt)


def _vol_scaling(S: Array) -> Array:
    r"""Per-asset rescaling $d_i = 1/\sigma_i$ (floored at $10^{-6}\max_i\sigma_i$ for zero-variance assets):
    $D\Sigma D$ has a unit diagonal, so daily- and annual-scale inputs give the same well-scaled problem."""
    sd = jnp.sqrt(jnp.maximum(jnp.diag(S), 0.0))
    sd = jnp.maximum(sd, 1e-6 * jnp.max(sd) + jnp.finfo(S.dtype).tiny)
    return 1.0 / sd


def _budget_qp(S, c, row, max_iter, what):
    r"""$\min \tfrac12 w^\top S w + c^\top w$ s.t. $\mathrm{row}^\top w = 1$, $w\ge0$, solved in the scaled
    variables $w = D z$, $D = \mathrm{diag}(1/\sigma_i)/\rho$ with $\rho = \max_i |\mathrm{row}_i/\sigma_i|$: the
    constraint row has unit size, so the solution $z$ has unit size whatever the period of the inputs (tiny daily
    excess returns or variances) and the Hessian has a constant diagonal $1/\rho^2$. When $\rho$ is extreme
    ($< 10^{-3}$ or $> 10^3$: excess returns of $10^{-34}$ per unit volatility, say) that diagonal would overflow
    or underflow, so a pure quadratic objective ($c = 0$) is multiplied by $\rho^2$ (same minimizer); otherwise
    the arithmetic is unchanged."""
    d = _vol_scaling(S)
    rho = jnp.max(jnp.abs(row * d))
    d = d / rho
    # objective scale k^2 (1: unchanged); only for the pure quadratic (c = 0: max Sharpe, min variance), where
    # the linear term cannot overflow with it
    k = jnp.where(((rho < 1e-3) | (rho > 1e3)) & jnp.all(c == 0), rho, jnp.ones_like(rho))
    dk = d * k
    H = dk[:, None] * S * dk[None, :]
    z = _solve_checked(H, c * d * k * k, (row * d)[None, :], jnp.ones(1, S.dtype), max_iter, what)
    return d * z


def _zero_cov_message(consequence: str) -> str:
    return f"cov: the zero matrix — every portfolio has variance 0, so {consequence}"


def _refuse_zero_cov(cov: Any, consequence: str) -> None:
    """``ValueError`` naming ``cov`` for the zero matrix (concrete input): every portfolio has variance 0."""
    if not is_tracer(cov) and not np.any(np.asarray(cov, np.float64)):
        raise ValueError(_zero_cov_message(consequence))


_MIN_VARIANCE_UNDEFINED = "the minimum-variance portfolio is undefined"


def min_variance(cov: ArrayInput, *, max_iter: int = 60, dtype: DTypeLike | None = None) -> LabeledVector:
    r"""Long-only minimum variance: $\min w^\top\Sigma w$ s.t. $\mathbf 1^\top w = 1,\ w\ge 0$.

    ``cov``: covariance of returns per period (any period; the weights do not depend on it). The zero matrix is
    refused (``ValueError``; under ``jax.jit`` a run-time error): every portfolio has variance 0, so there is no
    minimum-variance portfolio to return. When $\Sigma$ is singular (a duplicated asset, a sample covariance of
    fewer dates than assets) the minimizer need not be unique; the interior-point solution is the analytic center
    of the optimal set, e.g. an equal split between duplicate assets (a documented exception, docs/contracts.md).
    """
    check_covariance("cov", cov)
    _refuse_zero_cov(cov, _MIN_VARIANCE_UNDEFINED)
    labels = check_labels(cov=cov)
    check_int("max_iter", max_iter, minimum=1)
    dt = _resolve_dtype(dtype, cov)
    with precision(dt):
        S = _arr(cov, dt, "cov")
        if is_tracer(S):
            S = error_if_invalid(S, jnp.all(S == 0), _zero_cov_message(_MIN_VARIANCE_UNDEFINED))
        n = S.shape[0]
        w = _normalize(_budget_qp(S, jnp.zeros(n, dt), jnp.ones(n, dt), max_iter, "min_variance"))
    return labeled(w, labels, "weight")


def mean_variance(
    mean: ArrayInput,
    cov: ArrayInput,
    risk_aversion: float = 1.0,
    *,
    max_iter: int = 60,
    dtype: DTypeLike | None = None,
) -> LabeledVector:
    r"""Long-only quadratic utility $\max w^\top\mu - \tfrac\delta2 w^\top\Sigma w$ s.t.
    $\mathbf 1^\top w = 1,\ w\ge0$ (PyPortfolioOpt's ``max_quadratic_utility``).

    ``mean`` and ``cov`` per period, in the same period; ``risk_aversion`` $\delta$ is unit-free (the utility of
    daily inputs is that of the annualised ones divided by 252, so the weights are the same)."""
    labels = _check_mean_cov(mean, cov)
    if not is_tracer(risk_aversion):
        check_positive("risk_aversion", risk_aversion)
    dt = _resolve_dtype(dtype, mean, cov)
    with precision(dt):
        mu, S = _arr(mean, dt, "mean"), _arr(cov, dt, "cov")
        n = S.shape[0]
        w = _normalize(_budget_qp(risk_aversion * S, -mu, jnp.ones(n, dt), max_iter, "mean_variance"))
    return labeled(w, labels, "weight")


def max_sharpe(
    mean: ArrayInput,
    cov: ArrayInput,
    risk_free_rate: float = 0.0,
    *,
    max_iter: int = 60,
    dtype: DTypeLike | None = None,
) -> LabeledVector:
    r"""Long-only maximum Sharpe ratio $\max (w^\top\mu - r_f)/\sqrt{w^\top\Sigma w}$, $w\ge0$,
    $\mathbf 1^\top w=1$.

    ``mean``, ``cov`` and ``risk_free_rate`` per period, all in the same period (daily, annualised, ...; the
    weights do not depend on which). Needs one asset with $\mu_i > r_f$ (``ValueError`` otherwise, on concrete
    input). Under tracing, a date where no asset beats $r_f$ falls back to the long-only minimum variance
    portfolio. The zero matrix ``cov`` is refused on concrete input (``ValueError``): every portfolio that beats
    $r_f$ would have an infinite Sharpe ratio.
    """
    labels = _check_mean_cov(mean, cov)
    _refuse_zero_cov(
        cov, "every portfolio that beats risk_free_rate has an infinite Sharpe ratio and no maximum exists"
    )
    if not np.isfinite(risk_free_rate):
        raise ValueError(f"risk_free_rate: expected a finite value, received {risk_free_rate!r}")
    dt = _resolve_dtype(dtype, mean, cov)
    with precision(dt):
        mu, S = _arr(mean, dt, "mean"), _arr(cov, dt, "cov")
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
        w = _normalize(_budget_qp(S, jnp.zeros(n, dt), row, max_iter, "max_sharpe"))
    return labeled(w, labels, "weight")


def tangency(
    mean: ArrayInput, cov: ArrayInput, risk_free_rate: float = 0.0, *, dtype: DTypeLike | None = None
) -> LabeledVector:
    r"""Unconstrained (shorts allowed) maximum-Sharpe fully invested portfolio: $w = z/\mathbf 1^\top z$ with
    $z = \Sigma^{-1}(\mu - r_f)$.

    Contract: this portfolio exists only when the net exposure $\mathbf 1^\top z$ is positive. When it is
    negative, $z/\mathbf 1^\top z$ would be the *minimum*-Sharpe portfolio and the maximum over fully invested
    portfolios is not attained (it is approached by ever larger net-short positions); when it is zero the
    normalization is undefined. Both raise ``ValueError``, as do a singular ``cov`` (use a shrunk covariance such
    as :func:`ledoit_wolf`, or the long-only :func:`max_sharpe`) and $\mu = r_f$. ``mean``, ``cov`` and
    ``risk_free_rate`` per period, all in the same period (the weights do not depend on which)."""
    labels = _check_mean_cov(mean, cov)
    if not is_tracer(risk_free_rate) and not np.isfinite(float(risk_free_rate)):
        raise ValueError(f"risk_free_rate: expected a finite value, received {risk_free_rate!r}")
    dt = _resolve_dtype(dtype, mean, cov)
    if is_tracer(mean) or is_tracer(cov) or is_tracer(risk_free_rate):  # unchecked traceable path
        z = jnp.linalg.solve(_arr(cov, dt, "cov"), _arr(mean, dt, "mean") - risk_free_rate)
        net, gross = jnp.sum(z), jnp.sum(jnp.abs(z))
        z = error_if_invalid(
            z,
            ~jnp.all(jnp.isfinite(z)) | ~(net > 1e-6 * gross),
            "mean: the tangency direction Sigma^-1 (mean - risk_free_rate) has non-positive net exposure, or cov "
            "is singular, so no fully invested portfolio maximizes the Sharpe ratio (checked under jit as eagerly)",
        )
        return z / net
    S64 = np.asarray(cov, np.float64)
    ex64 = np.asarray(mean, np.float64) - float(risk_free_rate)
    ev = np.linalg.eigvalsh(0.5 * (S64 + S64.T))
    if ev[0] <= 1e-12 * max(ev[-1], 1e-300) * S64.shape[0]:
        raise ValueError(
            f"cov: expected an invertible covariance (the tangency portfolio solves with it), received smallest "
            f"eigenvalue {ev[0]:.3g} of largest {ev[-1]:.3g}; use a shrunk estimate (ledoit_wolf) or the long-only "
            f"max_sharpe"
        )
    if not np.any(ex64 != 0):
        raise ValueError(
            f"mean: every expected return equals risk_free_rate={risk_free_rate}; no tangency portfolio"
        )
    z64 = np.linalg.solve(S64, ex64)
    net, gross = float(z64.sum()), float(np.abs(z64).sum())
    if net <= 1e-9 * gross:
        what = "zero" if abs(net) <= 1e-9 * gross else "negative"
        raise ValueError(
            f"mean: the tangency direction Sigma^-1 (mean - risk_free_rate) has {what} net exposure "
            f"1^T z = {net:.3g} (|z|_1 = {gross:.3g}), so no fully invested portfolio maximizes the Sharpe ratio "
            f"(z / 1^T z would be {'undefined' if what == 'zero' else 'the minimum-Sharpe portfolio'}); hold "
            f"z itself with cash, or use the long-only max_sharpe"
        )
    with precision(dt):
        w = jnp.asarray(z64 / net, dt)
    return labeled(w, labels, "weight")


def equal_weight(n: int) -> Float[Array, " n"]:
    """The 1/N portfolio."""
    check_int("n", n, minimum=1)
    check_size("n", 4 * n)
    return jnp.full((n,), 1.0 / n)


def inverse_volatility(cov: ArrayInput, *, dtype: DTypeLike | None = None) -> LabeledVector:
    r"""Weights $w_i \propto 1/\sigma_i$ (``cov`` per period; the weights do not depend on the period)."""
    check_covariance("cov", cov)
    labels = check_labels(cov=cov)
    var = np.diag(np.asarray(cov, np.float64))
    if np.any(var <= 0):
        raise ValueError(
            f"cov: expected positive variances on the diagonal (weights are 1/sigma), received "
            f"{int(np.sum(var <= 0))} zero variances at assets {np.flatnonzero(var <= 0).tolist()}"
        )
    dt = _resolve_dtype(dtype, cov)
    inv = 1.0 / np.sqrt(var)
    with precision(dt):
        w = jnp.asarray(inv / inv.sum(), dt)
    return labeled(w, labels, "weight")
