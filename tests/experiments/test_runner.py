"""The experiment runner: list/report with zero experiments, unknown names, a registered experiment end to end."""

import json
import subprocess

import pytest

import experiments
from experiments import _cli, _registry
from experiments._registry import Anchor, Experiment


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
    assert _cli.main(["report", "--results", str(tmp_path / "results")]) == 0
    report = (tmp_path / "results" / "REPORT.md").read_text()
    assert "No results found" in report
    assert _cli.main(["run", "all"]) == 0


def test_unknown_names_exit_nonzero_listing_valid_ones(subprocess_env, python, repo_root):
    proc = subprocess.run([python, "-m", "experiments", "run", "no_such_experiment"], capture_output=True,
                          text=True, env=subprocess_env, cwd=repo_root, timeout=300)
    assert proc.returncode != 0
    assert "unknown experiment 'no_such_experiment'" in proc.stderr
    assert "valid experiments:" in proc.stderr
    for name in _registry.EXPERIMENTS:  # every registered experiment is listed
        assert name in proc.stderr
    proc = subprocess.run([python, "-m", "experiments", "bench", "no_such_bench"], capture_output=True, text=True,
                          env=subprocess_env, cwd=repo_root, timeout=300)
    assert proc.returncode != 0 and "valid benchs:" in proc.stderr


def test_registered_experiment_runs_writes_metrics_resumes_and_reports(empty_registry, tmp_path, capsys):
    calls = []

    def run(ctx):
        a = ctx.stage("first", lambda: calls.append("first") or {"value": ctx.config["n"] * 2})
        b = ctx.stage("second", lambda: calls.append("second") or a["value"] + 1)
        ctx.write_summary("# toy\n")
        return {"score": {"b": b}, "seed": ctx.seed}

    experiments.register(Experiment(name="toy", reproduces="nothing (runner test)",
                                    presets={"quick": {"n": 2}, "paper": {"n": 5}}, run=run,
                                    anchors=(Anchor("score/b", 5.0, "hand computed"),)))
    out = tmp_path / "toy"
    assert _cli.main(["run", "toy", "--preset", "quick", "--seed", "3", "--out", str(out)]) == 0
    rec = json.loads((out / "metrics.json").read_text())
    assert rec["metrics"] == {"score": {"b": 5}, "seed": 3}
    assert rec["config"] == {"n": 2} and rec["seed"] == 3 and "jax" in rec["versions"]
    assert rec["wall_time_s"] >= 0
    assert calls == ["first", "second"]
    # resume: completed stages are not recomputed
    assert _cli.main(["run", "toy", "--out", str(out), "--resume"]) == 0
    assert calls == ["first", "second"]
    # without --resume they are
    assert _cli.main(["run", "toy", "--out", str(out)]) == 0
    assert calls == ["first", "second", "first", "second"]
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
