"""SE(3)^N docking process: exact-score sampling recovers the reference pose; DSM loss is zero at the exact
score; forward translation marginal moments; bond gap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.docking._datasets import ccd_examples
from jaxkit.docking._dock import (
    DockingProcess,
    bond_gap,
    dock_complex,
    dsm_loss,
    exact_score_fn,
    noise_poses,
    pose_rmsd,
    stack_complexes,
)


@pytest.fixture(scope="module")
def arrs():
    ex = ccd_examples(2, split="train", seed=0)
    return stack_complexes(ex, lig_max=40, poc_max=140, f_max=8)


def _one(arrs, i=0):
    return jax.tree_util.tree_map(lambda x: jnp.asarray(x[i]), arrs)


def test_exact_score_sampler_recovers_reference_pose(arrs):
    a = _one(arrs)
    R, T, scores = jax.jit(lambda k: dock_complex(exact_score_fn(), a, k, n_samples=4, n_steps=20))(jax.random.key(0))
    rmsd = jax.vmap(lambda r, t: pose_rmsd(a, r, t))(R, T)
    # the rotation schedule stops at eps = 0.1 rad, so ~0.1 rad x fragment radius remains
    assert float(rmsd.max()) < 0.8, rmsd
    gaps = jax.vmap(lambda r, t: bond_gap(a, r, t))(R, T)
    assert float(gaps.max()) < 0.8 and np.all(np.isfinite(np.asarray(scores)))


def test_dsm_loss_vanishes_at_the_exact_score(arrs):
    a = _one(arrs)
    exact = exact_score_fn()
    losses = jax.jit(jax.vmap(lambda k: dsm_loss(exact, a, k)))(jax.random.split(jax.random.key(1), 16))
    assert float(jnp.max(losses)) < 1e-6


def test_forward_translation_marginal_moments(arrs):
    a = _one(arrs)
    proc = DockingProcess()
    t = jnp.asarray(0.3)
    _, Tt, _, _ = jax.vmap(lambda k: noise_poses(k, a, t, proc))(jax.random.split(jax.random.key(2), 1000))
    mean = np.asarray(Tt.mean(0))
    std = np.asarray(Tt.std(0))
    np.testing.assert_allclose(mean, float(proc.translation.alpha(t)) * np.asarray(a["T0"]), atol=0.1)
    np.testing.assert_allclose(std, float(proc.translation.sigma(t)), rtol=0.1)


def test_bond_gap_zero_at_reference_and_positive_when_a_fragment_moves(arrs):
    a = _one(arrs)
    R0, T0 = a["R0"], a["T0"]
    assert float(bond_gap(a, R0, T0)) < 1e-5
    T1 = T0.at[0].add(jnp.array([1.0, 0.0, 0.0]))   # 2.7 Å shift of fragment 0
    assert float(bond_gap(a, R0, T1)) > 0.5


def test_padding_overflow_names_the_complex():
    ex = ccd_examples(1, split="train", seed=0)
    with pytest.raises(ValueError, match=ex[0].id):
        stack_complexes(ex, lig_max=5, poc_max=140, f_max=8)


def test_exact_score_recovers_a_crystal_pose_and_writes_sdf(tmp_path):
    from rdkit import Chem

    from jaxkit.docking._datasets import posebusters_complexes
    from jaxkit.docking._dock import ligand_positions, to_angstrom
    from jaxkit.docking._evaluate import symmetric_rmsd, with_positions, write_poses_sdf

    ex = posebusters_complexes(("1ia1",), cutoff=4.0)[0]
    a = _one(stack_complexes([ex], lig_max=40, poc_max=200, f_max=8))
    R, T, _ = jax.jit(lambda k: dock_complex(exact_score_fn(), a, k, n_samples=2, n_steps=20))(jax.random.key(3))
    poses = []
    for j in range(2):
        x = np.asarray(to_angstrom(a, ligand_positions(a, R[j], T[j])))[: ex.frag.n_atoms]
        poses.append(with_positions(ex.frag.mol, x.astype(np.float64)))
    ref = with_positions(ex.frag.mol, ex.reference_positions)
    assert max(symmetric_rmsd(p, ref) for p in poses) < 0.8
    path = write_poses_sdf(tmp_path / "poses.sdf", poses, ["a", "b"], [{"rmsd": 1}, {"rmsd": 2}])
    back = [m for m in Chem.SDMolSupplier(str(path))]
    assert [m.GetProp("_Name") for m in back] == ["a", "b"] and back[1].GetProp("rmsd") == "2"
    np.testing.assert_allclose(back[0].GetConformer().GetPositions(), poses[0].GetConformer().GetPositions(),
                               atol=1e-3)
