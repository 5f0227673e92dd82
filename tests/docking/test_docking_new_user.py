"""What a new user tripped on: silent stages, ``dock()`` needing ``model=``/``key=``, two SDF writers, and an
unchecked pose silently on top when no pose passed the validity checks."""

import sys
from pathlib import Path

import jax
import numpy as np
import posebusters
import pytest
import rdkit
from rdkit import Chem
from rdkit.Chem import AllChem

from jaxkit.docking import (
    SDF_FIELDS,
    SHIPPED_MODEL,
    RankedPose,
    VinardoScorer,
    _rank,
    dock,
    ranking_warning,
    write_poses_sdf,
)
from jaxkit.docking._cli import main

PB = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
PROTEIN, LIGAND = PB / "1s3v_protein_one_lig_removed.pdb", PB / "1s3v_ligand.sdf"


class _TableScorer(VinardoScorer):
    """Energies from a table keyed by the pose's first x coordinate (no Vina): the ranking logic alone."""

    def __init__(self, energies: dict):
        self.energies = energies

    def score(self, mol):
        return self.energies[round(mol.GetConformer().GetAtomPosition(0).x, 3)]

    def minimize(self, mol, *, max_steps=0):
        return mol, self.score(mol)


def _poses(n):
    mol = Chem.AddHs(Chem.MolFromSmiles("CCOc1ccccc1"))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    mol = Chem.RemoveHs(mol)
    out = []
    for i in range(n):
        m = Chem.Mol(mol)
        conf = m.GetConformer()
        for a in range(m.GetNumAtoms()):
            p = conf.GetAtomPosition(a)
            conf.SetAtomPosition(a, (p.x + 10.0 * i, p.y, p.z))
        out.append(m)
    return out


def _first_x(mol):
    return round(mol.GetConformer().GetAtomPosition(0).x, 3)


def test_an_unchecked_pose_never_outranks_a_checked_lower_energy_one(monkeypatch):
    """Budget 2, both checked poses (the two lowest energies) fail: the top pose is the lowest-energy checked one
    with its failed checks, not the next unchecked pose (which the old order put first, silently), and the
    ranking warns. A pose that passes still goes first."""
    poses = _poses(4)
    energy = dict(zip([_first_x(m) for m in poses], [3.0, 1.0, 2.0, 4.0]))
    verdicts = {}
    monkeypatch.setattr(_rank, "pose_checks", lambda m, p: verdicts.get(_first_x(m), (False, ["clash"])))
    ranked = _rank.rank_poses(poses, [0.0] * 4, _TableScorer(energy), None, pb_budget=2)
    assert [p.index for p in ranked] == [1, 2, 0, 3]  # energies 1 (no), 2 (no), 3 (unchecked), 4 (unchecked)
    assert [p.pb_valid for p in ranked] == [False, False, None, None]
    for better, worse in zip(ranked, ranked[1:]):  # no unchecked pose above a checked one of lower energy
        assert not (better.pb_valid is None and worse.pb_valid is not None and worse.vinardo < better.vinardo)
    warning = ranking_warning(ranked, 2)
    assert "no pose passed the validity checks (2 failed, 2 unchecked; budget 2 checks)" in warning
    assert "the top pose fails clash" in warning
    # a valid pose found within the budget is the top pose, and there is no warning
    verdicts[_first_x(poses[2])] = (True, [])
    ranked = _rank.rank_poses(poses, [0.0] * 4, _TableScorer(energy), None, pb_budget=2)
    assert ranked[0].index == 2 and ranked[0].pb_valid is True
    assert [p.index for p in ranked[1:]] == [1, 0, 3]
    assert ranking_warning(ranked, 2) is None
    # a budget of 0 checks nothing: said too
    ranked = _rank.rank_poses(poses, [0.0] * 4, _TableScorer(energy), None, pb_budget=0)
    assert all(p.pb_valid is None for p in ranked) and "no pose was checked" in ranking_warning(ranked, 0)


