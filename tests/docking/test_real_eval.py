"""The paired real-set evaluation: inputs without the crystal pose, per-complex records, the summary table."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from rdkit import Chem
from scipy import stats

from jaxkit.docking import real_complexes, real_set_manifest
from jaxkit.docking._evaluate import with_positions
from jaxkit.docking._realeval import (
    check_no_reference,
    docking_inputs,
    evaluate_methods,
    real_set_table,
    vina_failure_kinds,
    vina_method,
)

SMALL = "1ac8"  # 8 heavy atoms, validation split


@pytest.fixture(scope="module")
def example():
    return next(e for e in real_complexes("val") if e.id == SMALL)


def _leaky(example, *, seed):
    """Inputs that carry the crystal conformer (what check_no_reference must refuse)."""
    inputs = docking_inputs(example, seed=seed)
    return dataclasses.replace(inputs, ligand=Chem.Mol(example.mol))


def _moved_crystal(example, *, seed):
    """The crystal conformer rigidly moved: equal after superposition."""
    inputs = docking_inputs(example, seed=seed)
    x = example.mol.GetConformer().GetPositions()
    a = 0.7
    rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    return dataclasses.replace(inputs, ligand=with_positions(example.mol, x @ rot.T + 5.0))


def test_inputs_hold_no_crystal_pose(example):
    inputs = docking_inputs(example, seed=0)
    check_no_reference(inputs, example)  # passes
    assert inputs.ligand.GetNumConformers() == 1
    assert not inputs.ligand.GetPropsAsDict()
    np.testing.assert_allclose(inputs.center, example.pocket.center)
    assert inputs.receptor == example.protein_path
    with pytest.raises(ValueError, match="inputs.ligand"):
        check_no_reference(_leaky(example, seed=0), example)
    with pytest.raises(ValueError, match="inputs.ligand.*superposed"):
        check_no_reference(_moved_crystal(example, seed=0), example)


def test_a_method_handed_the_crystal_pose_is_refused(example):
    called = []

    def method(inputs):
        called.append(inputs.id)
        return [inputs.ligand], {}

    with pytest.raises(ValueError, match="inputs.ligand"):
        evaluate_methods(example, {"leak": method}, seed=0, make_inputs=_leaky)
    assert not called


def test_validation_and_test_ids_never_overlap():
    val, test = {e.id for e in real_complexes("val")}, {e.id for e in real_complexes("test")}
    assert val and test and not val & test
    astex = {r["pdb_id"] for r in real_set_manifest()["complexes"] if r["astex"]}
    assert astex <= test


def test_evaluate_methods_record(example):
    def echo(inputs):  # the fresh conformer at the box center, and a second pose
        x = inputs.ligand.GetConformer().GetPositions()
        x = x - x.mean(0) + np.asarray(inputs.center)
        pose = with_positions(inputs.ligand, x)
        return [pose, pose], {"sample_index": [1, 0], "note": "echo", "array": np.zeros(2)}

    def broken(inputs):
        raise RuntimeError("no pose")

    rec = evaluate_methods(example, {"echo": echo, "broken": broken}, seed=0)
    json.dumps(rec)
    assert rec["id"] == SMALL and rec["split"] == "val"
    e = rec["methods"]["echo"]
    assert e["n_poses"] == 2 and e["top1_rmsd"] == e["first_rmsd"] == e["best_rmsd"] > 0.1
    assert isinstance(e["top1_pb_valid"], bool) and e["cpu_seconds"] >= 0
    assert e["meta"] == {"sample_index": [1, 0], "note": "echo"}
    assert rec["methods"]["broken"]["error"] == "RuntimeError: no pose"


def test_vina_method_runs_in_the_inputs_box(example):
    rec = evaluate_methods(example, {"vinardo": vina_method("vinardo", exhaustiveness=1)}, seed=0)
    v = rec["methods"]["vinardo"]
    assert "error" not in v, v
    assert v["meta"]["scoring"] == "vinardo" and np.isfinite(v["top1_rmsd"]) and v["cpu_seconds"] > 0
    with pytest.raises((ValueError, TypeError), match="scoring"):  # TypeError: the tests' runtime type checks
        vina_method("ad4")


def test_vina_energy_of_its_own_docked_pose_matches_its_docking_energy(example, tmp_path):
    """vina_pose_energy and vina_dock prepare the ligand alike: re-scoring Vina's docked pose in the receptor it
    docked into gives the energy Vina reported for it (the pose's hydrogens are re-placed by RDKit); local
    optimization does not raise it beyond Vina's numerical noise."""
    from jaxkit.docking import prepare_receptor, vina_dock, vina_pose_energy

    center = np.asarray(example.pocket.center)
    pose, energy = vina_dock(
        example.protein_path, example.mol, center, exhaustiveness=1, seed=0, workdir=tmp_path
    )
    receptor = prepare_receptor(
        example.protein_path, tmp_path
    )  # the file vina_dock docked into (content-named)
    assert [p.name for p in tmp_path.glob("receptor-*.pdbqt")] == [receptor.name]
    placed, optimized = vina_pose_energy(example.protein_path, pose, center, receptor=receptor)
    assert abs(placed - energy) < 0.5 and optimized <= placed + 0.05


def test_vina_failure_kinds_splits_misses_by_the_crystal_energy():
    def rec(i, rmsd, energy):
        m = {"error": "RuntimeError: x"} if rmsd is None else {"top1_rmsd": rmsd, "meta": {"energy": energy}}
        return {"id": f"c{i}", "methods": {"vina": m}}

    records = [rec(0, 1.0, -9.0), rec(1, 5.0, -9.0), rec(2, 5.0, -6.0), rec(3, None, None), rec(4, 2.0, -8.5)]
    crystal = {f"c{i}": {"vina": {"as_placed": -7.0, "optimized": -8.0}} for i in range(5)}
    # c0 succeeds; c1 (-9 < -8) and c4 (exactly 2 Å is a miss; -8.5 < -8) are the scoring's, c2 the search's
    assert vina_failure_kinds(records, crystal, "vina") == {"scoring": 2, "search": 1, "error": 1}


def _records():
    vina = [1.0, 1.0, 3.0, 3.0, 1.0, 3.0]
    ours_top, ours_first, ours_best = (
        [1.0, 3.0, 1.0, 1.0, 1.0, 3.0],
        [3.0, 3.0, 1.0, 1.0, 1.0, 3.0],
        [1.0] * 5 + [3.0],
    )
    valid = [True, False, True, True, False, True]
    recs = []
    for i in range(6):
        rand = {"n_poses": 1, "top1_rmsd": 0.5, "top1_pb_valid": True, "best_rmsd": 0.5, "cpu_seconds": 2.0}
        if i == 0:
            rand = {"error": "RuntimeError: boom", "cpu_seconds": 4.0}
        recs.append(
            {
                "id": f"c{i}",
                "methods": {
                    "vina": {
                        "n_poses": 1,
                        "top1_rmsd": vina[i],
                        "top1_pb_valid": True,
                        "best_rmsd": vina[i],
                        "cpu_seconds": float(i),
                    },
                    "ours": {
                        "n_poses": 2,
                        "top1_rmsd": ours_top[i],
                        "top1_pb_valid": valid[i],
                        "first_rmsd": ours_first[i],
                        "first_pb_valid": True,
                        "best_rmsd": ours_best[i],
                        "cpu_seconds": 10.0 * (i + 1),
                    },
                    "rand": rand,
                },
            }
        )
    return recs


def test_real_set_table_counts_and_tests():
    t = real_set_table(_records(), reference="vina")
    json.dumps(t)
    rows = t["rows"]
    assert set(rows) == {"vina", "ours", "ours/first", "ours/best_of_n", "rand"}
    v, o = rows["vina"], rows["ours"]
    assert (v["n"], v["successes"], v["mcnemar_vs_reference"]) == (6, 3, None)
    assert (o["successes"], o["pb_valid"], o["success_pb_valid"]) == (4, 4, 3)
    ci = stats.binomtest(4, 6).proportion_ci(method="wilson")
    np.testing.assert_allclose(o["ci"], [ci.low, ci.high])
    ci = stats.binomtest(3, 6).proportion_ci(method="wilson")
    np.testing.assert_allclose(o["success_pb_ci"], [ci.low, ci.high])
    # discordant pairs: ours-only successes c2, c3; vina-only c1
    assert o["mcnemar_vs_reference"] == {"method_only": 2, "reference_only": 1, "p_exact": 1.0}
    assert o["cpu_seconds_median"] == 35.0 and o["cpu_seconds_mean"] == 35.0
    assert rows["ours/first"]["successes"] == 3 and rows["ours/first"]["pb_valid"] == 6
    assert rows["ours/best_of_n"]["successes"] == 5 and "pb_rate" not in rows["ours/best_of_n"]
    bn = rows["ours/best_of_n"]["mcnemar_vs_reference"]
    assert (bn["method_only"], bn["reference_only"]) == (2, 0)
    assert bn["p_exact"] == pytest.approx(stats.binomtest(2, 2, 0.5).pvalue) == pytest.approx(0.5)
    r = rows["rand"]
    assert (r["successes"], r["errors"], r["pb_valid"]) == (5, 1, 5)
    assert r["mcnemar_vs_reference"]["method_only"] == 3 and r["mcnemar_vs_reference"]["reference_only"] == 1


def test_real_set_table_cpu_ratio_is_the_paired_median():
    recs = _records()
    assert real_set_table(recs)["rows"]["ours"]["cpu_ratio_vs_reference"] is None  # a reference CPU of 0 s
    for i, r in enumerate(recs):
        r["methods"]["vina"]["cpu_seconds"] = float((i + 1) ** 2)
    rows = real_set_table(recs)["rows"]
    ratios = np.array([10.0 * (i + 1) / (i + 1) ** 2 for i in range(6)])
    q = rows["ours"]["cpu_ratio_vs_reference"]
    assert q["median"] == pytest.approx(np.median(ratios))  # 2.92, not the ratio of medians 35 / 12.5 = 2.8
    assert ratios.min() <= q["ci"][0] < q["median"] < q["ci"][1] <= ratios.max()
    assert rows["vina"]["cpu_ratio_vs_reference"] is None


def test_real_set_table_mcnemar_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.contingency_tables")
    t = real_set_table(_records(), reference="vina")
    for name in ("ours", "rand", "ours/best_of_n"):
        m = t["rows"][name]["mcnemar_vs_reference"]
        ok = t["rows"][name]["successes"]
        ref = t["rows"]["vina"]["successes"]
        both = ok - m["method_only"]
        table = [
            [both, m["method_only"]],
            [m["reference_only"], 6 - both - m["method_only"] - m["reference_only"]],
        ]
        assert both == ref - m["reference_only"]
        assert m["p_exact"] == pytest.approx(sm.mcnemar(table, exact=True).pvalue)


def test_real_set_table_rejects_unpaired_records():
    recs = _records()
    with pytest.raises(ValueError, match="reference"):
        real_set_table(recs, reference="vinardo")
    del recs[2]["methods"]["rand"]
    with pytest.raises(ValueError, match="records"):
        real_set_table(recs)
    with pytest.raises(ValueError, match="records"):
        real_set_table([])


def test_random_and_model_methods_share_the_pipeline(example):
    from jaxkit.docking import SHIPPED_MODEL
    from jaxkit.docking._realeval import model_method, random_method

    methods = {
        "random": random_method(n_samples=2),
        "ours": model_method(SHIPPED_MODEL, n_samples=2, n_steps=5),
    }
    rec = evaluate_methods(example, methods, seed=1)
    for name in methods:
        m = rec["methods"][name]
        assert "error" not in m, m
        assert m["n_poses"] == 2 and sorted(m["meta"]["sample_index"]) == [0, 1]
        assert m["best_rmsd"] <= min(m["top1_rmsd"], m["first_rmsd"])
    table = real_set_table([rec], reference="random")
    assert {"ours", "ours/first", "ours/best_of_n", "random"} <= set(table["rows"])
