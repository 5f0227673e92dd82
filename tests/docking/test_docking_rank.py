"""Ranking: Vina's local minimization of a pose (rigid motion + torsions) against the pose it started from."""

import dataclasses
from pathlib import Path

import jax
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from jaxkit.docking._datasets import posebusters_complexes
from jaxkit.docking._evaluate import symmetric_rmsd, with_positions
from jaxkit.docking._rank import make_scorer, rank_poses


@pytest.fixture(scope="module")
def complex_and_scorer(tmp_path_factory):
    ex = posebusters_complexes(("1ia1",))[0]
    scorer = make_scorer(
        ex.pocket, None, workdir=tmp_path_factory.mktemp("rank")
    )  # pocket atoms as the receptor
    return ex, scorer


def _bond_lengths(mol):
    x = mol.GetConformer().GetPositions()
    return np.array([np.linalg.norm(x[b.GetBeginAtomIdx()] - x[b.GetEndAtomIdx()]) for b in mol.GetBonds()])


def test_minimization_lowers_the_energy_keeps_the_bonds_and_moves_a_perturbed_pose_back(complex_and_scorer):
    ex, scorer = complex_and_scorer
    ref = with_positions(ex.mol, ex.reference_positions)
    x = ex.reference_positions
    c = x.mean(0)
    moved = (
        (x - c) @ Rotation.from_euler("z", 15, degrees=True).as_matrix().T + c + np.array([0.8, -0.6, 0.5])
    )
    pose = with_positions(ex.mol, moved)
    start_rmsd = symmetric_rmsd(pose, ref)
    e0 = scorer.score(pose)
    out, e1 = scorer.minimize(pose)
    assert np.isfinite(e0) and np.isfinite(e1)
    assert e1 < e0 - 0.5, (e0, e1)  # BFGS from a displaced pose must go downhill
    assert out.GetNumAtoms() == pose.GetNumAtoms()
    assert [a.GetAtomicNum() for a in out.GetAtoms()] == [a.GetAtomicNum() for a in pose.GetAtoms()]
    # Vina moves the pose rigidly and along rotatable torsions only: every bond keeps its length
    np.testing.assert_allclose(_bond_lengths(out), _bond_lengths(pose), atol=0.02)
    assert symmetric_rmsd(out, ref) < start_rmsd, (
        symmetric_rmsd(out, ref),
        start_rmsd,
    )  # towards the crystal
    assert abs(scorer.score(out) - e1) < 0.05 * abs(e1) + 0.1  # the returned pose is the one Vina scored


def test_pose_outside_the_maps_is_ranked_last_and_bad_combinations_raise(complex_and_scorer):
    ex, scorer = complex_and_scorer
    far = with_positions(ex.mol, ex.reference_positions + 100.0)
    out, e = scorer.minimize(far)
    assert e == float("inf") and out is far
    near = with_positions(ex.mol, ex.reference_positions + 0.3)
    ranked = rank_poses([far, near], [0.0, 0.0], scorer, None, pb_budget=None, minimize=True)
    assert [p.index for p in ranked] == [1, 0] and np.isfinite(ranked[0].vinardo)
    with pytest.raises(ValueError, match="minimize"):
        rank_poses([near], [0.0], None, None, order="consensus", minimize=True)
    with pytest.raises(ValueError, match="max_steps"):  # was a silent inf: the pose ranked last
        scorer.minimize(near, max_steps=-3)
    with pytest.raises(TypeError, match="max_steps"):  # was silently truncated to 2
        scorer.minimize(near, max_steps=2.7)