def test_rank_poses_reports_minimization_and_check_progress(monkeypatch):
    poses = _poses(3)
    energy = dict(zip([_first_x(m) for m in poses], [2.0, 1.0, 3.0]))
    monkeypatch.setattr(_rank, "pose_checks", lambda m, p: (False, ["clash"]))
    calls = []
    _rank.rank_poses(
        poses,
        [0.0] * 3,
        _TableScorer(energy),
        None,
        pb_budget=2,
        minimize=True,
        progress=lambda *a: calls.append(a),
    )
    assert calls == [
        ("minimization", 0, 3),
        ("minimization", 1, 3),
        ("minimization", 2, 3),
        ("minimization", 3, 3),
        ("validity checks", 0, 2),
        ("validity checks", 1, 2),
        ("validity checks", 2, 2),
    ]


def test_write_poses_sdf_writes_the_command_lines_fields(tmp_path):
    poses = _poses(2)
    ranked = [
        RankedPose(1, poses[1], -7.25, 0.0, True, [], rank=0),
        RankedPose(0, poses[0], 16.1, 0.0, None, [], rank=1),
    ]
    out = write_poses_sdf(tmp_path / "p.sdf", ranked, warnings=["no pose passed"])
    recs = list(Chem.SDMolSupplier(str(out)))
    assert [r.GetProp("rank") for r in recs] == ["1", "2"]
    assert [r.GetProp("sample") for r in recs] == ["1", "0"]
    assert [r.GetProp("vinardo_kcal_mol") for r in recs] == ["-7.250", "16.100"]
    assert [r.GetProp("pb_valid") for r in recs] == ["yes", "unchecked"]
    assert all(r.GetProp("warning") == "no pose passed" for r in recs)
    assert set(SDF_FIELDS) - {"conformer_match_rmsd"} <= set(recs[0].GetPropNames())
    assert recs[0].GetProp("_Name").endswith("pose 1")
    with pytest.raises(TypeError, match="poses"):
        write_poses_sdf(tmp_path / "q.sdf", ["not a pose"])


def test_python_dock_has_the_command_lines_defaults_and_reports_stages():
    """Without ``model=`` and ``key=``, ``dock`` uses the shipped model and ``jax.random.key(0)`` (the CLI's
    ``--seed 0``): the same poses as with them given explicitly."""
    calls = []
    kw = dict(pocket=str(LIGAND), n_samples=2, n_steps=2, rank=False)
    a = dock(PROTEIN, LIGAND, progress=lambda *c: calls.append(c), **kw)
    b = dock(PROTEIN, LIGAND, model=SHIPPED_MODEL, key=jax.random.key(0), **kw)
    xa = [p.mol.GetConformer().GetPositions() for p in a.poses]
    xb = [p.mol.GetConformer().GetPositions() for p in b.poses]
    assert np.array_equal(np.stack(xa), np.stack(xb))
    assert [c[0] for c in calls if c[1] == 0] == ["preparation", "sampling"]
    assert ("sampling", 1, 1) in calls and a.warnings == []
    c = dock(PROTEIN, LIGAND, model=SHIPPED_MODEL, key=jax.random.key(1), **kw)
    assert not np.array_equal(np.stack(xa), np.stack([p.mol.GetConformer().GetPositions() for p in c.poses]))


def test_cli_warns_in_output_and_sdf_when_no_pose_passes(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_rank, "pose_checks", lambda m, p: (False, ["minimum_distance_to_protein"]))
    out = tmp_path / "poses.sdf"
    args = ["dock", "--protein", str(PROTEIN), "--ligand", str(LIGAND), "--ref-ligand", str(LIGAND)]
    args += [
        "--out",
        str(out),
        "--n-samples",
        "2",
        "--steps",
        "2",
        "--pb-budget",
        "1",
        "--ranking",
        "consensus",
    ]
    try:
        assert main(args) == 0
    finally:  # posebusters' CaptureLogger points RDKit's log handler at sys.stderr (capsys's)
        rdkit.log_handler.setStream(sys.__stderr__)
    err = capsys.readouterr().err
    assert "warning: no pose passed the validity checks (1 failed, 1 unchecked; budget 1 checks)" in err
    assert "sampling" in err and "validity checks" in err  # the stages are shown
    recs = list(Chem.SDMolSupplier(str(out)))
    assert len(recs) == 2 and all("no pose passed" in r.GetProp("warning") for r in recs)
    assert recs[0].GetProp("pb_valid") == "no"  # the top pose is a checked one, named as failing
    assert recs[0].GetProp("failed_checks") == "minimum_distance_to_protein"
