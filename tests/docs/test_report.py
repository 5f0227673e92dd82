"""`python -m experiments report` writes the Reproductions pages from published runs (docs/results/NAME/PRESET)."""

import argparse
import json
import struct
import zlib
from pathlib import Path

import pytest

from experiments import _cli, _report

ROOT = Path(__file__).resolve().parents[2]


def _png(path: Path) -> None:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)) + chunk(
        b"IDAT", zlib.compress(b"\0\0")
    )
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + raw + chunk(b"IEND", b""))


def _publish(
    root: Path, name: str, preset: str, metrics: dict, anchors: list, summary: str | None, figures=()
) -> None:
    folder = root / name / preset
    folder.mkdir(parents=True)
    record = {
        "experiment": name,
        "reproduces": f"{name} table",
        "preset": preset,
        "seed": 0,
        "config": {},
        "versions": {"python": "3.11.7", "jax": "0.10.2", "jaxkit": "0.1.0"},
        "wall_time_s": 1234.5,
        "finished": "2026-12-01T10:20:30",
        "command": f"python -m experiments run {name} --preset {preset}",
        "anchors": anchors,
        "metrics": metrics,
    }
    (folder / "metrics.json").write_text(json.dumps(record))
    if summary is not None:
        (folder / "summary.md").write_text(summary)
    for f in figures:
        _png(folder / f)


def test_pages_from_fabricated_runs(tmp_path):
    published, out = tmp_path / "docs" / "results", tmp_path / "docs" / "reproductions"
    _publish(
        published,
        "rno_benchmarks",
        "paper",
        {"burgers": {"FNO": {"rel_l2": 0.0171}, "RNO": {"rel_l2": "nan"}}},
        [
            {"path": "burgers/FNO/rel_l2", "value": 0.0149, "source": "Li et al. 2021, Table 1"},
            {"path": "burgers/RNO/rel_l2", "value": 0.01, "source": "RNO paper"},
            {"path": "darcy/FNO/rel_l2", "value": 0.0108, "source": "Li et al. 2021, Table 3"},
        ],
        "# RNO benchmarks\n\nOurs vs theirs, see ![curve](curve.png) and [the log](missing.txt).\n\n"
        "```text\n# not a heading\n```\n",
        figures=("curve.png", "extra.png"),
    )
    _publish(published, "rno_benchmarks", "quick", {"burgers": {"FNO": {"rel_l2": 0.3}}}, [], None)
    _publish(
        published,
        "grokking",
        "quick",
        {"speedup_pct": {"regularizer": 12.0}},
        [{"path": "speedup_pct/regularizer", "value": 36.0, "source": "Haris et al. 2026"}],
        "# g\n",
    )
    _publish(published, "new_exp", "quick", {"x": 1.0}, [], None)
    (published / "broken" / "paper").mkdir(parents=True)
    (published / "broken" / "paper" / "metrics.json").write_text("{not json")
    reproduces = {
        "rno_benchmarks": "RNO tables",
        "pde_datasets": "FNO data",
        "grokking": "speed-up",
        "next_token": "LM speed-up",
        "unmapped_exp": "something new",
    }
    written = _report.write_pages(published, out, reproduces=reproduces)
    assert sorted(p.name for p in written) == sorted([f"{s.slug}.md" for s in _report.SYSTEMS] + ["index.md"])

    rno = (out / "rno.md").read_text()
    # ours vs published, with the gap, the source, the preset, command, date and wall time
    assert "| `burgers/FNO/rel_l2` | 0.0171 | 0.0149 | +15% | Li et al. 2021, Table 1 |" in rno
    assert "| `burgers/RNO/rel_l2` | nan | 0.01 |  | RNO paper |" in rno
    assert "| `darcy/FNO/rel_l2` | not measured | 0.0108 |" in rno
    assert "preset `paper`" in rno and "`python -m experiments run rno_benchmarks --preset paper`" in rno
    assert "2026-12-01T10:20:30" in rno and "20.6 min" in rno and "jax 0.10.2" in rno
    # the summary is embedded with demoted headings, its figure re-pointed, dead links unlinked, code untouched
    assert "\n##### RNO benchmarks\n" in rno and "\n# not a heading\n" in rno
    assert "![curve](../results/rno_benchmarks/paper/curve.png)" in rno
    assert "the log" in rno and "missing.txt" not in rno
    # figures not used by the summary are shown too, each once
    assert rno.count("../results/rno_benchmarks/paper/extra.png") == 1
    assert rno.count("../results/rno_benchmarks/paper/curve.png") == 1
    # the paper run comes before the quick one; quick is flagged; lno_suite and pde_datasets are listed as not yet run
    assert rno.index("preset `paper`") < rno.index("preset `quick` (a small preset")
    assert "Not yet run at paper/standard scale: `lno_suite`, `pde_datasets`" in rno
    assert (
        "| `rno_benchmarks` | RNO tables | `paper` (2026-12-01), `quick` (2026-12-01) | yes (paper) |" in rno
    )

    noise = (out / "noise_stability.md").read_text()
    assert "Not yet run at paper/standard scale: `grokking`, `next_token`" in noise
    assert "| `speedup_pct/regularizer` | 12 | 36 | -67% |" in noise

    index = (out / "index.md").read_text()
    assert (
        "| [RNO and PDE operators](rno.md) | `rno_benchmarks`, `lno_suite`, `pde_datasets` | 1 of 3 |"
        in index
    )
    assert "`unmapped_exp`" in index and "`new_exp`" in index  # registered or published, but in no system
    assert "`broken/paper/metrics.json` is unreadable" in index
    for system in _report.SYSTEMS:
        assert f"({system.slug}.md)" in index
    assert _report.write_pages(published, out, reproduces=reproduces) == written  # idempotent
    assert (out / "rno.md").read_text() == rno


