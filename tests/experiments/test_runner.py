"""The experiment runner: list/report with zero experiments, unknown names, a registered experiment end to end,
run-folder guards (ownership record, lock), verified stage files, publish."""

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import experiments
from experiments import _cli, _registry
from experiments._registry import Anchor, Experiment


@pytest.fixture(autouse=True)
def _no_writes_into_the_repository(monkeypatch, tmp_path):
    """`report` also regenerates docs/reproductions/ from docs/results/: point both at a temporary folder."""
    from experiments import _report

    monkeypatch.setattr(_report, "PAGES", tmp_path / "reproductions")
    monkeypatch.setattr(_report, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "published")


@pytest.fixture
def empty_registry(monkeypatch):
    monkeypatch.setattr(_registry, "EXPERIMENTS", {})
    monkeypatch.setattr(_registry, "BENCHES", {})
    monkeypatch.setattr(_cli, "EXPERIMENTS", _registry.EXPERIMENTS)
    monkeypatch.setattr(_cli, "BENCHES", _registry.BENCHES)
    monkeypatch.setattr(_registry, "_DISCOVERED", True)


def test_list_and_report_with_zero_experiments(empty_registry, tmp_path, capsys):
    assert _cli.main(["list"]) == 0
    assert "No experiments registered" in capsys.readouterr().out
    (tmp_path / "results").mkdir()
    assert _cli.main(["report", "--results", str(tmp_path / "results")]) == 0
    report = (tmp_path / "results" / "REPORT.md").read_text()
    assert "No results found" in report
    assert _cli.main(["run", "all"]) == 0


def test_unknown_names_exit_nonzero_listing_valid_ones(capsys):
    from experiments._cli import main

    assert main(["run", "no_such_experiment"]) != 0
    err = capsys.readouterr().err
    assert "unknown experiment 'no_such_experiment'" in err
    assert "valid experiments:" in err
    for name in _registry.EXPERIMENTS:  # every registered experiment is listed
        assert name in err
    assert main(["bench", "no_such_bench"]) != 0
    assert "valid benchs:" in capsys.readouterr().err


def test_registered_experiment_runs_writes_metrics_resumes_and_reports(empty_registry, tmp_path, capsys):
    calls = []

    def run(ctx):
        a = ctx.stage("first", lambda: calls.append("first") or {"value": ctx.config["n"] * 2})
        b = ctx.stage("second", lambda: calls.append("second") or a["value"] + 1)
        ctx.write_summary("# toy\n")
        return {"score": {"b": b}, "seed": ctx.seed}

    experiments.register(
        Experiment(
            name="toy",
            reproduces="nothing (runner test)",
            presets={"quick": {"n": 2}, "paper": {"n": 5}},
            run=run,
            anchors=(Anchor("score/b", 5.0, "hand computed"),),
        )
    )
    out = tmp_path / "toy"
    assert _cli.main(["run", "toy", "--preset", "quick", "--seed", "3", "--out", str(out)]) == 0
    rec = json.loads((out / "metrics.json").read_text())
    assert rec["metrics"] == {"score": {"b": 5}, "seed": 3}
    assert rec["config"] == {"n": 2} and rec["seed"] == 3 and "jax" in rec["versions"]
    assert rec["wall_time_s"] >= 0
    assert calls == ["first", "second"]
    # resume: completed stages are not recomputed
    assert _cli.main(["run", "toy", "--seed", "3", "--out", str(out), "--resume"]) == 0
    assert calls == ["first", "second"]
    rec2 = json.loads(
        (out / "metrics.json").read_text()
    )  # both invocations are recorded, the total is their sum
    assert [i["finished"] for i in rec2["invocations"]] == [rec["finished"], rec2["finished"]]
    assert rec2["wall_time_total_s"] == sum(i["wall_time_s"] for i in rec2["invocations"])
    # without --resume they are
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0
    assert calls == ["first", "second", "first", "second"]
    assert len(json.loads((out / "metrics.json").read_text())["invocations"]) == 1
    # unknown preset
    assert _cli.main(["run", "toy", "--preset", "huge"]) == 2
    assert "valid presets: quick, paper" in capsys.readouterr().err
    # report shows ours beside the anchor
    assert _cli.main(["report", "--results", str(tmp_path)]) == 0
    report = (tmp_path / "REPORT.md").read_text()
    assert "| toy | quick | 0 | score/b | 5 | 5 | hand computed |" in report


def test_register_requires_quick_and_paper(empty_registry):
    with pytest.raises(ValueError, match="paper"):
        experiments.register(Experiment(name="x", reproduces="", presets={"quick": {}}, run=lambda c: {}))


