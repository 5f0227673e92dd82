"""Reading the PoseBusters complexes, pocket extraction checked against a brute-force distance computation."""

from pathlib import Path

import numpy as np
import posebusters
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit.docking import StructureError, extract_pocket, load_ligand, load_protein

PB = Path(posebusters.__file__).parent / "datasets" / "pdb"


def test_pocket_is_whole_residues_within_cutoff():
    lig = load_ligand(PB / "1ia1" / "1ia1_ligand.sdf")
    prot = load_protein(PB / "1ia1" / "1ia1_protein_one_lig_removed.pdb")
    heavy = np.array(
        [lig.GetConformer().GetAtomPosition(a.GetIdx()) for a in lig.GetAtoms() if a.GetAtomicNum() > 1]
    )
    pocket = extract_pocket(prot, heavy, cutoff=6.0)
    # brute force, independently: residues with an atom within 6 Å
    close = set()
    for atom in prot:
        if np.min(np.linalg.norm(heavy - atom.coord, axis=1)) <= 6.0:
            close.add((atom.chain_id, int(atom.res_id)))
    got = {(c, int(r)) for c, r in zip(pocket.chain_ids, pocket.residue_ids)}
    assert got == close and len(close) > 5
    n_expected = sum(1 for atom in prot if (atom.chain_id, int(atom.res_id)) in close)
    assert pocket.n_atoms == n_expected
    assert "H" not in set(pocket.elements)
    np.testing.assert_allclose(pocket.center, heavy.mean(0))


def test_bad_structures(tmp_path):
    bad = tmp_path / "bad.sdf"
    bad.write_text("this is not an SDF\n$$$$\n")
    with pytest.raises(StructureError, match="bad.sdf"):
        load_ligand(bad)
    with pytest.raises(StructureError, match="does not exist"):
        load_protein(tmp_path / "missing.pdb")
    # a metal-containing ligand is rejected by name
    mol = Chem.AddHs(Chem.MolFromSmiles("CC(=O)O"))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    rw = Chem.RWMol(mol)
    zn = rw.AddAtom(Chem.Atom("Zn"))
    conf = rw.GetConformer()
    conf.SetAtomPosition(zn, (3.0, 0.0, 0.0))
    path = tmp_path / "zn.sdf"
    Chem.MolToMolFile(rw.GetMol(), str(path))
    with pytest.raises(StructureError, match="Zn"):
        load_ligand(path)
    prot = load_protein(PB / "1ia1" / "1ia1_protein_one_lig_removed.pdb")
    far = np.asarray(prot.coord).max(0) + 100.0
    with pytest.raises(StructureError, match="far from the pocket"):
        extract_pocket(prot, far[None, :], cutoff=8.0)
    with pytest.raises(ValueError, match="ligand_positions"):
        extract_pocket(prot, np.zeros((3,)))
