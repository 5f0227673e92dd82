"""Optimal superposition (Kabsch 1976) and RMSD.

``kabsch(P, Q)`` returns the rigid motion ``(R, t)`` minimizing ``sum_i w_i |R p_i + t - q_i|^2``:
center both sets, ``H = sum w_i p_i q_i^T = U S V^T``, ``R = V diag(1, 1, d) U^T`` with ``d = sign det(V U^T)``
(the reflection guard), ``t = mean(q) - R mean(p)``. The rotation is unique only when the centered point sets
span at least a plane (the second singular value of ``H`` is non-zero); for (nearly) collinear or coincident
points :func:`kabsch` raises instead of returning one arbitrary rotation about the line.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from jaxkit._typing import ArrayInput
from jaxkit._validate import as_float_array, error_if_invalid, finite_checked

__all__ = ["kabsch", "kabsch_rmsd", "rmsd"]


def _check_points(P: ArrayInput, Q: ArrayInput, weights: ArrayInput | None, min_points: int = 1):
    P, Q = as_float_array("P", P), as_float_array("Q", Q)
    ps, qs = P.shape, Q.shape
    if len(ps) != 2 or ps[-1] != 3:
        raise ValueError(f"P: expected shape (n, 3), received {ps}")
    if ps != qs:
        raise ValueError(f"Q: expected the shape of P {ps}, received {qs}")
    if ps[0] < min_points:
        raise ValueError(f"P: expected at least {min_points} points, received {ps[0]}")
    P, Q = finite_checked("P", P), finite_checked("Q", Q)
    if weights is None:
        return P, Q, None
    w = as_float_array("weights", weights)
    if w.shape != ps[:1]:
        raise ValueError(f"weights: expected shape ({ps[0]},), received {w.shape}")
    w = finite_checked("weights", w)
    if isinstance(w, jax.core.Tracer):
        w = error_if_invalid(
            w,
            jnp.any(w < 0) | ~(jnp.sum(w) > 0),
            "weights: expected non-negative weights with a positive sum",
        )
    elif bool(jnp.any(w < 0)) or not float(jnp.sum(w)) > 0:
        raise ValueError(
            f"weights: expected non-negative weights with a positive sum, received min "
            f"{float(jnp.min(w)):.4g}, sum {float(jnp.sum(w)):.4g}"
        )
    return P, Q, w


def kabsch(P: ArrayInput, Q: ArrayInput, weights: ArrayInput | None = None) -> tuple[Array, Array]:
    """Rigid motion ``(R, t)`` with ``R P_i + t ~ Q_i`` (least squares, proper rotation). ``P, Q: (n, 3)``, at
    least 3 points spanning a plane (else ``ValueError``: the rotation is not unique)."""
    P, Q, w = _check_points(P, Q, weights, min_points=3)
    w = jnp.ones(P.shape[0], P.dtype) if w is None else w.astype(P.dtype)
    w = w / jnp.sum(w)
    mp, mq = w @ P, w @ Q
    H = (P - mp).T @ ((Q - mq) * w[:, None])
    U, S, Vt = jnp.linalg.svd(H)
    if isinstance(S, jax.core.Tracer):  # the same test at run time (eqx.error_if), also under jax.jit
        scale = jnp.sqrt(jnp.sum(w[:, None] * (P - mp) ** 2)) * jnp.sqrt(jnp.sum(w[:, None] * (Q - mq) ** 2))
        tol = 1e3 * jnp.finfo(P.dtype).eps * jnp.maximum(scale, 1e-300)
        U = error_if_invalid(
            U,
            ~(S[1] > tol),
            "P, Q: the centered points are (nearly) collinear or coincident; the rotation about their line is "
            "not determined",
        )
    else:
        s = np.asarray(S, np.float64)
        scale = float(
            np.sqrt(np.sum(np.asarray(w)[:, None] * np.asarray(P - mp) ** 2))
            * np.sqrt(np.sum(np.asarray(w)[:, None] * np.asarray(Q - mq) ** 2))
        )
        if not s[1] > 1e3 * np.finfo(np.asarray(P).dtype).eps * max(scale, 1e-300):
            raise ValueError(
                "P, Q: the centered points are (nearly) collinear or coincident (singular values of the "
                f"cross-covariance {np.round(s, 8).tolist()}); the rotation about their line is not determined"
            )
    d = jnp.sign(jnp.linalg.det(Vt.T @ U.T))
    d = jnp.where(d == 0, 1.0, d)
    D = jnp.array([1.0, 1.0, 0.0], P.dtype) + jnp.array([0.0, 0.0, 1.0], P.dtype) * d
    R = (Vt.T * D[None, :]) @ U.T
    return R, mq - R @ mp


def rmsd(P: ArrayInput, Q: ArrayInput) -> Array:
    """Root-mean-square deviation without superposition, ``sqrt(mean_i |p_i - q_i|^2)``. ``P, Q: (n, 3)``,
    ``n >= 1``."""
    P, Q, _ = _check_points(P, Q, None)
    return jnp.sqrt(jnp.mean(jnp.sum((P - Q) ** 2, -1)))


def kabsch_rmsd(P: ArrayInput, Q: ArrayInput) -> Array:
    """RMSD after optimal superposition of ``P`` onto ``Q`` (see :func:`kabsch` for the conditions)."""
    R, t = kabsch(P, Q)
    return rmsd(jnp.asarray(P, R.dtype) @ R.T + t, Q)
