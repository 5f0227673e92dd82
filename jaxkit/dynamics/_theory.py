"""Closed-form and algorithmic theory for saddle-to-saddle dynamics.

Two-layer linear nets (Saxe, McClelland & Ganguli 2014; Zhang, Saxe & Latham, ICLR 2026). With whitened inputs,
loss ``L = 1/(2P) Σ ||y − W2 W1 x||² = ½||Σ_yx − W2 W1||² + const`` and gradient flow ``τ dW/dt = −∇L``
(``τ = 1/η``), a balanced start aligned with Σ_yx = U diag(s) Vᵀ decouples into modes ``u_i = u_iᵀ W2 W1 v_i``:

    τ du/dt = 2u(s − u),    u(t) = s e^{2st/τ} / (e^{2st/τ} − 1 + s/u0),    t_half = (τ / 2s) ln(s/u0 − 1).

Modes are learned in decreasing s; after k modes the loss sits on the plateau ``½ Σ_{i>k} s_i²``; dividing u0 by
``c`` delays mode i by ``(τ/2s_i) ln c`` (approximately, exactly ``(τ/2s)[ln(c s/u0 − 1) − ln(s/u0 − 1)]``).
Depth-N linear nets: ``τ du/dt = N u^{2−2/N} (s − u)`` (balanced layers, ``u = a^N``).

Diagonal linear nets ``β = u ⊙ v`` (Pesme & Flammarion, NeurIPS 2023): as α → 0 the flow, in accelerated time
``t̃ = t / ln(1/α)``, jumps between saddles given by a LARS-like algorithm (:func:`diagonal_jumps`) and ends at the
minimum-ℓ1 interpolator.

Embedding construction: a critical point of the width-(H−1) net becomes one of the width-H net by adding a silent
unit (all weights zero) or by splitting a unit (copy its input weights; share its output weights in proportions
λ, 1−λ) (Fukumizu & Amari 2000; Zhang, Saxe & Latham 2026). Check saddles with
:func:`jaxkit.dynamics.saddle_check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
from scipy import integrate, optimize

from jaxkit._typing import Array, ArrayInput, Float
from jaxkit._validate import (
    as_float64,
    as_float_array,
    check_broadcast,
    check_choice,
    check_finite,
    check_int,
    check_positive,
    check_range,
    check_size,
)

from ._measures import _finite_fields

__all__ = [
    "DiagonalJumps",
    "deep_linear_half_time",
    "deep_linear_mode",
    "diagonal_jumps",
    "embed_unit",
    "learning_order",
    "linear_fixed_point",
    "min_l1_interpolator",
    "plateau_losses",
    "plateau_shift",
    "saxe_half_time",
    "saxe_mode",
]


def _pos(name: str, x: Any) -> np.ndarray:
    arr = as_float64(name, x)
    if arr.size == 0:
        raise ValueError(f"{name}: expected at least one value, received shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name}: expected finite values > 0, received {arr.tolist()}")
    return arr


def _vector(name: str, x: Any) -> np.ndarray:
    arr = as_float64(name, x)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1D array, received shape {arr.shape}")
    check_finite(name, arr)
    return arr


# --------------------------------------------------------------------------------------------------- two-layer Saxe
def saxe_mode(t: ArrayInput, s: ArrayInput, u0: ArrayInput, tau: float = 1.0) -> Array:
    """Mode strength ``u(t) = s e^{2st/τ} / (e^{2st/τ} − 1 + s/u0)`` (broadcasts over t, s, u0)."""
    check_broadcast(t=t, s=s, u0=u0)
    _pos("s", s)
    _pos("u0", u0)
    check_positive("tau", tau)
    t = as_float_array("t", t)
    check_finite("t", t)
    s, u0 = jnp.asarray(s), jnp.asarray(u0)
    # numerically stable form: s / (1 + (s/u0 − 1) e^{−2st/τ})
    return s / (1.0 + (s / u0 - 1.0) * jnp.exp(-2.0 * s * t / tau))


def saxe_half_time(s: ArrayInput, u0: ArrayInput, tau: float = 1.0) -> Array:
    """Time at which mode ``s`` reaches ``s/2``: ``(τ/2s) ln(s/u0 − 1)`` (requires u0 < s/2)."""
    check_broadcast(s=s, u0=u0)
    s_, u0_ = _pos("s", s), _pos("u0", u0)
    if np.any(u0_ >= s_ / 2):
        raise ValueError(
            f"u0: expected initial strengths below s/2 = {(s_ / 2).tolist()}, received {u0_.tolist()}"
        )
    check_positive("tau", tau)
    s, u0 = jnp.asarray(s), jnp.asarray(u0)
    return tau / (2 * s) * jnp.log(s / u0 - 1.0)


def plateau_losses(s: ArrayInput) -> Array:
    """Loss levels ``½ Σ_{i>k} s_i²`` for k = 0 … r (s sorted decreasingly first); the last entry is 0. ``s``:
    singular values, finite and >= 0 (a negative one is refused, not taken by its absolute value)."""
    s = _vector("s", s)
    if np.any(s < 0):
        raise ValueError(f"s: expected singular values >= 0, received {s.tolist()}")
    s = np.sort(s)[::-1]
    tails = np.concatenate([np.cumsum((s**2)[::-1])[::-1], [0.0]])
    return jnp.asarray(0.5 * tails)


def plateau_shift(s: ArrayInput, factor: float = 10.0, tau: float = 1.0) -> Array:
    """Delay of mode s when the init scale is divided by ``factor``: ``(τ/2s) ln(factor)``."""
    check_positive("factor", factor)
    check_positive("tau", tau)
    return tau / (2 * jnp.asarray(_pos("s", s))) * np.log(factor)


def learning_order(strengths: ArrayInput) -> np.ndarray:
    """Predicted order in which modes/components are learned: indices by decreasing strength (singular value of
    Σ_yx for linear nets, eigenvalue of the input covariance for linear attention)."""
    return np.argsort(-_vector("strengths", strengths), kind="stable")


# ------------------------------------------------------------------------------------------------------ deep linear
def deep_linear_mode(
    t: Float[Array, " T"] | ArrayInput, s: ArrayInput, u0: ArrayInput, depth: int, tau: float = 1.0
) -> Array:
    """Solve the depth-N mode ODE ``τ du/dt = N u^{2−2/N}(s − u)`` at times ``t`` (diffrax, Tsit5, tight tolerances).

    Returns an array of shape ``(len(t), *broadcast(s, u0).shape)``.
    """
    check_int("depth", depth, minimum=2)
    check_positive("tau", tau)
    check_broadcast(s=s, u0=u0)
    s_, u0_ = np.broadcast_arrays(_pos("s", s), _pos("u0", u0))
    t = as_float_array("t", t)
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError(f"t: expected a non-empty 1D array of times, received shape {t.shape}")
    check_finite("t", t)
    if not np.all(np.diff(np.asarray(t)) > 0):
        raise ValueError("t: expected strictly increasing times")
    return _deep_mode_solve(t, jnp.asarray(s_, t.dtype), jnp.asarray(u0_, t.dtype), float(depth), float(tau))


def _deep_mode_vf(_t, u, args):
    s, n, tau = args
    return n * jnp.abs(u) ** (2.0 - 2.0 / n) * (s - u) / tau


@jax.jit
def _deep_mode_solve(t, s, u0, n, tau):
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_deep_mode_vf),
        diffrax.Tsit5(),
        t0=t[0],
        t1=t[-1],
        dt0=None,
        y0=u0,
        args=(s, n, tau),
        saveat=diffrax.SaveAt(ts=t),
        stepsize_controller=diffrax.PIDController(rtol=1e-9, atol=1e-12),
        max_steps=200_000,
    )
    return sol.ys


def deep_linear_half_time(s: float, u0: float, depth: int, tau: float = 1.0) -> float:
    """``t_half = (τ/N) ∫_{u0}^{s/2} du / (u^{2−2/N}(s − u))`` by quadrature (equals :func:`saxe_half_time` at N=2)."""
    check_int("depth", depth, minimum=2)
    check_positive("s", s)
    check_positive("u0", u0)
    check_positive("tau", tau)
    if u0 >= s / 2:
        raise ValueError(f"u0: expected a value below s/2 = {s / 2}, received {u0}")
    n = float(depth)
    # substitute u = e^z for accuracy over many decades
    val, _ = integrate.quad(
        lambda z: np.exp(z) / (np.exp(z) ** (2 - 2 / n) * (s - np.exp(z))),
        np.log(u0),
        np.log(s / 2),
        limit=200,
        epsabs=0,
        epsrel=1e-11,
    )
    return tau / n * val


# ---------------------------------------------------------------------------------------------------- fixed points
def linear_fixed_point(
    sigma_yx: Float[Array, "d_out d_in"] | ArrayInput, modes: ArrayInput, hidden: int
) -> dict[str, Array]:
    """Critical point of the two-layer linear net that has learned exactly the SVD modes ``modes`` of Σ_yx.

    ``W1 = [diag(√s_S) V_Sᵀ; 0]``, ``W2 = [U_S diag(√s_S), 0]`` (the width-|S| solution embedded into width
    ``hidden`` with silent units). Its loss is ``½ Σ_{i∉S} s_i²``; it is a saddle when an unlearned mode with
    s > 0 exists and ``hidden > |S|``.
    """
    sigma_yx = as_float_array("sigma_yx", sigma_yx)
    if sigma_yx.ndim != 2 or sigma_yx.size == 0:
        raise ValueError(
            f"sigma_yx: expected a non-empty matrix (d_out, d_in), received shape {sigma_yx.shape}"
        )
    check_finite("sigma_yx", sigma_yx)
    modes = [int(m) for m in np.atleast_1d(np.asarray(modes, dtype=int))] if np.size(modes) else []
    check_int("hidden", hidden, minimum=1)
    check_size(
        "hidden",
        hidden * (sigma_yx.shape[0] + sigma_yx.shape[1]) * np.dtype(sigma_yx.dtype).itemsize,
        hint=f"the fixed point's weights are ({hidden}, d_in) and (d_out, {hidden})",
    )
    r = min(sigma_yx.shape)
    if len(modes) > hidden:
        raise ValueError(
            f"hidden: width {hidden} is smaller than the number of modes to represent ({len(modes)})"
        )
    if any(m < 0 or m >= r for m in modes) or len(set(modes)) != len(modes):
        raise ValueError(f"modes: expected distinct mode indices in [0, {r}), received {modes}")
    u, s, vt = jnp.linalg.svd(sigma_yx, full_matrices=False)
    d_out, d_in = sigma_yx.shape
    w1 = jnp.zeros((hidden, d_in), sigma_yx.dtype)
    w2 = jnp.zeros((d_out, hidden), sigma_yx.dtype)
    for j, m in enumerate(modes):
        w1 = w1.at[j].set(jnp.sqrt(s[m]) * vt[m])
        w2 = w2.at[:, j].set(jnp.sqrt(s[m]) * u[:, m])
    return {"W1": w1, "W2": w2}


def embed_unit(
    params: Mapping[str, object],
    unit_spec: dict[str, tuple[int, str]],
    method: str = "zero",
    unit: int = 0,
    fraction: float = 0.5,
) -> dict[str, object]:
    """Embed a width-(H−1) params dict into width H (one extra hidden unit appended last).

    ``method="zero"``: the new unit has all weights zero (a silent unit). ``method="split"``: the new unit copies
    the input weights of ``unit``; the output weights of ``unit`` are shared as ``fraction`` (old) and
    ``1 − fraction`` (new). Both maps send critical points to critical points with the same loss.
    ``unit_spec`` is ``{name: (axis, "in"|"out")}`` (see ``jaxkit.dynamics.NETWORKS[...].unit_spec``).
    """
    check_choice("method", method, ("zero", "split"))
    check_range("fraction", fraction, 0.0, 1.0)
    missing = [k for k in unit_spec if k not in params]
    if missing:
        raise ValueError(f"unit_spec: names {missing} are not in params (keys {sorted(params)})")
    check_int("unit", unit, minimum=0)
    out = dict(params)
    widths = set()
    for name, (axis, role) in unit_spec.items():
        check_choice(f"unit_spec[{name!r}] role", role, ("in", "out"))
        p = as_float_array(f"params[{name!r}]", params[name])
        check_finite(f"params[{name!r}]", p)
        if not -p.ndim <= axis < p.ndim:
            raise ValueError(f"unit_spec[{name!r}]: axis {axis} is out of range for shape {p.shape}")
        width = p.shape[axis]
        widths.add(width)
        if len(widths) > 1:
            raise ValueError(f"unit_spec: the hidden axes have different widths {sorted(widths)}")
        if method == "zero":
            new = jnp.zeros_like(jnp.take(p, jnp.array([0]), axis=axis))
            out[name] = jnp.concatenate([p, new], axis=axis)
            continue
        if not 0 <= unit < width:
            raise ValueError(f"unit: expected an index in [0, {width}), received {unit}")
        col = jnp.take(p, jnp.array([unit]), axis=axis)
        if role == "in":
            out[name] = jnp.concatenate([p, col], axis=axis)
        else:
            scaled = jnp.moveaxis(p, axis, 0).at[unit].multiply(fraction)
            out[name] = jnp.concatenate([jnp.moveaxis(scaled, 0, axis), (1.0 - fraction) * col], axis=axis)
    return out


# -------------------------------------------------------------------------------------------------- diagonal nets
class _DiagonalJumpsFields(NamedTuple):
    times: np.ndarray
    saddles: np.ndarray
    losses: np.ndarray
    duals: np.ndarray
    coords: np.ndarray
    complete: bool = True


class DiagonalJumps(_DiagonalJumpsFields):
    """Output of :func:`diagonal_jumps`: accelerated jump times ``t̃_k`` (k = 1…K), the saddles ``β_k`` visited
    after each jump (``saddles[0] = 0``), their losses, the dual variable ``s`` at each jump, the coordinate
    that activates at each jump, and ``complete`` (the algorithm reached a critical point; False only with
    ``on_failure="flag"`` when ``max_jumps`` ran out). The arrays are finite (``ValueError`` naming the field
    otherwise); ``K`` depends on the data (0 when the gradient vanishes at β = 0)."""

    __slots__ = ()

    def __new__(
        cls,
        times: np.ndarray,
        saddles: np.ndarray,
        losses: np.ndarray,
        duals: np.ndarray,
        coords: np.ndarray,
        complete: bool = True,
    ) -> DiagonalJumps:
        _finite_fields(
            {"times": times, "saddles": saddles, "losses": losses, "duals": duals, "coords": coords}
        )
        return super().__new__(cls, times, saddles, losses, duals, coords, complete)


def _sq_loss(X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> float:
    return float(0.5 * np.mean((y - X @ beta) ** 2))


def diagonal_jumps(
    X: Float[Array, "n d"] | ArrayInput,
    y: Float[Array, " n"] | ArrayInput,
    max_jumps: int = 100,
    tol: float = 1e-10,
    on_failure: Literal["raise", "flag"] = "raise",
) -> DiagonalJumps:
    """Pesme & Flammarion (2023) saddle-jump algorithm for ``L(β) = 1/(2n)||y − Xβ||²``.

    Start at β = 0, s = 0, t̃ = 0 and repeat while ∇L(β) ≠ 0:
    (1) Δ = inf{δ > 0 : some |s_i − δ ∇_i L(β)| = 1} over coordinates with |s_i| < 1;
    (2) t̃ ← t̃ + Δ, s ← s − Δ ∇L(β) (the hitting coordinate is set to exactly ±1);
    (3) β ← argmin L(β) s.t. β_i ≥ 0 if s_i = 1, β_i ≤ 0 if s_i = −1, β_i = 0 otherwise.
    Times are in units ``t / ln(1/α)`` for the flow of ``β = u ⊙ v`` from ``u = √2α, v = 0``
    (:func:`jaxkit.dynamics.init_diagonal`).

    Raises ``SolveError`` if ``max_jumps`` jumps do not reach a critical point (``on_failure="flag"``: returns
    the jumps so far with ``complete=False``).
    """
    X, y = _regression("X", X, "y", y)
    check_int("max_jumps", max_jumps, minimum=1)
    check_positive("tol", tol)
    check_choice("on_failure", on_failure, ("raise", "flag"))
    n, d = X.shape
    complete = False
    beta = np.zeros(d)
    s = np.zeros(d)
    t = 0.0
    times, saddles, losses, duals, coords = [], [beta.copy()], [_sq_loss(X, y, beta)], [], []
    for _ in range(max_jumps + 1):
        g = -X.T @ (y - X @ beta) / n
        if np.max(np.abs(g)) < tol:
            complete = True
            break
        if len(times) == max_jumps:
            break
        pushing_out = ((s >= 1 - 1e-12) & (g < 0)) | ((s <= -1 + 1e-12) & (g > 0))
        valid = (np.abs(g) > tol) & ~pushing_out
        with np.errstate(divide="ignore", invalid="ignore"):
            target = np.where(-g > 0, 1.0, -1.0)
            delta = np.where(valid, (target - s) / (-g), np.inf)
        i = int(np.argmin(delta))
        dlt = float(delta[i])
        if not np.isfinite(dlt):
            complete = True  # no coordinate can move: β is optimal on the constraint set it can reach
            break
        t += dlt
        s = s - dlt * g
        s[i] = target[i]
        s = np.clip(s, -1.0, 1.0)
        at_plus, at_minus = s >= 1 - 1e-12, s <= -1 + 1e-12
        lb = np.where(at_plus, 0.0, np.where(at_minus, -np.inf, 0.0))
        ub = np.where(at_plus, np.inf, np.where(at_minus, 0.0, 0.0))
        act = at_plus | at_minus
        beta = np.zeros(d)
        if act.any():
            res = optimize.lsq_linear(
                X[:, act], y, bounds=(lb[act], ub[act]), method="bvls", tol=1e-14, lsmr_tol=None
            )
            beta[act] = res.x
        times.append(t)
        saddles.append(beta.copy())
        losses.append(_sq_loss(X, y, beta))
        duals.append(s.copy())
        coords.append(i)
    if not complete and on_failure == "raise":
        from ._flow import SolveError

        raise SolveError(
            f"diagonal_jumps: {max_jumps} jumps did not reach a critical point (gradient "
            f"{np.max(np.abs(g)):.3g} > tol {tol}); raise max_jumps or pass on_failure='flag'"
        )
    return DiagonalJumps(
        np.array(times), np.array(saddles), np.array(losses), np.array(duals), np.array(coords), complete
    )


def _regression(xname: str, X: Any, yname: str, y: Any) -> tuple[np.ndarray, np.ndarray]:
    X = as_float64(xname, X)
    y = as_float64(yname, y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0] or X.size == 0:
        raise ValueError(
            f"{xname}, {yname}: expected shapes (n, d) and (n,) with n, d >= 1, received {X.shape} "
            f"and {y.shape}"
        )
    check_finite(xname, X)
    check_finite(yname, y)
    return X, y


def _l1_not_unique(X: np.ndarray, beta: np.ndarray) -> str | None:
    r"""Why the minimum-ℓ1 interpolant ``beta`` (a vertex of the LP) is not the only one, or None if it is.

    The exact condition (Zhang, Yin & Cheng 2015; Fuchs 2004): with support $S$ and signs $\sigma$ of ``beta``,
    the minimizer is unique iff $X_S$ has full column rank and some $\nu$ has $X_S^\top\nu = \sigma$ and
    $|X_j^\top\nu| < 1$ off $S$. The smallest $\max_{j\notin S}|X_j^\top\nu|$ is one small LP; it is unit-free
    (the same for $cX$ and any scale of $y$). At 1, moving weight onto column $j$ keeps $\|\beta\|_1$."""
    size = np.max(np.abs(beta))
    if size == 0:
        return None  # y = 0: beta = 0 is the only point of norm 0
    on = np.abs(beta) > 1e-9 * size
    S, off = np.flatnonzero(on), np.flatnonzero(~on)
    XS = X[:, S]
    if np.linalg.matrix_rank(XS) < len(S):
        return f"the columns {S.tolist()} that carry the weight are linearly dependent"
    if len(off) == 0:
        return None
    n = X.shape[0]
    # min t over (nu, t): X_S^T nu = sign(beta_S), -t <= X_j^T nu <= t for j off S
    Xo = X[:, off].T
    c = np.zeros(n + 1)
    c[-1] = 1.0
    A_ub = np.vstack([np.hstack([Xo, -np.ones((len(off), 1))]), np.hstack([-Xo, -np.ones((len(off), 1))])])
    A_eq = np.hstack([XS.T, np.zeros((len(S), 1))])
    res = optimize.linprog(
        c, A_ub=A_ub, b_ub=np.zeros(2 * len(off)), A_eq=A_eq, b_eq=np.sign(beta[S]),
        bounds=[(None, None)] * n + [(0, None)], method="highs",
    )  # fmt: skip
    if not res.success or res.fun < 1.0 - 1e-6:
        return None  # a strict certificate: unique (an LP that fails here leaves the answer as it was)
    nu = res.x[:n]
    tied = off[np.abs(X[:, off].T @ nu) >= 1.0 - 1e-6]
    # the common case, named plainly: a column equal (up to sign) to one that carries weight
    norms = np.linalg.norm(X, axis=0)
    for j in tied:
        for i in S:
            if norms[j] > 0 and np.allclose(
                X[:, j], np.sign(X[:, j] @ X[:, i]) * X[:, i], rtol=1e-12, atol=0
            ):
                return (
                    f"columns {int(i)} and {int(j)} are equal up to sign and column {int(i)} carries weight, so "
                    "any split of that weight between them has the same ℓ1 norm"
                )
    return (
        f"columns {tied.tolist()} (weight 0 here) can take weight from columns {S.tolist()} at the same ℓ1 norm "
        "(no strict dual certificate)"
    )


def min_l1_interpolator(
    X: Float[Array, "n d"] | ArrayInput, y: Float[Array, " n"] | ArrayInput
) -> np.ndarray:
    """``argmin ||β||₁ s.t. Xβ = y`` by linear programming (scipy ``linprog``, β = p − m with p, m ≥ 0).

    The minimizer must be unique: when it is not (a duplicated feature, columns equal up to sign that carry
    weight, or any other tie), ``ValueError`` naming ``X`` says which columns and why, instead of returning one
    vertex of the optimal set. Uniqueness is checked exactly (a strict dual certificate, one more small LP);
    Gaussian ``X`` gives a unique minimizer with probability 1."""
    X, y = _regression("X", X, "y", y)
    d = X.shape[1]
    res = optimize.linprog(np.ones(2 * d), A_eq=np.hstack([X, -X]), b_eq=y, bounds=(0, None), method="highs")
    if not res.success:
        raise ValueError(f"X, y: no interpolating solution found ({res.message})")
    beta = res.x[:d] - res.x[d:]
    why = _l1_not_unique(X, beta)
    if why is not None:
        raise ValueError(
            f"X: expected a design whose minimum-ℓ1 interpolant is unique, received one where {why}: the "
            "minimizers form a set, of which the LP returns one arbitrary vertex"
        )
    return beta
