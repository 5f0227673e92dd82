"""Summary (markdown) of the stable experiment: forecasts vs baselines, allocation beside the paper, Sharpe CIs and
difference tests, regimes, the known-law check, and the forecaster ablation that chose the configuration."""

from __future__ import annotations

PAPER = {"STABLE": 1.85, "MVO": 1.18, "MSE": 3.51e-4, "MSE_DiffusionTS": 3.90e-4}

# Measured with the same forecaster code before the standard run (see the summary text for the setup).
ABLATION_SETUP = (
    "Daily S&P 500 20-stock grid 1990–2018, history 20, horizon 5, train decisions to 2014 (5900 windows), test "
    "every 5th trading day of 2015–2018 (193 windows), 64 paths each, one seed; baselines on a 756-day trailing "
    "window. Lower CRPS is better; 90% coverage should be 0.90."
)


# (denoiser, scale, schedule, sampler, train steps, CRPS, CRPS-sum, coverage90, MSE x1e-4, CRPS mean-0, CRPS-sum mean-0)
ABLATION = (
    ("bootstrap (756-day window)", "–", "–", "–", "–", 0.7887, 0.7895, 0.860, 2.922, None, None),
    ("Gaussian (756-day window)", "–", "–", "–", "–", 0.7985, 0.7974, 0.884, 2.946, None, None),
    ("GARCH(1,1) per asset", "–", "–", "–", "–", 0.7898, 0.8119, 0.891, 2.937, None, None),
    ("EWMA vol x hist. correlation, Gaussian (no learning)", "EWMA", "–", "–", "–", 0.7897, 0.7734, 0.878, 2.942,
     None, None),
    ("MLP", "fixed", "cosine 100", "ancestral (100)", 1500, 1.0638, 1.0347, 0.991, 3.377, 1.0220, 0.9972),
    ("MLP", "EWMA", "cosine 100", "ancestral (100)", 1500, 0.9099, 0.8985, 0.972, 3.253, 0.8750, 0.8669),
    ("MLP", "EWMA", "cosine 100", "ancestral (100), antithetic", 1500, 0.9032, 0.8919, 0.973, 3.155, 0.8781, 0.8716),
    ("MLP", "EWMA", "cosine 100", "DDIM η=1 (20)", 1500, 0.8855, 0.8747, 0.962, 3.261, 0.8478, 0.8428),
    ("MLP", "EWMA", "cosine 100", "DDIM η=0 (20)", 1500, 1.7789, 1.3109, 0.997, 4.009, 1.6997, 1.2597),
    ("MLP", "EWMA", "CSDI quadratic 50", "ancestral (50)", 1500, 0.8377, 0.8061, 0.943, 3.074, 0.8157, 0.7925),
    ("MLP", "EWMA", "CSDI quadratic 50", "DDIM η=0 (10)", 1500, 1.5149, 1.0820, 0.997, 3.650, 1.4599, 1.0467),
    ("MLP", "EWMA", "cosine 100", "ancestral (100)", 3000, 0.8339, 0.8043, 0.901, 3.212, None, None),
    ("MLP", "EWMA", "cosine 100", "DDIM η=1 (20)", 3000, 0.8316, 0.8026, 0.880, 3.219, None, None),
    ("MLP", "EWMA", "cosine 100", "DDIM η=0 (20)", 3000, 1.4708, 1.1225, 0.997, 3.921, None, None),
    ("MLP", "EWMA", "cosine 100", "DDIM η=0 (10)", 3000, 1.7011, 1.1676, 0.997, 4.308, None, None),
)
ABLATION_ZERO_MSE = 2.889


