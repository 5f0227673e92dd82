"""SE(3)-equivariant score model: an EGNN over ligand + pocket atoms whose per-atom pseudo-forces are pooled into
per-fragment translation and rotation scores.

EGNN layer (Satorras, Hoogeboom, Welling 2021): ``m_ij = φ_e(h_i, h_j, |x_i-x_j|², a_ij)``,
``h_i ← h_i + φ_h(h_i, Σ_j w_ij m_ij)``, with ``w_ij`` a smooth radius cutoff, over the ``k`` nearest neighbours
of each atom (``k = n_neighbors``; the neighbour lists are recomputed from the coordinates, so the model stays
E(3)-equivariant; on CPU this is ~10× cheaper than all pairs). Only invariant quantities enter
the MLPs, so ``h`` is E(3)-invariant. Forces ``f_i = Σ_j w_ij (x_i - x_j) φ_f(m_ij) / deg`` are rotation-
equivariant and translation-invariant. A fragment ``F`` with centre ``c_F`` gets the translation score
``Σ_{i∈F} f_i / |F|`` (force over mass) and the rotation score ``I_F^{-1} Σ_{i∈F} (x_i - c_F) × f_i``
(torque over inertia, ``I_F`` regularised by ``+ε I``), both equivariant (SigmaDock §3, DiffDock's torque head).
Pocket atoms move nothing; their forces are discarded.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PRNGKeyArray

from ._featurize import N_NODE_FEATURES


def _cutoff_weight(d2: jax.Array, radius: float) -> jax.Array:
    d = jnp.sqrt(d2 + 1e-12)
    return jnp.where(d < radius, 0.5 * (jnp.cos(jnp.pi * d / radius) + 1.0), 0.0)


class EGNNLayer(eqx.Module):
    edge_mlp: eqx.nn.MLP
    node_mlp: eqx.nn.MLP

    def __init__(self, width: int, n_pair: int, *, key: PRNGKeyArray):
        k1, k2 = jax.random.split(key)
        self.edge_mlp = eqx.nn.MLP(2 * width + 1 + n_pair, width, width, 1, activation=jax.nn.silu, key=k1)
        self.node_mlp = eqx.nn.MLP(2 * width, width, width, 1, activation=jax.nn.silu, key=k2)

    def __call__(self, h, d2, pair, w, nbr):
        """``d2``, ``pair``, ``w``: ``(n, k, ...)`` quantities of the neighbour lists ``nbr (n, k)``."""
        n, k = nbr.shape
        hi = jnp.broadcast_to(h[:, None, :], (n, k, h.shape[-1]))
        hj = h[nbr]
        inp = jnp.concatenate([hi, hj, d2[..., None] / 25.0, pair], axis=-1)
        m = jax.vmap(jax.vmap(self.edge_mlp))(inp) * w[..., None]
        agg = m.sum(1) / (w.sum(1, keepdims=True) + 1.0)
        return h + jax.vmap(self.node_mlp)(jnp.concatenate([h, agg], -1)), m


class EGNNScoreModel(eqx.Module):
    """Per-atom equivariant pseudo-forces for a padded complex; see the module docstring."""

    embed: eqx.nn.Linear
    time_embed: eqx.nn.MLP
    layers: list
    force_mlp: eqx.nn.MLP
    radius: float = eqx.field(static=True)
    n_neighbors: int = eqx.field(static=True)

    def __init__(
        self, width: int = 32, depth: int = 3, radius: float = 6.0, n_neighbors: int = 24, *, key: PRNGKeyArray
    ):
        keys = jax.random.split(key, depth + 3)
        self.embed = eqx.nn.Linear(N_NODE_FEATURES, width, key=keys[0])
        self.time_embed = eqx.nn.MLP(16, width, width, 1, activation=jax.nn.silu, key=keys[1])
        self.layers = [EGNNLayer(width, 3, key=k) for k in keys[2 : 2 + depth]]
        self.force_mlp = eqx.nn.MLP(width, 1, width, 1, activation=jax.nn.silu, key=keys[-1])
        self.radius = radius
        self.n_neighbors = n_neighbors

    def forces(
        self,
        positions: Float[Array, "n 3"],
        node_features: Float[Array, "n f"],
        pair_features: Float[Array, "n n p"],
        node_mask: Float[Array, " n"],
        t: Float[Array, ""] | float,
    ) -> Float[Array, "n 3"]:
        freqs = jnp.exp(jnp.linspace(0.0, jnp.log(1000.0), 8))
        temb = jnp.concatenate([jnp.sin(freqs * t), jnp.cos(freqs * t)])
        h = jax.vmap(self.embed)(node_features) + self.time_embed(temb)
        n = positions.shape[0]
        k = min(self.n_neighbors, n - 1)
        d2_all = jnp.sum((positions[:, None, :] - positions[None, :, :]) ** 2, -1)
        valid = (node_mask[:, None] * node_mask[None, :] > 0) & ~jnp.eye(n, dtype=bool)
        _, nbr = jax.lax.top_k(-jnp.where(valid, jax.lax.stop_gradient(d2_all), jnp.inf), k)
        diff = positions[:, None, :] - positions[nbr]  # (n, k, 3), differentiable in the positions
        d2 = jnp.sum(diff**2, -1)
        w = _cutoff_weight(d2, self.radius) * jnp.take_along_axis(valid, nbr, 1)
        pair = jnp.take_along_axis(pair_features, nbr[..., None], 1)
        m = None
        for layer in self.layers:
            h, m = layer(h, d2, pair, w, nbr)
        coef = jax.vmap(jax.vmap(self.force_mlp))(m)[..., 0] * w
        f = jnp.einsum("ij,ijk->ik", coef, diff) / (w.sum(1, keepdims=True) + 1.0)
        return f * node_mask[:, None]


def fragment_scores(
    forces: Float[Array, "n 3"],
    positions: Float[Array, "n 3"],
    fragment: Int[Array, " n"],
    n_fragments: int,
    *,
    inertia_eps: float = 1.0,
) -> tuple[Float[Array, "f 3"], Float[Array, "f 3"]]:
    """Pool per-atom forces into per-fragment (translation, rotation) scores: force/mass and inertia⁻¹·torque.

    Atoms with ``fragment < 0`` (pocket, padding) are ignored.
    """
    onehot = jax.nn.one_hot(fragment, n_fragments, dtype=positions.dtype)  # zero rows for -1
    mass = onehot.sum(0)
    centre = (onehot.T @ positions) / jnp.maximum(mass, 1.0)[:, None]
    trans = (onehot.T @ forces) / jnp.maximum(mass, 1.0)[:, None]
    r = positions[:, None, :] - centre[None, :, :]  # (n, f, 3)
    torque = jnp.einsum("nf,nfk->fk", onehot, jnp.cross(r, forces[:, None, :]))
    rr = jnp.einsum("nf,nfi,nfj->fij", onehot, r, r)
    eye = jnp.eye(3, dtype=positions.dtype)
    inertia = jnp.einsum("fkk->f", rr)[:, None, None] * eye - rr + inertia_eps * eye
    rot = jnp.linalg.solve(inertia, torque[..., None])[..., 0]
    return trans, rot
