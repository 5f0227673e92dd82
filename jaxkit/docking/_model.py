r"""The fragment score model: an SE(3)-equivariant network over ligand and pocket atoms whose outputs are
per-fragment (normalized rotation score, translation noise) in the ``"eps"`` parametrization of
:class:`jaxkit.diffusion.SE3Diffusion`.

Inductive bias (what makes fragment reassembly learnable on a CPU budget). Every output is a rigid-body
reduction of *forces*: a fragment's translation output is its net force, its rotation output its inertia-weighted
torque $I_f^{-1} \tau_f$ (SigmaDock §3; DiffDock's torque head), so the outputs are rotation-equivariant by
construction. Three force families act:

1. **bond springs**: each dummy atom $d$ (rigid on fragment $a$, standing for atom $p$ of fragment $b$) is pulled
   towards its partner with $F_d = k_d (x_p - x_d)$ and $p$ feels $-F_d$ (Newton's third law); $k_d$ is a learned
   positive function of the gap length and the noise level. With unit gains the springs alone give the exact
   reassembly direction near the data, so the network starts from the right answer for the bonded geometry
   and only has to learn the torsions and the placement from the pocket;
2. **ligand–pocket pair forces** along $x_i - x_k$ over the ``k_pocket`` nearest pocket atoms of each ligand atom,
   with coefficients from a message-passing network (invariant features only: elements, RBF distances);
3. **ligand–ligand pair forces** between atoms of different fragments (clashes, intramolecular contacts), with
   the ligand graph's pair features (bond, cut bond, topological distance).

Scaling: with unit spring stiffness a displacement $\delta$ gives a force $-\delta$, while the targets are
$z = \delta/\sigma_x(t)$ and $s_R/\|s\|_\sigma \approx -\theta/(\sqrt 3 \sigma_R(t))$; the outputs are therefore
$\hat z = \mathrm{skip} - g_x(t) F/\sigma_x(t)$ and $\hat s_R = R^\top g_R(t) I^{-1}\tau / (\sqrt 3\, \sigma_R(t))$
with learned positive gains $g(t)$ (initialized at 1) per force family. Two terms need no learning: the ligand
centroid $c = \sum_f w_f T_f$ ($w_f$ the atom fraction of fragment $f$) is at the pocket center in the data (the
redocking convention), so its noise is known, $E[z_f \mid c] = w_f c / (\sigma \sum_g w_g^2)$ (the centering
term); and the skip term $\sigma (T - c)/(\alpha^2 s_d^2 + \sigma^2)$ is the posterior-mean noise for Gaussian
fragment centers of spread $s_d$ about the centroid (EDM-style preconditioning). Rotation outputs are body-frame (``R^T`` of the world-frame vector), the one
convention of :mod:`jaxkit.diffusion`.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray

from jaxkit import diffusion as dm

from .._validate import check_int, check_positive, check_size
from ._complex import (
    LENGTH_SCALE,
    N_ATOM_FEATURES,
    N_PAIR_FEATURES,
    N_POCKET_FEATURES,
    DockingComplex,
    _dummy_positions,
    _ligand_positions,
)

N_TIME = 18


def _rbf(d_scaled: Array, n: int, d_max: float = 10.0) -> Array:
    """Gaussian radial basis of a distance in Å (input in scaled units)."""
    mu = jnp.linspace(0.0, d_max, n)
    width = d_max / (n - 1)
    return jnp.exp(-0.5 * ((d_scaled[..., None] * LENGTH_SCALE - mu) / width) ** 2)


def _silu_mlp(key: PRNGKeyArray, d_in: int, d_out: int, width: int) -> eqx.nn.MLP:
    return eqx.nn.MLP(d_in, d_out, width, 1, activation=jax.nn.silu, key=key)


def _zero_last(mlp: eqx.nn.MLP, bias: float = 0.0) -> eqx.nn.MLP:
    last = mlp.layers[-1]
    last = eqx.tree_at(
        lambda l: (l.weight, l.bias), last, (jnp.zeros_like(last.weight), jnp.full_like(last.bias, bias))
    )
    return eqx.tree_at(lambda m: m.layers[-1], mlp, last)


class PairBlock(eqx.Module):
    """Factorized edge MLP: ``silu(A h_i + B h_j + C e_ij) -> D`` (the first layer costs per node, not per edge)."""

    a: eqx.nn.Linear
    b: eqx.nn.Linear
    c: eqx.nn.Linear
    d: eqx.nn.Linear

    def __init__(self, width: int, d_edge: int, d_out: int, *, key: PRNGKeyArray):
        ka, kb, kc, kd = jax.random.split(key, 4)
        self.a = eqx.nn.Linear(width, width, key=ka)
        self.b = eqx.nn.Linear(width, width, use_bias=False, key=kb)
        self.c = eqx.nn.Linear(d_edge, width, use_bias=False, key=kc)
        self.d = eqx.nn.Linear(width, d_out, key=kd)

    def __call__(self, hi: Array, hj: Array, nbr: Array, e: Array) -> Array:
        """``hi (n, W)``, ``hj (m, W)``, ``nbr (n, k)`` indices into ``hj``, ``e (n, k, d_edge)`` -> ``(n, k, d_out)``."""
        ai = jax.vmap(self.a)(hi)
        bj = jax.vmap(self.b)(hj)
        ce = jnp.einsum("nke,we->nkw", e, self.c.weight)
        hidden = jax.nn.silu(ai[:, None, :] + bj[nbr] + ce)
        return jnp.einsum("nkw,ow->nko", hidden, self.d.weight) + self.d.bias


class InteractionLayer(eqx.Module):
    ligand: PairBlock
    pocket: PairBlock
    update: eqx.nn.MLP

    def __init__(self, width: int, n_rbf: int, *, key: PRNGKeyArray):
        k1, k2, k3 = jax.random.split(key, 3)
        self.ligand = PairBlock(width, N_PAIR_FEATURES + n_rbf, width, key=k1)
        self.pocket = PairBlock(width, n_rbf, width, key=k2)
        self.update = _silu_mlp(k3, 3 * width, width, width)

    def __call__(self, h, hp, ll_nbr, ll_e, ll_w, lp_nbr, lp_e, lp_w):
        m_ll = self.ligand(h, h, ll_nbr, ll_e) * ll_w[..., None]
        m_lp = self.pocket(h, hp, lp_nbr, lp_e) * lp_w[..., None]
        agg_ll = m_ll.sum(1) / (ll_w.sum(1, keepdims=True) + 1.0)
        agg_lp = m_lp.sum(1) / (lp_w.sum(1, keepdims=True) + 1.0)
        return h + jax.vmap(self.update)(jnp.concatenate([h, agg_ll, agg_lp], -1))


class PocketLayer(eqx.Module):
    """Message passing among pocket atoms (pose-independent): describes the cavity's local shape."""

    pair: PairBlock
    update: eqx.nn.MLP

    def __init__(self, width: int, n_rbf: int, *, key: PRNGKeyArray):
        k1, k2 = jax.random.split(key)
        self.pair = PairBlock(width, n_rbf, width, key=k1)
        self.update = _silu_mlp(k2, 2 * width, width, width)

    def __call__(self, hp, nbr, e, w):
        m = self.pair(hp, hp, nbr, e) * w[..., None]
        agg = m.sum(1) / (w.sum(1, keepdims=True) + 1.0)
        return hp + jax.vmap(self.update)(jnp.concatenate([hp, agg], -1))


