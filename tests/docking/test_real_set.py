"""The shipped real crystal set: split hygiene (fixed, disjoint, Astex in test), provenance, and loadability."""

import hashlib

import pytest

from jaxkit.docking import real_complexes, real_set_manifest
from jaxkit.docking._realset import REAL_SET_DIR

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
