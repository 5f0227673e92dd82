"""Headline figures of the Reproductions pages: ours against the published numbers, drawn from ``metrics.json``.

Each published run with a headline gets one figure (``docs/reproductions/figures/<experiment>_<preset>.png``),
one panel per quantity: our value as a filled dot with its 95% interval as an error bar, the published value as
an open diamond (with its interval where the paper gives one). Intervals come from the run's own record where it
stores one (``<metric>_ci95``, a comparison's ``ci_low``/``ci_high``) and are otherwise computed here from the
per-seed values the record keeps: ``scipy.stats.bootstrap`` for means and medians, Wilson intervals
(``jaxkit.evaluation.wilson_interval``) for rates. A run whose reference is a closed form (saddle-to-saddle)
compares simulation against theory; a deterministic simulation has no interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

LEVEL = 0.95


@dataclass(frozen=True)
class Point:
    label: str
    ours: float | None
    published: float | None
    ours_ci: tuple[float, float] | None = None
    published_ci: tuple[float, float] | None = None
    how: str = ""  # how the interval was obtained, e.g. "Wilson, 3/4 runs"


@dataclass
class Panel:
    title: str  # the quantity, with its unit
    points: list[Point] = field(default_factory=list)
    log: bool = False
    zero: bool = False  # draw the no-effect line at 0


@dataclass
class Headline:
    panels: list[Panel]
    ours_label: str = "ours (95% CI)"
    published_label: str = "published"
    note: str = ""  # what else the reader should know to read the figure


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, list | tuple) and len(v) == 2 and all(_num(x) is not None for x in v):
        return float(v[0]), float(v[1])
    return None


def _get(node: Any, path: str) -> Any:
    for part in path.strip("/").split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def bootstrap_ci(values, statistic: Callable = np.mean) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of ``statistic`` over ``values`` (fixed seed, so pages are stable)."""
    from scipy import stats

    x = np.asarray([v for v in values if _num(v) is not None], dtype=float)
    if x.size < 2 or x.size != len(values):
        return None
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    res = stats.bootstrap(
        (x,),
        statistic,
        confidence_level=LEVEL,
        n_resamples=9999,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def wilson_ci(successes: int, trials: int) -> tuple[float, float]:
    from jaxkit.evaluation import wilson_interval

    lo, hi = wilson_interval(int(successes), int(trials), level=LEVEL)
    return float(lo), float(hi)


def anchor_interval(run_metrics: dict, path: str) -> tuple[tuple[float, float] | None, str]:
    """Our 95% interval for the anchored metric ``path``, and how it was obtained ("" when none)."""
    parent, _, leaf = path.rpartition("/")
    stored = _pair(_get(run_metrics, f"{path}_ci95"))
    if stored:
        return stored, "recorded with the run"
    node = _get(run_metrics, parent) if parent else run_metrics
    if not isinstance(node, dict):
        return None, ""
    if (
        leaf == "speedup_pct"
        and _num(node.get("ci_low")) is not None
        and _num(node.get("ci_high")) is not None
    ):
        kind = {
            "paired": "bootstrap of the median paired speed-up",
            "censored": "bootstrap of the restricted-mean speed-up (censored runs)",
        }
        return (node["ci_low"], node["ci_high"]), kind.get(node.get("headline"), "recorded with the run")
    seeds = node.get(f"{leaf}_seeds")
    if isinstance(seeds, list):
        ci = bootstrap_ci(seeds, np.mean)
        return (ci, f"bootstrap of the mean over {len(seeds)} seeds") if ci else (None, "")
    per_seed = node.get("per_seed")
    if leaf in ("median", "mean") and isinstance(per_seed, list):
        ci = bootstrap_ci(per_seed, np.median if leaf == "median" else np.mean)
        return (ci, f"bootstrap of the {leaf} over {len(per_seed)} seeds") if ci else (None, "")
    return None, ""


def anchor_detail(run_metrics: dict, path: str) -> str:
    """What stands behind a verdict-valued anchor: for a cell ``CLASS/LANGUAGE/solved`` (the best run's verdict),
    the fraction of runs that solved it with its Wilson interval; "" otherwise."""
    parts = path.split("/")
    cell = (
        _get(run_metrics, f"cells/{parts[0]}/{parts[1]}")
        if len(parts) == 3 and parts[2] == "solved"
        else None
    )
    counts = _ssm_counts(cell)
    if counts is None:
        return ""
    k, n, unit = counts
    lo, hi = wilson_ci(k, n)
    lead = "best run; " if unit == "runs" else ""
    return f"{lead}{k}/{n} {unit} solve it, 95% Wilson CI {lo:.2f}–{hi:.2f}"


_UNITS = {
    "speedup_pct": "speed-up over the baseline (%)",
    "median": "steps to the target (median over seeds)",
    "test_rel_l2": "test relative L2 error",
    "test_mse": "test MSE",
    "solved": "fraction of runs that solve the language",
}


def _unit(path: str) -> str:
    leaf = path.rsplit("/", 1)[-1]
    if "success" in leaf:
        return "success rate (RMSD < 2 Å)" + (" & PB-valid" if leaf.endswith("pb_valid") else "")
    return _UNITS.get(leaf, leaf.replace("_", " "))


def _label(path: str) -> str:
    parent = path.rpartition("/")[0]
    return parent.replace("/", " · ") if parent else path.replace("_", " ")


def _short(leaf: str) -> str:
    for unit in ("_success_2A_pb_valid", "_success_2A"):
        leaf = leaf.removesuffix(unit)
    return leaf.replace("_", " ")


def from_anchors(record: dict) -> Headline | None:
    """Ours vs published for every anchor the run measured, one panel per unit."""
    metrics = record.get("metrics") or {}
    panels: dict[str, Panel] = {}
    leaves: dict[str, list[str]] = {}
    for a in record.get("anchors") or []:
        path, ref = a.get("path", ""), _num(a.get("value"))
        ours = _num(_get(metrics, path))
        if ours is None:
            continue  # not run here: the table says so
        ci, how = anchor_interval(metrics, path)
        unit = _unit(path)
        panels.setdefault(unit, Panel(unit)).points.append(
            Point(_label(path), ours, ref, ci, _pair(a.get("ci95")), how)
        )
        leaves.setdefault(unit, []).append(path.rsplit("/", 1)[-1])
    for unit, panel in panels.items():  # one quantity under two names (top-1, unranked): name the leaf too
        if len({p.label for p in panel.points}) < len(panel.points):
            panel.points = [
                Point(f"{p.label} · {_short(leaf)}", p.ours, p.published, p.ours_ci, p.published_ci, p.how)
                for p, leaf in zip(panel.points, leaves[unit], strict=True)
            ]
    for p in panels.values():  # errors spanning decades on a log axis; signed quantities (speed-ups) never
        vals = [v for q in p.points for v in (q.ours, q.published, *(q.ours_ci or ())) if v is not None]
        p.log = "error" in p.title or "MSE" in p.title
        p.log = p.log and bool(vals) and min(vals) > 0 and max(vals) / min(vals) > 20
        p.zero = "speed-up" in p.title
    return Headline(list(panels.values())) if panels else None


def _saddle(record: dict) -> Headline | None:
    cf = _get(record.get("metrics") or {}, "closed_form") or {}
    panels = []
    for title, base, key, name in (
        ("two-layer linear: half-way time per mode", "linear", "half_time", "mode"),
        ("two-layer linear: plateau loss levels", "linear", "plateau_level", "plateau"),
        ("diagonal net: jump times t / ln(1/α)", "diagonal", "jump_time", "jump"),
        ("diagonal net: saddle loss levels", "diagonal", "saddle_level", "saddle"),
    ):
        theory, sim = _get(cf, f"{base}/{key}_predicted"), _get(cf, f"{base}/{key}_measured")
        if isinstance(theory, list) and isinstance(sim, list):
            pts = [
                Point(f"{name} {i + 1}", _num(s), _num(t))
                for i, (s, t) in enumerate(zip(sim, theory, strict=False))
                if _num(s) is not None and _num(t) is not None
            ]
            if pts:
                panels.append(Panel(title, pts))
    att = _get(cf, "attention_separate/plateaus")
    if isinstance(att, list):
        pts = [
            Point(
                f"k = {p.get('learned')} directions learned",
                _num(p.get("measured")),
                _num(p.get("predicted")),
            )
            for p in att
            if isinstance(p, dict)
            and _num(p.get("measured")) is not None
            and _num(p.get("predicted")) is not None
        ]
        if pts:
            panels.append(Panel("linear attention, separate heads: plateau loss levels", pts))
    for panel in panels:
        vals = [v for p in panel.points for v in (p.ours, p.published)]
        panel.log = min(vals) > 0 and max(vals) / min(vals) > 20
    if not panels:
        return from_anchors(record)
    return Headline(
        panels,
        ours_label="simulation (deterministic: no interval)",
        published_label="closed form (theory)",
    )


def _ssm_counts(cell) -> tuple[int, int, str] | None:
    """(solved, total, unit) of an SSM cell: runs (older records) or seeds (chosen on validation)."""
    if not isinstance(cell, dict):
        return None
    if isinstance(cell.get("n_runs"), int) and cell["n_runs"] >= 1:
        return int(cell.get("runs_solved", 0)), cell["n_runs"], "runs"
    if isinstance(cell.get("n_seeds"), int) and cell["n_seeds"] >= 1:
        return int(cell.get("n_seeds_solved", 0)), cell["n_seeds"], "seeds"
    return None


def _ssm(record: dict) -> Headline | None:
    m = record.get("metrics") or {}
    pts = []
    for a in record.get("anchors") or []:
        cls, lang = a.get("path", "").split("/")[:2]
        counts = _ssm_counts(_get(m, f"cells/{cls}/{lang}"))
        if counts is None:
            continue
        k, n, unit = counts
        pts.append(
            Point(
                f"{cls} · {lang}", k / n, _num(a.get("value")), wilson_ci(k, n), how=f"Wilson, {k}/{n} {unit}"
            )
        )
    if not pts:
        return from_anchors(record)
    return Headline(
        [Panel("fraction of runs (seeds) solving the language (test accuracy ≥ 0.9)", pts)],
        published_label="published verdict (1 = learns, 0 = fails)",
    )


def _zero_forecast(m: dict) -> list[Point]:
    """The zero forecast's MSE beside the forecaster's: recentering sets every post-processed mean path to 0, so
    the post-processed rows' MSE is exactly the zero forecast's."""
    post = ((m.get("forecast") or {}).get("diffusion (seed mean) [post]") or {}).get("test") or {}
    return [] if _num(post.get("mse")) is None else [Point("zero forecast (mean path 0)", post["mse"], None)]


def _stable(record: dict) -> Headline | None:
    m = record.get("metrics") or {}
    alloc = m.get("allocation") or {}
    refs = {a.get("path"): _num(a.get("value")) for a in record.get("anchors") or []}
    # one interval type in the panel: every strategy's Sharpe with its circular block bootstrap over test days;
    # every STABLE seed shown (no seed-only interval beside a day-bootstrap one)
    sharpe = Panel("annualised Sharpe ratio, test period (95% CI: block bootstrap over days)")
    stable_rows = sorted(k for k in alloc if k.startswith("STABLE (published) s"))
    for k in stable_rows:
        seed = k.rsplit(" s", 1)[1]
        sharpe.points.append(
            Point(f"STABLE, seed {seed}", alloc[k].get("sharpe"), refs.get("stable_sharpe"),
                  _pair(alloc[k].get("ci95")), how="block bootstrap over days")
        )  # fmt: skip
    if not stable_rows and _num(m.get("stable_sharpe")) is not None:
        sharpe.points.append(Point("STABLE", m["stable_sharpe"], refs.get("stable_sharpe")))
    if _num(m.get("mvo_sharpe")) is not None:
        ci = _pair((alloc.get("MVO (sample)") or {}).get("ci95"))
        sharpe.points.append(
            Point(
                "MVO, sample moments",
                m["mvo_sharpe"],
                refs.get("mvo_sharpe"),
                ci,
                how="block bootstrap over days",
            )
        )
    panels = [sharpe] if sharpe.points else []
    if _num(m.get("diffusion_mse")) is not None:
        panels.append(
            Panel(
                "forecast MSE of the diffusion's mean path, test period",
                [Point("diffusion forecaster (seed ensemble)", m["diffusion_mse"], refs.get("diffusion_mse"))]
                + _zero_forecast(m),
            )
        )
    for panel in panels:
        panel.zero = panel is sharpe
    note = "the forecast MSE has no interval recorded; the zero forecast (predict no return) is the no-skill line"
    return Headline(panels, note=note) if panels else None


HEADLINES: dict[str, Callable[[dict], Headline | None]] = {
    "saddle_to_saddle": _saddle,
    "ssm_expressivity": _ssm,
    "stable": _stable,
}


def headline(experiment: str, record: dict) -> Headline | None:
    """The run's headline comparison, or None when it has nothing published to compare with."""
    return HEADLINES.get(experiment, from_anchors)(record)


def caption(head: Headline) -> str:
    """One line saying what to see: how many published numbers fall inside our interval."""
    pts = [p for panel in head.panels for p in panel.points if p.published is not None]
    with_ci = [p for p in pts if p.ours_ci is not None]
    inside = [p for p in with_ci if p.ours_ci[0] <= p.published <= p.ours_ci[1]]
    if head.published_label.startswith("closed form"):
        gaps = [
            (abs(p.ours - p.published) / abs(p.published), p.label, panel.title)
            for panel in head.panels
            for p in panel.points
            if p.published
        ]
        worst = max(gaps)
        close = sum(g < 0.01 for g, _, _ in gaps)
        return (
            f"Simulation (dots) against the closed form (open diamonds), {len(gaps)} plateau times and levels: "
            f"{close} agree to 1%, the largest gap is {worst[0]:.1%} ({worst[1]}, {worst[2]})."
        )
    where = (
        f"the published number lies inside our 95% interval for {len(inside)} of {len(with_ci)}"
        if with_ci
        else "no interval recorded"
    )
    hows = sorted({p.how for p in with_ci if p.how})
    if hows and all(h.startswith("Wilson") for h in hows):
        hows = ["Wilson intervals of the runs solved per cell"]
    return (
        f"Ours (dots, 95% CI bars) against the published numbers (open diamonds), {len(pts)} headline "
        f"number{'s' if len(pts) != 1 else ''}: {where}"
        + (f" (intervals: {'; '.join(hows)})" if hows else "")
        + (f"; {head.note}" if head.note else "")
        + "."
    )


def _draw_point(ax, y: float, p: Point) -> None:
    """Ours (dot, CI bar) just above ``y``; the published number (open diamond) just below."""
    if p.ours is not None:
        err = None
        if p.ours_ci is not None:
            lo, hi = min(p.ours_ci), max(p.ours_ci)
            err = [[max(p.ours - lo, 0.0)], [max(hi - p.ours, 0.0)]]
        ax.errorbar(p.ours, y + 0.12, xerr=err, fmt="o", color="C0", capsize=4, ms=6)
    if p.published is not None:
        err = None
        if p.published_ci is not None:
            lo, hi = p.published_ci
            err = [[max(p.published - lo, 0.0)], [max(hi - p.published, 0.0)]]
        ax.errorbar(
            p.published,
            y - 0.12,
            xerr=err,
            fmt="D",
            mfc="white",
            color="C3",
            capsize=4,
            ms=6,
            mew=1.5,
        )


def draw(head: Headline, path: Path, title: str) -> Path:
    """Write the headline figure to ``path`` (PNG, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(head.panels)
    heights = [0.4 * len(p.points) + 1.0 for p in head.panels]
    fig, axes = plt.subplots(
        n, 1, figsize=(7.5, sum(heights) + 0.6), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    for ax, panel in zip(axes[:, 0], head.panels, strict=True):
        ys = np.arange(len(panel.points))[::-1]
        for y, p in zip(ys, panel.points, strict=True):
            _draw_point(ax, y, p)
        if panel.zero:
            ax.axvline(0.0, color="0.4", lw=0.8, ls="--")
        ax.set_yticks(ys, [p.label for p in panel.points], fontsize=9)
        ax.set_ylim(-0.7, len(panel.points) - 0.3)
        if panel.log:
            ax.set_xscale("log")
        if panel.title.startswith(("success rate", "fraction")):  # rates: the whole [0, 1]
            ax.set_xlim(-0.04, 1.04)
        ax.set_xlabel(panel.title, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    handles = [
        plt.Line2D([], [], marker="o", color="C0", ls="", label=head.ours_label),
        plt.Line2D([], [], marker="D", mfc="white", color="C3", ls="", mew=1.5, label=head.published_label),
    ]
    axes[0, 0].legend(handles=handles, fontsize=8, loc="best")
    axes[0, 0].set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


__all__ = [
    "Headline",
    "Panel",
    "Point",
    "anchor_detail",
    "anchor_interval",
    "bootstrap_ci",
    "caption",
    "draw",
    "headline",
]