class FragmentScoreModel(eqx.Module):
    """Per-fragment ``(normalized rotation score (F, 3), translation noise (F, 3))`` for a posed complex.

    ``model(c, R, T, t)``: a :class:`DockingComplex`, fragment poses ``R (F, 3, 3)``, ``T (F, 3)`` (scaled), time
    ``t``. See the module docstring. ``process`` fixes the schedules used for the output scaling.
    """

    atom_embed: eqx.nn.Linear
    pocket_embed: eqx.nn.Linear
    time_embed: eqx.nn.MLP
    layers: list[InteractionLayer]
    pocket_layers: list[PocketLayer]
    force_ll: PairBlock
    force_lp: PairBlock
    spring: eqx.nn.MLP
    gains: eqx.nn.MLP
    process: dm.SE3Diffusion = eqx.field(static=True)
    width: int = eqx.field(static=True)
    n_rbf: int = eqx.field(static=True)
    k_pocket: int = eqx.field(static=True)
    cutoff: float = eqx.field(static=True)
    data_spread: float = eqx.field(static=True)
    inertia_eps: float = eqx.field(static=True)

    def __init__(
        self,
        process: dm.SE3Diffusion,
        *,
        width: int = 48,
        depth: int = 3,
        n_rbf: int = 16,
        k_pocket: int = 16,
        cutoff: float = 8.0,
        data_spread: float = 1.0,
        inertia_eps: float = 0.1,
        pocket_depth: int = 0,
        key: PRNGKeyArray,
    ):
        if process.parametrization != "eps":
            raise ValueError(f"process: expected parametrization='eps', received {process.parametrization!r}")
        for name, v, lo in (("width", width, 1), ("depth", depth, 0), ("n_rbf", n_rbf, 1), ("k_pocket", k_pocket, 1),
                            ("pocket_depth", pocket_depth, 0)):  # fmt: skip
            check_int(name, v, minimum=lo)
        check_positive("cutoff", cutoff)
        check_positive("data_spread", data_spread)
        check_positive("inertia_eps", inertia_eps, strict=False)
        n_layers = depth + pocket_depth + 8
        check_size("width", 4 * n_layers * width * width, hint="the parameters (width² per layer)")
        check_size("n_rbf", 4 * n_layers * width * n_rbf, hint="the parameters (width × n_rbf per layer)")
        keys = jax.random.split(key, depth + 8)
        self.atom_embed = eqx.nn.Linear(N_ATOM_FEATURES, width, key=keys[0])
        self.pocket_embed = eqx.nn.Linear(N_POCKET_FEATURES, width, key=keys[1])
        self.time_embed = _silu_mlp(keys[2], N_TIME, width, width)
        self.layers = [InteractionLayer(width, n_rbf, key=k) for k in keys[3 : 3 + depth]]
        pkeys = jax.random.split(jax.random.fold_in(key, 17), max(pocket_depth, 1))
        self.pocket_layers = [PocketLayer(width, n_rbf, key=k) for k in pkeys[:pocket_depth]]
        fl = PairBlock(width, N_PAIR_FEATURES + n_rbf, 1, key=keys[-5])
        fp = PairBlock(width, n_rbf, 1, key=keys[-4])
        zero = lambda blk: eqx.tree_at(
            lambda b: (b.d.weight, b.d.bias), blk, (jnp.zeros_like(blk.d.weight), jnp.zeros_like(blk.d.bias))
        )
        self.force_ll, self.force_lp = zero(fl), zero(fp)  # start from springs only
        # spring stiffness softplus(out) starts at 0.25: two springs per cut act on both fragments, so a gap closes in one x0 estimate without overshoot
        self.spring = _zero_last(_silu_mlp(keys[-3], N_TIME + 2, 1, 32), bias=math.log(math.expm1(0.25)))
        self.gains = _zero_last(_silu_mlp(keys[-2], N_TIME, 5, 32))
        self.process = process
        self.width, self.n_rbf, self.k_pocket, self.cutoff = width, n_rbf, k_pocket, cutoff
        self.data_spread, self.inertia_eps = data_spread, inertia_eps

    def _time_features(self, t: Array) -> Array:
        freqs = jnp.exp(jnp.linspace(0.0, math.log(100.0), 8))
        return jnp.concatenate(
            [
                jnp.sin(freqs * t),
                jnp.cos(freqs * t),
                jnp.log(self.process.trans.sigma(t))[None],
                jnp.log(self.process.rot.sigma(t))[None],
            ]
        )

    def __call__(
        self, c: DockingComplex, R: Float[Array, "f 3 3"], T: Float[Array, "f 3"], t: Float[Array, ""] | float
    ) -> tuple[Float[Array, "f 3"], Float[Array, "f 3"]]:
        t = jnp.asarray(t, T.dtype)
        F = T.shape[0]
        x = _ligand_positions(c, R, T)  # (L, 3)
        L = x.shape[0]
        temb_raw = self._time_features(t)
        temb = self.time_embed(temb_raw)
        h = jax.vmap(self.atom_embed)(c.atom_features) + temb
        hp = jax.vmap(self.pocket_embed)(c.pocket_features)
        if self.pocket_layers:  # pose-independent cavity context over the pocket's k nearest neighbors
            M = c.pocket.shape[0]
            d2_pp = jnp.sum((c.pocket[:, None, :] - c.pocket[None, :, :]) ** 2, -1)
            valid = (c.pocket_mask[:, None] * c.pocket_mask[None, :] > 0) & ~jnp.eye(M, dtype=bool)
            kp = min(self.k_pocket, M - 1)
            _, pp_nbr = jax.lax.top_k(-jnp.where(valid, d2_pp, jnp.inf), kp)
            d_pp = jnp.sqrt(jnp.take_along_axis(d2_pp, pp_nbr, 1) + 1e-9)
            pp_w = jnp.take_along_axis(valid, pp_nbr, 1) * (d_pp < self.cutoff / LENGTH_SCALE)
            pp_e = _rbf(d_pp, self.n_rbf)
            for layer in self.pocket_layers:
                hp = layer(hp, pp_nbr, pp_e, pp_w.astype(hp.dtype))
        am = c.atom_mask
        # ligand-ligand: all pairs
        dx_ll = x[:, None, :] - x[None, :, :]
        d_ll = jnp.sqrt(jnp.sum(dx_ll**2, -1) + 1e-9)
        ll_nbr = jnp.broadcast_to(jnp.arange(L), (L, L))
        ll_e = jnp.concatenate([c.pair_features, _rbf(d_ll, self.n_rbf)], -1)
        ll_w = am[:, None] * am[None, :] * (1.0 - jnp.eye(L, dtype=x.dtype))
        # ligand-pocket: k nearest pocket atoms
        d2_lp = jnp.sum((x[:, None, :] - c.pocket[None, :, :]) ** 2, -1)
        d2_masked = jnp.where(c.pocket_mask[None, :] > 0, jax.lax.stop_gradient(d2_lp), jnp.inf)
        k = min(self.k_pocket, c.pocket.shape[0])
        _, lp_nbr = jax.lax.top_k(-d2_masked, k)
        dx_lp = x[:, None, :] - c.pocket[lp_nbr]
        d_lp = jnp.sqrt(jnp.sum(dx_lp**2, -1) + 1e-9)
        rc = self.cutoff / LENGTH_SCALE
        cut = jnp.where(d_lp < rc, 0.5 * (jnp.cos(jnp.pi * d_lp / rc) + 1.0), 0.0)
        lp_w = cut * c.pocket_mask[lp_nbr] * am[:, None]
        lp_e = _rbf(d_lp, self.n_rbf)
        for layer in self.layers:
            h = layer(h, hp, ll_nbr, ll_e, ll_w, lp_nbr, lp_e, lp_w)
        # pair forces (per ligand atom)
        other = 1.0 - c.pair_features[..., 1]  # only atoms of other fragments exert net forces / torques
        c_ll = self.force_ll(h, h, ll_nbr, ll_e)[..., 0] * ll_w * other
        c_lp = self.force_lp(h, hp, lp_nbr, lp_e)[..., 0] * lp_w
        f_atom = jnp.einsum("ij,ijk->ik", c_ll, dx_ll / (d_ll[..., None] + 0.1)) + jnp.einsum(
            "ij,ijk->ik", c_lp, dx_lp / (d_lp[..., None] + 0.1)
        )
        onehot = jax.nn.one_hot(c.fragment, F, dtype=x.dtype) * am[:, None]  # (L, F)
        mass = jnp.maximum(onehot.sum(0), 1.0)
        r_atom = x - T[c.fragment]
        F_pair = (onehot.T @ f_atom) / mass[:, None]
        tau_pair = onehot.T @ jnp.cross(r_atom, f_atom)
        # bond springs
        xd = _dummy_positions(c, R, T)
        xp = x[c.dummy_partner]
        gap = xp - xd
        glen = jnp.sqrt(jnp.sum(gap**2, -1) + 1e-9)
        s_in = jnp.concatenate(
            [jnp.broadcast_to(temb_raw, (gap.shape[0], N_TIME)), glen[:, None], glen[:, None] ** 2], -1
        )
        kd = jax.nn.softplus(jax.vmap(self.spring)(s_in)[:, 0]) * c.dummy_mask
        Fd = kd[:, None] * gap
        own = jax.nn.one_hot(c.dummy_fragment, F, dtype=x.dtype)  # (D, F)
        partner_frag = jax.nn.one_hot(c.fragment[c.dummy_partner], F, dtype=x.dtype)
        F_spring = own.T @ Fd - partner_frag.T @ Fd
        tau_spring = own.T @ jnp.cross(xd - T[c.dummy_fragment], Fd) - partner_frag.T @ jnp.cross(
            xp - T[c.fragment[c.dummy_partner]], Fd
        )
        # rigid-body reduction and scaling
        rr = jnp.einsum("lf,li,lj->fij", onehot, r_atom, r_atom)
        eye = jnp.eye(3, dtype=x.dtype)
        inertia = jnp.einsum("fkk->f", rr)[:, None, None] * eye - rr + self.inertia_eps * eye
        inv = jnp.linalg.inv(inertia)
        g = jnp.exp(self.gains(temb_raw))
        a, sx = self.process.trans.alpha(t), self.process.trans.sigma(t)
        sr = self.process.rot.sigma(t)
        # the ligand centroid sits at the pocket center (the origin): its noise is known exactly
        w = onehot.sum(0) / jnp.maximum(am.sum(), 1.0)  # atom fraction of each fragment
        centroid = w @ T
        centering = g[4] * w[:, None] * centroid / (sx * jnp.maximum(jnp.sum(w**2), 1e-6))
        skip = sx * (T - centroid) / (a**2 * self.data_spread**2 + sx**2)
        trans = skip + centering - (g[0] * F_pair + g[1] * F_spring) / sx
        rot_world = jnp.einsum("fij,fj->fi", inv, g[2] * tau_pair + g[3] * tau_spring) / (math.sqrt(3.0) * sr)
        rot = jnp.einsum("fji,fj->fi", R, rot_world)  # body frame
        fm = c.fragment_mask[:, None]
        return rot * fm, trans * fm
