"""Fresh-probe regressions: the InChIKey block with explicit hydrogens (it underpins the held-out ligand
exclusion), ``write_poses_sdf`` replacing a user's file, ``consensus_counts`` of a lone pose, and
``symmetric_rmsd`` of a molecule without a conformer."""

import os

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit import docking as dk
from jaxkit.docking._realset import REAL_SET_DIR

SMILES = [
    "c1ccccc1",  # was cyclohexane's block with explicit H
    "OC(=O)c1ccccc1",  # benzoic acid: was "" with explicit H
    "Oc1ccccc1",  # phenol: was ""
    "NC(=O)c1ccccc1",  # benzamide: was ""
    "CCOc1ccccc1C(=O)N",  # was another compound's block
    "c1ccncc1",
    "c1cc[nH]c1",
    "n1c[nH]cc1",
    "O=c1cc[nH]cc1",
    "c1ccc2ccccc2c1",
    "C1CCCCC1",
    "CC(=O)[O-]",
    "C[N+](C)(C)C",
    "[NH3+]CC(=O)[O-]",
    "O=[N+]([O-])c1ccccc1",
    "CS(=O)(=O)N",
    "OP(=O)(O)O",
    "C[C@H](N)C(=O)O",
    "F/C=C/F",
    "CC(C)Cc1ccc(cc1)[C@@H](C)C(=O)O",
    "Cc1ccc(cc1)S(=O)(=O)NC(=O)c1ccccc1",
]


@pytest.mark.parametrize("smiles", SMILES)
def test_inchikey_block_does_not_depend_on_explicit_hydrogens(smiles):
    mol = Chem.MolFromSmiles(smiles)
    ref = Chem.MolToInchiKey(mol).split("-")[0]  # RDKit's InChIKey, the independent reference
    assert len(ref) == 14
    with_h = Chem.AddHs(mol)
    before = Chem.MolToMolBlock(with_h)
    assert dk.inchikey_block(mol) == dk.inchikey_block(with_h) == ref
    assert Chem.MolToMolBlock(with_h) == before  # the caller's molecule is not touched


def test_a_held_out_ligand_with_explicit_hydrogens_is_still_caught():
    """The exclusion's second guard keys training molecules as given: a held-out aromatic ligand with explicit
    hydrogens used to get another block (or none) and pass ``reason`` unnoticed."""
    held = dk.held_out_ligands()
    rec = next(r for r in dk.real_set_manifest()["complexes"] if r["ccd_code"] == "STI")  # imatinib
    mol = dk.load_ligand(REAL_SET_DIR / rec["pdb_id"] / f"{rec['pdb_id']}_ligand.sdf")
    assert held.reason(None, mol) is not None
    assert held.reason(None, Chem.AddHs(mol, addCoords=True)) == held.reason(None, mol)


def _pose(smiles="CCOc1ccccc1C(=O)N"):
    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    AllChem.EmbedMolecule(m, randomSeed=1)
    return Chem.RemoveHs(m)


def test_write_poses_sdf_refuses_an_existing_file_without_overwrite(tmp_path):
    mine = tmp_path / "notes.sdf"
    mine.write_text("my notes, not poses")
    with pytest.raises(FileExistsError, match=f"path: {mine} exists; pass overwrite=True"):
        dk.write_poses_sdf(mine, [_pose()])
    assert mine.read_text() == "my notes, not poses"
    with pytest.raises(IsADirectoryError, match="path: .* is a folder"):
        dk.write_poses_sdf(tmp_path, [_pose()], overwrite=True)
    with pytest.raises(TypeError, match="overwrite: expected a bool|parameter 'overwrite'"):
        dk.write_poses_sdf(tmp_path / "new.sdf", [_pose()], overwrite="yes")
    assert dk.write_poses_sdf(mine, [_pose(), _pose()], overwrite=True) == mine
    assert len(Chem.SDMolSupplier(str(mine))) == 2
    assert sorted(os.listdir(tmp_path)) == ["notes.sdf"]  # no temporary file left behind


def test_write_poses_sdf_leaves_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    out = tmp_path / "poses.sdf"
    dk.write_poses_sdf(out, [_pose()])
    before = out.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(Chem.SDWriter, "write", boom)
    with pytest.raises(OSError, match="disk full"):
        dk.write_poses_sdf(out, [_pose("CCO")], overwrite=True)
    assert out.read_text() == before  # atomic: the old file, not a truncated one
    assert sorted(os.listdir(tmp_path)) == ["poses.sdf"]


def test_consensus_counts_refuses_a_lone_pose():
    with pytest.raises(ValueError, match="positions: expected at least 2 poses.*received 1"):
        dk.consensus_counts(np.zeros((1, 4, 3)))  # was (array([0]), array([0.])): "perfect agreement"
    with pytest.raises(ValueError, match="positions: expected shape"):
        dk.consensus_counts(np.zeros((3, 0, 3)))  # no atoms: an empty mean too
    counts, mean = dk.consensus_counts(np.stack([np.zeros((4, 3)), np.ones((4, 3))]))
    assert counts.tolist() == [1, 1] and np.allclose(mean, np.sqrt(3))
    m = _pose()  # rank_poses' consensus order still ranks a single sample
    ranked = dk.rank_poses([m], [1.0], None, None, order="consensus")  # gap > max_gap: no PoseBusters call
    assert [p.index for p in ranked] == [0]


def test_symmetric_rmsd_refuses_a_molecule_without_a_conformer():
    pose, bare = _pose(), Chem.MolFromSmiles("CCOc1ccccc1C(=O)N")
    with pytest.raises(ValueError, match="pred: expected a molecule with a conformer"):
        dk.symmetric_rmsd(bare, pose)  # was RDKit's "Bad Conformer Id", naming no argument
    with pytest.raises(ValueError, match="ref: expected a molecule with a conformer"):
        dk.symmetric_rmsd(pose, bare)
    with pytest.raises(TypeError, match="ref: expected an RDKit Mol|parameter 'ref'"):
        dk.symmetric_rmsd(pose, "CCO")
    assert dk.symmetric_rmsd(pose, pose) == 0.0
