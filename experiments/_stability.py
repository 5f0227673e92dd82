"""Shared reporting of the noise-stability comparisons (grokking, sparse_parity, next_token): curves and summary."""

from __future__ import annotations

import time

import jax
import numpy as np

from jaxkit.stability import (
    MethodSpec,
    compare_speed,
    compare_steps,
    init_stack,
    speed_table,
    stacked_batches,
    stacked_eval,
    standard_methods,
    train_method,
)

COLORS = {"baseline": "tab:gray", "regularizer": "tab:blue", "grokfast": "tab:orange"}


def declare_endpoint(presets: dict, method=None, comparator=None, horizon=None) -> None:
    """Declare every preset's primary endpoint: steps to the target of ``method`` (default the regularizer)
    against ``comparator`` (default the baseline), paired per seed, runs that never reach it censored at
    ``horizon`` (default ``n_steps``) (:func:`jaxkit.evaluation.verdict` with ``test="time_to_event"``: median
    paired speedup and Wilcoxon when no run is censored, else restricted-mean speedup and log-rank), two-sided at
    0.05. ``method``, ``comparator`` and ``horizon`` may be functions of the preset. Every other comparison of
    the page is a Holm-corrected secondary."""
    from jaxkit.evaluation import Endpoint

    pick = lambda f, cfg, default: default if f is None else (f(cfg) if callable(f) else f)  # noqa: E731
    for cfg in presets.values():
        cfg.setdefault(
            "endpoint",
            Endpoint(
                metric="steps", method=pick(method, cfg, "regularizer"), comparator=pick(comparator, cfg, "baseline"),
                test="time_to_event", direction="lower", alpha=0.05, horizon=pick(horizon, cfg, cfg["n_steps"]),
            ).to_dict(),
        )  # fmt: skip


def _steps_records(rows: dict) -> list[dict]:
    """Per seed and arm: steps to the target (``None``: not reached), from ``{arm: {"per_seed": [...]}}``."""
    return [
        {"item": i, "arm": arm, "steps": v}
        for arm, row in rows.items()
        for i, v in enumerate(row["per_seed"])
    ]


def _store(cfg: dict, metrics: dict, records: list[dict], family: dict) -> dict:
    """Primary verdict of the declared endpoint and the Holm-corrected ``family`` ({name: (method, comparator,
    horizon)}), stored into ``metrics`` (``endpoint``, ``records``, ``verdict``, ``verdict_markdown``,
    ``secondary``)."""
    from jaxkit.evaluation import Endpoint, endpoint_from_dict, secondary, verdict

    endpoint = endpoint_from_dict(cfg["endpoint"])
    v = verdict(endpoint, records)
    eps = {
        k: (Endpoint("steps", m, c, "time_to_event", "lower", horizon=h), records)
        for k, (m, c, h) in family.items()
    }
    sec = secondary(eps) if eps else {}
    metrics.update(
        endpoint=endpoint.to_dict(), records=records, verdict=v.to_dict(), verdict_markdown=v.markdown(),
        secondary={k: {"word": x.word, "estimate": x.estimate, "ci": list(x.ci), "p": x.p,
                       "p_adjusted": x.p_adjusted, "headline": x.details["headline"]} for k, x in sec.items()},
    )  # fmt: skip
    return metrics


def score(cfg: dict, metrics: dict) -> dict:
    """The page's verdicts from the stored per-seed steps: the declared endpoint's (primary) and, as one
    Holm-corrected family, every other method and γ-probe row against the baseline."""
    from jaxkit.evaluation import endpoint_from_dict

    rows = dict(metrics["steps_to_target"])
    for arm, row in (metrics.get("gamma_probe") or {}).items():
        rows.setdefault(arm, row)
    ep = endpoint_from_dict(cfg["endpoint"])
    family = {
        f"{arm} vs {ep.comparator}": (arm, ep.comparator, ep.horizon)
        for arm in rows
        if arm not in (ep.method, ep.comparator)
    }
    return _store(cfg, metrics, _steps_records(rows), family)


def score_cells(cfg: dict, metrics: dict) -> dict:
    """A sweep page (``metrics["cells"]``: the baseline and one regularizer arm per cell, shared seeds): the
    declared cell against the baseline, every other cell a Holm-corrected secondary."""
    from jaxkit.evaluation import endpoint_from_dict

    rows = metrics["cells"]
    ep = endpoint_from_dict(cfg["endpoint"])
    family = {
        f"{c} vs {ep.comparator}": (c, ep.comparator, ep.horizon)
        for c in rows
        if c not in (ep.method, ep.comparator)
    }
    return _store(cfg, metrics, _steps_records(rows), family)