def test_converged_minimization_is_a_local_minimum_below_the_default_budget(complex_and_scorer):
    from jaxkit.docking._rank import CONVERGED_STEPS

    ex, scorer = complex_and_scorer
    x = ex.reference_positions
    c = x.mean(0)
    moved = (
        (x - c) @ Rotation.from_euler("x", 25, degrees=True).as_matrix().T + c + np.array([-0.9, 0.7, 0.4])
    )
    pose = with_positions(ex.mol, moved)
    _, e_default = scorer.minimize(pose)
    out, e_conv = scorer.minimize(pose, max_steps=CONVERGED_STEPS)
    assert e_conv <= e_default + 1e-6, (
        e_conv,
        e_default,
    )  # more BFGS steps from the same start never go uphill
    _, e_again = scorer.minimize(out, max_steps=CONVERGED_STEPS)
    assert abs(e_again - e_conv) < 0.05, (e_again, e_conv)  # a fixed point: the minimum was reached
    np.testing.assert_allclose(_bond_lengths(out), _bond_lengths(pose), atol=0.02)
    ranked = rank_poses(
        [pose], [0.0], scorer, None, pb_budget=None, minimize=True, minimize_steps=CONVERGED_STEPS
    )
    assert abs(ranked[0].vinardo - e_conv) < 1e-6
    with pytest.raises(ValueError, match="minimize_steps"):
        rank_poses([pose], [0.0], scorer, None, minimize=True, minimize_steps=-1)


def test_ranking_objects_order_poses_as_their_rank_poses_options(complex_and_scorer):
    """The command line's names map to ranking objects that order the poses as the matching ``rank_poses``
    options; SamplingOrder keeps the sampling order unchecked; a name where an object belongs is rejected."""
    from jaxkit.docking import CONVERGED_STEPS, RANKINGS, dock

    ex, scorer = complex_and_scorer
    poses = [with_positions(ex.mol, ex.reference_positions + s) for s in (0.9, 0.2, 100.0, 0.5)]
    gaps = [0.0, 0.0, 0.0, 0.0]

    def summary(ranked):
        return [
            (p.index, p.rank, round(p.vinardo, 6) if np.isfinite(p.vinardo) else str(p.vinardo))
            for p in ranked
        ]

    expected = {
        "vinardo": rank_poses(poses, gaps, scorer, None, pb_budget=None),
        "vinardo_minimized": rank_poses(poses, gaps, scorer, None, pb_budget=None, minimize=True),
        "vinardo_converged": rank_poses(
            poses, gaps, scorer, None, pb_budget=None, minimize=True, minimize_steps=CONVERGED_STEPS
        ),
        "consensus": rank_poses(poses, gaps, None, None, pb_budget=None, order="consensus"),
    }
    for name, ref in expected.items():
        got = RANKINGS[name].rank(
            poses, gaps, scorer if RANKINGS[name].needs_scorer else None, None, pb_budget=None
        )
        assert summary(got) == summary(ref), name
    kept = RANKINGS["none"].rank(poses, gaps, None, None)
    assert [p.index for p in kept] == [0, 1, 2, 3] and all(p.pb_valid is None for p in kept)
    with pytest.raises(TypeError, match="ranking"):
        dock(
            "missing.pdb",
            ex.mol,
            pocket=[0.0, 0.0, 0.0],
            model="missing.jkc",
            key=jax.random.key(0),
            ranking="vinardo",
        )


def test_receptor_preparation_is_reused_by_content_not_by_name(tmp_path, monkeypatch):
    from jaxkit.docking import _rank

    calls = []

    def fake(pdb_path, work):
        calls.append(Path(pdb_path).read_text())
        (work / "receptor.pdbqt").write_text("PDBQT of " + Path(pdb_path).read_text())
        return work / "receptor.pdbqt"

    monkeypatch.setattr(_rank, "_prepare_receptor", fake)
    monkeypatch.setattr(_rank, "_RECEPTORS", type(_rank._RECEPTORS)())
    pdb = tmp_path / "protein.pdb"
    pdb.write_text("A")
    first = _rank.prepare_receptor(pdb, tmp_path / "w1")
    again = _rank.prepare_receptor(pdb, tmp_path / "w2")
    assert calls == ["A"] and again.parent == tmp_path / "w2" and again.name.startswith("receptor-")
    assert again.read_text() == first.read_text() == "PDBQT of A"
    pdb.write_text("B")  # same name, new content: prepared again
    assert _rank.prepare_receptor(pdb, tmp_path / "w3").read_text() == "PDBQT of B"
    assert calls == ["A", "B"]


