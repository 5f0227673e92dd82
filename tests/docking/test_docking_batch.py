"""Many ligands, one receptor: one SDF per ligand and a summary, the sampler compiled once for the batch, a failing
ligand reported without stopping the rest, and a rerun that resumes without redoing finished ligands (tiny
settings: 2 samples x 2 steps with the shipped model)."""

import csv
import sys
from pathlib import Path

import numpy as np
import posebusters
import pytest
import rdkit
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit.docking import SUMMARY_COLUMNS, VinardoRanking, _api, dock_many, is_ligand_library, read_ligands
from jaxkit.docking._cli import main

PB = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
PROTEIN, REF = PB / "1s3v_protein_one_lig_removed.pdb", PB / "1s3v_ligand.sdf"
# triacontanoic acid: 11 fragments and 20 junction dummies, more than the shipped model pads (10, 18)
SMALL, LONG = "CCOc1ccccc1C(=O)N", "C" * 30 + "(=O)O"
TINY = dict(pocket=str(REF), n_samples=2, n_steps=2, pb_budget=1, ranking=VinardoRanking())


def _positions(path):
    return np.stack([m.GetConformer().GetPositions() for m in Chem.SDMolSupplier(str(path))])


def test_batch_of_smiles_one_compile_failure_reported_and_resume(tmp_path, monkeypatch):
    lib = tmp_path / "ligands.smi"
    lib.write_text(f"# a small library\n{SMALL} ethoxybenzamide\nC1CC( broken\n{LONG} triacontanoic acid\n")
    assert is_ligand_library(lib) and [r.name for r in read_ligands(lib)] == [
        "ethoxybenzamide",
        "broken",
        "triacontanoic acid",
    ]
    traces = []
    real = _api.dock_samples
    monkeypatch.setattr(_api, "dock_samples", lambda *a, **k: traces.append(1) or real(*a, **k))
    _api._SAMPLERS.clear()
    seen = []
    out = tmp_path / "run"
    rows = dock_many(PROTEIN, lib, out, progress=lambda d, t, r: seen.append((d, t, r["name"])), **TINY)
    assert len(traces) == 1  # two ligands of different padded sizes, one traced (compiled) sampler
    assert seen == [(1, 3, "ethoxybenzamide"), (2, 3, "broken"), (3, 3, "triacontanoic acid")]
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert "SMILES" in rows[1]["error"] or "smiles" in rows[1]["error"]
    with (out / "summary.csv").open() as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == list(SUMMARY_COLUMNS) and [r["name"] for r in table] == [r["name"] for r in rows]
    for r in (table[0], table[2]):
        assert r["top_confidence"] == "" and np.isfinite(float(r["top_vinardo_kcal_mol"]))
        assert r["top_pb_valid"] in ("yes", "no", "unchecked") and r["n_poses"] == "2"
        recs = list(Chem.SDMolSupplier(str(out / r["sdf"])))
        assert [x.GetProp("rank") for x in recs] == ["1", "2"]
        assert recs[0].GetProp("vinardo_kcal_mol") == r["top_vinardo_kcal_mol"]
    assert Chem.MolToSmiles(Chem.MolFromSmiles(LONG)) == table[2]["smiles"]
    first = _positions(out / table[2]["sdf"])
    # a rerun does nothing; after an interruption (the last row lost) only that ligand is redone, identically
    seen.clear()
    dock_many(PROTEIN, lib, out, progress=lambda d, t, r: seen.append(r["name"]), **TINY)
    assert seen == []
    (out / "summary.csv").write_text("".join((out / "summary.csv").read_text().splitlines(True)[:-1]))
    (out / table[2]["sdf"]).unlink()
    rows2 = dock_many(PROTEIN, lib, out, progress=lambda d, t, r: seen.append(r["name"]), **TINY)
    assert seen == ["triacontanoic acid"] and [r["status"] for r in rows2] == ["ok", "failed", "ok"]
    assert np.allclose(_positions(out / table[2]["sdf"]), first, atol=1e-3)
    with pytest.raises(ValueError, match="out_dir: .* other settings \\(n_samples\\)"):
        dock_many(PROTEIN, lib, out, **{**TINY, "n_samples": 3})
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(ValueError, match="out_dir: .* not a batch folder"):
        dock_many(PROTEIN, lib, tmp_path / "mine", **TINY)
    # fresh probe M2: the same file name with another ligand in it is another batch, not a finished one
    lib.write_text(lib.read_text().replace(SMALL, "CCCCCCN"))
    with pytest.raises(ValueError, match="out_dir: .* other settings \\(ligands_sha256\\)"):
        dock_many(PROTEIN, lib, out, **TINY)
    (tmp_path / "afile").write_text("keep")  # fresh probe X67: an out_dir that is a file is named, and kept
    with pytest.raises(ValueError, match="out_dir: expected a folder"):
        dock_many(PROTEIN, lib, tmp_path / "afile", **TINY)
    assert (tmp_path / "afile").read_text() == "keep"
    assert not is_ligand_library(tmp_path / "missing.smi")  # fresh probe X64: judged by name alone before


def test_cli_docks_a_multi_record_sdf_into_a_folder(tmp_path, capsys):
    sdf = tmp_path / "two.sdf"
    w = Chem.SDWriter(str(sdf))
    for name, smi in (("benzamide", SMALL), ("triacontanoic", LONG)):
        m = Chem.AddHs(Chem.MolFromSmiles(smi))
        AllChem.EmbedMolecule(m, randomSeed=1)
        m.SetProp("_Name", name)
        w.write(m)
    w.close()
    out = tmp_path / "screen"
    args = [
        "dock",
        "--protein",
        str(PROTEIN),
        "--ligand",
        str(sdf),
        "--ref-ligand",
        str(REF),
        "--out",
        str(out),
    ]
    args += ["--n-samples", "2", "--steps", "2", "--pb-budget", "1", "--ranking", "vinardo"]
    try:
        assert main(args) == 0
    finally:  # posebusters' CaptureLogger points RDKit's log handler at sys.stderr (capsys's)
        rdkit.log_handler.setStream(sys.__stderr__)
    err = capsys.readouterr().err
    assert "docking 2 ligands" in err and "docked 2 of 2 ligands (0 failed)" in err and "ligands" in err
    assert sorted(p.name for p in out.glob("*.sdf")) == ["0001_benzamide.sdf", "0002_triacontanoic.sdf"]
    assert (out / "summary.csv").exists()
    bad = [str(tmp_path / "x.sdf") if a == str(out) else a for a in args]
    assert main(bad) == 2  # several ligands need a folder
    assert "--out: with several ligands, expected a folder" in capsys.readouterr().err
