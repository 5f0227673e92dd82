"""The shipped real crystal set: split hygiene (fixed, disjoint, Astex in test), provenance, and loadability."""

import hashlib

import pytest

from jaxkit.docking import (
    real_complexes,
    real_set_manifest,
    real_training_complexes,
    real_training_manifest,
)
from jaxkit.docking._realset import REAL_SET_DIR, REAL_TRAIN_DIR

MANIFEST = real_set_manifest()
RECORDS = MANIFEST["complexes"]


def _rule(pdb_id: str, astex: bool) -> str:  # recomputed here so that no complex can be moved by hand
    if astex:
        return "test"
    return "val" if hashlib.sha256(pdb_id.lower().encode()).digest()[0] < 102 else "test"


def test_set_size_and_unique_ids_and_ligands():
    assert len(RECORDS) >= 30
    ids = [r["pdb_id"] for r in RECORDS]
    codes = [r["ccd_code"] for r in RECORDS]
    assert len(set(ids)) == len(ids)
    assert len(set(codes)) == len(codes)


def test_val_and_test_never_overlap():
    by = {s: [r for r in RECORDS if r["split"] == s] for s in ("val", "test")}
    assert {r["split"] for r in RECORDS} <= {"val", "test"}
    assert by["val"] and by["test"]
    assert not {r["pdb_id"] for r in by["val"]} & {r["pdb_id"] for r in by["test"]}
    assert not {r["ccd_code"] for r in by["val"]} & {r["ccd_code"] for r in by["test"]}


def test_astex_members_are_test_and_split_follows_the_rule():
    assert "split_rule" in MANIFEST and "astex_list_source" in MANIFEST
    astex = set(MANIFEST["astex_ids"])
    assert len(astex) == 85
    assert all(r["astex"] == (r["pdb_id"] in astex) for r in RECORDS)
    assert all(r["split"] == "test" for r in RECORDS if r["astex"])
    assert [r["split"] for r in RECORDS] == [_rule(r["pdb_id"], r["astex"]) for r in RECORDS]


def test_every_complex_records_source_and_licence():
    for r in RECORDS:
        src = r["source"]
        assert src["repository"].startswith("https://github.com/"), r["pdb_id"]
        assert len(src["commit"]) == 40 and src["ligand_path"] and src["protein_path"], r["pdb_id"]
        assert src["repository_licence"] and r["licence"], r["pdb_id"]
        assert r["smiles"] and len(r["ccd_code"]) <= 3, r["pdb_id"]


def test_every_complex_loads_with_a_pocket():
    examples = real_complexes("all", cutoff=10.0)
    assert [e.id for e in examples] == sorted(r["pdb_id"] for r in RECORDS)
    heavy = {r["pdb_id"]: r["heavy_atoms"] for r in RECORDS}
    for e in examples:
        n = e.mol.GetNumAtoms()
        assert 8 <= n <= 60 and n == heavy[e.id], e.id
        assert e.mol.GetNumConformers() == 1 and e.mol.GetConformer().Is3D(), e.id
        assert e.pocket.n_atoms > 0, e.id
    assert {e.id for e in real_complexes("val")} == {r["pdb_id"] for r in RECORDS if r["split"] == "val"}


def test_folder_is_small():
    assert sum(p.stat().st_size for p in REAL_SET_DIR.rglob("*") if p.is_file()) < 8 * 2**20


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="split: expected"):
        real_complexes("train")
    with pytest.raises(ValueError, match="cutoff: expected"):
        real_complexes("test", cutoff=20.0)


# ---- the real training complexes: nothing shared with the held-out set
TRAIN = real_training_manifest()
TRAIN_RECORDS = TRAIN["complexes"]


def _pocket_residues(folder):
    """{(residue number, residue name)} of a shipped pocket file: same-protein pockets share most of them."""
    lines = (folder / f"{folder.name}_pocket.pdb").read_text().splitlines()
    return {(x[22:26].strip(), x[17:20].strip()) for x in lines if x.startswith("ATOM")}


def test_training_complexes_share_no_pdb_id_ligand_or_protein_with_the_held_out_set():
    assert len(TRAIN_RECORDS) >= 30 and {r["split"] for r in TRAIN_RECORDS} == {"train"}
    ids, codes = [r["pdb_id"] for r in TRAIN_RECORDS], [r["ccd_code"] for r in TRAIN_RECORDS]
    assert len(set(ids)) == len(ids) and len(set(codes)) == len(codes)
    assert not set(ids) & {r["pdb_id"] for r in RECORDS}
    assert not set(codes) & {r["ccd_code"] for r in RECORDS}
    assert not set(ids) & set(MANIFEST["astex_ids"])
    assert all(r["max_identity_to_held_out"] < 0.30 for r in TRAIN_RECORDS)
    # independent of the recorded identities: two pockets of one protein share most (number, name) residues
    # (held-out 1f8b / 1f8c: 1.0; 1h23 / 1gpk: 0.71); no training pocket shares more than 0.2 with any held-out one
    held = [_pocket_residues(REAL_SET_DIR / r["pdb_id"]) for r in RECORDS]
    assert max(len(a & b) / len(a | b) for a in held[:12] for b in held[:12] if a is not b) > 0.5
    for r in TRAIN_RECORDS:
        mine = _pocket_residues(REAL_TRAIN_DIR / r["pdb_id"])
        worst = max(len(mine & h) / len(mine | h) for h in held)
        assert worst < 0.2, (r["pdb_id"], worst)


def test_training_complexes_record_source_and_load():
    assert "leakage_rule" in TRAIN and TRAIN["excluded"]
    for r in TRAIN_RECORDS:
        src = r["source"]
        assert src["repository"].startswith("https://github.com/") and len(src["commit"]) == 40, r["pdb_id"]
        assert r["licence"] and src["repository_licence"], r["pdb_id"]
    examples = real_training_complexes()
    assert [e.id for e in examples] == sorted(r["pdb_id"] for r in TRAIN_RECORDS)
    assert all(e.split == "train" and e.pocket.n_atoms > 50 for e in examples)
    with pytest.raises(ValueError, match=r"cutoff: expected a number in \(0, 12\]"):
        real_training_complexes(cutoff=13.0)
