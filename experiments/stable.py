"""STABLE (ICLR 2026): diffusion return-path views + precision-form Black–Litterman on the 20 skfolio S&P 500
stocks, evaluated under one protocol for every forecaster.

Daily grid 1990–2022, history 20 days, horizon 5 days. Three disjoint periods, in time order: the *choice* period
(settings; the post-processing of every forecaster is fitted on its decision dates), the *validation* period (the
best baseline is chosen there) and the *test* period (reported once). One forecaster per training seed is trained on
the decision dates whose whole target ends before the choice period (purged) and then frozen. Decisions every
``every`` trading days (non-overlapping 5-day targets). Baselines (block bootstrap, Gaussian, EWMA Gaussian, GARCH)
use the trailing ``lookback`` days of each decision. Every forecaster gets the same post-processing
(:func:`jaxkit.forecast.fit_postprocess`: recentering to mean 0 and per-asset spread calibration, fitted on the choice
period only); tables show raw and post-processed rows. Paired per-date differences against the best post-processed
baseline get percentile bootstrap intervals. Allocation: STABLE (published and long-only) from each seed's paths
vs 1/N, MVO, min-variance and classic BL, rebalanced at every test decision with 10 bp costs;
the daily return series are stored so every Sharpe interval can be recomputed.
"""

from __future__ import annotations

import time

import jax
import numpy as np

from experiments._registry import Anchor, Experiment, register

_COMMON = dict(
    history=20, horizon=5, nu=252, lookback=756, cost=0.001, denoiser="mlp", hidden=256, depth=3, channels=64,
    schedule="quadratic", diffusion_steps=50, sampler="ddpm", eta=1.0, sample_steps=50, lr=2e-3, ema=0.999,
    batch_size=256, leverage_cap=3.0, min_net_exposure=0.05, boot_block=21, n_boot=2000, every=5,
    choice_years=[2017, 2018], validation_years=[2019, 2020], test_years=[2021, 2022], ewma_decay=0.94,
)  # fmt: skip
PRESETS = {
    "quick": dict(
        _COMMON, steps=300, hidden=64, depth=2, channels=32, n_samples=32, seeds=5, garch=False, sanity=False
    ),  # fmt: skip
    "standard": dict(_COMMON, steps=3000, n_samples=64, seeds=5, garch=True, sanity=True, sanity_steps=1000),
    "paper": dict(_COMMON, steps=10000, n_samples=128, seeds=5, garch=True, sanity=True, sanity_steps=3000),
}
# seconds: the standard preset's paths (GARCH baseline, the sanity check) at toy size: tiny denoiser, few steps,
# one year per period, decisions every 40 days, 24 samples (> 20 assets, as the views need), 2 seeds; tests run it
PRESETS["smoke"] = dict(
    PRESETS["standard"], steps=10, hidden=16, depth=1, channels=8, n_samples=24, seeds=2, diffusion_steps=10,
    sample_steps=10, batch_size=64, every=40, n_boot=200, sanity_steps=10, choice_years=[2018],
    validation_years=[2020], test_years=[2022],
)  # fmt: skip
PERIODS = ("choice", "validation", "test")


def _endpoint(garch: bool) -> dict:
    """The declared primary endpoint: the energy score (the joint metric the comparator is chosen on) of the
    post-processed diffusion forecaster (mean of the seeds' per-date scores) minus the best post-processed baseline
    on the validation energy score, paired per test date, circular block bootstrap (default block length
    ceil(n^(1/3)): 5 of 100 weekly dates), 10,000 resamples, two-sided at 0.05; lower is better."""
    from jaxkit.evaluation import Endpoint

    bases = [b for b in ("bootstrap", "gaussian", "ewma_gaussian", "garch") if garch or b != "garch"]
    return Endpoint(
        metric="energy", method="diffusion (seed mean) [post]", comparator=tuple(f"{b} [post]" for b in bases),
        test="block_bootstrap", direction="lower", alpha=0.05, split="test", choose_on="validation",
    ).to_dict()  # fmt: skip


for _preset in PRESETS.values():
    _preset.setdefault("endpoint", _endpoint(_preset.get("garch", True)))


