"""Run folders that cannot be fooled or used to run code: the run identity in every stage file, stage files that
never unpickle, a used folder cleared whole (or refused), all through the real command line on a registered
experiment's run folder."""

import json
import os
import pickle

import numpy as np
import pytest

import experiments
from experiments import _cli, _registry, _stagefile
from experiments._context import RunContext, RunFolderError
from experiments._registry import Experiment
from jaxkit.train import CheckpointWarning, read_checked_bytes, write_checked_bytes


@pytest.fixture(autouse=True)
def registry(monkeypatch, tmp_path):
    from experiments import _report

    monkeypatch.setattr(_report, "PAGES", tmp_path / "reproductions")
    monkeypatch.setattr(_report, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_registry, "EXPERIMENTS", {})
    monkeypatch.setattr(_registry, "BENCHES", {})
    monkeypatch.setattr(_cli, "EXPERIMENTS", _registry.EXPERIMENTS)
    monkeypatch.setattr(_cli, "BENCHES", _registry.BENCHES)
    monkeypatch.setattr(_registry, "_DISCOVERED", True)
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here


def _register(calls, name="toy", figure="fig.png"):
    def run(ctx):
        a = ctx.stage(
            "first", lambda: calls.append("first") or {"value": ctx.config["n"] * 2, "arr": np.arange(3.0)}
        )
        b = ctx.stage("second", lambda: calls.append("second") or (a["value"] + ctx.seed, "text"))
        (ctx.out_dir / figure).write_bytes(b"png")
        ctx.write_summary(f"# {name} n={ctx.config['n']}\n")
        return {"b": b[0], "n": ctx.config["n"]}

    return experiments.register(
        Experiment(name=name, reproduces="nothing", presets={"quick": {"n": 2}, "paper": {"n": 5}}, run=run)
    )