def test_scorer_kept_per_receptor_and_center_scores_as_a_fresh_one(complex_and_scorer, tmp_path):
    """``make_scorer`` returns the kept scorer for the same receptor content and center; after scoring another
    pose it scores a pose exactly as a scorer built from scratch, and a moved center gets its own maps."""
    from jaxkit.docking._rank import VinardoScorer, pocket_pdbqt

    ex, scorer = complex_and_scorer
    again = make_scorer(ex.pocket, None, workdir=tmp_path / "again")
    assert again is scorer
    pose = with_positions(ex.mol, ex.reference_positions + np.array([0.4, 0.0, -0.3]))
    scorer.score(with_positions(ex.mol, ex.reference_positions))  # another ligand pose set first
    fresh = VinardoScorer(pocket_pdbqt(ex.pocket, tmp_path / "fresh.pdbqt"), ex.pocket.center)
    assert again.score(pose) == fresh.score(pose)
    assert again.minimize(pose)[1] == fresh.minimize(pose)[1]
    moved = dataclasses.replace(ex.pocket, center=np.asarray(ex.pocket.center) + 1.0)
    other = make_scorer(moved, None, workdir=tmp_path / "moved")
    assert other is not scorer and other.center != scorer.center


def test_scorer_without_a_workdir_leaves_no_folder_behind(complex_and_scorer, tmp_path, monkeypatch):
    """``make_scorer(..., workdir=None)`` prepares the receptor in a temporary folder and removes it: a screening
    loop of many calls left one ``jaxkit_rank_*`` folder per call in the system's temporary directory."""
    import tempfile

    ex, scorer = complex_and_scorer
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    moved = dataclasses.replace(
        ex.pocket, center=np.asarray(ex.pocket.center) + 0.5
    )  # new maps, not the kept one
    made = make_scorer(moved, None)
    pose = with_positions(ex.mol, ex.reference_positions + 0.5)
    assert np.isfinite(made.score(pose))  # the receptor was read before its folder was removed
    assert list(tmp_path.iterdir()) == []


def test_receptor_preparation_deletes_the_residue_meeko_names_and_retries(tmp_path, monkeypatch):
    """meeko fails on a residue it cannot build (stderr "... corresponding to key A:12"): the preparation deletes
    that residue and runs again; the same residue named twice is an error naming the file."""
    import subprocess
    import types

    import biotite.structure.io.pdb as pdb

    from jaxkit.docking import _rank

    protein = posebusters_complexes(("1s3v",))[0].protein_path
    first = pdb.PDBFile.read(str(protein)).get_structure(model=1)
    chain, res = str(first.chain_id[0]), int(first.res_id[0])
    seen: list[set[tuple[str, int]]] = []

    def fake(cmd, **kwargs):
        written = pdb.PDBFile.read(cmd[2]).get_structure(model=1)
        seen.append({(str(c), int(r)) for c, r in zip(written.chain_id, written.res_id)})
        if len(seen) == 1:
            return types.SimpleNamespace(
                returncode=1, stderr=f"no template corresponding to key {chain}:{res}"
            )
        Path(cmd[4] + ".pdbqt").write_text("PDBQT")
        return types.SimpleNamespace(returncode=0, stderr="")

    monkeypatch.setattr(subprocess, "run", fake)
    out = _rank._prepare_receptor(protein, tmp_path)
    assert out.read_text() == "PDBQT" and len(seen) == 2
    assert (chain, res) in seen[0] and seen[1] == seen[0] - {(chain, res)}

    def always(cmd, **kwargs):
        return types.SimpleNamespace(returncode=1, stderr=f"no template corresponding to key {chain}:{res}")

    monkeypatch.setattr(subprocess, "run", always)
    (tmp_path / "again").mkdir()
    with pytest.raises(RuntimeError, match="1s3v"):
        _rank._prepare_receptor(protein, tmp_path / "again")
