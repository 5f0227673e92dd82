"""Shared reporting of the noise-stability comparisons (grokking, sparse_parity, next_token): curves and summary."""

from __future__ import annotations

import resource
import time

import jax
import numpy as np

from jaxkit.stability import (
    MethodSpec,
    compare_speed,
    init_stack,
    speed_table,
    stacked_batches,
    stacked_eval,
    standard_methods,
    train_method,
)

COLORS = {"baseline": "tab:gray", "regularizer": "tab:blue", "grokfast": "tab:orange"}


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


def resources(runs: dict) -> dict:
    """Wall and process CPU seconds of the training stages, and this process's peak RSS."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "train_wall_time_s": {m: r["wall_time_s"] for m, r in runs.items()},
        "train_cpu_time_s": {m: r["cpu_time_s"] for m, r in runs.items()},
        "peak_rss_mib": rss,
    }


def summary(ctx, *, title: str, setup: str, stats: dict, paper_rows: str, runs: dict, notes: str) -> str:
    """The run's summary.md: setup, ours-vs-paper table, the speed table, command, date and times."""
    res = resources(runs)
    wall, cpu = sum(res["train_wall_time_s"].values()), sum(res["train_cpu_time_s"].values())
    reg = stats.get("regularizer", {})
    verdict = ""
    if reg:
        lo, hi = reg["ci_low"], reg["ci_high"]
        verdict = (
            "faster than the baseline (CI above zero)"
            if lo > 0
            else "slower than the baseline (CI below zero)"
            if hi < 0
            else "not distinguishable from the baseline (CI contains zero)"
        )
    text = (
        f"# {title}\n\n{setup}\n\n"
        "## Ours beside the paper\n\n| quantity | paper | ours (median, 95% bootstrap CI over seeds) |\n|---|---|---|\n"
        f"{paper_rows}\n\n## Steps to the target\n\n{speed_table(stats)}\n"
        f"Regularizer: {verdict}. Speedup = $100(1 - \\mathrm{{med}}_m/\\mathrm{{med}}_{{base}})$, paired percentile "
        "bootstrap over seeds (10,000 resamples); a seed that never reaches the target counts as the run length.\n\n"
        f"![curves](curves.png)\n\n## Notes\n\n{notes}\n\n## Run\n\n"
        f"- command: `python -m experiments run {ctx.name} --preset {ctx.preset} --seed {ctx.seed}`\n"
        f"- date: {time.strftime('%Y-%m-%d')}, preset `{ctx.preset}`\n"
        f"- training time: {wall / 60:.1f} min wall, {cpu / 60:.1f} min process CPU (machine shared with other "
        f"jobs; an idle 2-core machine needs about CPU/2 = {cpu / 120:.1f} min)\n"
    )
    ctx.write_summary(text)
    return text


def gamma_probe(ctx, cfg: dict, runs: dict, train, *, metric: str, target: float, mode: str = "max"):
    """What else was tried: the regularizer at each ``cfg["gamma_probe"]`` strength (same ρ), run after the main
    table and compared with the same baseline seeds. Returns ``(stats, markdown)``; empty when no γ is listed."""
    gammas = tuple(cfg.get("gamma_probe", ()))
    if not gammas:
        return {}, ""
    probe = {"baseline": runs["baseline"], "regularizer": runs["regularizer"]}
    for g in ctx.progress(gammas, "gamma probe"):
        spec = MethodSpec(f"regularizer-gamma{g:g}", gamma=g, rho=cfg["rho"])
        probe[spec.name] = ctx.stage(spec.name, lambda s=spec: train(s))
    stats = compare_speed(probe, metric, target, cfg["n_steps"], mode=mode)
    cpu = sum(probe[k]["cpu_time_s"] for k in probe if k.startswith("regularizer-gamma"))
    text = (
        f"### What else was tried: the regularizer's strength γ (ρ = {cfg['rho']})\n\n"
        f"Run after the main table, same seeds, same target; `regularizer` is the main run (γ = {cfg['gamma']}).\n\n"
        f"{speed_table(stats)}\n(probe training: {cpu / 60:.1f} min process CPU)\n"
    )
    return stats, text