def score_variants(cfg: dict, metrics: dict, horizon) -> dict:
    """An ablation page (``metrics["variants"]``: per variant its own baseline and regularizer arms): the
    declared variant's regularizer against its baseline, every other variant's pair a Holm-corrected secondary;
    ``horizon(variant)`` is that variant's run length."""
    from jaxkit.evaluation import endpoint_from_dict

    rows = {f"{v} / {arm}": row for v, st in metrics["variants"].items() for arm, row in st.items()}
    ep = endpoint_from_dict(cfg["endpoint"])
    family = {
        f"{v}: regularizer vs baseline": (f"{v} / regularizer", f"{v} / baseline", horizon(v))
        for v in metrics["variants"]
        if f"{v} / regularizer" != ep.method
    }
    return _store(cfg, metrics, _steps_records(rows), family)


def verdict_lines(metrics: dict) -> str:
    """The primary verdict line and the Holm-corrected secondary table of a scored page."""
    text = metrics["verdict_markdown"] + "\n\n"
    sec = metrics.get("secondary") or {}
    if sec:
        text += (
            "Every other comparison on this page, one Holm-corrected family (speedup % against the baseline, "
            "paired per seed; censored runs as in the primary):\n\n| comparison | speedup % [95% CI] | headline | p | "
            "Holm p | verdict |\n|---|---|---|---|---|---|\n"
        )
        text += "".join(
            f"| {k} | {x['estimate']:+.1f} [{x['ci'][0]:+.1f}, {x['ci'][1]:+.1f}] | {x['headline']} | "
            f"{fmt_p(x['p'])} | {fmt_p(x['p_adjusted'])} | {x['word']} |\n"
            for k, x in sec.items()
        )
        text += "\n"
    if metrics.get("endpoint_declared"):
        text += f"Re-scored: {metrics['endpoint_declared']}\n\n"
    return text


def run_methods(ctx, cfg: dict, train) -> dict:
    """Baseline, regularizer ``(γ, ρ)`` and Grokfast (``cfg["grokfast"]``), each a resumable stage ``train(spec)``."""
    methods = standard_methods(cfg["gamma"], cfg["rho"], grokfast=tuple(cfg["grokfast"]))
    return {m.name: ctx.stage(m.name, lambda m=m: train(m)) for m in ctx.progress(methods, "methods")}


def train_classifier(
    ctx, cfg: dict, data: dict, spec: MethodSpec, *, make, vocab_size: int, noise_mask
) -> dict:
    """One method on a task scored at the last position (grokking, sparse_parity): ``cfg["n_seeds"]`` models in one
    stacked run, the preset's AdamW, validation and train accuracy and the agreement every ``eval_every`` steps."""
    return train_method(
        init_stack(make, jax.random.split(jax.random.key(ctx.seed), cfg["n_seeds"])),
        spec,
        stacked_batches(data["train_x"], data["train_y"], cfg["batch_size"], ctx.seed),
        n_seeds=cfg["n_seeds"],
        n_steps=cfg["n_steps"],
        lr=cfg["lr"],
        weight_decay=cfg["weight_decay"],
        betas=tuple(cfg["betas"]),
        vocab_size=vocab_size,
        positions=-1,
        noise_mask=noise_mask,
        eval_fn=stacked_eval(
            data["val_x"],
            data["val_y"],
            positions=-1,
            train=(data["train_x"], data["train_y"]),
            agreement=(cfg["rho"], vocab_size, noise_mask, cfg["agreement_examples"]),
            key=jax.random.key(ctx.seed + 777),
        ),
        eval_every=cfg["eval_every"],
        key=jax.random.key(ctx.seed + 1),
        checkpoint_dir=ctx.checkpoint_dir(spec.name),
        resume=ctx.resume,
        progress=f"{ctx.name}:{spec.name}",
    )


