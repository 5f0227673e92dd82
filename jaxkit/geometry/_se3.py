"""Rigid motions SE(3) as pairs ``(R, t)``: ``x -> R x + t``.

``compose((R1, t1), (R2, t2)) = (R1 R2, R1 t2 + t1)`` (apply the second first), ``inverse = (R^T, -R^T t)``.
The exponential of a twist ``xi = (omega, rho)`` (rotation part first) is ``(exp(omega), V(omega) rho)`` with
``V = I + (1 - cos w)/w^2 hat(omega) + (w - sin w)/w^3 hat(omega)^2`` (Barfoot, "State Estimation for Robotics",
7.1.5); :func:`log` inverts it with ``V^{-1} = I - hat/2 + (1/w^2)(1 - w sin w / (2 (1 - cos w))) hat^2``.

Inputs are checked as in :mod:`jaxkit.geometry.so3`: shapes, dtypes, finite values and valid rotations (values at
run time under ``jax.jit``) (``R^T R = I``, ``det R = +1`` within ``1e-4``); homogeneous matrices must end in the row
``(0, 0, 0, 1)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    ROTATION_ATOL,
    as_float_array,
    check_shape_tuple,
    check_trailing_shape,
    error_if_invalid,
    finite_checked,
    rotation_checked,
)

from . import _so3 as so3

__all__ = ["apply", "compose", "exp", "from_matrix", "identity", "inverse", "log", "to_matrix"]


def _check_pair(R: ArrayInput, t: ArrayInput, rname: str = "R", tname: str = "t") -> tuple[Array, Array]:
    R, t = so3._rotations(rname, R), so3._vectors(tname, t, 3)
    if R.shape[:-2] != t.shape[:-1]:
        raise ValueError(
            f"{tname}: expected batch shape {R.shape[:-2]} matching {rname}, received {t.shape[:-1]}"
        )
    return R, t


def identity(shape: tuple[int, ...] = (), dtype=None) -> tuple[Array, Array]:
    """The identity motion ``(I, 0)`` with batch shape ``shape``."""
    shape = check_shape_tuple("shape", shape)
    dtype = dtype or jnp.result_type(float)
    so3._check_dtype("dtype", dtype)
    return jnp.broadcast_to(jnp.eye(3, dtype=dtype), shape + (3, 3)), jnp.zeros(shape + (3,), dtype)


def compose(R1: ArrayInput, t1: ArrayInput, R2: ArrayInput, t2: ArrayInput) -> tuple[Array, Array]:
    """``(R1, t1) o (R2, t2) = (R1 R2, R1 t2 + t1)``."""
    R1, t1 = _check_pair(R1, t1, "R1", "t1")
    R2, t2 = _check_pair(R2, t2, "R2", "t2")
    so3._broadcast("R2", R1, R2, 2)
    return jnp.matmul(R1, R2), jnp.einsum("...ij,...j->...i", R1, t2) + t1


def inverse(R: ArrayInput, t: ArrayInput) -> tuple[Array, Array]:
    """``(R^T, -R^T t)``."""
    R, t = _check_pair(R, t)
    Rt = jnp.swapaxes(R, -1, -2)
    return Rt, -jnp.einsum("...ij,...j->...i", Rt, t)


def apply(R: ArrayInput, t: ArrayInput, x: ArrayInput) -> Array:
    """``R x + t`` for points ``x (..., 3)`` (broadcasting over leading axes)."""
    R, t = _check_pair(R, t)
    x = so3._vectors("x", x, 3)
    so3._broadcast2(R, x)
    return jnp.einsum("...ij,...j->...i", R, x) + t


def _v_coefs(w2: Array) -> tuple[Array, Array]:
    small = w2 < 1e-6
    w2s = jnp.where(small, 1.0, w2)
    w = jnp.sqrt(w2s)
    b = jnp.where(small, 0.5 - w2 / 24.0, (1.0 - jnp.cos(w)) / w2s)
    c = jnp.where(small, 1.0 / 6.0 - w2 / 120.0, (w - jnp.sin(w)) / (w2s * w))
    return b, c


def exp(xi: ArrayInput) -> tuple[Array, Array]:
    """Twist ``(..., 6) = (omega, rho)`` to ``(R, t)``."""
    xi = so3._vectors("xi", xi, 6)
    om, rho = xi[..., :3], xi[..., 3:]
    K = so3._hat(om)
    b, c = _v_coefs(jnp.sum(om * om, -1))
    V = jnp.eye(3, dtype=xi.dtype) + b[..., None, None] * K + c[..., None, None] * (K @ K)
    return so3._exp(om), jnp.einsum("...ij,...j->...i", V, rho)


def log(R: ArrayInput, t: ArrayInput) -> Array:
    """``(R, t)`` to the twist ``(..., 6) = (omega, rho)`` with ``|omega| <= pi``."""
    R, t = _check_pair(R, t)
    om = so3._log(R)
    w2 = jnp.sum(om * om, -1)
    small = w2 < 1e-6
    w2s = jnp.where(small, 1.0, w2)
    w = jnp.sqrt(w2s)
    # (1/w^2)(1 - w sin w / (2 (1 - cos w))) -> 1/12 + w^2/720
    d = jnp.where(small, 1.0 / 12.0 + w2 / 720.0, (1.0 - w * jnp.sin(w) / (2.0 * (1.0 - jnp.cos(w)))) / w2s)
    K = so3._hat(om)
    Vinv = jnp.eye(3, dtype=om.dtype) - 0.5 * K + d[..., None, None] * (K @ K)
    return jnp.concatenate([om, jnp.einsum("...ij,...j->...i", Vinv, t)], -1)


def to_matrix(R: ArrayInput, t: ArrayInput) -> Array:
    """``(..., 4, 4)`` homogeneous matrix."""
    R, t = _check_pair(R, t)
    top = jnp.concatenate([R, t[..., None]], -1)
    bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], R.dtype), R.shape[:-2] + (1, 4))
    return jnp.concatenate([top, bottom], -2)


def from_matrix(T: ArrayInput) -> tuple[Array, Array]:
    """Homogeneous ``(..., 4, 4)`` to ``(R, t)``; the top-left block must be a rotation and the last row
    ``(0, 0, 0, 1)`` (within ``1e-4``)."""
    T = as_float_array("T", T)
    check_trailing_shape("T", T, (4, 4))
    T = finite_checked("T", T)
    R = rotation_checked("T[..., :3, :3]", T[..., :3, :3])
    if isinstance(T, jax.core.Tracer):
        err = jnp.abs(T[..., 3, :] - jnp.array([0.0, 0.0, 0.0, 1.0], T.dtype))
        R = error_if_invalid(
            R, jnp.any(err > ROTATION_ATOL), "T: expected homogeneous matrices with last row (0, 0, 0, 1)"
        )
    else:
        err = np.abs(np.asarray(T[..., 3, :], np.float64) - np.array([0.0, 0.0, 0.0, 1.0]))
        if err.size and err.max() > ROTATION_ATOL:
            raise ValueError(
                f"T: expected homogeneous matrices with last row (0, 0, 0, 1), received a last row "
                f"off by up to {err.max():.3g}"
            )
    return R, T[..., :3, 3]
