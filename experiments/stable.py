"""STABLE (ICLR 2026): conditional diffusion views + Black–Litterman on the 20 skfolio S&P 500 stocks.

Walk-forward: for each test year the forecaster is trained on decision dates whose whole target window ends before
the year starts (``retrain="once"``: one model trained before the first test year). At every month end it samples
``k`` return paths for the next ``horizon`` grid steps; strategies allocate with those and with historical
estimates; the daily backtest has monthly rebalancing, drift and 10 bp proportional costs.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from experiments._registry import Anchor, Experiment, register

PRESETS = {
    "quick": dict(
        freq="W", history=8, horizon=4, test_years=[2015, 2016, 2017, 2018], retrain="once", channels=16,
        layers=1, heads=2, steps=200, batch_size=32, lr=2e-3, num_samples=32, ddim_steps=10, seeds=3,
        lookback=156, cost=0.001, tau=0.05, risk_aversion=2.5, garch=True, sanity=True, sanity_steps=800,
    ),
    "paper": dict(
        freq="D", history=60, horizon=21, test_years=list(range(2005, 2019)), retrain="yearly", channels=64,
        layers=4, heads=8, steps=20000, batch_size=64, lr=1e-3, num_samples=100, ddim_steps=50, seeds=5,
        lookback=756, cost=0.001, tau=0.05, risk_aversion=2.5, garch=True, sanity=True, sanity_steps=3000,
    ),
}  # fmt: skip

STRATEGIES = (
    "1/N",
    "MVO (sample)",
    "MinVar (LW)",
    "BL (hist views)",
    "MVO (diffusion mean)",
    "STABLE (diff+BL)",
)


def _allocations(data, dec, cfg, diff_samples):
    """Weights (D, N) of every strategy at decision grid positions ``dec``; float64 solvers, vmapped over dates."""
    from jaxkit.portfolio import (
        black_litterman_core,
        he_litterman_omega,
        ledoit_wolf_core,
        max_sharpe,
        min_variance,
        precision_black_litterman_core,
    )

    H, lb, N = cfg["horizon"], cfg["lookback"], data.n_assets
    win = np.stack([data.log_returns[max(0, t - lb + 1) : t + 1] for t in dec])  # (D, lb, N), past only
    out = {}
    with jax.enable_x64(True):
        X = jnp.asarray(win, jnp.float64)
        mu_h = X.mean(1) * H
        S_sample = jax.vmap(lambda x: jnp.cov(x.T))(X) * H
        S_lw = jax.vmap(lambda x: ledoit_wolf_core(x)[0])(X) * H
        w_eq = jnp.full((N,), 1.0 / N)
        pi = cfg["risk_aversion"] * S_lw @ w_eq
        ms = jax.jit(jax.vmap(max_sharpe))
        out["1/N"] = np.tile(np.asarray(w_eq), (len(dec), 1))
        out["MVO (sample)"] = np.asarray(ms(mu_h, S_sample))
        out["MinVar (LW)"] = np.asarray(jax.vmap(min_variance)(S_lw))
        eye = jnp.eye(N, dtype=jnp.float64)

        def bl_hist(p, s, q):
            om = he_litterman_omega(s, eye, cfg["tau"])
            return black_litterman_core(p, s, eye, q, om, cfg["tau"])

        m_bl, c_bl = jax.vmap(bl_hist)(pi, S_lw, mu_h)
        out["BL (hist views)"] = np.asarray(ms(m_bl, c_bl))
        for seed, samples in diff_samples.items():
            paths = jnp.asarray(samples, jnp.float64).sum(2)  # (D, k, N) horizon log returns
            mv = paths.mean(1)
            Sv = jax.vmap(lambda x: jnp.cov(x.T))(paths)
            out[f"MVO (diffusion mean)#{seed}"] = np.asarray(ms(mv, S_lw))
            m_st, c_st = jax.vmap(precision_black_litterman_core)(pi, S_lw, mv, Sv)
            out[f"STABLE (diff+BL)#{seed}"] = np.asarray(ms(m_st, c_st + S_lw))
    return out


def _sanity(cfg, seed, ckpt):
    """Acceptance check: train on a conditional Gaussian AR(1) and compare samples with the exact law."""
    from jaxkit.forecast import energy_distance, make_forecaster, sample_paths, train_forecaster

    rng = np.random.default_rng(seed)
    N, L, H, phi = 3, 2, 2, 0.7
    A = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.2, 0.9]])
    n = 4096
    x = np.zeros((n, L + H, N))
    x[:, 0] = rng.normal(size=(n, N)) @ A.T / np.sqrt(1 - phi**2)
    for s in range(1, L + H):
        x[:, s] = phi * x[:, s - 1] + rng.normal(size=(n, N)) @ A.T
    win = {"history": x[:, :L], "target": x[:, L:], "macro": np.zeros((n, 1)), "signals": np.zeros((n, N, 1))}
    model = make_forecaster(
        n_assets=N, history=L, horizon=H, n_macro=1, n_signals=1, scale=np.ones(N), channels=16, layers=1,
        heads=2, key=jax.random.PRNGKey(seed),
    )  # fmt: skip
    model, hist = train_forecaster(
        model, win, steps=cfg["sanity_steps"], batch_size=128, key=jax.random.PRNGKey(seed + 1), lr=3e-3,
        checkpoint_dir=ckpt, progress="stable:sanity",
    )  # fmt: skip
    cond = np.array([[[0.5, -1.0, 1.5], [1.0, -0.5, 1.0]]])  # one history
    k = 512
    ddim = np.asarray(sample_paths(model, cond, np.zeros((1, 1)), np.zeros((1, N, 1)), jax.random.PRNGKey(7),
                                   num_samples=k, num_steps=50, clip_x0=8.0))[0].reshape(k, -1)  # fmt: skip
    ddpm = np.asarray(sample_paths(model, cond, np.zeros((1, 1)), np.zeros((1, N, 1)), jax.random.PRNGKey(8),
                                   num_samples=k, sampler="ddpm", clip_x0=8.0))[0].reshape(k, -1)  # fmt: skip

    def exact(m, key):
        r = np.random.default_rng(key)
        y = np.zeros((m, H, N))
        prev = np.repeat(cond[0, -1][None], m, 0)
        for s in range(H):
            prev = phi * prev + r.normal(size=(m, N)) @ A.T
            y[:, s] = prev
        return y.reshape(m, -1)

    ref, ref2 = exact(k, 1), exact(k, 2)
    true_mean = exact(20000, 3).mean(0)
    true_cov = np.cov(exact(20000, 4).T)
    return {
        "train_final_eps_mse": hist[-1]["eps_mse"],
        "gate_final": hist[-1]["gate"],
        "energy_distance_ddim_vs_exact": energy_distance(ddim, ref),
        "energy_distance_ddpm_vs_exact": energy_distance(ddpm, ref),
        "energy_distance_ddim_vs_ddpm": energy_distance(ddim, ddpm),
        "energy_distance_exact_vs_exact": energy_distance(ref2, ref),
        "mean_abs_err_ddim": float(np.max(np.abs(ddim.mean(0) - true_mean))),
        "cov_max_abs_err_ddim": float(np.max(np.abs(np.cov(ddim.T) - true_cov))),
        "mean_standard_error": float(np.sqrt(np.max(np.diag(true_cov)) / k)),
        "true_cov_max": float(np.max(np.abs(true_cov))),
    }


def run(ctx) -> dict:
    import matplotlib.pyplot as plt
    import pandas as pd

    from jaxkit.forecast import (
        build_market_data,
        coverage,
        crps,
        crps_sum,
        forecast_windows,
        garch_paths,
        historical_bootstrap,
        make_forecaster,
        mse,
        rolling_gaussian,
        sample_paths,
        train_forecaster,
        walk_forward_splits,
    )
    from jaxkit.forecast.data import load_prices
    from jaxkit.portfolio import drawdown, performance_summary, rebalance_indices, run_backtest

    cfg = ctx.config
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    jax.config.update(
        "jax_compilation_cache_dir", str(ctx.out_dir / "jax_cache")
    )  # seeds reuse compiled steps
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    t0 = time.time()
    H, L = cfg["horizon"], cfg["history"]
    data = ctx.stage("data", lambda: build_market_data(freq=cfg["freq"]))
    dates = pd.DatetimeIndex(data.dates)
    years = list(cfg["test_years"])
    month_ends = rebalance_indices(dates, "M")
    dec = np.array([t for t in month_ends if dates[t].year in years and t + H < len(dates)])
    splits = walk_forward_splits(dates, years, horizon=H, history=L)
    if cfg["retrain"] == "once":
        splits = [(splits[0][0], np.flatnonzero(np.isin(dates.year, years)))]
    test_w = forecast_windows(data, dec, history=L, horizon=H)

    # ---- diffusion forecaster: one model per seed (and per test year with retrain="yearly")
    diff_samples, train_loss = {}, {}
    for i in range(cfg["seeds"]):
        seed = ctx.seed + i

        def fit_and_sample(seed=seed):
            out = np.zeros((len(dec), cfg["num_samples"], H, data.n_assets), np.float32)
            losses = []
            for j, (tr, te) in enumerate(splits):
                sel = np.isin(dec, te)
                if not sel.any():
                    continue
                win = forecast_windows(data, tr, history=L, horizon=H)
                scale = np.std(data.log_returns[tr], axis=0)
                model = make_forecaster(
                    n_assets=data.n_assets, history=L, horizon=H, n_macro=data.macro.shape[1],
                    n_signals=data.signals.shape[2], scale=scale, channels=cfg["channels"], layers=cfg["layers"],
                    heads=cfg["heads"], key=jax.random.PRNGKey(seed),
                )  # fmt: skip
                model, hist = train_forecaster(
                    model, win, steps=cfg["steps"], batch_size=cfg["batch_size"], lr=cfg["lr"],
                    key=jax.random.PRNGKey(1000 + seed), checkpoint_dir=ctx.checkpoint_dir(f"fit_s{seed}_{j}"),
                    resume=ctx.resume, progress=f"stable:train seed {seed}",
                )  # fmt: skip
                losses.append(hist[-1]["loss"])
                s = sample_paths(
                    model, test_w["history"][sel], test_w["macro"][sel], test_w["signals"][sel],
                    jax.random.PRNGKey(2000 + seed), num_samples=cfg["num_samples"], num_steps=cfg["ddim_steps"],
                )  # fmt: skip
                out[sel] = np.asarray(s)
            return out, losses

        diff_samples[seed], train_loss[seed] = ctx.stage(f"diffusion_seed{seed}", fit_and_sample)

    # ---- baselines (trailing windows of the same grid)
    def baselines():
        res = {"bootstrap": [], "gaussian": [], "garch": []}
        for j, t in enumerate(ctx.progress(dec, desc="baselines")):
            w = data.log_returns[max(0, t - cfg["lookback"] + 1) : t + 1]
            res["bootstrap"].append(historical_bootstrap(w, H, cfg["num_samples"], seed=j))
            res["gaussian"].append(rolling_gaussian(w, H, cfg["num_samples"], seed=j))
            if cfg["garch"]:
                res["garch"].append(garch_paths(w, H, cfg["num_samples"], seed=j))
        return {k: np.stack(v) for k, v in res.items() if v}

    base = ctx.stage("baselines", baselines)

    # ---- forecast table
    truth = test_w["target"]
    forecasts = {**{f"diffusion#{s}": v for s, v in diff_samples.items()}, **base}
    ftab = {}
    for name, s in forecasts.items():
        ftab[name] = {
            "mse": mse(s, truth, sample_axis=1),
            "crps": crps(s, truth, sample_axis=1),
            "crps_sum": crps_sum(s, truth, sample_axis=1),
            "coverage90": coverage(s, truth, level=0.9, sample_axis=1),
        }
    dkeys = [k for k in ftab if k.startswith("diffusion#")]
    ftab["diffusion (mean over seeds)"] = {
        m: float(np.mean([ftab[k][m] for k in dkeys])) for m in ftab[dkeys[0]]
    }
    ftab["zero forecast (mse only)"] = {"mse": float(np.mean(truth**2))}

    # ---- allocation + daily backtest
    weights = _allocations(data, dec, cfg, diff_samples)
    stocks, _ = load_prices(data.tickers, None, str(dates[-1].date()))
    didx = stocks.index.get_indexer(dates[dec])
    assert (didx >= 0).all()
    first, last = didx[0], stocks.index.searchsorted(pd.Timestamp(f"{years[-1]}-12-31"), side="right")
    px = stocks.to_numpy()[first:last]
    results, curves = {}, {}
    for name, w in weights.items():
        bt = run_backtest(px, didx - first, w, cost=cfg["cost"], dates=stocks.index[first:last])
        r = bt.returns[1:]  # day 0 is the initial purchase from cash
        results[name] = performance_summary(r, turnover=bt.turnover[1:])
        curves[name] = r
    atab = {}
    for s in STRATEGIES:
        keys = [k for k in results if k == s or k.startswith(s + "#")]
        agg = {m: float(np.mean([results[k][m] for k in keys])) for m in results[keys[0]]}
        if len(keys) > 1:
            agg["sharpe_std_over_seeds"] = float(np.std([results[k]["sharpe"] for k in keys]))
        atab[s] = agg

    # ---- plots
    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    t_axis = stocks.index[first + 1 : last]
    for s in STRATEGIES:
        keys = [k for k in curves if k == s or k.startswith(s + "#")]
        r = np.mean([curves[k] for k in keys], axis=0)
        axes[0].plot(t_axis, np.cumprod(1 + r), label=s)
        axes[1].plot(t_axis, -drawdown(r), label=s)
    axes[0].set_ylabel("wealth (net of 10 bp costs)")
    axes[1].set_ylabel("drawdown")
    axes[0].legend(fontsize=7)
    axes[0].set_title(
        f"Walk-forward {years[0]}–{years[-1]}, monthly rebalance (diffusion rows: mean over seeds)"
    )
    ctx.save_figure(fig, "equity_drawdown.png")
    plt.close(fig)

    metrics = {
        "allocation": atab,
        "forecast": ftab,
        "train_final_loss": {str(k): v for k, v in train_loss.items()},
        "n_decisions": len(dec),
        "test_period": f"{dates[dec[0]].date()} .. {stocks.index[last - 1].date()}",
        "stable_sharpe": atab["STABLE (diff+BL)"]["sharpe"],
        "mvo_sharpe": atab["MVO (sample)"]["sharpe"],
        "diffusion_mse": ftab["diffusion (mean over seeds)"]["mse"],
    }
    if cfg.get("sanity"):
        metrics["sanity"] = ctx.stage("sanity", lambda: _sanity(cfg, ctx.seed, ctx.checkpoint_dir("sanity")))
    metrics["wall_s"] = time.time() - t0
    ctx.write_summary(_summary(ctx, cfg, metrics))
    return metrics


def _summary(ctx, cfg, m) -> str:
    lines = [
        f"# STABLE reproduction ({ctx.preset} preset, seeds {ctx.seed}..{ctx.seed + cfg['seeds'] - 1})",
        "",
        f"Test period {m['test_period']} ({m['n_decisions']} monthly decisions), 20 skfolio S&P 500 stocks, "
        f"{cfg['freq']} grid, horizon {cfg['horizon']} steps, {cfg['num_samples']} DDIM samples "
        f"({cfg['ddim_steps']} steps), denoiser C={cfg['channels']} x {cfg['layers']} layers, "
        f"{cfg['steps']} training steps, 10 bp costs.",
        "",
        "## Allocation (daily net returns; diffusion rows: mean over seeds)",
        "",
        "| strategy | ann. return | vol | Sharpe | Sortino | max DD | Calmar | turnover/yr |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s, r in m["allocation"].items():
        sh = f"{r['sharpe']:.2f}" + (
            f" ± {r['sharpe_std_over_seeds']:.2f}" if "sharpe_std_over_seeds" in r else ""
        )
        lines.append(
            f"| {s} | {r['ann_return']:.3f} | {r['ann_volatility']:.3f} | {sh} | {r['sortino']:.2f} | "
            f"{r['max_drawdown']:.3f} | {r['calmar']:.2f} | {r['turnover_per_year']:.2f} |"
        )
    lines += ["", "## Forecasts of the next-horizon log-return paths", "",
              "| model | MSE | CRPS | CRPS-sum | 90% coverage |", "|---|---|---|---|---|"]  # fmt: skip
    for s, r in m["forecast"].items():
        cells = [f"{r[k]:.4g}" if k in r else "–" for k in ("mse", "crps", "crps_sum", "coverage90")]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Beside the paper",
        "",
        "STABLE reports on the S&P 500: Sharpe 1.85 (STABLE) vs 1.18 (MVO), forecast MSE 3.51e-4 (vs Diffusion-TS "
        f"3.90e-4). Here: STABLE-style Sharpe {m['stable_sharpe']:.2f} vs sample MVO {m['mvo_sharpe']:.2f}; "
        f"diffusion MSE {m['diffusion_mse']:.3g} per {cfg['freq']}-step log return over a "
        f"{cfg['horizon']}-step path. The universe (20 stocks), period, horizon, model size and training budget "
        "differ from the paper, and the quick preset is a smoke-scale run: treat it as a pipeline check, not as a "
        "confirmation or refutation of the published numbers.",
    ]
    if "sanity" in m:
        s = m["sanity"]
        lines += [
            "",
            "## Diffusion sanity (AR(1) Gaussian, exact conditional law known)",
            "",
            f"energy distance DDIM(50) vs exact {s['energy_distance_ddim_vs_exact']:.4f}, DDPM vs exact "
            f"{s['energy_distance_ddpm_vs_exact']:.4f}, DDIM vs DDPM {s['energy_distance_ddim_vs_ddpm']:.4f}; "
            f"exact vs exact (noise floor) {s['energy_distance_exact_vs_exact']:.4f}. Max |mean error| "
            f"{s['mean_abs_err_ddim']:.3f} (standard error {s['mean_standard_error']:.3f}), max |cov error| "
            f"{s['cov_max_abs_err_ddim']:.3f} (true max |cov| {s['true_cov_max']:.2f}).",
        ]
    return "\n".join(lines) + "\n"


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
        description="Conditional DDIM return paths -> precision-form Black-Litterman -> long-only max-Sharpe",
    )
)
