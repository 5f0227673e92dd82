"""Grokking on modular addition (K = 113): baseline vs the noise-stability regularizer vs Grokfast-EMA.

Reproduces the algorithmic-task claim of Haris, Zhang & Yoshida ("Noise Stability of Transformer Models", ICLR 2026,
arXiv:2602.08287): with the agreement regularizer at $(\\gamma, \\rho) = (0.75, 0.25)$ the steps to convergence
drop from about 4500 to about 3300 (−36%). Grokfast-EMA at its published setting ($\\alpha = 0.98$, $\\lambda = 2$)
is the peer accelerator. All methods share the optimizer, learning rate and weight decay; seed ``s`` of every
method shares the model initialization, the train/validation split and the minibatch order.

Settings the paper does not give (chosen so the BASELINE converges in a few thousand steps, from a baseline-only
pilot of 3 seeds per train fraction, then fixed before any regularizer or Grokfast run; see the summary):
a 1-layer, 4-head transformer without LayerNorm (Nanda et al. 2023) at ``d_model`` 64 / ``d_mlp`` 256 (Nanda's
128/512 costs 4x more per step than 2 CPU cores allow for 30 runs); AdamW lr 1e-3, betas (0.9, 0.98), weight decay
1 (Nanda et al.); minibatches of 512 (Power et al. 2022; full batch is 7x dearer per step); convergence = first
evaluation with validation accuracy >= 95%. Noise resamples the two operands from the K residues; the ``=``
token is kept.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from experiments import Anchor, Experiment, register
from experiments._stability import (
    declare_endpoint,
    headline,
    plot_curves,
    restat,
    run_methods,
    summary,
    train_classifier,
    train_times,
)
from jaxkit.stability import (
    Transformer,
    compare_speed,
    median_curves,
    modular_addition,
)

PAPER = {"baseline_steps": 4500, "regularizer_steps": 3300, "speedup_pct": 36.0}

_COMMON = dict(
    n_heads=4,
    n_layers=1,
    betas=(0.9, 0.98),
    weight_decay=1.0,
    gamma=0.75,
    rho=0.25,
    grokfast=(0.98, 2.0),
    target_acc=0.95,
    agreement_examples=1024,
)
PRESETS = {
    # a few minutes: K = 31 (baseline-only pilot: 550-1250 steps at lr 3e-3, 60% train)
    "quick": dict(
        p=31,
        train_fraction=0.6,
        d_model=32,
        d_mlp=128,
        batch_size=128,
        lr=3e-3,
        n_seeds=10,
        n_steps=1500,
        eval_every=25,
        **_COMMON,
    ),
    # about 23 min of an idle 2-core machine (the published run: 45.9 min process CPU for the three methods;
    # 71 / 137 / 75 ms CPU per step for baseline / regularizer / Grokfast on 10 seeds, plus evaluation)
    "paper": dict(
        p=113,
        train_fraction=0.3,
        d_model=64,
        d_mlp=256,
        batch_size=512,
        lr=1e-3,
        n_seeds=10,
        n_steps=10000,
        eval_every=50,
        **_COMMON,
    ),
}
# seconds: the quick configuration at toy size (every method, curve, statistic and summary path; tests run it)
PRESETS["smoke"] = dict(
    PRESETS["quick"], p=7, d_model=8, d_mlp=16, batch_size=16, n_seeds=3, n_steps=30, eval_every=10,
    agreement_examples=32,
)  # fmt: skip
declare_endpoint(PRESETS)


def _data(cfg: dict, seed: int) -> dict:
    splits = [
        modular_addition(cfg["p"], cfg["train_fraction"], jax.random.key(10_000 + seed + s))
        for s in range(cfg["n_seeds"])
    ]
    return {k: np.stack([d[k] for d in splits]) for k in splits[0]}


def _train(ctx, cfg: dict, data: dict, spec) -> dict:
    p = cfg["p"]
    make = lambda k: Transformer(
        p + 1,
        3,
        key=k,
        d_model=cfg["d_model"],
        n_heads=cfg["n_heads"],
        d_mlp=cfg["d_mlp"],
        n_layers=cfg["n_layers"],
    )
    return train_classifier(
        ctx, cfg, data, spec, make=make, vocab_size=p, noise_mask=jnp.asarray([True, True, False])
    )


def run(ctx) -> dict:
    cfg = ctx.config
    data = _data(cfg, ctx.seed)
    runs = run_methods(ctx, cfg, lambda m: _train(ctx, cfg, data, m))
    stats = compare_speed(runs, "val_acc", cfg["target_acc"], cfg["n_steps"])
    plot_curves(
        ctx,
        runs,
        [
            ("val_acc", "validation accuracy"),
            ("train_acc", "train accuracy"),
            ("agreement", f"agreement E Σ M(X)M(Y), ρ={cfg['rho']}"),
        ],
        title=f"modular addition K={cfg['p']} (median over {cfg['n_seeds']} seeds, min–max band)",
        hline=(0, cfg["target_acc"]),
    )
    metrics = {
        "steps_to_target": stats,
        "train_time": train_times(runs),
        "curves_median": median_curves(runs, ("val_acc", "train_acc", "agreement")),
        "paper": PAPER,
    }
    report(ctx, metrics)
    return metrics


def reanalyse(ctx, metrics: dict) -> dict:
    """The statistics recomputed from the stored per-seed steps (a published run re-read)."""
    return metrics | {"steps_to_target": restat(metrics["steps_to_target"], ctx.config["n_steps"])}


def _steps(row: dict, n_steps: int) -> str:
    """Median and range over seeds when every seed reached the target; else the Kaplan–Meier median and the
    range of the seeds that did (the others are censored at ``n_steps``, not counted as reaching it there)."""
    done = [s for s in row["per_seed"] if s is not None]
    if len(done) == row["n_seeds"]:
        return f"{row['median']:.0f} median, {min(done)}–{max(done)} over seeds ({len(done)}/{row['n_seeds']} reached)"
    km = f"{row['km_median']:.0f}" if row["km_median"] is not None else f"> {n_steps}"
    span = f", {min(done)}–{max(done)} among those" if done else ""
    return f"Kaplan–Meier median {km}; {len(done)}/{row['n_seeds']} reached it within {n_steps}{span}"


def report(ctx, metrics: dict, record: dict | None = None) -> str:
    """summary.md from the run's metrics."""
    cfg, stats = ctx.config, metrics["steps_to_target"]
    b, r, g = stats["baseline"], stats["regularizer"], stats["grokfast"]
    paper_rows = (
        f"| baseline steps to convergence | ≈{PAPER['baseline_steps']} | {_steps(b, cfg['n_steps'])} |\n"
        f"| regularizer steps | ≈{PAPER['regularizer_steps']} | {_steps(r, cfg['n_steps'])} |\n"
        f"| regularizer speedup | ≈{PAPER['speedup_pct']:.0f}% | **{headline(r)}** |\n"
        + (
            f"| regularizer speedup, mean over seeds | — | {r['comparison']['paired']['mean']:+.1f}% |\n"
            if r["headline"] == "paired"
            else ""
        )
        + f"| Grokfast speedup | — | {headline(g)} |"
    )
    return summary(
        ctx,
        title=f"grokking, preset {ctx.preset}: modular addition K={cfg['p']}",
        setup=(
            f"1-layer transformer d_model {cfg['d_model']}, d_mlp {cfg['d_mlp']}, {cfg['n_heads']} heads; train fraction "
            f"{cfg['train_fraction']:.0%}, minibatch {cfg['batch_size']}, AdamW lr {cfg['lr']}, betas {tuple(cfg['betas'])}, "
            f"weight decay {cfg['weight_decay']}; {cfg['n_seeds']} seeds, {cfg['n_steps']} steps, evaluated every "
            f"{cfg['eval_every']}. Regularizer (γ, ρ) = ({cfg['gamma']}, {cfg['rho']}) (paper); Grokfast-EMA "
            f"(α, λ) = {tuple(cfg['grokfast'])} (published). Target: validation accuracy ≥ {cfg['target_acc']:.0%}."
        ),
        stats=stats,
        paper_rows=paper_rows,
        times=metrics["train_time"],
        notes=ctx.extra.get("notes", NOTES),
        record=record,
        metrics=metrics,
    )


