"""Every experiment end to end at its ``smoke`` preset (seconds: tiny sizes, a few steps), as a user runs it:
``python -m experiments run NAME --preset smoke --out DIR`` in-process, then ``report`` over the results.

A ``smoke`` preset takes every branch its ``quick`` and ``standard`` presets (``paper`` where there is no ``standard``) take (each dataset, model, baseline,
ranking, figure, summary and report path), so a broken data path, metric or summary fails here within minutes
instead of at the end of the 30-minute main job. ``test_smoke_preset_covers_quick_and_standard`` checks the branch
switches mechanically: every configuration key of ``quick`` and of the published preset is present in ``smoke``, and every
boolean switch that is on in either is on in ``smoke``.
"""

from __future__ import annotations

import json

import pytest

from experiments import _cli, _registry

_registry.discover()
NAMES = sorted(_registry.EXPERIMENTS)
# Seconds of each smoke run (2026-12-07, 2 cores, two pytest-xdist workers): the runs are handed out longest first
# so that the two workers finish together; an experiment not listed (a new one) goes first.
_SMOKE_SECONDS = {
    "sigmadock": 65, "lno_suite": 55, "ssm_expressivity": 50, "docking_real": 50, "rno_benchmarks": 28,
    "stable": 25, "pde_datasets": 21, "saddle_to_saddle": 20, "next_token": 11, "stability_ablation": 9,
    "sparse_parity": 9, "stable_ablation": 9, "grokking": 6, "stability_sweep": 4,
}  # fmt: skip
LONGEST_FIRST = sorted(NAMES, key=lambda n: -_SMOKE_SECONDS.get(n, 1e9))


@pytest.fixture(autouse=True)
def _no_writes_into_the_repository(monkeypatch, tmp_path):
    """`report` also regenerates docs/reproductions/ from docs/results/: point both at a temporary folder."""
    from experiments import _report

    monkeypatch.setattr(_report, "PAGES", tmp_path / "reproductions")
    monkeypatch.setattr(_report, "PUBLISHED", tmp_path / "published")
    monkeypatch.setattr(_cli, "PUBLISHED", tmp_path / "published")


def test_every_experiment_has_a_smoke_preset():
    missing = [n for n in NAMES if "smoke" not in _registry.EXPERIMENTS[n].presets]
    assert not missing, f"experiments without a 'smoke' preset: {missing}"


def _switches(cfg: dict, prefix: str = "") -> dict[str, object]:
    """Flattened configuration: booleans and the keys present (nested dicts of options walked)."""
    out: dict[str, object] = {}
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        out[key] = v
        if isinstance(v, dict) and all(isinstance(kk, str) for kk in v):
            out.update(_switches(v, key + "/"))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_smoke_preset_covers_quick_and_standard(name):
    presets = _registry.EXPERIMENTS[name].presets
    smoke = _switches(presets["smoke"])
    published = "standard" if "standard" in presets else "paper"  # the published setting
    for other in ("quick", published):
        ref = _switches(presets[other])
        top_missing = [k for k in presets[other] if k not in presets["smoke"]]
        assert not top_missing, f"{name}: smoke lacks {other}'s configuration keys {top_missing}"
        # a switch is on in smoke when it is on there under the same name (for nested options such as the
        # per-dataset ones: in at least one entry smoke keeps, e.g. ``endpoint`` of one node-grid dataset)
        on_in_smoke = {k.rsplit("/", 1)[-1] for k, v in smoke.items() if v is True}
        off = sorted({k.rsplit("/", 1)[-1] for k, v in ref.items() if v is True} - on_in_smoke)
        assert not off, f"{name}: switches on in {other} but not in smoke: {off}"


@pytest.fixture(scope="module")
def _fast_compiles():
    """Compile with XLA's optimizations off for the smoke runs (``jax_disable_most_optimizations``: backend
    optimization level 0, no expensive LLVM passes). A smoke run is mostly compilation of programs run a few steps
    at tiny sizes; on CPU this cuts its CPU time by about 40 % (stable: 68 s -> 41 s) and checks the same paths.
    Set for the in-process runs and, through the environment, for any worker process they start. Module-scoped:
    the smoke runs of one worker share the small programs every run compiles (array creation, reductions, checks);
    the programs compiled this way are dropped when the worker leaves this module (``jax.clear_caches``) so no
    later test reuses them."""
    import jax
    from jax._src import compiler

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
        before = compiler._DISABLE_MOST_OPTIMIZATIONS.value
        jax.config.update("jax_disable_most_optimizations", True)
        try:
            yield
        finally:
            jax.config.update("jax_disable_most_optimizations", before)
            jax.clear_caches()


@pytest.mark.parametrize("name", LONGEST_FIRST)
def test_smoke_run_end_to_end_and_report(name, tmp_path, capsys, _fast_compiles):
    results = tmp_path / "results"
    out = results / name / "smoke"
    rc = _cli.main(["run", name, "--preset", "smoke", "--seed", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, f"{name} smoke run failed:\n{err[-4000:]}"
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics.get("experiment") == name and metrics.get("preset") == "smoke"
    summary = (out / "summary.md").read_text()
    assert len(summary.strip()) > 100, f"{name}: summary.md is (nearly) empty"
    assert list(out.glob("*.png")), f"{name}: no figure written"
    assert _cli.main(["report", "--results", str(results)]) == 0
    report = (results / "REPORT.md").read_text()
    assert name in report
