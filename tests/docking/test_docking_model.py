"""The fragment score model: rotation equivariance, pocket-order invariance, and the untrained model equals an
independent NumPy evaluation of its closed-form part (skip + centering + bond springs)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.docking import (
    ComplexSizes,
    FragmentScoreModel,
    build_complex,
    ccd_examples,
    docking_process,
    index_complex,
    ligand_fragments,
    stack_complexes,
)
from jaxkit.geometry import so3

SIZES = ComplexSizes(ligand=40, pocket=140, fragments=8, dummies=14)


@pytest.fixture(scope="module")
def setup():
    ex = ccd_examples(1, split="train", seed=0)[0]
    lig = ligand_fragments(ex.mol, conformer="rdkit", seed=3)
    c = index_complex(
        stack_complexes([build_complex(lig, ex.pocket, sizes=SIZES, reference=ex.reference_positions)]), 0
    )
    model = FragmentScoreModel(docking_process(), width=16, depth=1, key=jax.random.key(0))
    k1, k2 = jax.random.split(jax.random.key(1))
    R = so3.random_uniform(k1, (SIZES.fragments,))
    T = 0.7 * jax.random.normal(k2, (SIZES.fragments, 3))
    return c, model, R, T, eqx.filter_jit(lambda m, c, R, T, t: m(c, R, T, t))


def _rotation(seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return jnp.asarray(q * np.sign(np.linalg.det(q)), jnp.float32)


def _trained_like(model):
    """Perturb every parameter so that all force families are active (the untrained model has zero pair forces)."""
    leaves, tree = jax.tree_util.tree_flatten(model)
    keys = jax.random.split(jax.random.key(5), len(leaves))
    new = [
        x + 0.2 * jax.random.normal(k, x.shape, x.dtype)
        if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating)
        else x
        for x, k in zip(leaves, keys)
    ]
    return jax.tree_util.tree_unflatten(tree, new)


def test_rotating_the_complex_rotates_the_translation_output_and_keeps_body_frame_rotations(setup):
    c, model, R, T, f = setup
    m = _trained_like(model)
    Q = _rotation(0)
    rot, tr = f(m, c, R, T, 0.4)
    c_rot = type(c)(**{**{k: getattr(c, k) for k in c.__dataclass_fields__}, "pocket": c.pocket @ Q.T})
    rot2, tr2 = f(m, c_rot, jnp.einsum("ij,fjk->fik", Q, R), T @ Q.T, 0.4)
    assert float(jnp.abs(tr).max()) > 1e-2 and float(jnp.abs(rot).max()) > 1e-2  # not a vacuous check
    np.testing.assert_allclose(tr2, tr @ Q.T, atol=2e-4, rtol=2e-4)
    np.testing.assert_allclose(rot2, rot, atol=2e-4, rtol=2e-4)  # body-frame vectors are invariant


def test_pocket_atom_order_does_not_matter(setup):
    c, model, R, T, f = setup
    m = _trained_like(model)
    perm = np.random.default_rng(1).permutation(c.pocket.shape[0])
    fields = {k: getattr(c, k) for k in c.__dataclass_fields__}
    c_perm = type(c)(
        **{
            **fields,
            "pocket": c.pocket[perm],
            "pocket_features": c.pocket_features[perm],
            "pocket_mask": c.pocket_mask[perm],
        }
    )
    a, b = f(m, c, R, T, 0.3), f(m, c_perm, R, T, 0.3)
    np.testing.assert_allclose(a[0], b[0], atol=2e-4, rtol=2e-4)
    np.testing.assert_allclose(a[1], b[1], atol=2e-4, rtol=2e-4)


def test_untrained_model_is_skip_plus_centering_plus_springs(setup):
    """At initialization the pair forces are zero, all gains 1 and every spring has stiffness 1/4: the output is
    a closed form, recomputed here in float64 NumPy from the complex arrays."""
    c, model, R, T, f = setup
    t = 0.35
    rot, tr = f(model, c, R, T, t)
    C = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float64), c)
    R, T = np.asarray(R, np.float64), np.asarray(T, np.float64)
    proc = model.process
    sx, sr, a = float(proc.trans.sigma(t)), float(proc.rot.sigma(t)), float(proc.trans.alpha(t))
    n = int(C.atom_mask.sum())
    fr = C.fragment[:n].astype(int)
    x = np.einsum("nij,nj->ni", R[fr], C.local[:n]) + T[fr]
    F = R.shape[0]
    w = np.bincount(fr, minlength=F) / n
    cen = w @ T
    out_t = sx * (T - cen) / (a**2 + sx**2) + w[:, None] * cen / (sx * np.sum(w**2))
    force = np.zeros((F, 3))
    torque = np.zeros((F, 3))
    for d in np.flatnonzero(C.dummy_mask):
        fa, p = int(C.dummy_fragment[d]), int(C.dummy_partner[d])
        xd = R[fa] @ C.dummy_local[d] + T[fa]
        Fd = 0.25 * (x[p] - xd)
        fb = fr[p]
        force[fa] += Fd
        torque[fa] += np.cross(xd - T[fa], Fd)
        force[fb] -= Fd
        torque[fb] -= np.cross(x[p] - T[fb], Fd)
    out_t -= force / sx
    out_r = np.zeros((F, 3))
    for k in range(F):
        r = x[fr == k] - T[k]
        inertia = np.sum(r * r) * np.eye(3) - r.T @ r + 0.1 * np.eye(3)
        out_r[k] = R[k].T @ np.linalg.solve(inertia, torque[k]) / (np.sqrt(3.0) * sr)
    live = C.fragment_mask > 0
    np.testing.assert_allclose(np.asarray(tr)[live], out_t[live], rtol=2e-4, atol=2e-4)
    np.testing.assert_allclose(np.asarray(rot)[live], out_r[live], rtol=2e-4, atol=2e-4)
    assert np.all(np.asarray(tr)[~live] == 0) and np.all(np.asarray(rot)[~live] == 0)


def test_padded_pocket_atoms_do_not_change_the_scores(setup):
    """dock pads a large pocket up to a multiple of POCKET_BUCKET atoms (one compiled sampler per size class):
    the padding atoms are masked, so the model's output does not change when 128 of them are added."""
    from jaxkit.docking import ModelConfig
    from jaxkit.docking._api import POCKET_BUCKET, _sizes_for

    c, model, R, T, f = setup
    m = _trained_like(model)
    fields = {k: getattr(c, k) for k in c.__dataclass_fields__}
    pad = POCKET_BUCKET
    c_pad = type(c)(
        **{
            **fields,
            "pocket": jnp.concatenate([c.pocket, jnp.full((pad, 3), 0.1, c.pocket.dtype)]),
            "pocket_features": jnp.concatenate(
                [c.pocket_features, jnp.zeros((pad,) + c.pocket_features.shape[1:], c.pocket_features.dtype)]
            ),
            "pocket_mask": jnp.concatenate([c.pocket_mask, jnp.zeros((pad,), c.pocket_mask.dtype)]),
        }
    )
    a, b = f(m, c, R, T, 0.3), f(m, c_pad, R, T, 0.3)
    np.testing.assert_allclose(a[0], b[0], atol=2e-4, rtol=2e-4)
    np.testing.assert_allclose(a[1], b[1], atol=2e-4, rtol=2e-4)
    ex = ccd_examples(1, split="train", seed=0)[0]
    lig = ligand_fragments(ex.mol, conformer="rdkit", seed=3)
    assert _sizes_for(ModelConfig(pocket=1000), lig, ex.pocket).pocket == 1000  # fits: the model's padding
    small = _sizes_for(ModelConfig(pocket=16), lig, ex.pocket).pocket  # outgrown: the next multiple of 128
    assert small % POCKET_BUCKET == 0 and ex.pocket.n_atoms <= small < ex.pocket.n_atoms + POCKET_BUCKET
