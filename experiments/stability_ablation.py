"""Which setting the paper leaves open decides whether the noise-stability regularizer speeds up grokking?

Haris, Zhang & Yoshida (ICLR 2026, arXiv:2602.08287) give $(\\gamma, \\rho) = (0.75, 0.25)$ for modular addition but
not the optimizer, learning rate, weight decay, batch, train fraction, model size, nor whether the gradient flows
through the clean branch $M(X)$ or the noise touches the ``=`` token. Starting from the ``stability_sweep``
reference (K = 31, 60% train, d_model 32, minibatch 128, AdamW lr 3e-3, weight decay 1), each variant changes ONE of
them and measures the regularizer's median speedup in steps to 95% validation accuracy against a baseline trained
with the same variant (10 paired seeds, bootstrap 95% CI): the setting whose change moves the speedup most is
the likeliest cause of a disagreement with the paper.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from experiments import Experiment, register
from jaxkit.stability import (
    MethodSpec,
    Transformer,
    compare_speed,
    init_stack,
    modular_addition,
    speed_table,
    stacked_batches,
    stacked_eval,
    train_method,
)

BASE = dict(
    p=31,
    train_fraction=0.6,
    d_model=32,
    d_mlp=128,
    n_heads=4,
    batch_size=128,
    lr=3e-3,
    weight_decay=1.0,
    betas=(0.9, 0.98),
    gamma=0.75,
    rho=0.25,
    target_acc=0.95,
    detach_clean=False,
    noise_on_eq=False,
)
VARIANTS = {
    "reference": {},
    "weight decay 0.1": {"weight_decay": 0.1},
    "weight decay 0": {"weight_decay": 0.0},
    "full batch": {"batch_size": None},
    "train fraction 0.8": {"train_fraction": 0.8},
    "lr 1e-2": {"lr": 1e-2},
    "d_model 64": {"d_model": 64, "d_mlp": 256},
    "gradient through M(Y) only": {"detach_clean": True},
    "noise also on '='": {"noise_on_eq": True},
}
PRESETS = {
    "quick": dict(
        variants=("reference", "gradient through M(Y) only"), n_seeds=3, n_steps=300, eval_every=25
    ),
    "paper": dict(variants=tuple(VARIANTS), n_seeds=10, n_steps=3000, eval_every=25),
}


def _train(ctx, cfg: dict, variant: str, method: str) -> dict:
    v = BASE | VARIANTS[variant]
    p, s = v["p"], cfg["n_seeds"]
    splits = [
        modular_addition(p, v["train_fraction"], jax.random.key(10_000 + ctx.seed + i)) for i in range(s)
    ]
    data = {k: np.stack([d[k] for d in splits]) for k in splits[0]}
    make = lambda k: Transformer(
        p + 1, 3, key=k, d_model=v["d_model"], n_heads=v["n_heads"], d_mlp=v["d_mlp"]
    )
    gamma = v["gamma"] if method == "regularizer" else 0.0
    spec = MethodSpec(method, gamma=gamma, rho=v["rho"], detach_clean=v["detach_clean"])
    noise = (p + 1, None) if v["noise_on_eq"] else (p, jnp.asarray([True, True, False]))
    return train_method(
        init_stack(make, jax.random.split(jax.random.key(ctx.seed), s)),
        spec,
        stacked_batches(data["train_x"], data["train_y"], v["batch_size"], ctx.seed),
        n_seeds=s,
        n_steps=cfg["n_steps"],
        lr=v["lr"],
        weight_decay=v["weight_decay"],
        betas=tuple(v["betas"]),
        vocab_size=noise[0],
        noise_mask=noise[1],
        positions=-1,
        eval_fn=stacked_eval(data["val_x"], data["val_y"], positions=-1),
        eval_every=cfg["eval_every"],
        key=jax.random.key(ctx.seed + 1),
        checkpoint_dir=ctx.checkpoint_dir(f"{variant}-{method}"),
        resume=ctx.resume,
        progress=f"ablation:{variant}:{method}",
    )


def _forest(ctx, stats: dict) -> None:
    import matplotlib.pyplot as plt

    names = list(stats)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
    for i, n in enumerate(names):
        r = stats[n]["regularizer"]
        ax.errorbar(
            r["speedup_pct"],
            i,
            xerr=[[r["speedup_pct"] - r["ci_low"]], [r["ci_high"] - r["speedup_pct"]]],
            fmt="o",
            color="tab:blue" if r["excludes_zero"] else "tab:gray",
            capsize=3,
        )
    ax.axvline(0, color="k", lw=0.5)
    ax.axvline(36, color="tab:red", lw=0.8, ls="--", label="paper (≈36%)")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set(
        xlabel="regularizer speedup vs baseline (%), median and 95% CI", title="one setting changed at a time"
    )
    ax.legend(fontsize=7)
    ctx.save_figure(fig, "ablation.png")
    plt.close(fig)


def run(ctx) -> dict:
    cfg = ctx.config
    stats, cpu, wall = {}, 0.0, 0.0
    for variant in ctx.progress(cfg["variants"], "variants"):
        runs = {
            m: ctx.stage(f"{variant}-{m}", lambda m=m, v=variant: _train(ctx, cfg, v, m))
            for m in ("baseline", "regularizer")
        }
        stats[variant] = compare_speed(runs, "val_acc", BASE["target_acc"], cfg["n_steps"])
        cpu += sum(r["cpu_time_s"] for r in runs.values())
        wall += sum(r["wall_time_s"] for r in runs.values())
    _forest(ctx, stats)
    tables = "\n".join(f"### {v}\n\n{speed_table(st)}" for v, st in stats.items())
    ctx.write_summary(
        f"# stability_ablation, preset {ctx.preset}\n\nReference: {BASE}; (γ, ρ) = ({BASE['gamma']}, {BASE['rho']}); "
        f"{cfg['n_seeds']} seeds, {cfg['n_steps']} steps.\n\n![ablation](ablation.png)\n\n{tables}\n"
        f"- command: `python -m experiments run stability_ablation --preset {ctx.preset} --seed {ctx.seed}`\n"
        f"- training: {wall / 60:.1f} min wall, {cpu / 60:.1f} min process CPU (shared machine; idle 2-core estimate "
        f"CPU/2 = {cpu / 120:.1f} min)\n"
    )
    return {"variants": stats, "train_cpu_time_s": cpu, "train_wall_time_s": wall}


register(
    Experiment(
        name="stability_ablation",
        reproduces="Haris, Zhang & Yoshida (ICLR 2026): which unstated setting the modular-addition speedup depends on",
        presets=PRESETS,
        run=run,
        description="regularizer speedup vs baseline with one unstated setting changed at a time (small modular addition)",
    )
)
