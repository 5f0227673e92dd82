r"""Steady Darcy flow $-\nabla\cdot(a\nabla u) = f$ on the unit square, $u = 0$ on the boundary.

Grid: ``n×n`` nodes including the boundary, ``x_i = i/(n-1)`` (``linspace(0, 1, n)``), ``h = 1/(n-1)``. The
``(n-2)²`` interior unknowns satisfy the 5-point finite-difference system with face-averaged (arithmetic mean)
coefficients

$$
-\frac{a_{i+\frac12,j}(u_{i+1,j}-u_{ij}) - a_{i-\frac12,j}(u_{ij}-u_{i-1,j})
+ a_{i,j+\frac12}(u_{i,j+1}-u_{ij}) - a_{i,j-\frac12}(u_{ij}-u_{i,j-1})}{h^2} = f_{ij},
\qquad a_{i\pm\frac12,j} = \tfrac12(a_{ij} + a_{i\pm1,j}).
$$

:func:`solve` runs preconditioned conjugate gradients in JAX; the preconditioner is the exact inverse of
``mean(a)·(-Δ_h)`` applied with fast sine transforms (DST-I via FFT), so the iteration count is bounded by the
contrast ``max a / min a`` and not by ``n`` (≈ 15–25 iterations for the FNO 12/3 fields at any resolution).
:func:`reference_solve` assembles the same matrix with SciPy and calls ``spsolve`` (the checked reference).

FNO dataset (Li et al. 2021): ``a = ψ(GRF)`` with GRF ~ N(0, (-Δ + 9I)^-2) (zero-Neumann), ψ = 12 on ``≥ 0`` and
3 on ``< 0``, ``f = 1``, solved at 421×421 and subsampled to ``(421-1)/k + 1`` (211, 141, 106, 85, ...).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Array, Float
from .._validate import (
    check_choice,
    check_finite,
    check_float,
    check_int,
    check_ndim,
    check_positive,
    finite_checked,
    is_tracer,
    library_errors,
    traced_check,
)

_In = Array | np.ndarray


def _check_coefficient(a) -> int:
    check_ndim("a", a, 2, what="an n×n nodal coefficient field")
    n0, n1 = np.shape(a)
    if n0 != n1:
        raise ValueError(f"a: expected a square n×n grid, received shape {(n0, n1)}")
    if n0 < 3:
        raise ValueError(f"a: expected at least 3×3 nodes (one interior node), received shape {(n0, n1)}")
    check_float("a", a)
    if not is_tracer(a):
        check_finite("a", a)
        amin = float(np.min(np.asarray(a)))
        if amin <= 0:
            raise ValueError(f"a: expected a strictly positive coefficient field, received min(a) = {amin!r}")
    return int(n0)


def _check_forcing(f, n: int) -> None:
    if np.ndim(f) == 0:
        if not is_tracer(f):
            check_finite("f", np.asarray(f, dtype=float))
        return
    if np.shape(f) != (n, n):
        raise ValueError(f"f: expected a scalar or an array of shape {(n, n)}, received shape {np.shape(f)}")
    if not is_tracer(f):
        check_finite("f", f)


def _faces(a):
    ax = 0.5 * (a[1:, :] + a[:-1, :])  # (n-1, n): a_{i+1/2, j}
    ay = 0.5 * (a[:, 1:] + a[:, :-1])  # (n, n-1): a_{i, j+1/2}
    return ax, ay


def apply_operator(a: Float[_In, "n n"], u_interior: Float[_In, "m m"]) -> Float[Array, "m m"]:
    """``-∇·(a∇u)`` (5-point, face-averaged) on the interior, for interior values ``u`` (boundary = 0).

    ``u_interior`` must be finite (``ValueError`` naming it; ``equinox.error_if`` under ``jit``/``vmap``)."""
    a = jnp.asarray(a)
    n = a.shape[0]
    if a.ndim != 2 or a.shape[1] != n or n < 3:
        raise ValueError(f"a: expected a square (n, n) nodal field with n >= 3, received shape {a.shape}")
    if tuple(np.shape(u_interior)) != (n - 2, n - 2):
        raise ValueError(
            f"u_interior: expected the interior shape ({n - 2}, {n - 2}) of a {a.shape} field, "
            f"received {tuple(np.shape(u_interior))}"
        )
    return _operator(a, finite_checked("u_interior", jnp.asarray(u_interior)))


def _operator(a: Array, u_interior: Array) -> Array:
    """The body of :func:`apply_operator` without its checks (the PCG matvec of :func:`solve`)."""
    n = a.shape[0]
    h2 = (1.0 / (n - 1)) ** 2
    ax, ay = _faces(a)
    u = jnp.pad(jnp.asarray(u_interior), 1)
    fx = ax[:, 1:-1] * (u[1:, 1:-1] - u[:-1, 1:-1])  # (n-1, n-2) flux across x-faces
    fy = ay[1:-1, :] * (u[1:-1, 1:] - u[1:-1, :-1])  # (n-2, n-1)
    return -((fx[1:, :] - fx[:-1, :]) + (fy[:, 1:] - fy[:, :-1])) / h2


def _dst1(x, axis: int):
    """DST-I along ``axis``: ``y_k = Σ_{j=1..m} x_j sin(π j k/(m+1))`` (via a real FFT of the odd extension)."""
    x = jnp.moveaxis(x, axis, -1)
    m = x.shape[-1]
    zero = jnp.zeros(x.shape[:-1] + (1,), x.dtype)
    ext = jnp.concatenate([zero, x, zero, -x[..., ::-1]], axis=-1)
    y = -jnp.fft.rfft(ext, axis=-1).imag[..., 1 : m + 1] / 2
    return jnp.moveaxis(y.astype(x.dtype), -1, axis)


def _laplacian_inverse(r, h: float):
    """Exact inverse of the Dirichlet 5-point ``-Δ_h`` on an ``m×m`` interior grid (fast sine transform)."""
    m = r.shape[0]
    p = np.arange(1, m + 1)
    lam1 = (4.0 / h**2) * np.sin(np.pi * p / (2 * (m + 1))) ** 2
    lam = jnp.asarray(lam1[:, None] + lam1[None, :], r.dtype)
    rh = _dst1(_dst1(r, 0), 1)
    return _dst1(_dst1(rh / lam, 0), 1) * (2.0 / (m + 1)) ** 2


class _SolveInfoFields(NamedTuple):
    converged: Array
    iterations: Array
    residual: Array


class SolveInfo(_SolveInfoFields):
    """Convergence report of :func:`solve`: ``converged`` (PCG reached ``tol`` before ``maxiter``), the number of
    ``iterations`` and PCG's final relative residual ``‖r_k‖₂/‖b‖₂`` (the recursively updated residual PCG stops
    on; in float32 the recomputed ``‖b - A u‖`` has a rounding floor of about ``eps·cond(A)``). Every field is
    finite (``ValueError`` naming the field otherwise; traced values, inside ``jit``/``vmap``, are not read)."""

    __slots__ = ()

    # Any: JAX rebuilds the record from whatever leaves a transformation carries (tracers, ShapeDtypeStructs)
    def __new__(cls, converged: Any, iterations: Any, residual: Any) -> SolveInfo:
        for name, value in (("converged", converged), ("iterations", iterations), ("residual", residual)):
            check_finite(name, value)
        return super().__new__(cls, converged, iterations, residual)


def _as_array(x):
    """Python lists/tuples -> NumPy arrays of JAX's default float dtype (arrays pass through)."""
    return np.asarray(x, dtype=jnp.result_type(float)) if isinstance(x, list | tuple) else x