def denoiser(cfg):
    """The denoiser object named by the config string (the string form lives only here, at the experiment level;
    the library takes :class:`jaxkit.forecast.MLPNet` / :class:`jaxkit.forecast.AttentionNet`)."""
    from jaxkit.forecast import AttentionNet, MLPNet

    if cfg["denoiser"] == "mlp":
        return MLPNet(hidden=cfg["hidden"], depth=cfg["depth"], channels=cfg["channels"])
    if cfg["denoiser"] == "attention":
        return AttentionNet(channels=cfg["channels"], layers=cfg.get("layers", 2), heads=cfg.get("heads", 2))
    raise ValueError(f"denoiser: expected 'mlp' or 'attention', received {cfg['denoiser']!r}")


def _data(cfg):
    import warnings

    from jaxkit.forecast import load_prices, market_data_from_frames, stable_macro_frame

    stocks, _ = load_prices()
    macro = stable_macro_frame(variant="long")
    common = stocks.index.intersection(macro.index)
    with warnings.catch_warnings():  # the warm-up drop is reported in the summary (data start date)
        warnings.simplefilter("ignore", UserWarning)
        return market_data_from_frames(
            stocks.loc[common], macro.loc[common], history=cfg["history"], horizon=cfg["horizon"],
            norm_window=cfg["nu"],
        )  # fmt: skip


def _split(data, cfg):
    """Decision positions of the three periods (every ``every``-th trading day, target inside the data) and the
    training positions (whole target before the choice period starts)."""
    import pandas as pd

    from jaxkit.forecast import walk_forward_splits

    dates = pd.DatetimeIndex(data.dates)
    H, L, T = cfg["horizon"], cfg["history"], len(dates)
    dec = {}
    for p in PERIODS:
        pos = np.flatnonzero(dates.year.isin(cfg[f"{p}_years"]))
        dec[p] = pos[pos + H < T][:: cfg["every"]]
    years = [y for p in PERIODS for y in cfg[f"{p}_years"]]
    if years != sorted(set(years)):
        raise ValueError(
            f"periods: expected disjoint, increasing choice < validation < test years, received {years}"
        )
    train = walk_forward_splits(dates, [cfg["choice_years"][0]], horizon=H, history=L)[0][0]
    return dates, train, dec


def _model_paths(ctx, data, cfg, seed, train, positions):
    """Train one forecaster (checkpointed), freeze it, sample paths for every decision position."""
    from jaxkit.forecast import forecast_windows, make_forecaster, sample_paths, train_forecaster

    L, H = cfg["history"], cfg["horizon"]
    t0, c0 = time.time(), time.process_time()
    model = make_forecaster(
        n_assets=data.n_assets, history=L, horizon=H, n_macro=data.macro.shape[1], n_signals=data.signals.shape[2],
        scale=np.std(data.log_returns[train], axis=0), denoiser=denoiser(cfg),
        schedule=cfg["schedule"], diffusion_steps=cfg["diffusion_steps"], per_date_scale=True, key=jax.random.key(seed),
    )  # fmt: skip
    model, hist = train_forecaster(
        model, forecast_windows(data, train, history=L, horizon=H), n_steps=cfg["steps"], batch_size=cfg["batch_size"],
        lr=cfg["lr"], ema_decay=cfg["ema"], key=jax.random.key(1000 + seed),
        checkpoint_dir=ctx.checkpoint_dir(f"fit_s{seed}").resolve(), resume=ctx.resume,
        progress=f"stable:train seed {seed}",
    )  # fmt: skip
    t1, c1 = time.time(), time.process_time()
    w = forecast_windows(data, positions, history=L, horizon=H)
    paths = sample_paths(
        model, w["history"], w["macro"], w["signals"], jax.random.key(2000 + seed), n_samples=cfg["n_samples"],
        n_steps=cfg["sample_steps"], sampler=cfg["sampler"], eta=cfg["eta"], scale=w["scale"],
    )  # fmt: skip
    info = {
        "seed": seed, "train_windows": int(train.size), "final_loss": float(hist[-1]["loss"]),
        "gate": float(hist[-1]["gate"]), "train_wall_s": t1 - t0, "train_cpu_s": c1 - c0,
        "sample_wall_s": time.time() - t1, "sample_cpu_s": time.process_time() - c1,
    }  # fmt: skip
    return {"paths": np.asarray(paths, np.float32), "info": info}


