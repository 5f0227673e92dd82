"""Fragmentation: expected fragment counts on named molecules, validity re-checked with RDKit, exact reassembly."""

from pathlib import Path

import numpy as np
import posebusters
import pytest
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit.docking import (
    conformer_positions,
    fragment_dummy_positions,
    fragment_frames,
    fragment_ligand,
    local_coordinates,
    minimal_cut_sets,
    reassemble,
    torsional_bonds,
)

PB_DATA = Path(posebusters.__file__).parent / "datasets" / "pdb"


def embedded(smiles: str, seed: int = 7) -> Chem.Mol:
    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    assert AllChem.EmbedMolecule(mol, randomSeed=seed) == 0
    return mol


# (name, smiles, expected number of cuts, expected fragment sizes as a sorted list); derived by hand from the
# rules: biaryl bond cut once; ibuprofen needs one cut on the isobutyl side and two around the chiral CH(CH3)
# (a fragment CH(CH3)-COOH of 5 atoms would still hold the CH-C(=O) torsion); rings are never cut.
NAMED = [
    ("biphenyl", "c1ccccc1-c1ccccc1", 1, [6, 6]),
    ("ibuprofen", "CC(C)Cc1ccc(cc1)C(C)C(=O)O", 3, [2, 3, 3, 7]),
    ("cyclododecane macrocycle", "C1CCCCCCCCCCC1", 0, [12]),
    ("naphthalene (no torsions)", "c1ccc2ccccc2c1", 0, [10]),
    ("anisole", "COc1ccccc1", 1, [2, 6]),
]


@pytest.mark.parametrize("name,smiles,n_cuts,sizes", NAMED, ids=[n[0] for n in NAMED])
def test_named_molecules(name, smiles, n_cuts, sizes):
    frag = fragment_ligand(embedded(smiles))
    assert len(frag.cut_bonds) == n_cuts
    assert sorted(frag.fragment_sizes()) == sizes
    assert frag.n_fragments == n_cuts + 1  # cutting acyclic bonds: one more fragment per cut
    assert len(frag.dummies) == 2 * n_cuts


def _rdkit_fragment_torsions(mol: Chem.Mol, atoms: list[int]) -> bool:
    """Independent check: extract the fragment with RDKit's own fragmenter and list its torsions."""
    em = Chem.RWMol(mol)
    for i in sorted(set(range(mol.GetNumAtoms())) - set(atoms), reverse=True):
        em.RemoveAtom(i)
    sub = em.GetMol()
    Chem.SanitizeMol(sub, Chem.SanitizeFlags.SANITIZE_ALL ^ Chem.SanitizeFlags.SANITIZE_KEKULIZE)
    return bool(torsional_bonds(sub))


@pytest.mark.parametrize("pdb", ["1ia1", "1of6", "1s3v", "1uou"])
def test_real_posebusters_ligands_fragment_validly_and_reassemble(pdb):
    mol = Chem.MolFromMolFile(str(PB_DATA / pdb / f"{pdb}_ligand.sdf"), removeHs=False)
    frag = fragment_ligand(mol)
    # every torsional bond is either cut or inside a fragment of <= 3 atoms or no longer torsional there
    pieces = Chem.GetMolFrags(Chem.FragmentOnBonds(frag.mol, list(frag.cut_bonds), addDummies=False))
    assert len(pieces) == frag.n_fragments
    for f in range(frag.n_fragments):
        atoms = frag.fragment_atoms(f).tolist()
        assert tuple(sorted(atoms)) in {tuple(sorted(p)) for p in pieces}
        assert len(atoms) >= 2
        if len(atoms) > 3:
            assert not _rdkit_fragment_torsions(frag.mol, atoms)
    # no smaller valid cut set exists: removing any single cut breaks validity
    assert all(len(c) == len(frag.cut_bonds) for c in minimal_cut_sets(frag.mol))
    x = conformer_positions(frag.mol)
    rots, trans = fragment_frames(frag, x)
    np.testing.assert_allclose(
        np.einsum("fij,fkj->fik", rots, rots), np.broadcast_to(np.eye(3), rots.shape), atol=1e-10
    )
    np.testing.assert_allclose(np.linalg.det(rots), 1.0, atol=1e-10)
    local_atoms, local_dummies = local_coordinates(frag, x)
    np.testing.assert_allclose(reassemble(frag, local_atoms, rots, trans), x, atol=1e-4)
    # each dummy sits on its partner's anchor atom in the true pose
    if len(frag.dummies):
        np.testing.assert_allclose(
            fragment_dummy_positions(frag, local_dummies, rots, trans), x[frag.dummies[:, 2]], atol=1e-4
        )


def test_reassembly_is_equivariant_to_a_global_rigid_motion():
    frag = fragment_ligand(embedded("CC(C)Cc1ccc(cc1)C(C)C(=O)O"))
    x = conformer_positions(frag.mol)
    local_atoms, _ = local_coordinates(frag, x)
    rots, trans = fragment_frames(frag, x)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    q *= np.sign(np.linalg.det(q))
    shift = np.array([1.0, -2.0, 3.0])
    moved = reassemble(frag, local_atoms, q @ rots, trans @ q.T + shift)
    np.testing.assert_allclose(moved, x @ q.T + shift, atol=1e-8)


def test_random_choice_samples_only_minimal_sets():
    mol = embedded("CC(=O)Nc1ccc(O)cc1")  # paracetamol: two minimal one-cut sets around the amide N
    minimal = set(minimal_cut_sets(fragment_ligand(mol).mol))
    assert len(minimal) == 2
    rng = np.random.default_rng(0)
    seen = {fragment_ligand(mol, choice="random", rng=rng).cut_bonds for _ in range(20)}
    assert seen == minimal


def test_bad_input():
    with pytest.raises(TypeError, match="mol"):
        fragment_ligand("CCO")
    with pytest.raises(ValueError, match="choice"):
        fragment_ligand(embedded("CCO"), choice="best")
    with pytest.raises(ValueError, match="rng"):
        fragment_ligand(embedded("CCO"), choice="random")
    frag = fragment_ligand(Chem.MolFromSmiles("c1ccccc1-c1ccccc1"))
    with pytest.raises(ValueError, match="conformer"):
        conformer_positions(frag.mol)
    with pytest.raises(ValueError, match="positions"):
        fragment_frames(frag, np.zeros((3, 3)))
