"""No held-out ligand or protein in any training data: every training source against the real set's validation and
test complexes, by CCD code and by InChIKey, on the lists the ``quick`` and ``standard`` presets train on.

The held-out side is recomputed here from the shipped files (RDKit reads each crystal ligand SDF and computes its
standard InChIKey), independently of :mod:`jaxkit.docking._heldout`. Two molecules can share an InChIKey
connectivity block only if they have the same heavy-atom formula, so only CCD components with a held-out formula
are keyed (the formula is counted here from the CCD atom table)."""

from collections import Counter
from functools import lru_cache

import numpy as np
import pytest
from rdkit import Chem

from experiments.sigmadock import PRESETS, training_ccd_kwargs
from jaxkit.docking import (
    DockingExample,
    ccd_ligand_candidates,
    check_no_held_out,
    real_complexes,
    real_set_manifest,
    real_training_complexes,
    real_training_manifest,
)
from jaxkit.docking._datasets import _ccd_tables, ccd_mol
from jaxkit.docking._realset import REAL_SET_DIR, REAL_TRAIN_DIR

RECORDS = real_set_manifest()["complexes"]


def _key(mol):
    return Chem.MolToInchiKey(mol)[:14]


def _sdf(folder, pid):
    mol = Chem.MolFromMolFile(str(folder / pid / f"{pid}_ligand.sdf"))
    assert mol is not None, pid
    return mol


@lru_cache(maxsize=1)
def _held_out():
    """(CCD codes, {InChIKey block: PDB id}, {heavy-atom formula}) of all 84 real-set ligands (val and test)."""
    codes, keys, formulas = set(), {}, set()
    for r in RECORDS:
        mol = _sdf(REAL_SET_DIR, r["pdb_id"])
        codes.add(r["ccd_code"])
        keys[_key(mol)] = r["pdb_id"]
        formulas.add(
            tuple(sorted(Counter(a.GetSymbol() for a in mol.GetAtoms() if a.GetAtomicNum() > 1).items()))
        )
    return codes, keys, formulas


@lru_cache(maxsize=1)
def _ccd_matches() -> dict:
    """{CCD code: PDB id} of every CCD component whose InChIKey block is a held-out ligand's."""
    _, keys, formulas = _held_out()
    t = _ccd_tables()
    comp = np.repeat(np.arange(len(t["starts"]) - 1), np.diff(t["starts"]))
    out = {}
    heavy = t["element"] != "H"
    order = np.argsort(comp[heavy], kind="stable")
    elements, owner = t["element"][heavy][order], comp[heavy][order]
    bounds = np.flatnonzero(np.diff(owner)) + 1
    for els, i in zip(np.split(elements, bounds), owner[np.concatenate([[0], bounds])]):
        if tuple(sorted(Counter(els.tolist()).items())) in formulas:
            mol = ccd_mol(int(i))
            if mol is not None and _key(mol) in keys:
                out[str(t["ids"][i])] = keys[_key(mol)]
    return out


def test_the_matcher_finds_the_held_out_ligands_in_the_dictionary():
    """Positive control: keyed from the CCD, nearly every held-out ligand's own component matches (a check that
    could not find a leak would pass vacuously), and other components of the same compound do too."""
    codes, _, _ = _held_out()
    found = _ccd_matches()
    assert len(codes & set(found)) >= 0.9 * len(codes)
    assert set(found) - codes, "no second CCD entry of a held-out compound: the InChIKey rule adds nothing"


@pytest.mark.parametrize("preset", ["quick", "standard"])
def test_ccd_training_selection_holds_no_held_out_ligand(preset):
    """Every ligand the preset's ``ccd_examples`` call can take (its candidate list, in scan order: the exact
    selection is a prefix of it after the chemistry filters) is neither a held-out CCD code nor a component with
    a held-out ligand's InChIKey block."""
    kw = training_ccd_kwargs(PRESETS[preset], seed=0)
    assert kw["split"] == "train"
    cand = ccd_ligand_candidates(kw["split"])
    assert len(cand) > 3 * kw["n"] / kw["pockets_per_ligand"]  # room for the whole selection
    codes = {c for _, c in cand}
    held_codes, _, _ = _held_out()
    assert not codes & held_codes, sorted(codes & held_codes)
    leaks = {c: p for c, p in _ccd_matches().items() if c in codes}
    assert not leaks, leaks


def test_real_training_complexes_hold_no_held_out_ligand_or_complex():
    held_codes, keys, _ = _held_out()
    for r in real_training_manifest()["complexes"]:
        assert r["pdb_id"] not in {h["pdb_id"] for h in RECORDS}, r["pdb_id"]
        assert r["ccd_code"] not in held_codes, r["pdb_id"]
        assert _key(_sdf(REAL_TRAIN_DIR, r["pdb_id"])) not in keys, r["pdb_id"]


def test_check_no_held_out_passes_the_real_training_list_and_catches_leaks():
    train = real_training_complexes()
    assert check_no_held_out(train)["n_examples"] == len(train)
    held = real_complexes("val")[0]
    with pytest.raises(ValueError, match="examples: 1 training examples hold held-out"):
        check_no_held_out([held])  # a real-set complex
    # the held-out ligand under another name, in a training example: caught by its InChIKey block
    renamed = DockingExample("ZZZ#0", Chem.Mol(held.mol), held.pocket, "train", "ccd")
    with pytest.raises(ValueError, match="InChIKey block"):
        check_no_held_out(train[:2] + [renamed])
    sti = next(r for r in RECORDS if r["ccd_code"] == "STI")  # imatinib (1t46, Astex): caught by its code
    by_code = DockingExample("STI", train[0].mol, train[0].pocket, "train", "ccd")
    with pytest.raises(ValueError, match="CCD code STI"):
        check_no_held_out([by_code])
    assert sti["split"] == "test"
    with pytest.raises(TypeError, match="examples"):
        check_no_held_out(["1abc"])
