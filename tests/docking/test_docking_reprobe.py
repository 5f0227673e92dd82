"""Re-probe regressions: library calls that returned a plausible result for bad input now raise, naming it."""

import numpy as np
import pytest
from jaxtyping import TypeCheckError
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit import docking as dk


def _mol(smiles="CCOc1ccccc1C(=O)N"):
    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    AllChem.EmbedMolecule(m, randomSeed=1)
    return Chem.RemoveHs(m)


def test_pose_utilities_refuse_what_they_used_to_accept(tmp_path):
    m = _mol()
    assert dk.symmetric_rmsd(m, m) == 0.0
    with pytest.raises(ValueError, match="pred, ref: expected two poses of the same ligand, received 3 vs 4"):
        dk.symmetric_rmsd(_mol("CCO"), _mol("CCCO"))  # was 0.68 (a substructure match)
    x = np.zeros((m.GetNumAtoms(), 3))
    x[0, 0] = np.nan
    with pytest.raises(ValueError, match="positions: expected finite values"):
        dk.with_positions(m, x)  # was a molecule with NaN coordinates
    with pytest.raises(ValueError, match="points_per_atom: expected an integer >= 1"):
        dk.pseudo_pocket(
            np.random.default_rng(0).normal(size=(4, 3)), np.random.default_rng(0), points_per_atom=0
        )
    with pytest.raises(ValueError, match=r"names: expected one entry per molecule \(1\), received 2"):
        dk.write_poses_sdf(tmp_path / "p.sdf", [m], names=["a", "b"])  # was a file with one record
    with pytest.raises(ValueError, match="ligand: expected a non-empty array"):
        dk.contact_score(np.zeros((0, 3)), np.ones((5, 3)))  # was 0.0
    with pytest.raises(ValueError, match="max_sets: expected an integer >= 1"):
        dk.minimal_cut_sets(m, max_sets=0)  # was "no valid cut set"
    with pytest.raises(ValueError, match="k: expected an integer >= 1"):
        dk.random_placement(m, np.ones((5, 3)), np.zeros(3), k=0, seed=0)  # was numpy's empty argmin
    with pytest.raises((TypeError, Exception), match="smiles: expected a SMILES string|parameter 'smiles'"):
        dk.ligand_from_smiles(42)  # was a Boost.Python converter error


def test_reassemble_refuses_non_rotations_and_round_trips_frames():
    frag = dk.fragment_ligand(_mol())
    pos = dk.conformer_positions(frag.mol)
    R, t = dk.fragment_frames(frag, pos)
    loc = dk.local_coordinates(frag, pos)[0]
    np.testing.assert_allclose(dk.reassemble(frag, loc, R, t), pos, atol=1e-9)
    with pytest.raises(ValueError, match="rotations: expected rotation matrices"):
        dk.reassemble(frag, loc, 2 * R, t)  # was a pose stretched by 2


def test_loose_pseudo_pocket_does_not_hug_the_ligand():
    """The shell puts every point 3.6-4.6 Å from its ligand atom (3.3 Å clash floor); the loose pocket keeps the
    3.2 Å clash floor but places a large share of its points farther than 4.6 Å from every ligand atom."""
    x = dk.conformer_positions(_mol("CC(=O)Nc1ccc(O)cc1CCN(C)C"))
    for seed in range(4):
        shell = dk.pseudo_pocket(x, np.random.default_rng(seed)).positions
        loose = dk.loose_pseudo_pocket(x, np.random.default_rng(seed)).positions
        near = [np.sqrt(((p[:, None] - x[None]) ** 2).sum(-1)).min(1) for p in (shell, loose)]
        assert near[0].min() >= 3.3 and near[0].max() <= 4.6 + 1e-9
        assert near[1].min() >= 3.2 and np.mean(near[1] > 4.6) > 0.3
        again = dk.loose_pseudo_pocket(x, np.random.default_rng(seed))
        np.testing.assert_array_equal(again.positions, loose)  # deterministic in the generator
    with pytest.raises((ValueError, TypeCheckError), match="pocket"):  # the runtime type check names it first
        dk.ccd_examples(1, pocket="tight")