@pytest.fixture(scope="module")
def registry():
    from experiments._registry import EXPERIMENTS, discover

    discover()
    return EXPERIMENTS


def test_every_experiment_belongs_to_a_system(registry):
    EXPERIMENTS = registry
    unmapped = sorted(set(EXPERIMENTS) - set(_report.EXPERIMENT_SYSTEM))
    assert not unmapped, f"add {unmapped} to SYSTEMS in experiments/_report.py"
    stale = sorted(set(_report.EXPERIMENT_SYSTEM) - set(EXPERIMENTS))
    assert not stale, f"SYSTEMS names experiments that do not exist: {stale}"


def test_committed_pages_are_up_to_date(tmp_path, registry):
    """docs/reproductions/ is what `python -m experiments report` makes of docs/results/ (run it after publish)."""
    _report.write_pages(
        _report.PUBLISHED, tmp_path, reproduces={n: e.reproduces for n, e in registry.items()}
    )
    for page in sorted(tmp_path.glob("*.md")):
        committed = _report.PAGES / page.name
        assert committed.exists() and committed.read_text() == page.read_text(), (
            f"docs/reproductions/{page.name} is out of date: run `python -m experiments report`"
        )


def test_report_command_writes_local_report_and_pages(tmp_path, monkeypatch):
    results, published, pages = tmp_path / "results", tmp_path / "published", tmp_path / "pages"
    _publish(results, "stable", "quick", {"stable_sharpe": 1.2}, [], None)
    _publish(
        published,
        "stable",
        "paper",
        {"stable_sharpe": 1.5},
        [{"path": "stable_sharpe", "value": 1.85, "source": "STABLE, S&P 500"}],
        "# STABLE\n",
    )
    monkeypatch.setattr(_report, "PUBLISHED", published)
    monkeypatch.setattr(_report, "PAGES", pages)
    assert _cli.cmd_report(argparse.Namespace(results=str(results))) == 0
    assert "stable_sharpe" in (results / "REPORT.md").read_text()
    page = (pages / "forecasting_portfolio.md").read_text()
    assert "| `stable_sharpe` | 1.5 | 1.85 | -19% | STABLE, S&P 500 |" in page


def test_system_discussion_file_follows_the_status(tmp_path):
    """A hand-written ``<slug>.discussion.md`` beside the results appears on that system's page only."""
    published, out = tmp_path / "results", tmp_path / "pages"
    _publish(published, "grokking", "paper", {"x": 1.0}, [], "# g\n")
    (published / "noise_stability.discussion.md").write_text(
        "## Verdict\n\nThe regularizer helps at K = 113 only.\n"
    )
    _report.write_pages(published, out, reproduces={})
    page = (out / "noise_stability.md").read_text()
    assert page.index("## Status") < page.index("## Verdict") < page.index("### `grokking`")
    assert "The regularizer helps at K = 113 only." in page
    assert "## Verdict" not in (out / "rno.md").read_text()


