"""Forecaster ablation: which per-date scale, noise schedule, training budget and sampler make the
diffusion forecaster's held-out daily return paths competitive with simple baselines.

Setup (``standard``): the 20 skfolio S&P 500 stocks on the daily grid 1990–2018-10
(:func:`jaxkit.forecast.build_market_data`), history 20, horizon 5; every decision date whose 5-day target ends
before 2015 trains (5900 windows, purged), every 5th trading day of 2015–2018 is a held-out test date (193 dates),
64 paths per date. Baselines on a trailing 756-day window: block bootstrap, Gaussian, per-asset GARCH(1,1) and the
no-learning EWMA-volatility × window-correlation Gaussian (:func:`jaxkit.forecast.ewma_gaussian`). Learned rows:
the guided two-level MLP denoiser (hidden 256, depth 3) with the fixed training-period scale or the RiskMetrics
EWMA scale of each date, a cosine (100-step) or CSDI quadratic (50-step) schedule, 1500 or 3000 AdamW steps, and
the ancestral chain, antithetic ancestral pairs, DDIM η = 1 or DDIM η = 0. Each model is trained once (one
``ctx.stage`` per variant and seed, so ``--resume`` continues) and sampled with every listed sampler with the same
key. ``paper`` repeats ``standard`` over 3 training seeds. ``quick`` is a 5-stock, 2018-only smoke run.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from experiments._registry import Experiment, register

SAMPLERS = {
    "ancestral": dict(sampler="ddpm"),
    "ancestral_antithetic": dict(sampler="ddpm", antithetic=True),
    "ddim_eta1_20": dict(sampler="ddim", n_steps=20, eta=1.0),
    "ddim_eta0_20": dict(sampler="ddim", n_steps=20, eta=0.0),
    "ddim_eta0_10": dict(sampler="ddim", n_steps=10, eta=0.0),
}


def _variant(scale, schedule, diffusion_steps, steps, samplers):
    sched = {"cosine": "cos", "quadratic": "quad"}[schedule]
    return dict(
        name=f"mlp_{scale}_{sched}{diffusion_steps}_{steps}", per_date_scale=scale == "ewma", schedule=schedule,
        diffusion_steps=diffusion_steps, steps=steps, samplers=list(samplers),
    )  # fmt: skip


_STANDARD_VARIANTS = [
    _variant("fixed", "cosine", 100, 1500, ["ancestral"]),
    _variant(
        "ewma", "cosine", 100, 1500, ["ancestral", "ancestral_antithetic", "ddim_eta1_20", "ddim_eta0_20"]
    ),
    _variant("ewma", "quadratic", 50, 1500, ["ancestral", "ddim_eta0_10"]),
    _variant("ewma", "cosine", 100, 3000, ["ancestral", "ddim_eta1_20", "ddim_eta0_20", "ddim_eta0_10"]),
    _variant("ewma", "quadratic", 50, 3000, ["ancestral"]),  # the configuration the `stable` experiment uses
]
_COMMON = dict(
    start="1990-01-01", end="2018-10-31", tickers=None, history=20, horizon=5, test_years=[2015, 2016, 2017, 2018],
    test_every=5, n_samples=64, lookback=756, ewma_decay=0.94, denoiser="mlp", hidden=256, depth=3, channels=32,
    batch_size=256, lr=2e-3, ema=0.999, seeds=1, variants=_STANDARD_VARIANTS,
)  # fmt: skip
_SETUP_KEYS = ("history", "horizon", "test_every", "n_samples", "lookback", "ewma_decay", "hidden", "depth",
               "channels", "batch_size", "lr", "ema", "seeds")  # fmt: skip
PRESETS = {
    "quick": dict(
        _COMMON,
        start="2011-01-01",
        tickers=["AAPL", "JPM", "KO", "MSFT", "XOM"],
        test_years=[2018],
        test_every=10,
        n_samples=16,
        lookback=252,
        hidden=64,
        depth=2,
        channels=16,
        batch_size=128,
        ema=0.99,
        variants=[
            _variant("fixed", "quadratic", 50, 300, ["ancestral"]),
            _variant("ewma", "quadratic", 50, 300, ["ancestral", "ddim_eta0_10"]),
        ],
    ),  # fmt: skip
    "standard": dict(_COMMON),
    "paper": dict(_COMMON, seeds=3),
}
# seconds: every sampler and both scalings of the standard variants, at toy size, on the quick preset's 5 tickers;
# tests run it
PRESETS["smoke"] = dict(
    PRESETS["quick"], test_every=40, n_samples=8, hidden=16, depth=1, channels=8, batch_size=64,
    variants=[
        _variant("fixed", "cosine", 10, 10, ["ancestral"]),
        _variant("ewma", "quadratic", 20, 10, ["ancestral", "ancestral_antithetic", "ddim_eta1_20", "ddim_eta0_10"]),
    ],
)  # fmt: skip


def _data(cfg):
    from jaxkit.forecast import build_market_data, ewma_volatility

    data = build_market_data(cfg["start"], cfg["end"], tickers=cfg["tickers"], freq="D")
    scale = ewma_volatility(data.log_returns, decay=cfg["ewma_decay"]).astype(np.float32)
    return dataclasses.replace(data, scale=scale)


def _split(data, cfg):
    """Training decision positions (targets end before the first test year) and every ``test_every``-th test date."""
    from jaxkit.forecast import walk_forward_splits

    L, H, years = cfg["history"], cfg["horizon"], cfg["test_years"]
    splits = walk_forward_splits(data.dates, years, horizon=H, history=L)
    test = np.concatenate([te for _, te in splits])
    test = test[test + H < len(data.dates)][:: cfg["test_every"]]
    return splits[0][0], test


def _scores(paths, truth):
    """The library scorer on raw paths and on recentered paths (``_mean0``: each date's sample mean set to 0)."""
    from jaxkit.forecast import PostProcess, score_paths

    recenter = PostProcess(recenter=True, factor=np.ones(np.shape(paths)[-1]))
    out = {}
    for suffix, p in (("", paths), ("_mean0", recenter(paths))):
        out.update({k + suffix: v for k, v in score_paths(p, truth).items()})
    return out


def _baselines(ctx, data, cfg, test):
    from jaxkit.forecast import BASELINES, baseline_paths

    t0, c0 = time.time(), time.process_time()
    out = baseline_paths(
        data.log_returns, test, lookback=cfg["lookback"], horizon=cfg["horizon"], n_samples=cfg["n_samples"],
        methods=BASELINES, ewma_decay=cfg["ewma_decay"], progress=lambda it: ctx.progress(it, desc="baselines"),
    )  # fmt: skip
    cost = {"wall_s": time.time() - t0, "cpu_s": time.process_time() - c0}
    return out, cost


MC_SEEDS = 8  # Monte-Carlo yardstick: the EWMA Gaussian's paths re-drawn with this many seeds


def _mc_noise(data, cfg, test, truth):
    """Spread (sd) of the scores of one fixed forecaster, the EWMA Gaussian, over ``MC_SEEDS`` re-draws of its
    paths: the Monte-Carlo noise of a score computed from ``n_samples`` paths on these test dates."""
    from jaxkit.forecast import baseline_paths

    scores = []
    for s in range(1, MC_SEEDS + 1):
        p = baseline_paths(
            data.log_returns, test, lookback=cfg["lookback"], horizon=cfg["horizon"], n_samples=cfg["n_samples"],
            methods=("ewma_gaussian",), ewma_decay=cfg["ewma_decay"], seed=1000 * s,
        )["ewma_gaussian"]  # fmt: skip
        scores.append(_scores(p, truth))
    return {key: float(np.std([x[key] for x in scores], ddof=1)) for key in scores[0]}


def _fit_and_sample(ctx, data, cfg, v, seed, train, tw):
    """Train one variant (checkpointed) and score every sampler listed for it on the held-out windows."""
    from experiments.stable import denoiser
    from jaxkit.forecast import forecast_windows, make_forecaster, sample_paths, train_forecaster

    L, H = cfg["history"], cfg["horizon"]
    model = make_forecaster(
        n_assets=data.n_assets, history=L, horizon=H, n_macro=data.macro.shape[1], n_signals=data.signals.shape[2],
        scale=np.std(data.log_returns[train], axis=0), denoiser=denoiser(cfg), schedule=v["schedule"],
        diffusion_steps=v["diffusion_steps"],
        per_date_scale=v["per_date_scale"], key=jax.random.key(seed),
    )  # fmt: skip
    t0, c0 = time.time(), time.process_time()
    model, hist = train_forecaster(
        model, forecast_windows(data, train, history=L, horizon=H), n_steps=v["steps"], batch_size=cfg["batch_size"],
        lr=cfg["lr"], ema_decay=cfg["ema"], key=jax.random.key(1 + 1000 * seed),
        checkpoint_dir=ctx.checkpoint_dir(f"fit_{v['name']}_s{seed}").resolve(), resume=ctx.resume,
        progress=f"stable_ablation:{v['name']} seed {seed}",
    )  # fmt: skip
    info = {"variant": v["name"], "seed": seed, "train_wall_s": time.time() - t0,
            "train_cpu_s": time.process_time() - c0, "final_loss": float(hist[-1]["loss"]),
            "gate": float(hist[-1]["gate"])}  # fmt: skip
    rows = []
    for s in v["samplers"]:
        t1, c1 = time.time(), time.process_time()
        paths = sample_paths(
            model, tw["history"], tw["macro"], tw["signals"], jax.random.key(5 + 1000 * seed),
            n_samples=cfg["n_samples"], scale=tw["scale"], **SAMPLERS[s],
        )  # fmt: skip
        paths = np.asarray(paths)
        rows.append({**info, "sampler": s, **_scores(paths, tw["target"]), "sample_wall_s": time.time() - t1,
                     "sample_cpu_s": time.process_time() - c1})  # fmt: skip
    return rows


def _plot(ctx, m):
    import matplotlib.pyplot as plt

    from experiments._stable_report import ablation_rows

    rows = ablation_rows(m)
    labels = [r["label"] for r in rows]
    y = np.arange(len(rows))[::-1]
    fig, ax = plt.subplots(1, 2, figsize=(13, 0.35 * len(rows) + 1.5), sharey=True)
    colors = ["0.6" if r["baseline"] else "C0" for r in rows]
    ax[0].barh(y, [r["crps"] for r in rows], color=colors, label="CRPS")
    ax[0].plot([r["crps_sum"] for r in rows], y, "k|", ms=12, mew=2, label="CRPS-sum")
    ax[0].plot([r["crps_mean0"] for r in rows], y, "o", color="C1", ms=4, label="CRPS, recentered (mean 0)")
    best = min(r["crps"] for r in rows if r["baseline"] and r["key"] != "ewma_gaussian")
    ax[0].axvline(best, color="C3", lw=1, ls="--", label="best of bootstrap / Gaussian / GARCH")
    ax[0].set_xlim(0.7, max(1.0, max(r["crps"] for r in rows) * 1.02))
    ax[0].set_yticks(y, labels, fontsize=7)
    ax[0].set_xlabel("held-out CRPS (bars) and CRPS-sum (ticks), lower is better")
    ax[0].legend(fontsize=7, loc="upper right")
    ax[1].axvspan(0.85, 0.95, color="C2", alpha=0.15)
    ax[1].axvline(0.9, color="C2", lw=1)
    ax[1].plot([r.get("coverage90", r.get("cov90")) for r in rows], y, "o", color="C0")
    ax[1].set_xlabel("90%-interval coverage (target 0.90; band 0.85–0.95)")
    fig.suptitle(f"stable_ablation ({ctx.preset}): held-out daily 5-day paths")
    ctx.save_figure(fig, "ablation_crps_coverage.png")
    plt.close(fig)


def _inputs(cfg):
    """The offline market data this experiment reads (skfolio's and arch's shipped files)."""
    from jaxkit.forecast import build_market_data

    return build_market_data(cfg["start"], cfg["end"], tickers=cfg["tickers"], freq="D")


def run(ctx) -> dict:
    from jaxkit.forecast import forecast_windows

    cfg = ctx.config
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.time(), time.process_time()
    data = ctx.stage("data", lambda: _data(cfg))
    train, test = _split(data, cfg)
    tw = forecast_windows(data, test, history=cfg["history"], horizon=cfg["horizon"])
    base, base_cost = ctx.stage("baselines", lambda: _baselines(ctx, data, cfg, test))
    noise = ctx.stage("mc_noise", lambda: _mc_noise(data, cfg, test, tw["target"]))
    rows = []
    for i in range(cfg["seeds"]):
        for v in cfg["variants"]:
            seed = ctx.seed + i
            fn = lambda v=v, seed=seed: _fit_and_sample(ctx, data, cfg, v, seed, train, tw)  # noqa: E731
            rows += ctx.stage(f"variant_{v['name']}_s{seed}", fn)
    dates = np.asarray(data.dates)
    metrics = {
        "setup": {"n_assets": data.n_assets, "tickers": list(data.tickers), "n_train": int(train.size),
                  "n_test": int(test.size), "train_dates": [str(dates[train[0]])[:10], str(dates[train[-1]])[:10]],
                  "test_dates": [str(dates[test[0]])[:10], str(dates[test[-1]])[:10]],
                  **{k: cfg[k] for k in _SETUP_KEYS}},
        "baseline_cost": base_cost,
        "baselines": {name: _scores(p, tw["target"]) for name, p in base.items()},
        "zero_forecast_mse": float(np.mean(tw["target"] ** 2)),
        "mc_noise_sd": {"seeds": MC_SEEDS, **noise},
        "variants": cfg["variants"],
        "rows": rows,
    }  # fmt: skip
    metrics["wall_s"], metrics["cpu_s"] = time.time() - t0, time.process_time() - c0
    _plot(ctx, metrics)
    from experiments._stable_report import ablation_summary

    ctx.write_summary(ablation_summary(ctx.preset, cfg, metrics))
    return metrics


register(
    Experiment(
        name="stable_ablation",
        reproduces="The forecaster ablation (scale, schedule, budget, sampler) on held-out windows",
        presets=PRESETS,
        run=run,
        description="Held-out CRPS / CRPS-sum / coverage / MSE of MLP diffusion variants vs four baselines",
        inputs=_inputs,
    )
)
