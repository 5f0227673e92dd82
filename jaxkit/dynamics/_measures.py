"""Complexity measures along a trajectory and plateau/saddle diagnostics.

Effective rank (threshold count, or the entropy rank of Roy & Vetterli 2007), number of kinks of a scalar ReLU
net (coincident kinks merged), active kernels and heads (norm thresholds), crossing times, plateau segmentation of
a loss curve, and the saddle check (gradient norm and smallest Hessian eigenvalue) used to verify that a plateau
sits at a saddle of the loss (Zhang, Saxe & Latham, ICLR 2026).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from jaxkit._typing import Array, Float
from jaxkit._validate import check_choice, check_positive

__all__ = [
    "Plateau",
    "SaddleCheck",
    "active_heads",
    "active_kernels",
    "crossing_time",
    "effective_rank",
    "kink_count",
    "plateaus",
    "saddle_check",
]


def effective_rank(matrix: Float[Array, "m n"], tol: float = 0.1, method: str = "threshold") -> Array:
    """Effective rank of a matrix.

    ``threshold``: number of singular values above ``tol`` (absolute). ``entropy``: ``exp(H(p))`` with
    ``p = σ / Σσ`` (Roy & Vetterli 2007; continuous, 1 for rank one, n for a multiple of an orthogonal matrix).
    """
    check_choice("method", method, ("threshold", "entropy"))
    matrix = jnp.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"matrix: expected a 2D array, received shape {matrix.shape}")
    sv = jnp.linalg.svd(matrix, compute_uv=False)
    if method == "threshold":
        check_positive("tol", tol)
        return jnp.sum(sv > tol)
    p = sv / jnp.maximum(jnp.sum(sv), 1e-30)
    ent = -jnp.sum(jnp.where(p > 0, p * jnp.log(jnp.where(p > 0, p, 1.0)), 0.0))
    return jnp.exp(ent)


def kink_count(
    params: dict[str, Any], x_range: tuple[float, float], tol: float = 1e-2, merge_tol: float = 1e-2
) -> int:
    """Number of kinks of ``f(x) = Σ a_h relu(w_h x + b_h) + c`` inside ``x_range``.

    Unit h has its kink at ``x_h = −b_h / w_h`` and changes the slope there by ``a_h |w_h|``. Kinks closer than
    ``merge_tol`` are merged (their slope changes add); a merged kink counts if ``|Σ a_h |w_h|| > tol``.
    """
    check_positive("tol", tol)
    check_positive("merge_tol", merge_tol)
    lo, hi = float(x_range[0]), float(x_range[1])
    if not lo < hi:
        raise ValueError(f"x_range: expected (lo, hi) with lo < hi, received {x_range}")
    w, b, a = (np.asarray(params[k], dtype=float) for k in ("w", "b", "a"))
    ok = np.abs(w) > 1e-12
    xk = -b[ok] / w[ok]
    dslope = a[ok] * np.abs(w[ok])
    inside = (xk > lo) & (xk < hi)
    xk, dslope = xk[inside], dslope[inside]
    if xk.size == 0:
        return 0
    order = np.argsort(xk)
    xk, dslope = xk[order], dslope[order]
    count, acc, last = 0, dslope[0], xk[0]
    for x, ds in zip(xk[1:], dslope[1:]):
        if x - last <= merge_tol:
            acc += ds
        else:
            count += int(abs(acc) > tol)
            acc = ds
        last = x
    count += int(abs(acc) > tol)
    return count


def active_kernels(params: dict[str, Any], tol: float = 0.1) -> Array:
    """Number of CNN kernels k with ``||w_k|| · ||a_{:,k}|| > tol`` (params from ``init_cnn``)."""
    check_positive("tol", tol)
    strength = jnp.linalg.norm(params["w"], axis=1) * jnp.linalg.norm(params["a"], axis=0)
    return jnp.sum(strength > tol)


def active_heads(params: dict[str, Any], tol: float = 0.1) -> Array:
    """Number of attention heads whose product ``|v_h| ||k_h|| ||q_h||`` (separate) or ``|v_h| ||W_h||_F``
    (merged) exceeds ``tol``."""
    check_positive("tol", tol)
    if "W" in params:
        strength = jnp.abs(params["v"]) * jnp.linalg.norm(params["W"], axis=(1, 2))
    else:
        strength = (
            jnp.abs(params["v"]) * jnp.linalg.norm(params["k"], axis=1) * jnp.linalg.norm(params["q"], axis=1)
        )
    return jnp.sum(strength > tol)


def crossing_time(
    ts: Float[Array, " T"] | np.ndarray, values: Any, level: float, direction: str = "up"
) -> float:
    """First time ``values`` crosses ``level`` (linear interpolation between saves); NaN if it never does."""
    check_choice("direction", direction, ("up", "down"))
    ts = np.asarray(ts, dtype=float)
    v = np.asarray(values, dtype=float)
    if ts.shape != v.shape or ts.ndim != 1:
        raise ValueError(f"ts, values: expected equal 1D shapes, received {ts.shape} and {v.shape}")
    above = v >= level if direction == "up" else v <= level
    idx = np.flatnonzero(above)
    if idx.size == 0:
        return float("nan")
    i = int(idx[0])
    if i == 0:
        return float(ts[0])
    v0, v1 = v[i - 1], v[i]
    frac = (level - v0) / (v1 - v0) if v1 != v0 else 1.0
    return float(ts[i - 1] + frac * (ts[i] - ts[i - 1]))


class Plateau(NamedTuple):
    """A plateau of a loss curve: ``start``/``end`` times and ``level`` (loss at the flattest point)."""

    start: float
    end: float
    level: float


def plateaus(
    ts: Float[Array, " T"] | np.ndarray,
    loss: Any,
    slope_tol: float = 0.1,
    min_duration: float = 0.02,
    log_time: bool = False,
    log_loss: bool = True,
    floor: float = 1e-8,
) -> list[Plateau]:
    """Segment a loss curve into plateaus.

    The loss (its log, ``log(loss + floor·max loss)``, if ``log_loss``, so that small late drops count as much as
    early large ones) is normalised to ``ℓ ∈ [0, 1]`` by its range and time to ``[0, 1]`` by the span (on a log
    axis if ``log_time``). A sample interval is flat when ``|Δℓ/Δt|`` is below ``slope_tol`` times its 98th percentile
    (slow compared with the fast drops; the percentile ignores isolated jumps between two saves); maximal runs of flat intervals at least ``min_duration`` long (normalised) are plateaus. The
    level is the loss where ``|Δℓ/Δt|`` is smallest (the closest approach to the saddle).
    """
    check_positive("slope_tol", slope_tol)
    check_positive("min_duration", min_duration, strict=False)
    check_positive("floor", floor)
    ts = np.asarray(ts, dtype=float)
    loss = np.asarray(loss, dtype=float)
    if ts.ndim != 1 or ts.shape != loss.shape or ts.size < 3:
        raise ValueError(
            f"ts, loss: expected equal 1D shapes with >= 3 points, received {ts.shape}, {loss.shape}"
        )
    if not np.all(np.isfinite(loss)):
        raise ValueError("loss: expected finite values, received NaN/inf")
    if log_time:
        if np.any(ts <= 0):
            keep = ts > 0
            ts, loss = ts[keep], loss[keep]
        tt = np.log(ts)
    else:
        tt = ts
    span = tt[-1] - tt[0]
    rng = loss.max() - loss.min()
    if span <= 0:
        raise ValueError("ts: expected increasing times")
    if rng <= 0:
        return [Plateau(float(ts[0]), float(ts[-1]), float(loss[0]))]
    tn = (tt - tt[0]) / span
    work = np.log(loss + floor * loss.max()) if log_loss else loss
    ln = (work - work.min()) / (work.max() - work.min())
    slope = np.abs(np.diff(ln) / np.maximum(np.diff(tn), 1e-300))
    flat = slope < slope_tol * np.percentile(slope, 98)
    out: list[Plateau] = []
    i = 0
    while i < flat.size:
        if not flat[i]:
            i += 1
            continue
        j = i
        while j + 1 < flat.size and flat[j + 1]:
            j += 1
        if tn[j + 1] - tn[i] >= min_duration:
            k = i + int(np.argmin(slope[i : j + 1]))
            out.append(Plateau(float(ts[i]), float(ts[j + 1]), float(0.5 * (loss[k] + loss[k + 1]))))
        i = j + 1
    return out


@jax.jit(static_argnums=0)
def _grad_and_hessian(loss_fn, params):
    flat, unravel = ravel_pytree(params)

    def f(z):
        return loss_fn(unravel(z))

    return jax.grad(f)(flat), jax.hessian(f)(flat)


class SaddleCheck(NamedTuple):
    """Gradient norm, smallest and largest Hessian eigenvalues at a point, and ``is_saddle``
    (``grad_norm < grad_tol`` and ``min_eig < −eig_tol``)."""

    grad_norm: float
    min_eig: float
    max_eig: float
    is_saddle: bool


def saddle_check(
    loss_fn: Callable[[Any], Any], params: Any, grad_tol: float = 1e-3, eig_tol: float = 1e-6
) -> SaddleCheck:
    """Check whether ``params`` is (near) a strict saddle of ``loss_fn``: small gradient, a negative Hessian
    eigenvalue. Uses the dense Hessian of the flattened params (small networks)."""
    check_positive("grad_tol", grad_tol)
    check_positive("eig_tol", eig_tol)
    n_params = sum(int(np.size(leaf)) for leaf in jax.tree.leaves(params))
    if n_params > 5000:
        raise ValueError(f"params: dense Hessian needs <= 5000 parameters, received {n_params}")
    g, h = _grad_and_hessian(loss_fn, params)
    h = np.asarray(h, dtype=float)
    eig = np.linalg.eigvalsh(0.5 * (h + h.T))
    gn = float(jnp.linalg.norm(g))
    return SaddleCheck(gn, float(eig[0]), float(eig[-1]), bool(gn < grad_tol and eig[0] < -eig_tol))