def _baselines(ctx, data, cfg, positions):
    from jaxkit.forecast import BASELINES, baseline_paths

    methods = [m for m in BASELINES if cfg["garch"] or m != "garch"]
    t0, c0 = time.time(), time.process_time()
    out = baseline_paths(
        data.log_returns, positions, lookback=cfg["lookback"], horizon=cfg["horizon"], n_samples=cfg["n_samples"],
        methods=methods, ewma_decay=cfg["ewma_decay"], progress=lambda it: ctx.progress(it, desc="baselines"),
    )  # fmt: skip
    return {"paths": {k: v.astype(np.float32) for k, v in out.items()},
            "cost": {"wall_s": time.time() - t0, "cpu_s": time.process_time() - c0}}  # fmt: skip


def _evaluate(forecasts, truth, positions, sel, cfg):
    """Post-process every forecaster alike (fitted on the choice period), score raw and post-processed rows per
    date on the validation and test periods."""
    from jaxkit.forecast import fit_postprocess, score_paths

    fit_end = int(positions[sel["validation"]][0])  # choice-period windows end before the validation period
    post, per_date, fitted = {}, {}, {}
    for name, p in forecasts.items():
        pp = fit_postprocess(p, truth, positions=positions, fit_end=fit_end, horizon=cfg["horizon"])
        fitted[name] = pp.to_dict()
        for kind, x in (("raw", p), ("post", pp(p))):
            for period in ("validation", "test"):
                per_date[(name, kind, period)] = score_paths(
                    x[sel[period]], truth[sel[period]], per_date=True
                )
        post[name] = pp
    return post, per_date, fitted


def _mean_over_seeds(per_date, seeds, kind, period):
    keys = per_date[(f"diffusion s{seeds[0]}", kind, period)]
    return {k: np.mean([per_date[(f"diffusion s{s}", kind, period)][k] for s in seeds], axis=0) for k in keys}


HEADLINE = ("energy", "crps_sum", "crps")


def _tables(per_date, seeds, baselines):
    """Mean scores per (forecaster, raw/post, period); the best post-processed baseline chosen on validation by
    energy score; paired test differences (diffusion seed-mean and each seed) against it, and of the seed-mean
    post-processed forecaster against every post-processed baseline."""
    from jaxkit.forecast import paired_difference

    for kind in ("raw", "post"):
        for period in ("validation", "test"):
            per_date[("diffusion (seed mean)", kind, period)] = _mean_over_seeds(
                per_date, seeds, kind, period
            )
    table = {f"{n} [{k}]": {p: {m: float(np.mean(v)) for m, v in per_date[(n, k, p)].items()}
                             for p in ("validation", "test")}
             for (n, k, p) in per_date if p == "test"}  # fmt: skip
    best = min(baselines, key=lambda b: float(np.mean(per_date[(b, "post", "validation")]["energy"])))
    paired = {}
    for who in ["diffusion (seed mean)"] + [f"diffusion s{s}" for s in seeds]:
        for kind in ("raw", "post"):
            paired[f"{who} [{kind}] - {best} [post]"] = {
                m: paired_difference(per_date[(who, kind, "test")][m], per_date[(best, "post", "test")][m])
                for m in HEADLINE
            }
    # the headline's comparator is chosen on validation energy; beside it, the seed-mean post-processed diffusion
    # forecaster against every post-processed baseline, so no metric's win rests on the comparator's choice
    paired_all = {
        f"diffusion (seed mean) [post] - {b} [post]": {
            m: paired_difference(
                per_date[("diffusion (seed mean)", "post", "test")][m], per_date[(b, "post", "test")][m]
            )
            for m in HEADLINE
        }
        for b in baselines
    }
    return table, best, paired, paired_all


def _records(per_date, dates, positions, sel) -> list[dict]:
    """Per-date scores of every forecaster row (raw and post-processed, each seed and the seed mean) on the
    validation and test periods, in time order: the records every headline is computed from."""
    out = []
    for (name, kind, period), scores in per_date.items():
        days = dates[positions[sel[period]]]
        for i, day in enumerate(days):
            out.append({"item": str(day.date()), "split": period, "arm": f"{name} [{kind}]",
                        **{k: float(v[i]) for k, v in scores.items()}})  # fmt: skip
    return out