def plot_curves(
    ctx, runs: dict, panels: list[tuple[str, str]], *, title: str, hline: tuple[int, float] | None = None
):
    """One panel per ``(metric, ylabel)``: the median over seeds and the min–max band, per method."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for m, run in runs.items():
        steps = np.array([r["step"] for r in run["history"]])
        for ax, (key, _) in zip(axes[0], panels):
            if key not in run["history"][0]:
                continue
            v = np.array([r[key] for r in run["history"]], float)
            ax.plot(steps, np.median(v, axis=1), color=COLORS.get(m), label=m)
            ax.fill_between(steps, v.min(1), v.max(1), color=COLORS.get(m), alpha=0.15)
    for ax, (_, ylabel) in zip(axes[0], panels):
        ax.set(xlabel="step", ylabel=ylabel)
        ax.legend(fontsize=7)
    if hline is not None:
        axes[0][hline[0]].axhline(hline[1], color="k", lw=0.5)
    axes[0][0].set_title(title, fontsize=9)
    ctx.save_figure(fig, "curves.png")
    plt.close(fig)


def train_times(runs: dict) -> dict:
    """Wall and process CPU seconds of the training stages, summed over methods (stored in ``metrics.json``)."""
    return {
        "wall_s": float(sum(r["wall_time_s"] for r in runs.values())),
        "cpu_s": float(sum(r["cpu_time_s"] for r in runs.values())),
    }


PROTOCOL = (
    "Seed s of every method shares the initialization, the data split and the batch order, so every comparison "
    "is paired per seed. When every seed of both methods reaches the target, the headline is the median over "
    "seeds of the paired speedup $100(1 - m_s/b_s)$ with a percentile-bootstrap 95% CI (10,000 resamples) and "
    "the Wilcoxon signed-rank test of the step differences. When some seed does not reach the target within the "
    "run it is censored, not counted as the run length: the headline is then the restricted-mean speedup "
    "$100(1 - \\mathrm{RMST}_m/\\mathrm{RMST}_b)$ over the run (paired bootstrap 95% CI) with the log-rank "
    "test, beside the fraction of seeds that reached the target (Wilson 95% CI). Kaplan–Meier median: the "
    "first logged step by which half the seeds reached the target."
)


def fmt_p(p: float | None) -> str:
    return "—" if p is None else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def headline(row: dict) -> str:
    """``+15.1% [+0.8, +33.1] (median paired; Wilcoxon p = 0.012)`` for a :func:`compare_speed` row."""
    kind = "median paired" if row["headline"] == "paired" else "restricted mean, censored runs"
    return (
        f"{row['speedup_pct']:+.1f}% [{row['ci_low']:+.1f}, {row['ci_high']:+.1f}] ({kind}; {row['test']} "
        f"p = {fmt_p(row['p_value'])}; reached {row['reached']}/{row['n_seeds']})"
    )


def headline_keys(prefix: str, methods) -> str:
    """The machine-readable headline block of a summary: one ``metrics.json`` path and format per line for
    each number its headline states (the published-numbers test checks them, see the Reproductions index)."""
    keys = "".join(
        f"{prefix}/{m}/{k} | +.1f\n" for m in methods for k in ("speedup_pct", "ci_low", "ci_high")
    )
    return f"<!-- headline\n{keys}-->"


def verdict(row: dict) -> str:
    lo, hi = row["ci_low"], row["ci_high"]
    if lo > 0:
        return "faster than the baseline (CI above zero)"
    if hi < 0:
        return "slower than the baseline (CI below zero)"
    return "not distinguishable from the baseline (CI contains zero)"


def run_lines(ctx, times: dict, record: dict | None = None) -> str:
    """The Run section: command, date, training times (the same numbers as ``metrics.json``)."""
    wall, cpu = times["wall_s"], times["cpu_s"]
    text = (
        f"- command: `python -m experiments run {ctx.name} --preset {ctx.preset} --seed {ctx.seed}`\n"
        f"- preset `{ctx.preset}`, {time.strftime('%Y-%m-%d') if record is None else record['finished'][:10]}\n"
        f"- training stages: {wall / 60:.1f} min wall, {cpu / 60:.1f} min process CPU in total (machine shared with "
        f"other jobs; an idle 2-core machine needs about CPU/2 = {cpu / 120:.1f} min)\n"
    )
    return text + resumed_line(record, wall)


def resumed_line(record: dict | None, train_wall_s: float) -> str:
    """For a resumed run (the finishing invocation shorter than the training it reports), say so with both
    times, so the page header (that invocation's wall time) and the summary agree."""
    if record is None or record.get("wall_time_s") is None or record["wall_time_s"] >= 0.9 * train_wall_s:
        return ""
    return (
        f"- the run was resumed: the invocation that finished it took {record['wall_time_s'] / 60:.1f} min "
        "wall; the training above ran over the earlier invocations as well\n"
    )


def summary(
    ctx,
    *,
    title: str,
    setup: str,
    stats: dict,
    paper_rows: str,
    times: dict,
    notes: str,
    record: dict | None = None,
    metrics: dict | None = None,
) -> str:
    """The run's summary.md: setup, ours-vs-paper table, the speed table, command, date and times; a pure
    function of the run's metrics (``record`` is the run's metrics.json when a published run is re-read)."""
    reg = stats.get("regularizer", {})
    methods = [m for m in stats if m != "baseline"]
    scored = metrics is not None and "endpoint" in ctx.config
    if scored:
        score(ctx.config, metrics)
    text = (
        f"# {title}\n\n{headline_keys('steps_to_target', methods)}\n\n{setup}\n\n"
        "## Ours beside the paper\n\n| quantity | paper | ours (paired per seed, 95% CI) |\n|---|---|---|\n"
        f"{paper_rows}\n\n## Steps to the target\n\n{speed_table(stats)}\n"
        + (verdict_lines(metrics) if scored else (f"Regularizer: {verdict(reg)}. " if reg else ""))
        + f"{PROTOCOL}\n\n![curves](curves.png)\n\n## Notes\n\n{notes}\n\n## Run\n\n"
        + run_lines(ctx, times, record)
    )
    ctx.write_summary(text)
    return text


def gamma_probe(ctx, cfg: dict, runs: dict, train, *, metric: str, target: float, mode: str = "max"):
    """What else was tried: the regularizer at each ``cfg["gamma_probe"]`` strength (same ρ), run after the main
    table and compared with the same baseline seeds. Returns ``(stats, cpu_s)``; empty when no γ is listed."""
    gammas = tuple(cfg.get("gamma_probe", ()))
    if not gammas:
        return {}, 0.0
    probe = {"baseline": runs["baseline"], "regularizer": runs["regularizer"]}
    for g in ctx.progress(gammas, "gamma probe"):
        spec = MethodSpec(f"regularizer-gamma{g:g}", gamma=g, rho=cfg["rho"])
        probe[spec.name] = ctx.stage(spec.name, lambda s=spec: train(s))
    stats = compare_speed(probe, metric, target, cfg["n_steps"], mode=mode)
    cpu = sum(probe[k]["cpu_time_s"] for k in probe if k.startswith("regularizer-gamma"))
    return stats, float(cpu)


def probe_text(cfg: dict, stats: dict, cpu_s: float) -> str:
    """The γ-probe section of a summary (empty when no probe ran)."""
    if not stats:
        return ""
    return (
        f"### What else was tried: the regularizer's strength γ (ρ = {cfg['rho']})\n\n"
        f"Run after the main table, same seeds, same target; `regularizer` is the main run (γ = {cfg['gamma']}).\n\n"
        f"{speed_table(stats)}\n(probe training: {cpu_s / 60:.1f} min process CPU)\n"
    )


class Reread:
    """A light run context for re-reading a published run folder (``metrics.json`` + figures): the summary and
    the statistics are recomputed from the stored per-seed data; nothing is trained."""

    def __init__(self, folder, record: dict):
        from pathlib import Path

        self.folder = Path(folder)
        self.record = record
        self.name, self.preset, self.seed = record["experiment"], record["preset"], record["seed"]
        self.config = record["config"]
        self.extra: dict = {}

    def write_summary(self, text: str):
        (self.folder / "summary.md").write_text(text)

    def save_figure(self, fig, name: str):
        fig.savefig(self.folder / name, dpi=120, bbox_inches="tight")


def reread(folder) -> dict:
    """Recompute a published noise-stability run's statistics from its per-seed steps (``metrics.json``) under
    the evaluation protocol, rewrite ``metrics.json`` (recording the re-read) and ``summary.md``."""
    import importlib
    import json
    import re
    from pathlib import Path

    folder = Path(folder)
    record = json.loads((folder / "metrics.json").read_text())
    old = (folder / "summary.md").read_text()
    mod = importlib.import_module(f"experiments.{record['experiment']}")
    ctx = Reread(folder, record)
    m = record["metrics"]
    if "train_time" not in m and "train_wall_time_s" not in m:
        # the original summaries carry the training-stage times; keep them as the run's record
        wall, cpu = re.search(r"training time: ([\d.]+) min wall, ([\d.]+) min process CPU", old).groups()
        m["train_time"] = {"wall_s": float(wall) * 60, "cpu_s": float(cpu) * 60}
        probe = re.search(r"\(probe training: ([\d.]+) min process CPU\)", old)
        if probe:
            m["train_time"]["probe_cpu_s"] = float(probe.group(1)) * 60
    record["metrics"] = mod.reanalyse(ctx, m)
    if "endpoint" not in record["config"]:
        declare_endpoint({"run": record["config"]}, **getattr(mod, "ENDPOINT_ARGS", {}))
        record["metrics"]["endpoint_declared"] = (
            "the primary endpoint was declared after this run; the verdict is recomputed from the stored per-seed "
            "steps (no rerun)."
        )
    record["reanalysed"] = {
        "date": time.strftime("%Y-%m-%d"),
        "command": f"python -m experiments._stability {folder}",
        "how": "statistics recomputed from the stored per-seed steps to the target (paired per seed; runs that "
        "never reach the target censored); nothing retrained",
    }
    mod.report(ctx, record["metrics"], record=record)  # scores the page (stored into the metrics)
    (folder / "metrics.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def restat(block: dict, n_steps: int) -> dict:
    """A :func:`compare_speed` block recomputed from its stored ``per_seed`` lists."""
    return compare_steps({k: v["per_seed"] for k, v in block.items()}, n_steps)


if __name__ == "__main__":
    import sys

    for f in sys.argv[1:]:
        rec = reread(f)
        print(f, "re-read")
