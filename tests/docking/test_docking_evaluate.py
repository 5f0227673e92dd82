"""Evaluation: symmetric RMSD vs a brute-force permutation minimum, PoseBusters validity of crystal poses."""

import itertools

import numpy as np
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit.docking import conformer_positions
from jaxkit.docking._baselines import contact_score, random_placement
from jaxkit.docking._datasets import posebusters_complexes, posebusters_data_dir
from jaxkit.docking._evaluate import posebusters_valid, success_rate, symmetric_rmsd, with_positions


def test_symmetric_rmsd_matches_brute_force_over_automorphisms():
    mol = Chem.AddHs(Chem.MolFromSmiles("CC(C)(C)c1ccccc1"))  # tert-butylbenzene: 3! methyl x 2 ring flips
    AllChem.EmbedMolecule(mol, randomSeed=3)
    heavy = Chem.RemoveHs(mol)
    x = conformer_positions(heavy)
    y = x + np.random.default_rng(0).normal(scale=0.3, size=x.shape)
    # relabel atoms of the prediction by a graph automorphism: RMSD must not change
    matches = heavy.GetSubstructMatches(heavy, uniquify=False)
    assert len(matches) >= 4
    brute = min(np.sqrt(np.mean(np.sum((y[list(m)] - x) ** 2, -1))) for m in matches)
    got = symmetric_rmsd(with_positions(heavy, y), with_positions(heavy, x))
    assert abs(got - brute) < 1e-6
    perm = matches[1]
    got_perm = symmetric_rmsd(with_positions(heavy, y[list(perm)]), with_positions(heavy, x))
    assert abs(got_perm - brute) < 1e-6
    assert got <= np.sqrt(np.mean(np.sum((y - x) ** 2, -1))) + 1e-9


def test_success_rate_and_contact_score():
    assert success_rate([0.5, 1.9, 2.0, 3.0]) == 0.5
    assert success_rate([0.5, 1.9, 2.0, 3.0], valid=[True, False, True, True]) == 0.25
    lig = np.zeros((1, 3))
    far = np.array([[4.0, 0, 0]])
    close = np.array([[2.2, 0, 0]])
    assert float(contact_score(lig, far)) == -1.0
    assert abs(float(contact_score(lig, close)) - (10 * 1.0**2 - np.exp(-0.5 * 1.8**2))) < 1e-5
    for a, b in itertools.pairwise([close, far]):
        assert float(contact_score(lig, a)) > float(contact_score(lig, b))


def test_crystal_pose_is_posebusters_valid_and_random_placement_is_not_close():
    ex = posebusters_complexes(("1ia1",))[0]
    ref = with_positions(ex.mol, ex.reference_positions)
    ok, checks = posebusters_valid(
        ref, posebusters_data_dir() / ex.id / f"{ex.id}_protein_one_lig_removed.pdb"
    )
    assert len(checks) > 10 and "rmsd_≤_2å" not in checks  # validity never reads the reference pose
    assert ok, {k: v for k, v in checks.items() if not v}
    pos, score = random_placement(ex.mol, ex.pocket.positions, ex.pocket.center, k=64, seed=0)
    assert pos.shape == ex.reference_positions.shape and np.isfinite(score)
    assert symmetric_rmsd(with_positions(ex.mol, pos), ref) > 0.5


def test_ccd_examples_respect_filters_and_splits():
    from jaxkit.docking import torsional_bonds
    from jaxkit.docking._datasets import ccd_examples, split_of

    train = ccd_examples(3, split="train", seed=0)
    test = ccd_examples(2, split="test", seed=0)
    assert len(train) == 3 and len(test) == 2
    assert not {e.id for e in train} & {e.id for e in test}
    for e in train + test:
        assert split_of(e.id) == e.split
        assert 10 <= e.mol.GetNumAtoms() <= 40 and all(a.GetAtomicNum() > 1 for a in e.mol.GetAtoms())
        assert 2 <= len(torsional_bonds(e.mol)) <= 8
        assert {a.GetSymbol() for a in e.mol.GetAtoms()} <= {
            "C",
            "N",
            "O",
            "S",
            "P",
            "F",
            "Cl",
            "Br",
            "I",
            "B",
        }
        # the pseudo-pocket never clashes with the reference pose and surrounds it
        d = np.linalg.norm(e.pocket.positions[:, None] - e.reference_positions[None], axis=-1)
        assert d.min() >= 3.3 - 1e-9 and e.pocket.n_atoms >= 20
    again = ccd_examples(3, split="train", seed=0)
    assert [e.id for e in again] == [e.id for e in train]
    np.testing.assert_array_equal(again[0].pocket.positions, train[0].pocket.positions)