def _verdicts(cfg, records, baselines) -> dict:
    """The primary endpoint's verdict and, as one Holm-corrected family, every other comparison of the seed-mean
    post-processed forecaster with a post-processed baseline (energy, CRPS-sum, CRPS; same block bootstrap)."""
    from jaxkit.evaluation import Endpoint, endpoint_from_dict, secondary, verdict

    endpoint = endpoint_from_dict(cfg["endpoint"])
    v = verdict(endpoint, records)
    family = {}
    for b in baselines:
        for met in HEADLINE:
            if met == endpoint.metric and f"{b} [post]" == v.comparator:
                continue
            ep = Endpoint(metric=met, method=endpoint.method, comparator=f"{b} [post]", test="block_bootstrap",
                          direction="lower", alpha=endpoint.alpha, split="test")  # fmt: skip
            family[f"{met}: {endpoint.method} - {b} [post]"] = (ep, records)
    sec = secondary(family)
    slim = lambda x: {k: getattr(x, k) for k in ("word", "estimate", "ci", "p", "p_adjusted", "block", "n")}  # noqa: E731
    return {
        "endpoint": endpoint.to_dict(),
        "verdict": {k: val for k, val in v.to_dict().items() if k != "details"}
        | {"choice_means": v.details.get("choice_means")},
        "verdict_markdown": v.markdown(),
        "secondary": {k: slim(x) for k, x in sec.items()},
    }


def _allocation(data, cfg, dec_test, forecasts, seeds, test_sel):
    """Daily backtest over the test period; STABLE from each seed's paths as sampled (its views need the
    forecaster's own mean: recentered paths would make every view mean 0)."""
    import pandas as pd

    from jaxkit.portfolio import run_backtest, strategy_weights

    dates = pd.DatetimeIndex(data.dates)
    win = np.stack([data.log_returns[max(0, t - cfg["lookback"] + 1) : t + 1] for t in dec_test])
    kw = dict(
        horizon=cfg["horizon"], min_net_exposure=cfg["min_net_exposure"], leverage_cap=cfg["leverage_cap"]
    )
    base = strategy_weights(win, None, **kw)
    weights = dict(base)
    guard = {}
    for s in seeds:
        name = f"diffusion s{s}"
        w = strategy_weights(win, forecasts[name][test_sel], **kw)
        for strat in ("STABLE (published)", "STABLE (long-only)", "MVO (diffusion mean)"):
            weights[f"{strat} s{s}"] = w[strat]
        guard[str(s)] = float(np.mean(w["STABLE (published) guard used"]))
    last = dates.searchsorted(pd.Timestamp(f"{cfg['test_years'][-1]}-12-31"), side="right")
    px = data.prices[dec_test[0] : last]
    series = {}
    for name, w in weights.items():
        bt = run_backtest(px, dec_test - dec_test[0], w, cost=cfg["cost"], dates=dates[dec_test[0] : last])
        series[name] = np.asarray(bt.returns[1:])  # day 0 is the purchase from cash
    return series, [str(d.date()) for d in dates[dec_test[0] + 1 : last]], guard


def _sharpe(series, seeds, cfg):
    from jaxkit.portfolio import performance_summary, sharpe_confidence_interval, sharpe_difference_test

    kw = dict(block=cfg["boot_block"], n_boot=cfg["n_boot"])
    out = {}
    for name, r in series.items():
        sr, lo, hi = sharpe_confidence_interval(r, **kw)
        out[name] = {
            "sharpe": sr,
            "ci95": [lo, hi],
            **{k: v for k, v in performance_summary(r).items() if k != "sharpe"},
        }
        for ref in ("1/N", "MVO (sample)"):
            if name != ref:
                out[name][f"vs {ref}"] = sharpe_difference_test(r, series[ref], **kw)
    return out