def test_bench_section_is_replaced_in_place(tmp_path):
    doc = tmp_path / "b.md"
    doc.write_text("# Benchmarks\n\nintro\n")
    _cli.write_bench_section("a", "first", doc)
    _cli.write_bench_section("b", "other", doc)
    _cli.write_bench_section("a", "second", doc)
    text = doc.read_text()
    assert "second" in text and "first" not in text and "other" in text and "intro" in text
    assert text.index("second") < text.index("other")
    assert _cli.markdown_table([{"x": 1.23456, "y": "a"}]).splitlines()[2] == "| 1.235 | a |"


def _toy(calls, n_steps=2):
    def run(ctx):
        a = ctx.stage("first", lambda: calls.append("first") or {"value": ctx.config["n"] * 2})
        return {"a": a["value"], "seed": ctx.seed}

    return Experiment(
        name="toy", reproduces="nothing", presets={"quick": {"n": 2}, "paper": {"n": 5}}, run=run
    )


def test_resume_refuses_a_folder_of_another_run(empty_registry, tmp_path, capsys, monkeypatch):
    """Finding 2: resuming with another seed/preset/config 'finished' in 1 s and relabeled the metrics."""
    calls = []
    exp = experiments.register(_toy(calls))
    out = tmp_path / "run"
    assert _cli.main(["run", "toy", "--seed", "1", "--out", str(out)]) == 0
    before = (out / "metrics.json").read_text()
    rec = json.loads((out / "run.json").read_text())
    assert rec == {
        "experiment": "toy", "preset": "quick", "seed": 1, "config": {"n": 2},
        "outputs": ["metrics.json", "stages", "summary.md"], "files": ["stages/first.stage"],
    }  # fmt: skip
    capsys.readouterr()
    assert _cli.main(["run", "toy", "--seed", "2", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "belongs to another run" in err and "seed 1 (this run: 2)" in err
    assert _cli.main(["run", "toy", "--preset", "paper", "--seed", "1", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "preset 'quick' (this run: 'paper')" in err and "n: 2 -> 5" in err
    monkeypatch.setitem(exp.presets, "quick", {"n": 3})  # the preset's config changed in the code
    assert _cli.main(["run", "toy", "--seed", "1", "--out", str(out), "--resume"]) == 2
    assert "n: 2 -> 3" in capsys.readouterr().err
    assert (out / "metrics.json").read_text() == before and calls == ["first"]
    # without --resume the run starts over: the earlier run's stages go, the folder is re-labeled
    assert _cli.main(["run", "toy", "--seed", "2", "--out", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["seed"] == 2 and calls == ["first", "first"]
    # a folder without run.json (an older jaxkit's, or a user's) is no run folder: refused, with or without
    # --resume, and left as it was
    (out / "run.json").unlink()
    before = sorted(p.name for p in out.rglob("*"))
    for extra in ([], ["--resume"]):
        assert _cli.main(["run", "toy", "--seed", "2", "--out", str(out), *extra]) == 2
        assert "not an empty folder nor a run folder" in capsys.readouterr().err
    assert sorted(p.name for p in out.rglob("*")) == before and calls == ["first", "first"]


def _flip(path, offset, bit):
    raw = bytearray(path.read_bytes())
    raw[offset] ^= 1 << bit
    path.write_bytes(bytes(raw))


def test_every_byte_flip_in_a_stage_file_is_detected_and_recomputed(tmp_path, monkeypatch):
    """Acceptance: before, 138/200 random flips in stage pickles loaded silently. Every byte of the header and of
    the digest, and 100 random payload bytes, get one bit flipped."""
    import os

    from experiments._context import RunContext
    from jaxkit.train import CheckpointWarning

    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not under test here; keeps it fast

    ctx = RunContext(name="toy", preset="quick", config={}, seed=0, out_dir=tmp_path, resume=True)
    value = {"rows": [1.5, 2.5], "name": "x" * 20, "arr": np.arange(5.0)}
    ctx.stage("s", lambda: value)
    path = ctx.stage_path("s")
    good = path.read_bytes()
    magic = good.index(b"\n") + 1
    head = magic + 8 + int.from_bytes(good[magic : magic + 8], "little")  # magic, header length, header JSON
    rng = np.random.default_rng(0)
    offsets = sorted(
        {*range(head), *range(len(good) - 32, len(good)), *rng.integers(head, len(good), 100).tolist()}
    )
    recomputed = []
    for off in offsets:
        path.write_bytes(good)
        _flip(path, off, off % 8)
        with pytest.warns(CheckpointWarning, match="s.stage"):
            out = ctx.stage("s", lambda off=off: recomputed.append(off) or value)
        assert out is value
    assert recomputed == offsets
    path.write_bytes(good)
    # intact: loaded, not recomputed; a stage file copied under another key is refused
    got = ctx.stage("s", lambda: pytest.fail("recomputed an intact stage"))
    assert got["rows"] == value["rows"] and np.array_equal(got["arr"], value["arr"])
    ctx.stage_path("t").write_bytes(path.read_bytes())
    with pytest.warns(CheckpointWarning, match="holds stage 's'"):
        assert ctx.stage("t", lambda: 7) == 7
    # legacy unchecked pickles are recomputed, not trusted
    (tmp_path / "stages" / "u.pkl").write_bytes(pickle.dumps(1))
    with pytest.warns(CheckpointWarning, match="unchecked"):
        assert ctx.stage("u", lambda: 2) == 2


def test_damaged_stage_is_recomputed_by_the_cli(empty_registry, tmp_path, capsys):
    calls = []
    experiments.register(_toy(calls))
    out = tmp_path / "run"
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0
    stage = out / "stages" / "first.stage"
    _flip(stage, stage.stat().st_size // 2, 0)
    with pytest.warns(UserWarning, match="damaged"):
        assert _cli.main(["run", "toy", "--out", str(out), "--resume"]) == 0
    assert calls == ["first", "first"]
    assert json.loads((out / "metrics.json").read_text())["metrics"]["a"] == 4


HOLD_LOCK = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, json.dumps({"pid": os.getpid(), "host": "here", "started": "now"}).encode())
print("locked", flush=True)
time.sleep(120)
"""


def test_lock_fails_fast_while_held_and_a_dead_holder_leaves_no_stale_lock(
    empty_registry, tmp_path, capsys, monkeypatch
):
    import signal
    import time

    calls = []
    experiments.register(_toy(calls))
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(out / ".lock")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.perf_counter()
        assert _cli.main(["run", "toy", "--out", str(out)]) == 2
        assert time.perf_counter() - t0 < 5
        err = capsys.readouterr().err
        assert "is in use by another run" in err and f"pid {holder.pid}" in err
        assert calls == [] and not (out / "metrics.json").exists()
        (out / "metrics.json").write_text(json.dumps({"experiment": "toy", "preset": "quick"}))
        (out / "run.json").write_text(json.dumps(_cli.run_identity("toy", "quick", 0, {"n": 2})))
        assert _cli.main(["publish", "toy", "--preset", "quick", "--src", str(out)]) == 2
        assert "run in progress" in capsys.readouterr().err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the holder died: its lock file is still there, the lock is not
    assert (out / ".lock").exists()
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0 and calls == ["first"]
    # a finished run publishes (metrics.json, summary.md, figures; not the stages, checkpoints, record or lock)
    (out / "fig.png").write_bytes(b"png")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "docs_results")
    assert _cli.main(["publish", "toy", "--preset", "quick", "--src", str(out)]) == 0
    assert sorted(p.name for p in (tmp_path / "docs_results" / "toy" / "quick").iterdir()) == [
        "fig.png",
        "metrics.json",
        "summary.md",
    ]


def test_a_second_claim_in_the_same_process_is_refused(tmp_path):
    from experiments._context import RunFolderError, claim_run_folder, run_identity

    ident = run_identity("toy", "quick", 0, {"n": 1})
    with claim_run_folder(tmp_path, ident, resume=False):
        with pytest.raises(RunFolderError, match="in use"):
            with claim_run_folder(tmp_path, ident, resume=True):
                pass
    with claim_run_folder(tmp_path, ident, resume=True):  # released on exit
        pass
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunFolderError, match="unreadable"):
        with claim_run_folder(tmp_path, ident, resume=True):
            pass


def test_bench_name_imports_only_its_module():
    """``python -m experiments bench kernels`` on a machine without RDKit (a GPU box): only
    ``experiments/bench_kernels.py`` is imported, the docking experiments are not."""
    import textwrap
    from pathlib import Path

    code = textwrap.dedent(
        """
        import argparse, sys
        sys.modules["rdkit"] = None  # as if RDKit were not installed
        from experiments._cli import _import_bench_only
        from experiments import BENCHES
        assert _import_bench_only(argparse.Namespace(cmd="bench", name="kernels"))
        assert "kernels" in BENCHES and "experiments.docking_real" not in sys.modules
        assert not _import_bench_only(argparse.Namespace(cmd="bench", name="all"))
        assert not _import_bench_only(argparse.Namespace(cmd="run", name="kernels"))
        print("ok")
        """
    )
    root = Path(experiments.__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=root)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_run_all_runs_each_experiment_in_its_own_process(monkeypatch, tmp_path, capsys):
    """`run all` starts one Python process per experiment (compiled code of earlier experiments must not pile up
    in one process: the main job once died of it), passes preset, seed, folder and --resume on, and a child
    killed by a signal fails the suite naming the signal while the other experiments still run."""
    calls = []

    def fake_run(cmd, check):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, -11 if cmd[4] == "grokking" else 0)

    monkeypatch.setattr(_cli.subprocess, "run", fake_run)
    out = tmp_path / "suite"
    assert _cli.main(["run", "all", "--preset", "quick", "--seed", "3", "--out", str(out), "--resume"]) == 1
    names = sorted(_registry.EXPERIMENTS)
    assert [c[4] for c in calls] == names
    for c in calls:
        assert c[:4] == [sys.executable, "-m", "experiments", "run"]
        assert c[5:] == ["--preset", "quick", "--seed", "3", "--out", str(out / c[4]), "--resume"]
    err = capsys.readouterr().err
    assert "grokking: killed by signal SIGSEGV (exit -11)" in err
    assert err.count("\n  ") == 1  # only the one failure is listed


def test_run_all_child_process_really_runs(tmp_path):
    """The child command line `run all` builds is a working one: a real child runs the smallest smoke preset."""
    out = tmp_path / "saddle"
    assert _cli._run_child("saddle_to_saddle", "smoke", 0, out, False) is None
    assert json.loads((out / "metrics.json").read_text())["preset"] == "smoke"
    assert _cli._run_child("no_such_experiment", "smoke", 0, tmp_path / "x", False) == (
        "exit status 2 (its error is printed above)"
    )


def test_run_all_jobs_runs_experiments_side_by_side(monkeypatch, tmp_path, capsys):
    """`run all --jobs 2`: two child processes at a time (their run intervals overlap), the longest experiment
    first, each one's output in its log file; a failing child is named with the last lines of its log while the
    others still run, and the suite fails."""
    stamps = tmp_path / "stamps"
    stamps.mkdir()

    def child(name, preset, seed, out, resume):
        code = (
            "import sys, time, pathlib; t0 = time.time(); time.sleep(0.6); "
            f"print('output of {name}'); "
            f"pathlib.Path({str(stamps)!r}, {name!r}).write_text(f'{{t0}} {{time.time()}}'); "
            f"sys.exit(3 if {name!r} == 'grokking' else 0)"
        )
        return [sys.executable, "-c", code]

    monkeypatch.setattr(_cli, "_child_cmd", child)
    assert _cli.main(["run", "all", "--preset", "quick", "--jobs", "2", "--out", str(tmp_path / "r")]) == 1
    captured = capsys.readouterr()
    names = sorted(_registry.EXPERIMENTS)
    started = [line.split()[-1] for line in captured.out.splitlines() if line.startswith("  started ")]
    assert started[0] == max(names, key=lambda n: _cli._QUICK_SECONDS.get(n, float("inf")))
    assert sorted(started) == names
    spans = sorted(tuple(map(float, (stamps / n).read_text().split())) for n in names)
    overlaps = sum(b[0] < a[1] for a, b in zip(spans, spans[1:]))
    assert overlaps >= len(names) // 2, spans  # two at a time, not one after another
    assert max(sum(s[0] <= t < s[1] for s in spans) for t, _ in spans) <= 2  # never more than two
    assert f"[{len(names)}/{len(names)}]" in captured.out + captured.err
    assert "grokking FAILED" in captured.err and "output of grokking" in captured.err  # the log's tail
    assert "grokking: exit status 3" in captured.err and captured.err.count("\n  grokking") == 1
    assert captured.out.count(" passed in ") == len(names) - 1


def test_jobs_needs_run_all(capsys):
    assert _cli.main(["run", "saddle_to_saddle", "--jobs", "2"]) == 2
    assert "--jobs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        _cli.main(["run", "all", "--jobs", "0"])
    assert e.value.code == 2


def test_ci_runs_the_readme_main_job_as_written():
    """`.ci/run` runs the README's main job as a user types it (the first set-up command's experiments part),
    into a fresh results folder, and reports it: a change to the README's command that CI does not run fails."""
    import re

    root = Path(experiments.__file__).resolve().parents[1]
    blocks = re.findall(r"```bash\n(.*?)\n```", (root / "README.md").read_text(), re.S)
    main_job = blocks[0].split("&&")[-1].strip()
    assert main_job.startswith("python -m experiments run all --preset quick"), main_job
    ci = (root / ".ci" / "run").read_text()
    assert f'{main_job} --out "$RESULTS"' in ci, f"{main_job!r} is not what .ci/run runs"
    assert 'python -m experiments report --results "$RESULTS"' in ci
    assert blocks[1].split("&&")[-1].strip() in ci  # and the README's test command
