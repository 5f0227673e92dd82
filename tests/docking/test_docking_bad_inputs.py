"""The three probed failures (each used to fail silently or wrongly) and bad inputs named by the entry points."""

from pathlib import Path

import numpy as np
import posebusters
import pytest
from rdkit import Chem

from jaxkit.docking import (
    StructureError,
    fragment_ligand,
    is_valid_cut_set,
    load_ligand,
    load_protein,
    minimal_cut_sets,
    torsional_bonds,
)
from jaxkit.docking._fragments import _exhaustive_cut_sets

PB = Path(posebusters.__file__).parent / "datasets" / "pdb"


def test_fragmenting_a_ligand_with_many_torsions():
    """> 14 torsions: the old greedy fallback started from "cut everything", which isolates single atoms, and
    raised "no valid cut set". The block-tree search finds minimum valid sets; on a 10-torsion molecule it returns
    exactly the exhaustive search's sets, and every fragment of the 31-torsion molecule is re-checked as valid."""
    long = Chem.MolFromSmiles("CCCCCCCCCCCCCCCCCCCCC(=O)OCCOCCOCCOCCO")  # 31 torsional bonds
    assert len(torsional_bonds(long)) == 31
    frag = fragment_ligand(long)
    assert is_valid_cut_set(long, frag.cut_bonds)
    assert min(frag.fragment_sizes()) >= 2
    # minimality, independently: removing any single cut makes the set invalid
    for b in frag.cut_bonds:
        assert not is_valid_cut_set(long, tuple(c for c in frag.cut_bonds if c != b))
    mid = Chem.MolFromSmiles("CCOc1ccc(cc1)C(=O)NCCOCCC(C)C")
    tors = torsional_bonds(mid)
    assert len(tors) == 10
    assert minimal_cut_sets(mid) == _exhaustive_cut_sets(mid, tors)


def test_truncated_pdb_is_rejected(tmp_path):
    src = (PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb").read_text().splitlines(keepends=True)
    full = load_protein(PB / "1s3v" / "1s3v_protein_one_lig_removed.pdb")
    half = tmp_path / "half.pdb"
    half.write_text("".join(src[: len(src) // 2]))  # cut at a line boundary: parses cleanly, half the atoms
    with pytest.raises(StructureError, match=r"half\.pdb looks truncated: no END record"):
        load_protein(half)
    whole = tmp_path / "whole.pdb"
    whole.write_text("".join(src))
    assert load_protein(whole).array_length() == full.array_length() > 1000


def test_multi_molecule_sdf_is_rejected_unless_a_record_is_chosen(tmp_path):
    path = PB / "1ia1" / "1ia1_ligands.sdf"
    n = len(Chem.SDMolSupplier(str(path)))
    assert n > 1
    with pytest.raises(StructureError, match=rf"1ia1_ligands\.sdf holds {n} molecules; expected one"):
        load_ligand(path)
    second = load_ligand(path, index=1)
    ref = Chem.SDMolSupplier(str(path), removeHs=False)[1]
    np.testing.assert_allclose(second.GetConformer().GetPositions(), ref.GetConformer().GetPositions())
    with pytest.raises(StructureError, match=rf"index {n} is outside the {n} records"):
        load_ligand(path, index=n)
    assert load_ligand(PB / "1ia1" / "1ia1_ligand.sdf").GetNumAtoms() > 10  # a one-record file still loads


def test_reprobe_silent_results_now_raise():
    """Issue 20 re-probe: each of these returned a plausible number (or a useless object) before."""
    from jaxkit.docking import (
        ComplexSizes,
        ModelConfig,
        TrainConfig,
        contact_score,
        fragment_labels,
        split_of,
        success_rate,
    )

    # success_rate: NaN is a failed complex (documented), an empty list, a threshold <= 0, mismatched `valid`
    assert success_rate([1.0, float("nan"), 3.0]) == pytest.approx(1 / 3)
    assert success_rate([1.0, 1.5], valid=[True, False]) == 0.5
    with pytest.raises(ValueError, match="rmsds"):
        success_rate([])
    with pytest.raises(ValueError, match="rmsds"):
        success_rate([1.0, -0.5])
    with pytest.raises(ValueError, match="threshold"):
        success_rate([1.0], threshold=-1.0)
    with pytest.raises(ValueError, match="valid"):
        success_rate([1.0, 2.0], valid=[True])
    # configurations with sizes that cannot work
    with pytest.raises(ValueError, match="ligand"):
        ComplexSizes(ligand=0)
    with pytest.raises(ValueError, match="width"):
        ModelConfig(width=0)
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)
    with pytest.raises(ValueError, match="lr"):
        TrainConfig(lr=-1e-3)
    assert ComplexSizes(dummies=0).dummies == 0  # a rigid ligand has no dummy atoms
    with pytest.raises(ValueError, match="component_id"):
        split_of("")
    lig, poc = np.zeros((3, 3)), np.ones((4, 3))
    assert np.isfinite(float(contact_score(lig, poc)))
    with pytest.raises(ValueError, match="ligand"):
        contact_score(np.full((3, 3), np.nan), poc)
    with pytest.raises(
        (ValueError, TypeError), match="pocket"
    ):  # the test suite's jaxtyping hook names it first
        contact_score(lig, np.ones((4, 2)))
    mol = Chem.MolFromSmiles("CCO")
    assert list(fragment_labels(mol, (0,))) == [0, 1, 1]
    with pytest.raises(ValueError, match="cut_bonds"):
        fragment_labels(mol, (99,))


def test_reprobe_cryptic_errors_name_the_argument():
    from jaxkit.docking import docking_process, ligand_from_smiles, symmetric_rmsd

    with pytest.raises(ValueError, match="pred, ref"):
        symmetric_rmsd(ligand_from_smiles("CCO"), ligand_from_smiles("CCN"))
    with pytest.raises(ValueError, match="trans_sigma_max"):
        docking_process(trans_sigma_max=-1.0)