def run(ctx) -> dict:
    from jaxkit.forecast import forecast_windows

    cfg = ctx.config
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.time(), time.process_time()
    data = ctx.stage("data", lambda: _data(cfg))
    dates, train, dec = _split(data, cfg)
    positions = np.concatenate([dec[p] for p in PERIODS])
    bounds = np.cumsum([0] + [len(dec[p]) for p in PERIODS])
    sel = {p: slice(bounds[i], bounds[i + 1]) for i, p in enumerate(PERIODS)}
    truth = forecast_windows(data, positions, history=cfg["history"], horizon=cfg["horizon"])["target"]
    seeds = [ctx.seed + i for i in range(cfg["seeds"])]
    models = {
        s: ctx.stage(f"model_s{s}", lambda s=s: _model_paths(ctx, data, cfg, s, train, positions))
        for s in seeds
    }
    base = ctx.stage("baselines", lambda: _baselines(ctx, data, cfg, positions))
    forecasts = {f"diffusion s{s}": models[s]["paths"] for s in seeds} | base["paths"]
    post, per_date, fitted = _evaluate(forecasts, truth, positions, sel, cfg)
    table, best, paired, paired_all = _tables(per_date, seeds, list(base["paths"]))
    series, days, guard = _allocation(data, cfg, dec["test"], forecasts, seeds, sel["test"])
    sharpe = _sharpe(series, seeds, cfg)
    records = _records(per_date, dates, positions, sel)
    scored = _verdicts(cfg, records, list(base["paths"]))
    span = lambda p: [str(dates[dec[p][0]].date()), str(dates[dec[p][-1]].date())]  # noqa: E731
    metrics = {
        "periods": {"train": [str(dates[train[0]].date()), str(dates[train[-1]].date())],
                    **{p: span(p) for p in PERIODS}},
        "n_decisions": {p: int(len(dec[p])) for p in PERIODS}, "n_train": int(train.size), "seeds": seeds,
        "data_start": str(dates[0].date()), "tickers": list(data.tickers),
        "forecast": table, "best_baseline": best, "paired_test": paired,
        "paired_test_all_baselines": paired_all, "postprocess": fitted,
        "allocation": sharpe, "guard_fraction": guard,
        "daily_returns": {"dates": days, **{k: [round(float(x), 8) for x in v] for k, v in series.items()}},
        "train": [models[s]["info"] for s in seeds], "baseline_cost": base["cost"],
        "stable_sharpe": float(np.mean([sharpe[f"STABLE (published) s{s}"]["sharpe"] for s in seeds])),
        "mvo_sharpe": sharpe["MVO (sample)"]["sharpe"],
        "diffusion_mse": table["diffusion (seed mean) [raw]"]["test"]["mse"],
        **scored, "records": records,
    }  # fmt: skip
    if cfg.get("sanity"):
        ckpt = ctx.checkpoint_dir("sanity").resolve()
        metrics["sanity"] = ctx.stage("sanity", lambda: _sanity(cfg, ctx.seed, ckpt))
    metrics["wall_s"], metrics["cpu_s"] = time.time() - t0, time.process_time() - c0
    _plots(ctx, metrics, seeds)
    from experiments._stable_report import summary

    ctx.write_summary(summary(ctx.preset, cfg, metrics))
    return metrics