@library_errors
def solve(
    a: Float[_In, "n1 n2"] | list,
    *,
    f: float | int | Float[_In, "n3 n4"] = 1.0,
    tol: float | None = None,
    maxiter: int = 500,
    on_failure: Literal["raise", "ignore"] = "raise",
    return_info: bool = False,
) -> Float[Array, "n1 n2"] | tuple[Float[Array, "n1 n2"], SolveInfo]:
    """Solve ``-∇·(a∇u) = f``, ``u|∂Ω = 0`` on the ``n×n`` node grid of the unit square (one sample).

    Args:
        a: nodal coefficient field, strictly positive, shape ``(n, n)`` (array or nested list).
        f: source, a scalar or an ``(n, n)`` nodal array (only interior values are used).
        tol: relative residual tolerance of PCG (default 1e-6 in float32, 1e-12 in float64).
        maxiter: PCG iteration cap.
        on_failure: what happens when PCG reaches ``maxiter`` before its relative residual drops to ``tol``:
            ``"raise"`` (default) raises a runtime error naming ``maxiter`` (through ``eqx.error_if``, so also
            under ``jit``/``vmap``); ``"ignore"`` returns the unconverged iterate (read the flag with
            ``return_info=True``).
        return_info: also return a :class:`SolveInfo` ``(converged, iterations, residual)``.

    Returns:
        ``u`` on all ``n×n`` nodes (zeros on the boundary), dtype of ``a`` (and the :class:`SolveInfo` when
        ``return_info``). Batch with ``jax.vmap``.
    """
    a = _as_array(a)
    n = _check_coefficient(a)
    _check_forcing(f, n)
    check_int("maxiter", maxiter, minimum=1)
    check_choice("on_failure", on_failure, ("raise", "ignore"))
    a = jnp.asarray(a)
    dtype = a.dtype
    if tol is None:
        tol = 1e-12 if dtype == jnp.float64 else 1e-6
    check_positive("tol", tol)
    if is_tracer(a):  # the eager checks of _check_coefficient, at run time under jax.jit/vmap
        a = traced_check(
            a,
            ~(jnp.all(jnp.isfinite(a)) & (jnp.min(a) > 0)),
            "a: expected a strictly positive, finite coefficient field, received NaN/inf or a value <= 0",
        )
    if is_tracer(f):
        f = traced_check(f, ~jnp.all(jnp.isfinite(f)), "f: expected finite values, received NaN/inf entries")
    m = n - 2
    if np.ndim(f) == 0:
        b = jnp.full((m, m), f, dtype)
    else:
        b = jnp.asarray(f, dtype)[1:-1, 1:-1]
    u, iterations, residual = _solve_core(a, b, float(tol), int(maxiter))
    converged = residual <= tol
    if on_failure == "raise":
        u = traced_check(
            u,
            jnp.logical_not(converged),
            f"darcy.solve: PCG did not converge within maxiter={maxiter} iterations (relative residual still "
            f"above tol={tol:.1e}); raise maxiter (high-contrast fields need more) or pass on_failure='ignore', "
            "return_info=True to inspect the residual",
        )
    if return_info:
        return u, SolveInfo(converged, iterations, residual)
    return u