def ablation_lines():
    lines = [
        "## The ablation that chose the forecaster",
        "",
        ABLATION_SETUP,
        "",
        "| model | scale | schedule | sampler | steps | CRPS | CRPS-sum | cov90 | MSE ×1e-4 | CRPS, mean 0 | "
        "CRPS-sum, mean 0 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in ABLATION:
        cells = [str(c) for c in row[:5]] + [f"{row[5]:.4f}", f"{row[6]:.4f}", f"{row[7]:.3f}", f"{row[8]:.3f}"]
        cells += [_fmt(row[9], ".4f"), _fmt(row[10], ".4f")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Zero forecast MSE {ABLATION_ZERO_MSE:.3f}e-4. All learned rows: the guided two-level MLP denoiser "
        "(hidden 256, depth 3), batch 256, lr 2e-3 cosine-decayed, EMA 0.999. The attention (CSDI-like) denoiser of "
        "the previous sessions costs ~40x more per evaluation at 20 assets; its row at this budget did not finish on "
        "the shared machine (the earlier quick run measured CRPS 1.26 vs bootstrap 0.79, coverage 0.986, with the "
        "fixed scale, CSDI schedule and DDIM η=0).",
        "",
        "What decided it: (1) deterministic DDIM (η=0) over-disperses on the learned ε at every budget and schedule "
        "(coverage 0.997, CRPS ≈ 2x); the ancestral chain (or DDIM η=1) is calibrated; (2) dividing each window by "
        "the RiskMetrics EWMA volatility known at the decision date (per-date scale) beats the fixed training-period "
        "scale by 15% CRPS at equal budget; (3) at equal budget CSDI's 50-step quadratic schedule trained better than "
        "a 100-step cosine one (0.838 vs 0.910), although the cosine schedule has the smaller discretisation error "
        "with the exact ε; (4) more training steps narrow the spread (coverage 0.97 -> 0.90 from 1500 to 3000 "
        "steps); (5) the learned conditional mean is noise: every learned row has a higher MSE than the zero "
        "forecast, antithetic pairs only remove the Monte-Carlo part, and replacing each date's sample mean by 0 "
        "lowers CRPS by 2-4%. A no-learning reference (EWMA volatility with the historical correlation, Gaussian) "
        "shows how little there is to win on per-asset CRPS in the calm 2015–2018 test years (0.7897 vs bootstrap "
        "0.7887) and that the cross-asset structure is where CRPS-sum can be won (0.7734 vs 0.7895).",
    ]
    return lines


def _fmt(x, spec=".3f"):
    return "–" if x is None else format(x, spec)


def _forecast_lines(m):
    ftab = m["forecast"]
    lines = ["| model | MSE (×1e-4) | CRPS | CRPS-sum | 90% coverage |", "|---|---|---|---|---|"]
    for name, r in ftab.items():
        lines.append(
            f"| {name} | {r['mse'] * 1e4:.4f} | {_fmt(r.get('crps'), '.4f')} | {_fmt(r.get('crps_sum'), '.4f')} | "
            f"{_fmt(r.get('coverage90'))} |"
        )
    return lines


def _verdict(m):
    ftab = m["forecast"]
    base = [ftab[b] for b in ("bootstrap", "gaussian", "garch") if b in ftab]
    diff = [v for k, v in ftab.items() if k.startswith("diffusion")]
    best_crps, best_sum = min(b["crps"] for b in base), min(b["crps_sum"] for b in base)
    zero = ftab["zero forecast"]["mse"]
    rows = {}
    for name, d in zip([k for k in ftab if k.startswith("diffusion")], diff):
        rows[name] = {
            "crps": d["crps"] <= best_crps,
            "crps_sum": d["crps_sum"] <= best_sum,
            "coverage": 0.85 <= d["coverage90"] <= 0.95,
            "mse": d["mse"] <= zero,
        }
    return best_crps, best_sum, zero, rows


def _allocation_lines(m):
    stats = m["sharpe_stats"]
    lines = [
        "| strategy | ann. return | vol | Sharpe [95% CI] | Δ vs 1/N (p) | Δ vs MVO (p) | max DD | turnover/yr |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in m["allocation"].items():
        s = stats[name]
        d1 = s.get("vs 1/N")
        d2 = s.get("vs MVO (sample)")
        cell = lambda d: "–" if d is None else f"{d['diff']:+.2f} ({d['p_value']:.2f})"  # noqa: E731
        lines.append(
            f"| {name} | {r['ann_return']:.3f} | {r['ann_volatility']:.3f} | {r['sharpe']:.2f} "
            f"[{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] | {cell(d1)} | {cell(d2)} | {r['max_drawdown']:.3f} | "
            f"{r['turnover_per_year']:.1f} |"
        )
    return lines


def _regime_lines(m):
    reg = m["regimes"]
    if not reg:
        return []
    names = list(next(iter(reg.values())))
    lines = ["| strategy | " + " | ".join(reg) + " |", "|---" * (len(reg) + 1) + "|"]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(f"{reg[p][n]:.2f}" for p in reg) + " |")
    return lines


def _sanity_lines(s):
    lines = ["| sampler | max mean z | max cov z | energy p | variance ratios | verdict |", "|---|---|---|---|---|---|"]
    for name, label in (("pipeline", "pipeline (ancestral, DDIM η=1)"), ("ddim_eta0", "DDIM η=0")):
        r = s[name]
        vr = ", ".join(f"{v:.2f}" for v in r["variance_ratio"])
        lines.append(
            f"| {label} | {r['max_abs_mean_z']:.2f} | {r['max_abs_cov_z']:.2f} | {r['energy_p']:.3f} | {vr} | "
            f"{'passes' if r['passed'] else 'FAILS'} |"
        )
    return lines


def summary(ctx, cfg, m) -> str:
    best_crps, best_sum, zero, verdicts = _verdict(m)
    yes = {True: "yes", False: "**no**"}
    acc = [
        f"- {name}: CRPS ≤ best baseline ({best_crps:.4f}): {yes[v['crps']]}; CRPS-sum ≤ best baseline "
        f"({best_sum:.4f}): {yes[v['crps_sum']]}; 90% coverage in [0.85, 0.95]: {yes[v['coverage']]}; MSE ≤ zero "
        f"forecast ({zero * 1e4:.4f}e-4): {yes[v['mse']]}."
        for name, v in verdicts.items()
    ]
    lines = [
        f"# STABLE reproduction ({ctx.preset} preset)",
        "",
        f"Command: `python -m experiments run stable --preset {ctx.preset}`. Test period {m['test_period']} "
        f"({m['n_decisions']} month-end decisions), 20 skfolio S&P 500 stocks, daily grid, history {cfg['history']}, "
        f"horizon {cfg['horizon']} days, {cfg['num_samples']} paths per date, walk-forward blocks of "
        f"{cfg['block_years']} years (a new model before each block), {cfg['steps']} training steps per model, "
        f"10 bp costs, monthly rebalancing. Wall {m['wall_s'] / 60:.1f} min, process CPU {m['cpu_s'] / 60:.1f} min "
        "(shared 2-core machine, heavily loaded by other jobs; idle estimate ≈ CPU / 2).",
        "",
        "## Held-out forecasts (line 1 of issue 16)",
        "",
        *_forecast_lines(m),
        "",
        "Acceptance (issue 16, line 1):",
        "",
        *acc,
        "",
        "## Allocation beside the paper",
        "",
        f"Paper (S&P 500, 2024-09..2025-03): STABLE Sharpe {PAPER['STABLE']} vs MVO {PAPER['MVO']}; forecast MSE "
        f"{PAPER['MSE']:.2e} (Diffusion-TS {PAPER['MSE_DiffusionTS']:.2e}). Here: STABLE (published) "
        f"{m['stable_sharpe']:.2f} vs MVO {m['mvo_sharpe']:.2f}; diffusion MSE {m['diffusion_mse']:.3g} per daily "
        "return (our universe, period and horizon differ from the paper's).",
        "",
        *_allocation_lines(m),
        "",
        f"Net-exposure guard of STABLE (published) fired on {100 * m['guard_fraction']:.0f}% of the decisions. "
        "Intervals: circular block bootstrap (21-day blocks, 2000 resamples); Δ = Sharpe difference, two-sided "
        "p-value from the paired block bootstrap.",
        "",
        "### Sharpe by regime",
        "",
        *_regime_lines(m),
    ]
    if "sanity" in m:
        lines += ["", "## Known-law check (AR(1), exact conditional Gaussian)", "", *_sanity_lines(m["sanity"])]
    lines += ["", *ablation_lines()]
    return "\n".join(lines) + "\n"
