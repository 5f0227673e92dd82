"""Rigid motions SE(3) as pairs ``(R, t)``: ``x -> R x + t``.

``compose((R1, t1), (R2, t2)) = (R1 R2, R1 t2 + t1)`` (apply the second first), ``inverse = (R^T, -R^T t)``.
The exponential of a twist ``xi = (omega, rho)`` (rotation part first) is ``(exp(omega), V(omega) rho)`` with
``V = I + (1 - cos w)/w^2 hat(omega) + (w - sin w)/w^3 hat(omega)^2`` (Barfoot, "State Estimation for Robotics",
7.1.5); :func:`log` inverts it with ``V^{-1} = I - hat/2 + (1/w^2)(1 - w sin w / (2 (1 - cos w))) hat^2``.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike

from jaxkit._validate import check_trailing_shape

from . import _so3 as so3

__all__ = ["apply", "compose", "exp", "from_matrix", "identity", "inverse", "log", "to_matrix"]


def _check_pair(R: ArrayLike, t: ArrayLike) -> None:
    check_trailing_shape("R", R, (3, 3))
    check_trailing_shape("t", t, (3,))
    if jnp.shape(R)[:-2] != jnp.shape(t)[:-1]:
        raise ValueError(
            f"t: expected batch shape {jnp.shape(R)[:-2]} matching R, received {jnp.shape(t)[:-1]}"
        )


def identity(shape: tuple[int, ...] = (), dtype=None) -> tuple[Array, Array]:
    dtype = dtype or jnp.result_type(float)
    return jnp.broadcast_to(jnp.eye(3, dtype=dtype), tuple(shape) + (3, 3)), jnp.zeros(
        tuple(shape) + (3,), dtype
    )


def compose(R1: ArrayLike, t1: ArrayLike, R2: ArrayLike, t2: ArrayLike) -> tuple[Array, Array]:
    """``(R1, t1) o (R2, t2) = (R1 R2, R1 t2 + t1)``."""
    _check_pair(R1, t1)
    _check_pair(R2, t2)
    return so3.compose(R1, R2), so3.apply(R1, t2) + jnp.asarray(t1)


def inverse(R: ArrayLike, t: ArrayLike) -> tuple[Array, Array]:
    """``(R^T, -R^T t)``."""
    _check_pair(R, t)
    Rt = so3.inverse(R)
    return Rt, -so3.apply(Rt, t)


def apply(R: ArrayLike, t: ArrayLike, x: ArrayLike) -> Array:
    """``R x + t`` for points ``x (..., 3)`` (broadcasting over leading axes)."""
    check_trailing_shape("x", x, (3,))
    return so3.apply(R, x) + jnp.asarray(t)


def _v_coefs(w2: Array) -> tuple[Array, Array]:
    small = w2 < 1e-6
    w2s = jnp.where(small, 1.0, w2)
    w = jnp.sqrt(w2s)
    b = jnp.where(small, 0.5 - w2 / 24.0, (1.0 - jnp.cos(w)) / w2s)
    c = jnp.where(small, 1.0 / 6.0 - w2 / 120.0, (w - jnp.sin(w)) / (w2s * w))
    return b, c


def exp(xi: ArrayLike) -> tuple[Array, Array]:
    """Twist ``(..., 6) = (omega, rho)`` to ``(R, t)``."""
    xi = jnp.asarray(xi)
    check_trailing_shape("xi", xi, (6,))
    om, rho = xi[..., :3], xi[..., 3:]
    K = so3.hat(om)
    b, c = _v_coefs(jnp.sum(om * om, -1))
    V = jnp.eye(3, dtype=xi.dtype) + b[..., None, None] * K + c[..., None, None] * (K @ K)
    return so3.exp(om), jnp.einsum("...ij,...j->...i", V, rho)


def log(R: ArrayLike, t: ArrayLike) -> Array:
    """``(R, t)`` to the twist ``(..., 6) = (omega, rho)`` with ``|omega| <= pi``."""
    _check_pair(R, t)
    om = so3.log(R)
    w2 = jnp.sum(om * om, -1)
    small = w2 < 1e-6
    w2s = jnp.where(small, 1.0, w2)
    w = jnp.sqrt(w2s)
    # (1/w^2)(1 - w sin w / (2 (1 - cos w))) -> 1/12 + w^2/720
    d = jnp.where(small, 1.0 / 12.0 + w2 / 720.0, (1.0 - w * jnp.sin(w) / (2.0 * (1.0 - jnp.cos(w)))) / w2s)
    K = so3.hat(om)
    Vinv = jnp.eye(3, dtype=om.dtype) - 0.5 * K + d[..., None, None] * (K @ K)
    return jnp.concatenate([om, jnp.einsum("...ij,...j->...i", Vinv, jnp.asarray(t))], -1)


def to_matrix(R: ArrayLike, t: ArrayLike) -> Array:
    """``(..., 4, 4)`` homogeneous matrix."""
    _check_pair(R, t)
    R, t = jnp.asarray(R), jnp.asarray(t)
    top = jnp.concatenate([R, t[..., None]], -1)
    bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], R.dtype), R.shape[:-2] + (1, 4))
    return jnp.concatenate([top, bottom], -2)


def from_matrix(T: ArrayLike) -> tuple[Array, Array]:
    """Homogeneous ``(..., 4, 4)`` to ``(R, t)``."""
    T = jnp.asarray(T)
    check_trailing_shape("T", T, (4, 4))
    return T[..., :3, :3], T[..., :3, 3]