def test_headline_figures_from_fabricated_runs(tmp_path):
    """A run with published numbers gets one headline figure beside the pages, referenced and captioned on its
    system's page; a quick run alone gets one, a standard run published later gets its own; unpublished runs'
    figures are removed."""
    published, out = tmp_path / "results", tmp_path / "pages"
    seeds = [0.031, 0.036, 0.040]
    _publish(
        published,
        "lno_suite",
        "standard",
        {"diffusion": {"RNO_selected": {"test_rel_l2": sum(seeds) / 3, "test_rel_l2_seeds": seeds}}},
        [
            {"path": "diffusion/RNO_selected/test_rel_l2", "value": 0.0079, "source": "RNO paper"},
            {"path": "beam/RNO_selected/test_rel_l2", "value": 0.0219, "source": "RNO paper"},
        ],
        "# lno\n",
    )
    stable = {"stable_sharpe": 0.4, "mvo_sharpe": 0.5, "diffusion_mse": 4e-4}
    stable["allocation"] = {f"STABLE (published) s{i}": {"sharpe": 0.2 + 0.1 * i} for i in range(5)}
    stable["allocation"]["MVO (sample)"] = {"sharpe": 0.5, "ci95": [-0.5, 1.5]}
    anchors = [{"path": "stable_sharpe", "value": 1.85}, {"path": "mvo_sharpe", "value": 1.18}]
    _publish(published, "stable", "quick", stable, anchors, "# s\n")
    _publish(published, "stable_ablation", "standard", {"crps": 0.8}, [], "# a\n")  # nothing to compare
    _report.write_pages(published, out, reproduces={})

    figures = out / "figures"
    assert sorted(p.name for p in figures.glob("*.png")) == ["lno_suite_standard.png", "stable_quick.png"]
    rno = (out / "rno.md").read_text()
    assert "![Headline: ours vs published](figures/lno_suite_standard.png)" in rno
    # the caption says how many published numbers fall inside our interval (1 measured anchor: outside)
    assert "1 headline number: the published number lies inside our 95% interval for 0 of 1" in rno
    # the interval of the table and the figure: bootstrap of the mean over the 3 seeds, inside the seeds' range
    row = next(line for line in rno.splitlines() if line.startswith("| `diffusion/RNO_selected/test_rel_l2`"))
    lo, hi = (float(x) for x in row.split("95% CI ")[1].split(")")[0].split("–"))
    assert min(seeds) <= lo < sum(seeds) / 3 < hi <= max(seeds)
    assert "figures/" in (out / "forecasting_portfolio.md").read_text()

    # the standard run of `stable` published later: both presets get their figure, on the same page
    _publish(published, "stable", "standard", stable, anchors, "# s\n")
    _report.write_pages(published, out, reproduces={})
    page = (out / "forecasting_portfolio.md").read_text()
    assert "figures/stable_standard.png" in page and "figures/stable_quick.png" in page
    assert page.index("figures/stable_standard.png") < page.index("figures/stable_quick.png")
    # a run no longer published loses its figure
    import shutil

    shutil.rmtree(published / "stable" / "quick")
    _report.write_pages(published, out, reproduces={})
    assert sorted(p.name for p in figures.glob("*.png")) == ["lno_suite_standard.png", "stable_standard.png"]


def test_figure_intervals_against_scipy():
    """Rates: Wilson intervals as scipy's binomtest gives them; means and medians: percentile bootstrap
    intervals that hold the statistic; recorded intervals are taken as recorded."""
    from scipy import stats

    from experiments import _figures

    for k, n in ((7, 8), (0, 4), (24, 42)):
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert _figures.wilson_ci(k, n) == pytest.approx((ref.low, ref.high), abs=1e-9)
    x = [5250, 2150, 5300, 5200, 2850, 4600, 5200, 4200, 1350, 1350]
    lo, hi = _figures.bootstrap_ci(x, _figures.np.median)
    assert min(x) <= lo <= 4400 <= hi <= max(x)
    assert _figures.bootstrap_ci([1.0, None, 2.0]) is None  # a censored seed: no interval from a floor
    metrics = {"a": {"speedup_pct": 15.1, "ci_low": 0.8, "ci_high": 33.1, "headline": "paired"}}
    metrics["b"] = {"rate": 0.75, "rate_ci95": [0.3, 0.95]}
    assert _figures.anchor_interval(metrics, "a/speedup_pct")[0] == (0.8, 33.1)
    assert _figures.anchor_interval(metrics, "b/rate")[0] == (0.3, 0.95)
    assert _figures.anchor_interval(metrics, "b/other") == (None, "")
    # a verdict (the best run solved the cell) is shown with the fraction of runs that solved it, and its interval
    cells = {"cells": {"dense": {"parity": {"runs_solved": 2, "n_runs": 4}}}}
    ref = stats.binomtest(2, 4).proportion_ci(method="wilson")
    assert _figures.anchor_detail(cells, "dense/parity/solved") == (
        f"best run; 2/4 runs solve it, 95% Wilson CI {ref.low:.2f}–{ref.high:.2f}"
    )
    assert _figures.anchor_detail(cells, "dense/parity/learned") == ""
