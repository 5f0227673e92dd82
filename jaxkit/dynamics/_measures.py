"""Complexity measures along a trajectory and plateau/saddle diagnostics.

Effective rank (threshold count, or the entropy rank of Roy & Vetterli 2007), number of kinks of a scalar ReLU
net (coincident kinks merged), active kernels and heads (norm thresholds), crossing times, plateau segmentation of
a loss curve, the saddle check (gradient norm and smallest Hessian eigenvalue) used to verify that a plateau
sits at a saddle of the loss, and its trajectory-level form :func:`plateau_saddle_checks` (Zhang, Saxe & Latham,
ICLR 2026).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from jaxkit._callables import as_pytree
from jaxkit._typing import Array, ArrayInput, Float, Scalar
from jaxkit._validate import (
    as_float64,
    as_float_array,
    check_choice,
    check_finite,
    check_nonempty,
    check_positive,
    error_if_invalid,
)
from jaxkit.dynamics._flow import FlowResult

__all__ = [
    "Plateau",
    "PlateauCheck",
    "SaddleCheck",
    "active_heads",
    "active_kernels",
    "crossing_time",
    "effective_rank",
    "grad_norms",
    "kink_count",
    "plateau_saddle_checks",
    "plateaus",
    "saddle_check",
]


def _params(name: str, params: Any, keys: tuple[str, ...], source: str) -> dict[str, Any]:
    """The named leaves of a params dict, checked: present and (when concrete) finite."""
    if not isinstance(params, dict) or any(k not in params for k in keys):
        got = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise ValueError(
            f"{name}: expected a params dict with keys {list(keys)} (from {source}), received {got}"
        )
    out = {}
    for k in keys:
        check_finite(f"{name}[{k!r}]", params[k])
        out[k] = params[k]
    return out


def _increasing_times(ts: Any, values: Any, vname: str, min_len: int = 1) -> tuple[np.ndarray, np.ndarray]:
    ts = as_float64("ts", ts)
    v = as_float64(vname, values)
    if ts.ndim != 1 or ts.shape != v.shape or ts.size < min_len:
        raise ValueError(
            f"ts, {vname}: expected equal 1D shapes with >= {min_len} points, received {ts.shape} and {v.shape}"
        )
    check_finite("ts", ts)
    check_finite(vname, v)
    if np.any(np.diff(ts) <= 0):
        raise ValueError("ts: expected strictly increasing times")
    return ts, v


def effective_rank(
    matrix: Float[Array, "m n"] | ArrayInput, tol: float = 0.1, method: str = "threshold"
) -> Array:
    """Effective rank of a matrix.

    ``threshold``: number of singular values above ``tol`` (absolute). ``entropy``: ``exp(H(p))`` with
    ``p = σ / Σσ`` (Roy & Vetterli 2007; continuous, 1 for rank one, n for a multiple of an orthogonal matrix);
    the zero matrix has no ``p`` and is refused (``ValueError``; a run-time error under ``jax.jit``).
    """
    check_choice("method", method, ("threshold", "entropy"))
    matrix = as_float_array("matrix", matrix)
    if matrix.ndim != 2:
        raise ValueError(f"matrix: expected a 2D array, received shape {matrix.shape}")
    check_nonempty("matrix", matrix)
    check_finite("matrix", matrix)
    sv = jnp.linalg.svd(matrix, compute_uv=False)
    if method == "threshold":
        check_positive("tol", tol)
        return jnp.sum(sv > tol)
    sv = error_if_invalid(
        sv,
        jnp.sum(sv) <= 0,
        "matrix: the entropy effective rank of the zero matrix is undefined (p = sigma / sum(sigma) is 0/0)",
    )
    p = sv / jnp.maximum(jnp.sum(sv), 1e-30)
    ent = -jnp.sum(jnp.where(p > 0, p * jnp.log(jnp.where(p > 0, p, 1.0)), 0.0))
    return jnp.exp(ent)


def kink_count(
    params: Mapping[str, object],
    x_range: tuple[float, float] | ArrayInput,
    tol: float = 1e-2,
    merge_tol: float = 1e-2,
) -> int:
    """Number of kinks of ``f(x) = Σ a_h relu(w_h x + b_h) + c`` inside ``x_range``.

    Unit h has its kink at ``x_h = −b_h / w_h`` and changes the slope there by ``a_h |w_h|``. Kinks closer than
    ``merge_tol`` are merged (their slope changes add); a merged kink counts if ``|Σ a_h |w_h|| > tol``.
    """
    check_positive("tol", tol)
    check_positive("merge_tol", merge_tol)
    if np.shape(x_range) != (2,):
        raise ValueError(f"x_range: expected (lo, hi), received {x_range!r}")
    lo, hi = float(x_range[0]), float(x_range[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"x_range: expected finite (lo, hi) with lo < hi, received {x_range}")
    p = _params("params", params, ("w", "b", "a"), "init_relu_scalar")
    w, b, a = (np.asarray(p[k], dtype=float) for k in ("w", "b", "a"))
    if not (w.ndim == 1 and w.shape == b.shape == a.shape):
        raise ValueError(
            f"params: expected 1D 'w', 'b', 'a' of one width, received shapes {w.shape}, {b.shape}, {a.shape}"
        )
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


def active_kernels(params: Mapping[str, object], tol: float = 0.1) -> Array:
    """Number of CNN kernels k with ``||w_k|| · ||a_{:,k}|| > tol`` (params from ``init_cnn``)."""
    check_positive("tol", tol)
    _params("params", params, ("w", "a"), "init_cnn")
    if (
        np.ndim(params["w"]) != 2
        or np.ndim(params["a"]) != 2
        or np.shape(params["w"])[0] != np.shape(params["a"])[1]
    ):
        raise ValueError(
            f"params: expected w (kernels, size) and a (channels, kernels), received shapes "
            f"{np.shape(params['w'])}, {np.shape(params['a'])}"
        )
    strength = jnp.linalg.norm(params["w"], axis=1) * jnp.linalg.norm(params["a"], axis=0)
    return jnp.sum(strength > tol)


def active_heads(params: Mapping[str, object], tol: float = 0.1) -> Array:
    """Number of attention heads whose product ``|v_h| ||k_h|| ||q_h||`` (separate) or ``|v_h| ||W_h||_F``
    (merged) exceeds ``tol``."""
    check_positive("tol", tol)
    merged = isinstance(params, dict) and "W" in params
    _params(
        "params",
        params,
        ("v", "W") if merged else ("v", "k", "q"),
        "init_attention_merged" if merged else "init_attention_separate",
    )
    if merged:
        strength = jnp.abs(params["v"]) * jnp.linalg.norm(params["W"], axis=(1, 2))
    else:
        strength = (
            jnp.abs(params["v"]) * jnp.linalg.norm(params["k"], axis=1) * jnp.linalg.norm(params["q"], axis=1)
        )
    return jnp.sum(strength > tol)


def crossing_time(
    ts: Float[Array, " T"] | ArrayInput, values: ArrayInput, level: float, direction: str = "up"
) -> float:
    """First time ``values`` crosses ``level`` (linear interpolation between saves).

    A series that never reaches ``level`` has no crossing time: the result is ``nan``, with a ``RuntimeWarning``
    saying so (a documented exception of the contract, docs/contracts.md: a component not learned within the
    run is ordinary, and ``nan`` sorts last in ``np.argsort``)."""
    check_choice("direction", direction, ("up", "down"))
    ts, v = _increasing_times(ts, values, "values")
    if not np.isfinite(float(level)):
        raise ValueError(f"level: expected a finite value, received {level!r}")
    above = v >= level if direction == "up" else v <= level
    idx = np.flatnonzero(above)
    if idx.size == 0:
        warnings.warn(
            f"crossing_time: values never reach level={level} ({'max' if direction == 'up' else 'min'} "
            f"{(v.max() if direction == 'up' else v.min()):.6g} within ts in [{ts[0]:.6g}, {ts[-1]:.6g}]): no "
            "crossing time, returning nan; extend the run or choose a level the series reaches",
            RuntimeWarning,
            stacklevel=2,
        )
        return float("nan")
    i = int(idx[0])
    if i == 0:
        return float(ts[0])
    v0, v1 = v[i - 1], v[i]
    frac = (level - v0) / (v1 - v0) if v1 != v0 else 1.0
    return float(ts[i - 1] + frac * (ts[i] - ts[i - 1]))


def _finite_fields(fields: dict[str, Any]) -> None:
    """The checks of a record's constructor: every numeric field finite (``ValueError`` naming the field).

    Concrete values only: a record that JAX rebuilds from traced leaves is checked where its values become
    concrete (the functions that fill it check their own inputs)."""
    for name, value in fields.items():
        check_finite(name, value)


class _PlateauFields(NamedTuple):
    start: float
    end: float
    level: float


class Plateau(_PlateauFields):
    """A plateau of a loss curve: ``start``/``end`` times and ``level`` (loss at the flattest point), all finite
    (``ValueError`` naming the field otherwise)."""

    __slots__ = ()

    def __new__(cls, start: float, end: float, level: float) -> Plateau:
        _finite_fields({"start": start, "end": end, "level": level})
        return super().__new__(cls, start, end, level)


def plateaus(
    ts: Float[Array, " T"] | ArrayInput,
    loss: ArrayInput,
    slope_tol: float = 0.1,
    min_duration: float = 0.02,
    log_time: bool = False,
    log_loss: bool = True,
    floor: float = 1e-8,
) -> list[Plateau]:
    """Segment a loss curve into plateaus.

    The loss (its log, ``log(loss + floor·max loss)``, if ``log_loss``, so that small late drops count as much as
    early large ones) is normalized to ``ℓ ∈ [0, 1]`` by its range and time to ``[0, 1]`` by the span (on a log
    axis if ``log_time``). A sample interval is flat when ``|Δℓ/Δt|`` is below ``slope_tol`` times its 98th percentile
    (slow compared with the fast drops; the percentile ignores isolated jumps between two saves), or times 1 (a
    uniform descent) where that percentile is below 1 (a staircase whose drops are all jumps); maximal runs of flat intervals at least ``min_duration`` long (normalized) are plateaus. The
    level is the loss where ``|Δℓ/Δt|`` is smallest (the closest approach to the saddle).

    Returns the plateaus found, in time order: their number depends on the curve (a constant curve is one
    plateau spanning ``ts``; a curve with no flat run long enough gives none).
    """
    check_positive("slope_tol", slope_tol)
    check_positive("min_duration", min_duration, strict=False)
    check_positive("floor", floor)
    ts, loss = _increasing_times(ts, loss, "loss", min_len=3)
    if log_loss and loss.min() < 0:
        raise ValueError(
            f"loss: expected non-negative losses with log_loss=True (the curve is segmented on a log scale), "
            f"received a minimum of {loss.min():.6g}; pass log_loss=False for a signed curve"
        )
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
    # the reference speed: the 98th percentile of |dl/dt|, and at least 1, the speed of a uniform descent of the
    # normalized curve (range 1 over span 1); a curve whose drops are all isolated jumps between two saves (a
    # staircase) has a 98th percentile of 0 (or of its noise), where every interval would be steep
    flat = slope < slope_tol * max(float(np.percentile(slope, 98)), 1.0)
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


@jax.jit
def _grad_and_hessian(loss_fn, params):
    flat, unravel = ravel_pytree(params)

    def f(z):
        return loss_fn(unravel(z))

    return jax.grad(f)(flat), jax.hessian(f)(flat)


class _SaddleCheckFields(NamedTuple):
    grad_norm: float
    min_eig: float
    max_eig: float
    is_saddle: bool


class SaddleCheck(_SaddleCheckFields):
    """Gradient norm, smallest and largest Hessian eigenvalues at a point, and ``is_saddle``
    (``grad_norm < grad_tol`` and ``min_eig < −eig_tol``); the numbers are finite (``ValueError`` naming the
    field otherwise)."""

    __slots__ = ()

    def __new__(cls, grad_norm: float, min_eig: float, max_eig: float, is_saddle: bool) -> SaddleCheck:
        _finite_fields({"grad_norm": grad_norm, "min_eig": min_eig, "max_eig": max_eig})
        return super().__new__(cls, grad_norm, min_eig, max_eig, is_saddle)


def saddle_check(
    loss_fn: Callable[..., Scalar], params: object, grad_tol: float = 1e-3, eig_tol: float = 1e-6
) -> SaddleCheck:
    """Check whether ``params`` is (near) a strict saddle of ``loss_fn``: small gradient, a negative Hessian
    eigenvalue. Uses the dense Hessian of the flattened params (small networks)."""
    check_positive("grad_tol", grad_tol)
    check_positive("eig_tol", eig_tol)
    leaves = jax.tree.leaves(params)
    if not leaves:
        raise ValueError("params: expected a non-empty params pytree")
    for leaf in leaves:
        check_finite("params", leaf)
    n_params = sum(int(np.size(leaf)) for leaf in leaves)
    if n_params > 5000:
        raise ValueError(f"params: dense Hessian needs <= 5000 parameters, received {n_params}")
    g, h = _grad_and_hessian(as_pytree(loss_fn, params, name="loss_fn"), params)  # traced: never stale
    h = np.asarray(h, dtype=float)
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(np.asarray(g)))):
        raise ValueError("loss_fn: the gradient or Hessian at params is not finite")
    eig = np.linalg.eigvalsh(0.5 * (h + h.T))
    gn = float(jnp.linalg.norm(g))
    return SaddleCheck(gn, float(eig[0]), float(eig[-1]), bool(gn < grad_tol and eig[0] < -eig_tol))


@jax.jit
def _grad_norms(loss_fn, traj):
    g = jax.vmap(jax.grad(loss_fn))(traj)
    return jnp.sqrt(sum(jnp.sum(x**2, axis=tuple(range(1, x.ndim))) for x in jax.tree.leaves(g)))


def grad_norms(loss_fn: Callable[..., Scalar], trajectory: object) -> np.ndarray:
    """``||∇L(θ_t)||₂`` at every saved point of a trajectory (a params pytree with a leading time axis, e.g.
    ``FlowResult.params``)."""
    leaves = jax.tree.leaves(trajectory)
    if not leaves or any(np.ndim(leaf) < 1 for leaf in leaves) or len({np.shape(x)[0] for x in leaves}) != 1:
        raise ValueError("trajectory: expected a params pytree whose leaves share a leading time axis")
    point = jax.tree.map(
        lambda leaf: jax.ShapeDtypeStruct(np.shape(leaf)[1:], jnp.result_type(leaf)), trajectory
    )
    return np.asarray(
        _grad_norms(as_pytree(loss_fn, point, name="loss_fn"), trajectory)
    )  # traced: never stale


class _PlateauCheckFields(NamedTuple):
    level: float
    start: float
    end: float
    grad_norm: float
    min_eig: float
    is_saddle: bool
    index: int


class PlateauCheck(_PlateauCheckFields):
    """One plateau of a trajectory and the :func:`saddle_check` at its closest approach to the saddle (the save
    with the smallest gradient norm inside it): loss ``level``, ``start``/``end`` times, ``grad_norm``,
    ``min_eig`` (smallest Hessian eigenvalue), ``is_saddle``, and ``index`` of the checked save. The numbers are
    finite (``ValueError`` naming the field otherwise)."""

    __slots__ = ()

    def __new__(
        cls,
        level: float,
        start: float,
        end: float,
        grad_norm: float,
        min_eig: float,
        is_saddle: bool,
        index: int,
    ) -> PlateauCheck:
        _finite_fields(
            {"level": level, "start": start, "end": end, "grad_norm": grad_norm, "min_eig": min_eig}
        )
        return super().__new__(cls, level, start, end, grad_norm, min_eig, is_saddle, index)


def plateau_saddle_checks(
    loss_fn: Callable[..., Scalar],
    result: FlowResult,
    grad_tol_fraction: float = 0.1,
    eig_tol: float = 1e-6,
    include_final: bool = False,
    **plateau_options: float | bool,
) -> list[PlateauCheck]:
    """Saddle check of every plateau of a trajectory (Zhang, Saxe & Latham, ICLR 2026: plateaus sit at saddles).

    ``result`` has ``ts``, ``loss`` and ``params`` with a leading time axis (a :class:`FlowResult`). The loss
    curve is segmented by :func:`plateaus` (``plateau_options`` are passed on); inside each plateau the save with
    the smallest ``||∇L||`` is checked with :func:`saddle_check` at ``grad_tol = grad_tol_fraction`` times the
    largest gradient norm along the trajectory (small relative to the drops) and ``eig_tol``. The plateau that
    reaches the last save is the final minimum, not a saddle, and is skipped unless ``include_final``.
    """
    check_positive("grad_tol_fraction", grad_tol_fraction)
    for attr in ("ts", "loss", "params"):
        if not hasattr(result, attr):
            raise TypeError(
                f"result: expected a trajectory with ts, loss and params (a FlowResult), received "
                f"{type(result).__name__} without {attr!r}"
            )
    ts, lv = _increasing_times(result.ts, result.loss, "result.loss", min_len=3)
    gn = grad_norms(loss_fn, result.params)
    if gn.shape != ts.shape:
        raise ValueError(
            f"result.params: expected {ts.size} saves along the leading axis, received {gn.size}"
        )
    check_finite("grad norms along the trajectory", gn)
    out = []
    for p in plateaus(ts, lv, **plateau_options):
        if p.end >= ts[-1] and not include_final:
            continue
        m = np.flatnonzero((ts >= p.start) & (ts <= p.end))
        j = int(m[np.argmin(gn[m])])
        c = saddle_check(
            loss_fn,
            jax.tree.map(lambda a, j=j: a[j], result.params),
            grad_tol=float(grad_tol_fraction * gn.max()),
            eig_tol=eig_tol,
        )
        out.append(PlateauCheck(p.level, p.start, p.end, c.grad_norm, c.min_eig, c.is_saddle, j))
    return out
