"""The rotation group SO(3): hat/vee, exponential and logarithm, quaternions, Haar sampling, distances.

Conventions. A rotation is a ``(..., 3, 3)`` matrix acting on column vectors; a tangent vector is a rotation
vector ``v = omega * axis`` (``omega = |v|`` in ``[0, pi]`` for :func:`log`), with ``hat(v) x = v x x``.
Quaternions are scalar-first ``(w, x, y, z)``, unit norm; ``q`` and ``-q`` are the same rotation (double cover),
:func:`to_quaternion` returns the representative with ``w >= 0``. (SciPy's ``Rotation`` is scalar-last.)

Rodrigues: ``exp(hat v) = I + sin(w)/w hat(v) + (1 - cos w)/w^2 hat(v)^2``. The logarithm uses
``omega = atan2(|vee(R - R^T)|/2, (tr R - 1)/2)`` (accurate at both ends), the antisymmetric part for
``omega <= 2 pi/3`` (Taylor ``omega/sin omega`` near 0) and the symmetric part ``(R + R^T)/2 - cos(omega) I =
(1 - cos omega) a a^T`` for the axis near ``pi``. The geodesic distance for the bi-invariant metric with
``|hat v| = |v|`` is the rotation angle of ``R_1^T R_2``.

Input checks. Every public function accepts lists, NumPy and JAX arrays, checks shapes and dtypes (integers are
promoted to floats, complex is refused) and, on concrete inputs, that values are finite and that matrices passed
as rotations are rotations (``R^T R = I`` and ``det R = +1`` within ``atol = 1e-4``;
:func:`jaxkit.geometry.so3.check_rotation`), raising ``ValueError``/``TypeError`` that names the argument. Inside
``jax.jit`` the same value checks run at run time (``equinox.error_if``): a traced non-rotation, NaN or
out-of-range input raises a run-time error naming the argument instead of returning a silent result.
:func:`random_uniform` refuses a request above the size cap (4 GiB, ``JAXKIT_MAX_BYTES``) up front.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray

from jaxkit._typing import ArrayInput, DTypeLike
from jaxkit._validate import (
    ROTATION_ATOL,
    as_float_array,
    check_broadcast,
    check_key,
    check_norm,
    check_positive,
    check_shape_tuple,
    check_size,
    check_trailing_shape,
    error_if_invalid,
    finite_checked,
    range_checked,
    rotation_checked,
    rotation_errors,
)

__all__ = [
    "rotation_from_uniforms",
    "uniform_axis",
    "angle",
    "apply",
    "check_rotation",
    "compose",
    "exp",
    "from_axis_angle",
    "from_quaternion",
    "geodesic_distance",
    "hat",
    "inverse",
    "is_rotation",
    "log",
    "project",
    "random_uniform",
    "to_quaternion",
    "vee",
]


def is_rotation(R: ArrayInput, atol: float = ROTATION_ATOL) -> np.ndarray:
    """Concrete check (NumPy): ``R^T R = I`` and ``det R = +1`` within ``atol``, per matrix (``False`` for NaN/inf)."""
    check_trailing_shape("R", R, (3, 3))
    orth, det = rotation_errors(R)
    with np.errstate(invalid="ignore"):
        return np.asarray((orth <= atol) & (np.abs(det - 1.0) <= atol))


def check_rotation(name: str, R: ArrayInput, atol: float = ROTATION_ATOL) -> ArrayInput:
    """Raise ``ValueError`` unless ``R`` has shape ``(..., 3, 3)`` and holds finite rotations (``R^T R = I``,
    ``det R = +1`` within ``atol``); returns ``R``. On a tracer the value check runs at run time: use the
    returned array (``R = check_rotation("R", R)``) so that ``jax.jit`` keeps it. ``atol`` must be finite and > 0."""
    check_positive("atol", atol)
    return rotation_checked(name, R, atol)


def _vectors(name: str, v: Any, n: int) -> Array:
    v = as_float_array(name, v)
    check_trailing_shape(name, v, (n,))
    return finite_checked(name, v)


def _rotations(name: str, R: Any) -> Array:
    return rotation_checked(name, as_float_array(name, R))


def _matrices(name: str, M: Any) -> Array:
    M = as_float_array(name, M)
    check_trailing_shape(name, M, (3, 3))
    return finite_checked(name, M)


def hat(v: ArrayInput) -> Array:
    """``(..., 3) -> (..., 3, 3)`` skew-symmetric matrix with ``hat(v) x = v x x``."""
    return _hat(_vectors("v", v, 3))


def _hat(v: Array) -> Array:
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = jnp.zeros_like(x)
    return jnp.stack([jnp.stack([o, -z, y], -1), jnp.stack([z, o, -x], -1), jnp.stack([-y, x, o], -1)], -2)


def vee(M: ArrayInput) -> Array:
    """Inverse of :func:`hat` on the skew part: ``(..., 3, 3) -> (..., 3)``, ``vee((M - M^T)/2)``."""
    return _vee(_matrices("M", M))


def _vee(M: Array) -> Array:
    return 0.5 * jnp.stack(
        [M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0], M[..., 1, 0] - M[..., 0, 1]], -1
    )


@jax.custom_jvp
def _norm(v: Array) -> Array:
    """``|v|`` along the last axis; its derivative at ``v = 0`` is 0 (plain ``sqrt`` gives ``inf * 0 = NaN``)."""
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


@_norm.defjvp
def _norm_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (v,), (dv,) = primals, tangents
    n = _norm(v)
    pos = n > 0
    return n, jnp.where(pos, jnp.sum(v * dv, axis=-1) / jnp.where(pos, n, 1.0), 0.0)


def _safe_norm(v: Array) -> tuple[Array, Array]:
    n = _norm(v)
    return n, n < 1e-10


def exp(v: ArrayInput) -> Array:
    """Rotation vector ``(..., 3)`` to rotation matrix (Rodrigues, Taylor series for small angles)."""
    return _exp(_vectors("v", v, 3))


@jax.jit
def _exp(v: Array) -> Array:
    th2 = jnp.sum(v * v, axis=-1)
    small = th2 < 1e-6
    th2s = jnp.where(small, 1.0, th2)
    th = jnp.sqrt(th2s)
    a = jnp.where(small, 1.0 - th2 / 6.0 + th2**2 / 120.0, jnp.sin(th) / th)
    b = jnp.where(small, 0.5 - th2 / 24.0 + th2**2 / 720.0, (1.0 - jnp.cos(th)) / th2s)
    return _rodrigues(v[..., 0], v[..., 1], v[..., 2], a, b, th2)


def _rodrigues(x: Array, y: Array, z: Array, a: Array, b: Array, th2: Array) -> Array:
    """``I + a hat(u) + b hat(u)^2`` for ``u = (x, y, z)``, ``|u|^2 = th2``, using ``hat(u)^2 = u u^T - |u|^2 I``.

    Written elementwise (nine fused expressions, no 3x3 matmuls) so XLA emits one loop on CPU and GPU."""
    bx, by, bz = b * x, b * y, b * z
    ax, ay, az = a * x, a * y, a * z
    c = 1.0 - b * th2
    return jnp.stack(
        [
            jnp.stack([c + bx * x, bx * y - az, bx * z + ay], -1),
            jnp.stack([bx * y + az, c + by * y, by * z - ax], -1),
            jnp.stack([bx * z - ay, by * z + ax, c + bz * z], -1),
        ],
        -2,
    )


def _uniforms(**named: Any) -> list[Array]:
    check_broadcast(**named)
    out = []
    for name, u in named.items():
        out.append(range_checked(name, as_float_array(name, u), 0.0, 1.0, what="U(0, 1) variates"))
    return out


def uniform_axis(u1: ArrayInput, u2: ArrayInput) -> tuple[Array, Array, Array]:
    """Uniform unit vector from two U(0, 1) variates (Archimedes: ``z = 2 u1 - 1`` is uniform, azimuth ``2 pi u2``)."""
    return _uniform_axis(*_uniforms(u1=u1, u2=u2))


def _uniform_axis(u1: Array, u2: Array) -> tuple[Array, Array, Array]:
    z = 2.0 * u1 - 1.0
    r = jnp.sqrt(jnp.maximum(1.0 - z * z, 0.0))
    phi = (2.0 * np.pi) * u2
    return r * jnp.cos(phi), r * jnp.sin(phi), z


def rotation_from_uniforms(u1: ArrayInput, u2: ArrayInput, omega: ArrayInput) -> Array:
    """Rotation by ``omega`` about the uniform axis drawn from ``(u1, u2)`` (see :func:`uniform_axis`)."""
    check_broadcast(u1=u1, u2=u2, omega=omega)
    u1, u2 = _uniforms(u1=u1, u2=u2)
    omega = finite_checked("omega", as_float_array("omega", omega))
    return _rotation_from_uniforms(u1, u2, omega)


def _rotation_from_uniforms(u1: Array, u2: Array, omega: Array) -> Array:
    x, y, z = _uniform_axis(u1, u2)
    return _rodrigues(x, y, z, jnp.sin(omega), 1.0 - jnp.cos(omega), jnp.ones_like(omega))


def from_axis_angle(axis: ArrayInput, angle_: ArrayInput) -> Array:
    """Rotation by ``angle`` about the unit ``axis`` (``(..., 3)``, norm 1 within 1e-4; broadcasts with
    ``angle``)."""
    axis = _vectors("axis", axis, 3)
    check_norm("axis", axis, unit=True)
    if isinstance(axis, jax.core.Tracer):
        n = jnp.sqrt(jnp.sum(axis * axis, -1))
        axis = error_if_invalid(
            axis, jnp.abs(n - 1.0) > 1e-4, "axis: expected unit vectors (|norm - 1| <= 0.0001)"
        )
    angle_ = finite_checked("angle_", as_float_array("angle_", angle_))
    try:
        v = axis * angle_[..., None]
    except (TypeError, ValueError):
        raise ValueError(
            f"angle_: expected a shape broadcastable with axis {axis.shape[:-1]}, received {angle_.shape}"
        ) from None
    return _exp(v)


def angle(R: ArrayInput) -> Array:
    """Rotation angle in ``[0, pi]``, ``atan2(|vee(R - R^T)|/2, (tr R - 1)/2)``."""
    return _angle(_rotations("R", R))


@jax.jit
def _angle(R: Array) -> Array:
    s, _ = _safe_norm(_vee(R))
    c = 0.5 * (jnp.trace(R, axis1=-2, axis2=-1) - 1.0)
    return jnp.arctan2(s, c)


def log(R: ArrayInput) -> Array:
    """Rotation matrix to rotation vector ``(..., 3)`` with angle in ``[0, pi]``; stable near 0 and ``pi``, and
    differentiable at the identity (the gradient of ``log(exp(v))`` at ``v = 0`` is the identity)."""
    return _log(_rotations("R", R))


@jax.jit
def _log(R: Array) -> Array:
    w = _vee(R)  # = sin(omega) * axis
    s, _ = _safe_norm(w)
    c = 0.5 * (jnp.trace(R, axis1=-2, axis2=-1) - 1.0)
    om = jnp.arctan2(s, c)
    # branch 1: omega <= 2pi/3 -> v = w * omega / sin(omega)
    small = om < 1e-3
    s_safe = jnp.where(small | (s == 0), 1.0, s)
    om2 = om * om
    f = jnp.where(small, 1.0 + om2 / 6.0 + 7.0 * om2 * om2 / 360.0, om / s_safe)
    v1 = w * f[..., None]
    # branch 2: near pi, axis from the symmetric part (1 - c) a a^T = (R + R^T)/2 - c I
    B = 0.5 * (R + jnp.swapaxes(R, -1, -2)) - c[..., None, None] * jnp.eye(3, dtype=R.dtype)
    d0, d1, d2 = B[..., 0, 0], B[..., 1, 1], B[..., 2, 2]
    pick0 = (d0 >= d1) & (d0 >= d2)
    pick1 = ~pick0 & (d1 >= d2)
    row = jnp.where(pick0[..., None], B[..., 0, :], jnp.where(pick1[..., None], B[..., 1, :], B[..., 2, :]))
    di = jnp.where(pick0, d0, jnp.where(pick1, d1, d2))
    denom = jnp.sqrt(jnp.maximum(di * (1.0 - c), 1e-30))
    a = row / denom[..., None]
    sgn = jnp.where(jnp.sum(a * w, axis=-1) < 0, -1.0, 1.0).astype(R.dtype)
    v2 = a * (sgn * om)[..., None]
    use2 = om > (2.0 * np.pi / 3.0)
    return jnp.where(use2[..., None], v2, v1)


def _broadcast(name: str, a: Array, b: Array, core: int) -> None:
    try:
        np.broadcast_shapes(a.shape[: a.ndim - core], b.shape[: b.ndim - core])
    except ValueError:
        raise ValueError(
            f"{name}: expected batch dimensions broadcastable with {a.shape[: a.ndim - core]}, "
            f"received shape {b.shape}"
        ) from None


def compose(R1: ArrayInput, R2: ArrayInput) -> Array:
    """``R1 R2`` (apply ``R2`` first); batch dimensions broadcast."""
    R1, R2 = _rotations("R1", R1), _rotations("R2", R2)
    _broadcast("R2", R1, R2, 2)
    return jnp.matmul(R1, R2)


def inverse(R: ArrayInput) -> Array:
    """``R^T`` (the inverse of a rotation)."""
    return jnp.swapaxes(_rotations("R", R), -1, -2)


def apply(R: ArrayInput, x: ArrayInput) -> Array:
    """Rotate points ``x (..., 3)``: ``R x`` (batch dimensions broadcast)."""
    R, x = _rotations("R", R), _vectors("x", x, 3)
    _broadcast2(R, x)
    return jnp.einsum("...ij,...j->...i", R, x)


def _broadcast2(R: Array, x: Array) -> None:
    try:
        np.broadcast_shapes(R.shape[:-2], x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"x: expected batch dimensions broadcastable with R's {R.shape[:-2]}, received shape {x.shape}"
        ) from None


def geodesic_distance(R1: ArrayInput, R2: ArrayInput) -> Array:
    """Angle of ``R1^T R2`` in ``[0, pi]``."""
    R1, R2 = _rotations("R1", R1), _rotations("R2", R2)
    _broadcast("R2", R1, R2, 2)
    return _angle(jnp.matmul(jnp.swapaxes(R1, -1, -2), R2))


def from_quaternion(q: ArrayInput) -> Array:
    """Quaternion ``(w, x, y, z)`` to rotation matrix; ``q`` is normalized here (any non-zero norm is accepted,
    a zero quaternion is an error)."""
    q = _vectors("q", q, 4)
    check_norm("q", q, min_norm=1e-12)
    if isinstance(q, jax.core.Tracer):
        q = error_if_invalid(q, jnp.sum(q * q, -1) < 1e-24, "q: expected vectors of non-zero norm")
    return _from_quaternion(q)


@jax.jit
def _from_quaternion(q: Array) -> Array:
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    return _quaternion_matrix(q[..., 0], q[..., 1], q[..., 2], q[..., 3])


def _quaternion_matrix(w: Array, x: Array, y: Array, z: Array) -> Array:
    """Rotation matrix of the unit quaternion ``(w, x, y, z)``, elementwise."""
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def to_quaternion(R: ArrayInput) -> Array:
    """Rotation matrix to unit quaternion ``(w, x, y, z)`` with ``w >= 0`` (Shepperd's branch on the largest)."""
    return _to_quaternion(_rotations("R", R))


@jax.jit
def _to_quaternion(R: Array) -> Array:
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    tr = m00 + m11 + m22
    cands = jnp.stack(
        [
            jnp.stack(
                [
                    1 + tr,
                    R[..., 2, 1] - R[..., 1, 2],
                    R[..., 0, 2] - R[..., 2, 0],
                    R[..., 1, 0] - R[..., 0, 1],
                ],
                -1,
            ),
            jnp.stack(
                [
                    R[..., 2, 1] - R[..., 1, 2],
                    1 + m00 - m11 - m22,
                    R[..., 0, 1] + R[..., 1, 0],
                    R[..., 0, 2] + R[..., 2, 0],
                ],
                -1,
            ),
            jnp.stack(
                [
                    R[..., 0, 2] - R[..., 2, 0],
                    R[..., 0, 1] + R[..., 1, 0],
                    1 - m00 + m11 - m22,
                    R[..., 1, 2] + R[..., 2, 1],
                ],
                -1,
            ),
            jnp.stack(
                [
                    R[..., 1, 0] - R[..., 0, 1],
                    R[..., 0, 2] + R[..., 2, 0],
                    R[..., 1, 2] + R[..., 2, 1],
                    1 - m00 - m11 + m22,
                ],
                -1,
            ),
        ],
        -2,
    )  # (..., 4, 4): row k is 4 q_k q
    k = jnp.argmax(jnp.stack([tr, m00, m11, m22], -1), axis=-1)
    q = jnp.take_along_axis(cands, k[..., None, None], axis=-2)[..., 0, :]
    q = q / jnp.linalg.norm(q, axis=-1, keepdims=True)
    return q * jnp.where(q[..., :1] < 0, -1.0, 1.0).astype(q.dtype)


def random_uniform(key: PRNGKeyArray, shape: tuple[int, ...] = (), dtype: DTypeLike | None = None) -> Array:
    """Haar-uniform rotations of shape ``shape + (3, 3)``.

    Shoemake's subgroup algorithm (Graphics Gems III, 1992): three ``U(0, 1)`` variates give a uniform unit
    quaternion ``(sqrt(1-u1) sin 2 pi u2, sqrt(1-u1) cos 2 pi u2, sqrt(u1) sin 2 pi u3, sqrt(u1) cos 2 pi u3)``;
    three random words per rotation instead of four Gaussians, and no normalization."""
    check_key("key", key)
    shape = check_shape_tuple("shape", shape)
    dtype = dtype or jnp.result_type(float)
    _check_dtype("dtype", dtype)
    n = int(np.prod(shape, dtype=object))
    # the result (9 words per rotation) plus the uniforms and quaternion temporaries (about 7 more)
    check_size("shape", 16 * n * jnp.dtype(dtype).itemsize, hint=f"{n} rotations; draw them in batches")
    return _random_uniform(key, shape, jnp.dtype(dtype))


@partial(jax.jit, static_argnums=(1, 2))
def _random_uniform(key: PRNGKeyArray, shape: tuple[int, ...], dtype: Any) -> Array:
    u = jax.random.uniform(key, (3,) + shape, dtype)
    r1, r2 = jnp.sqrt(1.0 - u[0]), jnp.sqrt(u[0])
    t1, t2 = (2.0 * np.pi) * u[1], (2.0 * np.pi) * u[2]
    w, x, y, z = r1 * jnp.sin(t1), r1 * jnp.cos(t1), r2 * jnp.sin(t2), r2 * jnp.cos(t2)
    return _quaternion_matrix(w, x, y, z)


def _check_dtype(name: str, dtype: Any) -> None:
    try:
        dtype = jnp.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: expected a floating dtype, received {dtype!r}") from None
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"{name}: expected a floating dtype, received {jnp.dtype(dtype)}")


def project(M: ArrayInput) -> Array:
    """Nearest rotation in Frobenius norm (SVD with a determinant guard).

    The nearest rotation is unique only for ``rank M >= 2``; a matrix whose second singular value is zero
    (relative to the first, within ``100·eps``; the zero matrix included) raises ``ValueError`` (a run-time error
    under ``jax.jit``) instead of returning an arbitrary rotation."""
    M = _matrices("M", M)
    U, s, Vt = jnp.linalg.svd(M)
    tol = 100 * jnp.finfo(s.dtype).eps
    U = error_if_invalid(
        U,
        ~(s[..., 1] > tol * s[..., 0]),
        "M: expected a matrix of rank >= 2 (the nearest rotation to a matrix of rank < 2, e.g. zeros, is not "
        "unique), received one whose second singular value is zero",
    )
    d = jnp.sign(jnp.linalg.det(U @ Vt))
    D = jnp.ones(M.shape[:-1], M.dtype).at[..., -1].set(d)
    return (U * D[..., None, :]) @ Vt
