"""stable's declared endpoint: per-date records are stored for every forecaster row, the headline is the energy
score against the baseline chosen on validation (block bootstrap), every other comparison is Holm-corrected."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments import stable
from experiments._stable_report import summary
from jaxkit.evaluation import block_bootstrap, holm

ROOT = Path(__file__).resolve().parents[2]


def _per_date(rng, n=40):
    """Synthetic per-date scores: the diffusion seeds tie ewma on energy; garch is best on validation."""
    level = {"bootstrap": 0.30, "gaussian": 0.40, "ewma_gaussian": 0.12, "garch": 0.10, "diffusion": 0.10}
    per_date = {}
    for period in ("validation", "test"):
        common = rng.normal(size=n)
        for name, lv in level.items():
            arms = [f"diffusion s{s}" for s in range(2)] if name == "diffusion" else [name]
            for arm in arms:
                for kind in ("raw", "post"):
                    shift = lv + (0.05 if kind == "raw" else 0.0)
                    if period == "validation" and name == "ewma_gaussian":
                        shift += 0.1  # garch wins the choice
                    per_date[(arm, kind, period)] = {
                        m: 1.0 + shift + 0.05 * common + 0.02 * rng.normal(size=n)
                        for m in ("energy", "crps_sum", "crps", "mse", "coverage90")
                    }
    return per_date


def test_records_and_verdicts_follow_the_declared_endpoint():
    rng = np.random.default_rng(0)
    per_date = _per_date(rng)
    bases = ["bootstrap", "gaussian", "ewma_gaussian", "garch"]
    stable._tables(per_date, [0, 1], bases)  # adds the seed-mean rows
    dates = pd.bdate_range("2019-01-01", periods=200)
    positions = np.r_[np.arange(0, 200, 5)[:40], np.arange(0, 200, 5)[:40]]
    sel = {"validation": slice(0, 40), "test": slice(40, 80)}
    records = stable._records(per_date, dates, positions, sel)
    assert len(records) == len(per_date) * 40
    cfg = {"endpoint": stable.PRESETS["standard"]["endpoint"]}
    out = stable._verdicts(cfg, records, bases)
    v = out["verdict"]
    assert v["comparator"] == "garch [post]" and v["endpoint"]["metric"] == "energy"
    d = np.asarray(per_date[("diffusion (seed mean)", "post", "test")]["energy"]) - np.asarray(
        per_date[("garch", "post", "test")]["energy"]
    )
    ref = block_bootstrap(d, n_resamples=10_000, level=0.95, seed=0)
    assert (
        v["estimate"] == pytest.approx(d.mean())
        and v["block"] == 4
        and v["ci"] == pytest.approx([ref["ci_low"], ref["ci_high"]])
    )
    assert f"**Verdict: {v['word']}**" in out["verdict_markdown"]
    sec = out["secondary"]
    assert len(sec) == 4 * 3 - 1 and not any(k.startswith("energy") and "garch" in k for k in sec)
    assert [x["p_adjusted"] for x in sec.values()] == pytest.approx(
        list(holm([x["p"] for x in sec.values()]))
    )
    assert sec["energy: diffusion (seed mean) [post] - gaussian [post]"]["word"] == "better"


def test_the_quick_preset_without_garch_declares_its_own_candidates():
    assert "garch [post]" not in stable.PRESETS["quick"]["endpoint"]["comparator"]
    assert "garch [post]" in stable.PRESETS["standard"]["endpoint"]["comparator"]


def test_an_older_run_without_records_renders_without_a_computed_verdict():
    rec = json.loads((ROOT / "docs/results/stable/standard/metrics.json").read_text())
    text = summary(rec["preset"], rec["config"], rec["metrics"])
    assert "**Verdict:" not in text and "Not recorded in this run" in text