NOTES = (
    "Settings the paper leaves open were fixed before any method was compared, from a baseline-only pilot "
    "(K = 113, d_model 64, minibatch 512, AdamW lr 1e-3, wd 1; 3 seeds per train fraction, stopped at 4000 "
    "steps): 30% train reached 95% validation accuracy at ≈3000 steps for one seed and later for the others "
    "(0.86 and 0.04 at 4000), 40% at ≈1800-2500 steps, 50% at ≈1000-1500; 30% (also Nanda et al.'s) is the "
    "closest to the paper's ≈4500, so n_steps = 10000 leaves room for slow seeds. The paper reports single runs "
    "without confidence intervals."
)


register(
    Experiment(
        name="grokking",
        reproduces="Haris, Zhang & Yoshida (ICLR 2026): modular addition K=113, ≈4500 → ≈3300 steps (−36%)",
        presets=PRESETS,
        run=run,
        anchors=(
            Anchor(
                "steps_to_target/regularizer/speedup_pct",
                PAPER["speedup_pct"],
                "Haris et al. 2026, Sec. 6: modular addition ≈4500 → ≈3300 steps",
            ),
            Anchor("steps_to_target/baseline/median", PAPER["baseline_steps"], "Haris et al. 2026, Sec. 6"),
        ),
        description="baseline vs agreement regularizer vs Grokfast-EMA; steps to 95% validation accuracy",
    )
)
