"""Optimal superposition (Kabsch 1976) and RMSD.

``kabsch(P, Q)`` returns the rigid motion ``(R, t)`` minimising ``sum_i w_i |R p_i + t - q_i|^2``:
centre both sets, ``H = sum w_i p_i q_i^T = U S V^T``, ``R = V diag(1, 1, d) U^T`` with ``d = sign det(V U^T)``
(the reflection guard), ``t = mean(q) - R mean(p)``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike

__all__ = ["kabsch", "kabsch_rmsd", "rmsd"]


def _check_points(P: ArrayLike, Q: ArrayLike, weights: ArrayLike | None) -> None:
    ps, qs = np.shape(P), np.shape(Q)
    if len(ps) != 2 or ps[-1] != 3:
        raise ValueError(f"P: expected shape (n, 3), received {ps}")
    if ps != qs:
        raise ValueError(f"Q: expected the shape of P {ps}, received {qs}")
    if ps[0] < 3:
        raise ValueError(f"P: expected at least 3 points for a unique alignment, received {ps[0]}")
    if weights is not None and np.shape(weights) != ps[:1]:
        raise ValueError(f"weights: expected shape ({ps[0]},), received {np.shape(weights)}")


def kabsch(P: ArrayLike, Q: ArrayLike, weights: ArrayLike | None = None) -> tuple[Array, Array]:
    """Rigid motion ``(R, t)`` with ``R P_i + t ~ Q_i`` (least squares, proper rotation). ``P, Q: (n, 3)``."""
    _check_points(P, Q, weights)
    P, Q = jnp.asarray(P), jnp.asarray(Q)
    w = jnp.ones(P.shape[0], P.dtype) if weights is None else jnp.asarray(weights, P.dtype)
    w = w / jnp.sum(w)
    mp, mq = w @ P, w @ Q
    H = (P - mp).T @ ((Q - mq) * w[:, None])
    U, _, Vt = jnp.linalg.svd(H)
    d = jnp.sign(jnp.linalg.det(Vt.T @ U.T))
    d = jnp.where(d == 0, 1.0, d)
    D = jnp.array([1.0, 1.0, 0.0], P.dtype) + jnp.array([0.0, 0.0, 1.0], P.dtype) * d
    R = (Vt.T * D[None, :]) @ U.T
    return R, mq - R @ mp


def rmsd(P: ArrayLike, Q: ArrayLike) -> Array:
    """Root-mean-square deviation without superposition, ``sqrt(mean_i |p_i - q_i|^2)``."""
    _check_points(P, Q, None)
    return jnp.sqrt(jnp.mean(jnp.sum((jnp.asarray(P) - jnp.asarray(Q)) ** 2, -1)))


def kabsch_rmsd(P: ArrayLike, Q: ArrayLike) -> Array:
    """RMSD after optimal superposition of ``P`` onto ``Q``."""
    R, t = kabsch(P, Q)
    return rmsd(jnp.asarray(P) @ R.T + t, Q)
