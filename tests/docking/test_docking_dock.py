"""Docking on the one SE(3)^N diffusion: exact-score sampling recovers the target pose (CCD and a crystal pose),
the DSM loss vanishes at the exact score, the forward marginal has the schedule's moments, bond gaps, padding."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.docking import (
    ComplexSizes,
    bond_gap,
    build_complex,
    ccd_examples,
    dock_samples,
    docking_process,
    dsm_loss,
    exact_model,
    index_complex,
    ligand_fragments,
    ligand_positions,
    pose_rmsd,
    posebusters_complexes,
    stack_complexes,
    symmetric_rmsd,
    to_angstrom,
    with_positions,
)

SIZES = ComplexSizes(ligand=40, pocket=140, fragments=8, dummies=14)
PROCESS = docking_process()
_sample = eqx.filter_jit(
    lambda c, k: dock_samples(exact_model(PROCESS), PROCESS, c, k, n_samples=4, n_steps=20)
)


@pytest.fixture(scope="module")
def complexes():
    out = []
    for ex in ccd_examples(2, split="train", seed=0):
        lig = ligand_fragments(ex.mol, conformer="oracle")
        out.append(build_complex(lig, ex.pocket, sizes=SIZES, reference=ex.reference_positions, name=ex.id))
    return stack_complexes(out)


def test_exact_score_sampler_recovers_the_target_pose(complexes):
    for i in range(2):
        c = index_complex(complexes, i)
        R, T = _sample(c, jax.random.key(i))
        rmsd = jax.vmap(lambda r, t, c=c: pose_rmsd(c, r, t))(R, T)
        gaps = jax.vmap(lambda r, t, c=c: bond_gap(c, r, t))(R, T)
        # the last noise level (0.1 rad) is removed by the final Tweedie step
        assert float(rmsd.max()) < 0.3, rmsd
        assert float(gaps.max()) < 0.3, gaps


def test_dsm_loss_vanishes_at_the_exact_score_and_not_elsewhere(complexes):
    c = index_complex(complexes, 0)
    keys = jax.random.split(jax.random.key(1), 16)
    exact = exact_model(PROCESS)
    zero = lambda c, R, T, t: (jnp.zeros_like(T), jnp.zeros_like(T))
    run = eqx.filter_jit(lambda m: jax.vmap(lambda k: dsm_loss(m, PROCESS, c, k))(keys))
    assert float(run(exact).max()) < 1e-6
    assert 0.3 < float(run(zero).mean()) < 3.0  # E|z|^2 = 1 plus the rotation term: not a vacuous loss


def test_forward_translation_marginal_moments(complexes):
    c = index_complex(complexes, 0)
    t = 0.4
    f = jax.jit(jax.vmap(lambda k: PROCESS.forward_marginal(k, c.R0, c.T0, t)))(
        jax.random.split(jax.random.key(2), 2000)
    )
    np.testing.assert_allclose(f.x_t.mean(0), np.asarray(c.T0), atol=0.1)  # VE: alpha = 1
    np.testing.assert_allclose(f.x_t.std(0), float(PROCESS.trans.sigma(t)), rtol=0.1)


def test_bond_gap_zero_at_the_target_and_positive_when_a_fragment_moves(complexes):
    c = index_complex(complexes, 0)
    assert float(bond_gap(c, c.R0, c.T0)) < 1e-5
    assert float(bond_gap(c, c.R0, c.T0.at[0].add(jnp.array([1.0, 0.0, 0.0])))) > 0.5


def test_padding_overflow_names_the_complex():
    ex = ccd_examples(1, split="train", seed=0)[0]
    lig = ligand_fragments(ex.mol, conformer="oracle")
    with pytest.raises(ValueError, match=f"complex {ex.id}: .* exceed the padding"):
        build_complex(lig, ex.pocket, sizes=ComplexSizes(ligand=5), name=ex.id)


def test_exact_score_recovers_a_crystal_pose_from_rdkit_fragments():
    """Redocking 1s3v with RDKit-conformer fragments: the targets are the per-fragment fits of the conformer to
    the crystal pose, so exact-score sampling lands within the conformer floor of the crystal pose."""
    ex = posebusters_complexes(("1s3v",), cutoff=4.0)[0]
    lig = ligand_fragments(ex.mol, conformer="rdkit", seed=0)
    c = index_complex(
        stack_complexes(
            [
                build_complex(
                    lig,
                    ex.pocket,
                    sizes=ComplexSizes(ligand=40, pocket=200),
                    reference=ex.reference_positions,
                )
            ]
        ),
        0,
    )
    floor = symmetric_rmsd(
        with_positions(
            lig.frag.mol,
            np.asarray(to_angstrom(c, ligand_positions(c, c.R0, c.T0)), np.float64)[: lig.frag.n_atoms],
        ),
        ex.mol,
    )
    R, T = _sample(c, jax.random.key(3))
    for j in range(2):
        x = np.asarray(to_angstrom(c, ligand_positions(c, R[j], T[j])), np.float64)[: lig.frag.n_atoms]
        assert symmetric_rmsd(with_positions(lig.frag.mol, x), ex.mol) < floor + 0.5
    assert floor < 1.0


def test_a_score_model_returning_nan_is_an_error_not_poses():
    """Before: NaN from the docking score model flowed into the sampled poses (NaN coordinates, then RDKit
    molecules with NaN positions)."""
    from jaxkit.docking import ModelConfig, build_model, sample_complex

    ex = ccd_examples(1, split="train", seed=0)[0]
    lig = ligand_fragments(ex.mol, conformer="oracle")
    c = build_complex(lig, ex.pocket, sizes=SIZES, name=ex.id)
    model = build_model(ModelConfig(width=8, depth=1), jax.random.key(0))
    nan_model = jax.tree_util.tree_map(lambda a: a * jnp.nan if eqx.is_inexact_array(a) else a, model)
    with pytest.raises(ValueError, match="model: the score model returned NaN/inf values while sampling"):
        sample_complex(nan_model, c, lig, jax.random.key(1), n_samples=2, n_steps=3)
    mols, gaps = sample_complex(model, c, lig, jax.random.key(1), n_samples=2, n_steps=3)
    assert len(mols) == 2 and np.all(np.isfinite(gaps))
    assert all(np.isfinite(m.GetConformer().GetPositions()).all() for m in mols)