@jax.jit(static_argnums=(2, 3))
def _solve_core(a, b, tol, maxiter):
    n = a.shape[0]
    h = 1.0 / (n - 1)
    abar = jnp.mean(a)

    def matvec(u):
        return _operator(a, u)

    def precond(r):
        return _laplacian_inverse(r, h) / abar

    # preconditioned conjugate gradients (as jax.scipy.sparse.linalg.cg, which reports no convergence flag)
    bnorm = jnp.sqrt(jnp.vdot(b, b))
    stop = tol * jnp.where(bnorm > 0, bnorm, 1.0)

    def cond(state):
        _, r, _, _, _, k = state
        return (jnp.sqrt(jnp.vdot(r, r)) > stop) & (k < maxiter)

    def body(state):
        x, r, z, p, rz, k = state
        ap = matvec(p)
        step = rz / jnp.vdot(p, ap)
        x, r = x + step * p, r - step * ap
        z = precond(r)
        rz_new = jnp.vdot(r, z)
        return x, r, z, z + (rz_new / rz) * p, rz_new, k + 1

    x0 = jnp.zeros_like(b)
    z0 = precond(b)
    x, r, *_, k = jax.lax.while_loop(cond, body, (x0, b, z0, z0, jnp.vdot(b, z0), jnp.asarray(0, jnp.int32)))
    residual = jnp.sqrt(jnp.vdot(r, r)) / jnp.where(bnorm > 0, bnorm, 1.0)
    return jnp.pad(x, 1).astype(a.dtype), k, residual


def assemble(a: Float[_In, "n1 n2"], f: float | int | Float[_In, "n3 n4"] = 1.0):
    """The same finite-difference system as a SciPy CSR matrix ``A`` and right-hand side ``b`` (interior, row-major)."""
    import scipy.sparse as sp

    n = _check_coefficient(a)
    _check_forcing(f, n)
    a = np.asarray(a, dtype=np.float64)
    m = n - 2
    h2 = (1.0 / (n - 1)) ** 2
    ax, ay = _faces(a)
    idx = np.arange(m * m).reshape(m, m)
    i, j = np.meshgrid(np.arange(1, n - 1), np.arange(1, n - 1), indexing="ij")  # node indices of unknowns
    east, west = ax[i, j], ax[i - 1, j]  # a_{i+1/2,j}, a_{i-1/2,j}
    north, south = ay[i, j], ay[i, j - 1]
    rows = [idx.ravel()]
    cols = [idx.ravel()]
    vals = [((east + west + north + south) / h2).ravel()]
    for di, dj, coef in ((1, 0, east), (-1, 0, west), (0, 1, north), (0, -1, south)):
        ii, jj = i + di, j + dj
        inside = (ii >= 1) & (ii <= n - 2) & (jj >= 1) & (jj <= n - 2)
        rows.append(idx[inside])
        cols.append(idx[ii[inside] - 1, jj[inside] - 1])
        vals.append(-coef[inside] / h2)
    mat = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m * m, m * m)
    )
    b = np.full(m * m, float(f)) if np.ndim(f) == 0 else np.asarray(f, dtype=np.float64)[1:-1, 1:-1].ravel()
    return mat, b


def reference_solve(a: Float[_In, "n1 n2"], f: float | int | Float[_In, "n3 n4"] = 1.0) -> np.ndarray:
    """Host reference: :func:`assemble` + ``scipy.sparse.linalg.spsolve`` (float64 NumPy, all ``n×n`` nodes)."""
    import scipy.sparse.linalg as spla

    mat, b = assemble(a, f)
    n = np.shape(a)[0]
    u = spla.spsolve(mat.tocsc(), b).reshape(n - 2, n - 2)
    return np.pad(u, 1)


def coefficient_from_grf(
    g: Float[_In, "*grid"], *, high: float = 12.0, low: float = 3.0
) -> Float[Array, "*grid"]:
    """FNO thresholding ``ψ(g) = high`` where ``g ≥ 0`` else ``low``."""
    check_finite("g", g)
    for name, v in (("high", high), ("low", low)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name}: expected a finite positive coefficient value, received {v!r}")
    return jnp.where(jnp.asarray(g) >= 0, high, low).astype(jnp.asarray(g).dtype)


__all__ = ["SolveInfo", "apply_operator", "assemble", "coefficient_from_grf", "reference_solve", "solve"]