def test_stage_files_record_the_run_and_a_replaced_run_json_cannot_mix_runs(tmp_path, capsys):
    """Before: with run.json gone, `--resume --preset paper` (or another --seed) reused the quick stages, exited 0
    and recorded preset 'paper' with quick numbers. (Since issue 49 a folder without run.json is refused whole.)"""
    calls = []
    _register(calls)
    out = tmp_path / "run"
    assert _cli.main(["run", "toy", "--preset", "quick", "--out", str(out)]) == 0
    _, info = read_checked_bytes(out / "stages" / "first.stage", kind="stage")
    assert info["experiment"] == "toy" and info["preset"] == "quick" and info["seed"] == 0
    assert len(info["config_sha256"]) == 64
    # an interrupted run: no metrics.json yet; and the run record replaced by another run's
    (out / "metrics.json").unlink()
    capsys.readouterr()
    for argv in (["--preset", "paper"], ["--seed", "2"]):
        ident = _cli.run_identity(
            "toy", *(("paper", 0, {"n": 5}) if argv[0] == "--preset" else ("quick", 2, {"n": 2}))
        )
        (out / "run.json").write_text(json.dumps(ident))
        assert _cli.main(["run", "toy", *argv, "--out", str(out), "--resume"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "holds stage files of another run" in err
        assert "preset 'quick' (this run: 'paper')" in err or "seed 0 (this run: 2)" in err
    assert calls == ["first", "second"] and not (out / "metrics.json").exists()
    # with run.json deleted the folder is not a run folder any more: refused, even by the same run
    (out / "run.json").unlink()
    assert _cli.main(["run", "toy", "--preset", "quick", "--out", str(out), "--resume"]) == 2
    assert "not an empty folder nor a run folder" in capsys.readouterr().err
    # the same run resumes from its stages
    (out / "run.json").write_text(json.dumps(_cli.run_identity("toy", "quick", 0, {"n": 2})))
    assert _cli.main(["run", "toy", "--preset", "quick", "--out", str(out), "--resume"]) == 0
    assert calls == ["first", "second"]
    assert json.loads((out / "metrics.json").read_text())["metrics"] == {"b": 4, "n": 2}
    # a stage file of another run copied into the folder is refused when loaded, too
    ctx = RunContext(name="toy", preset="paper", config={"n": 5}, seed=0, out_dir=out, resume=True)
    with pytest.raises(RunFolderError, match="belongs to another run"):
        ctx.stage("first", lambda: pytest.fail("recomputed"))


class _Marker:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_forged_stage_file_with_a_valid_checksum_runs_no_code(tmp_path, capsys):
    """Before: stage payloads were pickles, so a stage file written with a valid checksum ran code on --resume."""
    calls = []
    _register(calls)
    out = tmp_path / "run"
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0
    marker = tmp_path / "pwned"
    stage = out / "stages" / "first.stage"
    _, info = read_checked_bytes(stage, kind="stage")  # the forger copies a genuine header
    for payload in (
        pickle.dumps({"value": _Marker(str(marker))}),  # a plain pickle
        _npz_with_object_array(_Marker(str(marker))),  # an .npz whose array is a pickled object
    ):
        write_checked_bytes(stage, payload, kind="stage", info=info, overwrite=True)
        with pytest.warns(CheckpointWarning, match="first.stage is damaged"):
            assert _cli.main(["run", "toy", "--out", str(out), "--resume"]) == 0
        assert not marker.exists()
    assert calls == ["first", "second", "first", "first"]  # recomputed, never loaded
    assert json.loads((out / "metrics.json").read_text())["metrics"] == {"b": 4, "n": 2}
    # a stage payload naming a function or class outside the allow-list is refused as well
    tree = {"format": _stagefile.FORMAT, "tree": {"$t": "fn", "v": "os:system"}}
    bad = _npz({"tree": np.frombuffer(json.dumps(tree).encode(), np.uint8)})
    with pytest.raises(_stagefile.StageDecodeError, match="refusing to resolve 'os:system'"):
        _stagefile.loads(bad)
    tree["tree"] = {"$t": "obj", "cls": "subprocess:Popen", "v": {}}
    with pytest.raises(_stagefile.StageDecodeError, match="refusing"):
        _stagefile.loads(_npz({"tree": np.frombuffer(json.dumps(tree).encode(), np.uint8)}))


def _npz(arrays):
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _npz_with_object_array(obj):
    a = np.empty(1, dtype=object)
    a[0] = obj
    return _npz({"tree": a})


def test_another_experiment_in_a_used_folder_clears_it_whole(tmp_path, capsys):
    """Before: the stages were wiped but the earlier run's summary.md and figures stayed mixed in."""
    _register([], name="toy", figure="toy_fig.png")
    _register([], name="other", figure="other_fig.png")
    out = tmp_path / "run"
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0
    assert "toy_fig.png" in json.loads((out / "run.json").read_text())["outputs"]
    assert _cli.main(["run", "other", "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [".lock", "metrics.json", "other_fig.png", "run.json", "stages", "summary.md"]
    assert (out / "summary.md").read_text() == "# other n=2\n"
    assert "starting over" in capsys.readouterr().err
    # a folder with files but no run record is refused, not cleared
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "thesis.tex").write_text("precious")
    assert _cli.main(["run", "toy", "--out", str(plain)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an empty folder nor a run folder" in err
    assert (plain / "thesis.tex").read_text() == "precious"


def test_stage_values_round_trip_and_an_unstorable_one_is_returned_with_a_warning(tmp_path):
    import jax
    import pandas as pd

    ctx = RunContext(name="toy", preset="quick", config={}, seed=0, out_dir=tmp_path, resume=True)
    value = {
        "nan": float("nan"),
        (1, "a"): {1, 2},
        "arr": np.arange(6, dtype=np.int16).reshape(2, 3),
        "jax": jax.numpy.ones(2),
        "key": jax.random.key(3),
        "df": pd.DataFrame(
            {"x": [1.0, 2.0], "s": ["a", "b"]}, index=pd.date_range("2020", periods=2, tz="UTC")
        ),
        "fn": jax.nn.relu,
        "scalar": np.float32(1.5),
    }
    ctx.stage("v", lambda: value)
    got = ctx.stage("v", lambda: pytest.fail("recomputed"))
    assert np.isnan(got["nan"]) and got[(1, "a")] == {1, 2}
    assert got["arr"].dtype == np.int16 and np.array_equal(got["arr"], value["arr"])
    assert isinstance(got["jax"], jax.Array) and np.array_equal(got["jax"], value["jax"])
    assert np.array_equal(jax.random.key_data(got["key"]), jax.random.key_data(value["key"]))
    assert got["df"].equals(value["df"]) and got["fn"] is jax.nn.relu and got["scalar"] == np.float32(1.5)
    with pytest.warns(CheckpointWarning, match="stage 'w' is not stored"):
        assert ctx.stage("w", lambda: {"f": lambda x: x})["f"](3) == 3
    assert not ctx.stage_path("w").exists()


def test_cli_errors_exit_2_with_one_line(capsys):
    """Every command-line error of `python -m experiments` is one line on stderr and exit status 2 (argparse
    printed the usage first)."""
    _register([])
    for argv in (["run"], ["run", "toy", "--seed", "x"], ["nope"], ["run", "toy", "--preset", "huge"]):
        try:
            rc = _cli.main(argv)
        except SystemExit as e:
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2, (argv, err)
        assert err.strip().count("\n") == 0 and err.startswith("error: "), (argv, err)