def _plots(ctx, m, seeds):
    """Test energy score per forecaster row (axis from 0: the rows differ by under 2%) and wealth of 1/N, MVO and
    every seed of both STABLE variants (no seed singled out); drawn from the metrics alone."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    names = [f"diffusion (seed mean) [{k}]" for k in ("raw", "post")] + [
        f"{b} [{k}]" for b in m["postprocess"] if not b.startswith("diffusion") for k in ("raw", "post")
    ]
    y = np.arange(len(names))[::-1]
    ax[0].barh(
        y,
        [m["forecast"][n]["test"]["energy"] for n in names],
        color=["C0" if "diffusion" in n else "0.6" for n in names],
    )
    ax[0].set_yticks(y, names, fontsize=7)
    ax[0].set_xlim(0, None)
    ax[0].set_xlabel("test energy score (lower is better)")
    r = {k: np.asarray(v) for k, v in m["daily_returns"].items() if k != "dates"}
    days = np.asarray(m["daily_returns"]["dates"], dtype="datetime64[D]")
    for name, color in (("1/N", "k"), ("MVO (sample)", "C1")):
        ax[1].plot(days, np.cumprod(1 + r[name]), lw=1.2, color=color, label=name)
    for strat, color in (("STABLE (published)", "C3"), ("STABLE (long-only)", "C2")):
        for i, s in enumerate(seeds):
            ax[1].plot(days, np.cumprod(1 + r[f"{strat} s{s}"]), lw=0.7, color=color, alpha=0.7,
                       label=f"{strat}, each of {len(seeds)} seeds" if i == 0 else None)  # fmt: skip
    ax[1].set_ylabel("wealth (10 bp costs)")
    ax[1].legend(fontsize=7)
    ax[1].tick_params(axis="x", labelsize=7)
    test = m["periods"]["test"]
    fig.suptitle(f"stable ({ctx.preset}): test period {test[0]} .. {test[1]}")
    fig.tight_layout()
    ctx.save_figure(fig, "forecast_and_wealth.png")
    plt.close(fig)


def _sanity(cfg, seed, ckpt):
    """Known-law check with the pipeline's denoiser and sampler: train on a 3-asset AR(1) (history 2, horizon 2)
    and compare 512 samples for one history with the exact conditional Gaussian (mean/covariance z-scores, energy
    test against an exact sample)."""
    from jaxkit.forecast import (
        ar1_conditional_law,
        ar1_windows,
        energy_distance,
        energy_test,
        make_forecaster,
        moment_z_scores,
        sample_paths,
        train_forecaster,
    )  # fmt: skip

    N, L, H, phi, k = 3, 2, 2, 0.7, 512
    A = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.2, 0.9]])
    model = make_forecaster(
        n_assets=N, history=L, horizon=H, n_macro=1, n_signals=1, scale=np.ones(N),
        denoiser=denoiser(cfg), schedule=cfg["schedule"], diffusion_steps=cfg["diffusion_steps"],
        key=jax.random.key(seed),
    )  # fmt: skip
    model, hist = train_forecaster(
        model, ar1_windows(4096, L, H, phi, A, seed=seed), n_steps=cfg["sanity_steps"], batch_size=256, lr=cfg["lr"],
        ema_decay=0.995, key=jax.random.key(seed + 1), checkpoint_dir=ckpt, progress="stable:sanity",
    )  # fmt: skip
    cond = np.array([[[0.5, -1.0, 1.5], [1.0, -0.5, 1.0]]])
    mean, cov = ar1_conditional_law(cond[0, -1], H, phi, A)
    rng = np.random.default_rng(seed + 100)
    ref, ref2 = rng.multivariate_normal(mean, cov, k), rng.multivariate_normal(mean, cov, k)
    out = {"samples": k, "gate_final": hist[-1]["gate"]}
    for name, kw in (
        ("pipeline", dict(sampler=cfg["sampler"], n_steps=cfg["sample_steps"], eta=cfg["eta"])),
        ("ddim_eta0", dict(sampler="ddim", n_steps=cfg["sample_steps"], eta=0.0)),
    ):
        x = np.asarray(sample_paths(model, cond, np.zeros((1, 1)), np.zeros((1, N, 1)), jax.random.key(7),
                                    n_samples=k, clip_x0=8.0, **kw))[0].reshape(k, -1)  # fmt: skip
        mz, cz = moment_z_scores(x, mean, cov)
        p = energy_test(x, ref, n_permutations=999, seed=seed)[1]
        out[name] = {
            "max_abs_mean_z": float(np.abs(mz).max()), "max_abs_cov_z": float(np.abs(cz).max()), "energy_p": p,
            "energy_distance": energy_distance(x, ref), "variance_ratio": (np.diag(np.cov(x.T)) / np.diag(cov)).tolist(),
            "passed": bool(np.abs(mz).max() < 4 and np.abs(cz).max() < 4.5 and p > 0.005),
        }  # fmt: skip
    out["energy_distance_exact_vs_exact"] = energy_distance(ref2, ref)
    return out


register(
    Experiment(
        name="stable",
        reproduces="STABLE (ICLR 2026): S&P 500 allocation table (Sharpe) and forecast MSE table",
        presets=PRESETS,
        run=run,
        anchors=(
            Anchor("stable_sharpe", 1.85, "STABLE, ICLR 2026, S&P 500 Sharpe"),
            Anchor("mvo_sharpe", 1.18, "STABLE, ICLR 2026, MVO baseline Sharpe"),
            Anchor("diffusion_mse", 3.51e-4, "STABLE, ICLR 2026, forecast MSE"),
        ),
        description="Diffusion return paths vs four baselines (raw and post-processed alike, 3 disjoint periods, "
        "5 seeds, paired CIs) -> precision-form BL -> tangency (published) and long-only",
        inputs=_data,
    )
)
