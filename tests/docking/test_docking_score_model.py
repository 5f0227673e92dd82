"""Score model equivariance: rigid motions of the complex rotate the scores; permuting atoms permutes outputs."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import posebusters
import pytest
from rdkit import Chem

from jaxkit.docking import (
    EGNNScoreModel,
    build_complex_graph,
    conformer_positions,
    extract_pocket,
    fragment_ligand,
    fragment_scores,
    load_ligand,
    load_protein,
)

PB = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1ia1"


@pytest.fixture(scope="module")
def setup():
    lig = load_ligand(PB / "1ia1_ligand.sdf")
    frag = fragment_ligand(lig)
    x = conformer_positions(frag.mol)
    pocket = extract_pocket(load_protein(PB / "1ia1_protein_one_lig_removed.pdb"), x, cutoff=5.0)
    g = build_complex_graph(frag, x, pocket)
    model = EGNNScoreModel(width=16, depth=2, key=jax.random.key(0))

    @jax.jit
    def scores(pos, feats, pair, mask, fr):
        f = model.forces(pos, feats, pair, mask, 0.3)
        t, r = fragment_scores(f, pos, fr, frag.n_fragments)
        return f, t, r

    return g, frag, scores


def _rotation(seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


def test_rigid_motion_equivariance(setup):
    g, frag, scores = setup
    a = g.as_arrays()
    pos = jnp.asarray(a["positions"] - a["positions"][: frag.n_atoms].mean(0))
    f0, t0, r0 = scores(pos, a["node_features"], a["pair_features"], a["node_mask"], a["fragment"])
    assert frag.n_fragments >= 2
    assert float(jnp.abs(t0).max()) > 1e-6 and float(jnp.abs(r0).max()) > 1e-6   # not trivially zero
    for seed in range(3):
        q = jnp.asarray(_rotation(seed), jnp.float32)
        shift = jnp.array([3.0, -1.0, 2.0])
        f1, t1, r1 = scores(pos @ q.T + shift, a["node_features"], a["pair_features"], a["node_mask"], a["fragment"])
        np.testing.assert_allclose(f1, f0 @ q.T, atol=1e-4)
        np.testing.assert_allclose(t1, t0 @ q.T, atol=1e-4)
        np.testing.assert_allclose(r1, r0 @ q.T, atol=1e-4)


def test_permuting_atoms_permutes_outputs(setup):
    g, frag, scores = setup
    a = g.as_arrays()
    n = a["positions"].shape[0]
    perm = np.random.default_rng(1).permutation(n)
    f0, t0, r0 = scores(a["positions"], a["node_features"], a["pair_features"], a["node_mask"], a["fragment"])
    f1, t1, r1 = scores(a["positions"][perm], a["node_features"][perm], a["pair_features"][perm][:, perm],
                        a["node_mask"][perm], a["fragment"][perm])
    np.testing.assert_allclose(f1, np.asarray(f0)[perm], atol=1e-5)
    np.testing.assert_allclose(t1, t0, atol=1e-5)
    np.testing.assert_allclose(r1, r0, atol=1e-5)


def test_fragment_scores_match_hand_computed_rigid_body_quantities():
    pos = jnp.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 2.0, 0]])
    forces = jnp.array([[0, 1.0, 0], [0, -1.0, 0], [5.0, 0, 0]])
    frag = jnp.array([0, 0, -1])               # two atoms in fragment 0, one pocket atom ignored
    t, r = fragment_scores(forces, pos, frag, 1, inertia_eps=0.0 + 1e-9)
    np.testing.assert_allclose(t, [[0, 0, 0]], atol=1e-6)
    # torque = r×f = (1,0,0)×(0,1,0) + (-1,0,0)×(0,-1,0) = (0,0,2); I_zz = Σ (x²+y²) = 2 -> ω_z = 1
    np.testing.assert_allclose(r[0, 2], 1.0, rtol=1e-5)


def test_graph_padding_and_errors(setup):
    g, frag, _ = setup
    n = int(g.node_mask.sum())
    x = conformer_positions(frag.mol)
    lig = load_ligand(PB / "1ia1_ligand.sdf")
    pocket = extract_pocket(load_protein(PB / "1ia1_protein_one_lig_removed.pdb"), x, cutoff=5.0)
    big = build_complex_graph(fragment_ligand(lig), x, pocket, n_max=n + 7, f_max=frag.n_fragments + 2)
    assert big.positions.shape == (n + 7, 3) and big.node_mask.sum() == n and big.fragment_mask.sum() == frag.n_fragments
    with pytest.raises(ValueError, match="n_max"):
        build_complex_graph(frag, x, pocket, n_max=n - 1)
    with pytest.raises(ValueError, match="ligand_positions"):
        build_complex_graph(frag, x[:-1], pocket)
    assert Chem.MolToSmiles(frag.mol)
