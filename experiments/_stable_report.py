"""Summary (markdown) of the stable experiment: forecasts vs baselines, allocation beside the paper, Sharpe CIs and
difference tests, regimes, the known-law check, and the forecaster ablation that chose the configuration."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

PAPER = {"STABLE": 1.85, "MVO": 1.18, "MSE": 3.51e-4, "MSE_DiffusionTS": 3.90e-4}

ABLATION_PUBLISHED = (
    Path(__file__).resolve().parent.parent / "docs" / "results" / "stable_ablation" / "standard"
)
_BASELINE_LABELS = {
    "bootstrap": "bootstrap ({lookback}-day window)",
    "gaussian": "Gaussian ({lookback}-day window)",
    "garch": "GARCH(1,1) per asset ({lookback}-day window)",
    "ewma_gaussian": "EWMA vol (λ={ewma_decay}) × window correlation, Gaussian (no learning)",
}
_SAMPLER_LABELS = {
    "ancestral": "ancestral ({T})",
    "ancestral_antithetic": "ancestral ({T}), antithetic",
    "ddim_eta1_20": "DDIM η=1 (20)",
    "ddim_eta0_20": "DDIM η=0 (20)",
    "ddim_eta0_10": "DDIM η=0 (10)",
}
_SCHEDULES = {"cosine": "cosine {T}", "quadratic": "CSDI quadratic {T}"}
_METRICS = ("crps", "crps_sum", "cov90", "mse", "crps_mean0", "crps_sum_mean0", "cov90_mean0", "mse_mean0")


# ------------------------------------------------------------------------------ the ablation (stable_ablation)
def ablation_rows(m):
    """Table rows of a ``stable_ablation`` metrics dict: the baselines, then every (variant, sampler) with its
    metrics averaged over seeds (``*_sd``: the spread over seeds, when there is more than one)."""
    setup = m["setup"]
    rows = [
        {"key": k, "label": lab.format(**setup), "baseline": True, "model": lab.format(**setup), "scale": "–",
         "schedule": "–", "sampler": "–", "steps": "–", "train_cpu_s": None, **m["baselines"][k]}
        for k, lab in _BASELINE_LABELS.items() if k in m["baselines"]
    ]  # fmt: skip
    variants = {v["name"]: v for v in m["variants"]}
    groups = {}
    for r in m["rows"]:
        groups.setdefault((r["variant"], r["sampler"]), []).append(r)
    for (name, s), rs in groups.items():
        v, T = variants[name], variants[name]["diffusion_steps"]
        row = {
            "key": f"{name}/{s}", "baseline": False, "model": "MLP", "scale": "EWMA" if v["per_date_scale"] else "fixed",
            "schedule": _SCHEDULES[v["schedule"]].format(T=T), "sampler": _SAMPLER_LABELS[s].format(T=T),
            "sampler_key": s, "steps": v["steps"], "train_cpu_s": float(np.mean([r["train_cpu_s"] for r in rs])),
            "n_seeds": len(rs),
        }  # fmt: skip
        row["label"] = f"MLP, {row['scale']}, {row['schedule']}, {row['steps']} steps, {row['sampler']}"
        for k in _METRICS:
            row[k] = float(np.mean([r[k] for r in rs]))
            if len(rs) > 1:
                row[k + "_sd"] = float(np.std([r[k] for r in rs], ddof=1))
        rows.append(row)
    return rows


def _cell(r, k, spec):
    return _fmt(r.get(k), spec) + (f" ± {format(r[k + '_sd'], spec)}" if k + "_sd" in r else "")


def ablation_table_lines(m):
    lines = [
        "| model | scale | schedule | sampler | train steps | CRPS | CRPS-sum | cov90 | MSE ×1e-4 | CRPS, mean 0 | "
        "CRPS-sum, mean 0 | cov90, mean 0 | train CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in ablation_rows(m):
        mse = {"mse": r["mse"] * 1e4, **({"mse_sd": r["mse_sd"] * 1e4} if "mse_sd" in r else {})}
        cells = [r["model"], r["scale"], r["schedule"], r["sampler"], str(r["steps"]), _cell(r, "crps", ".4f"),
                 _cell(r, "crps_sum", ".4f"), _cell(r, "cov90", ".3f"), _cell(mse, "mse", ".3f"),
                 _cell(r, "crps_mean0", ".4f"), _cell(r, "crps_sum_mean0", ".4f"), _cell(r, "cov90_mean0", ".3f"),
                 _fmt(r["train_cpu_s"], ".0f")]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ablation_setup_text(m):
    s = m["setup"]
    return (
        f"Daily grid, {s['n_assets']} skfolio S&P 500 stocks, history {s['history']}, horizon {s['horizon']}; "
        f"training decisions {s['train_dates'][0]} .. {s['train_dates'][1]} ({s['n_train']} windows whose targets "
        f"end before the test years), test every {s['test_every']}th trading day {s['test_dates'][0]} .. "
        f"{s['test_dates'][1]} ({s['n_test']} windows), {s['n_samples']} paths each, {s['seeds']} training "
        f"seed(s); baselines on a {s['lookback']}-day trailing window. Learned rows: guided two-level MLP denoiser "
        f"(hidden {s['hidden']}, depth {s['depth']}, embeddings {s['channels']}), batch {s['batch_size']}, lr "
        f"{s['lr']} cosine-decayed, EMA {s['ema']}; each model sampled with the listed samplers from the same key. "
        "Lower CRPS is better; 90% coverage should be 0.90. *mean 0*: each date's sample mean replaced by 0 "
        f"(`recenter_paths`). Zero-forecast MSE {m['zero_forecast_mse'] * 1e4:.3f}e-4."
    )


def _pairs(learned, attr):
    """Pairs of ancestral rows that differ only in ``attr`` (scale, schedule or steps)."""
    anc = [r for r in learned if r["sampler_key"] == "ancestral"]
    others = [a for a in ("scale", "schedule", "steps") if a != attr]
    return [(a, b) for i, a in enumerate(anc) for b in anc[i + 1 :]
            if a[attr] != b[attr] and all(a[o] == b[o] for o in others)]  # fmt: skip


def _range(xs, spec):
    lo, hi = format(min(xs), spec), format(max(xs), spec)
    return lo if lo == hi else f"{lo} to {hi}"


def _sampler_findings(learned):
    out = []
    for eta in ("0", "1"):
        rs = [r for r in learned if r["sampler_key"].startswith(f"ddim_eta{eta}")]
        anc = {(r["scale"], r["schedule"], r["steps"]): r for r in learned if r["sampler_key"] == "ancestral"}
        ratio = [r["crps"] / anc[(r["scale"], r["schedule"], r["steps"])]["crps"] for r in rs
                 if (r["scale"], r["schedule"], r["steps"]) in anc]  # fmt: skip
        if rs and ratio:
            out.append(
                f"DDIM η={eta} ({len(rs)} row{'s' if len(rs) > 1 else ''}): coverage {_range([r['cov90'] for r in rs], '.3f')}, CRPS "
                f"{_range(ratio, '.2f')}× the same model's ancestral chain."
            )
    return out


def _pair_findings(learned):
    out = []
    for attr, what in (("scale", "per-date EWMA vs fixed scale"), ("schedule", "noise schedule"),
                       ("steps", "training budget")):  # fmt: skip
        for a, b in _pairs(learned, attr):
            fixed = ", ".join(str(a[o]) for o in ("scale", "schedule", "steps") if o != attr)
            out.append(
                f"{what} ({fixed}, ancestral): {a[attr]} CRPS {a['crps']:.4f} / CRPS-sum {a['crps_sum']:.4f} / "
                f"coverage {a['cov90']:.3f} vs {b[attr]} {b['crps']:.4f} / {b['crps_sum']:.4f} / {b['cov90']:.3f} "
                f"(CRPS {100 * (b['crps'] / a['crps'] - 1):+.1f}%)."
            )
    return out


def ablation_findings(m):
    rows = ablation_rows(m)
    learned = [r for r in rows if not r["baseline"]]
    base = {r["key"]: r for r in rows if r["baseline"]}
    classic = [base[k] for k in ("bootstrap", "gaussian", "garch") if k in base]
    zero = m["zero_forecast_mse"]
    out = _sampler_findings(learned) + _pair_findings(learned)
    above = [r for r in learned if r["mse"] > zero]
    d0 = [r["crps_mean0"] / r["crps"] - 1 for r in learned]
    out.append(
        f"Mean: {len(above)} of {len(learned)} learned rows have an MSE above the zero forecast's "
        f"({zero * 1e4:.3f}e-4); replacing each date's sample mean by 0 changes their CRPS by "
        f"{_range([100 * x for x in d0], '+.1f')}%."
    )
    if classic and learned:
        bc = min(classic, key=lambda r: r["crps"])
        bs = min(classic, key=lambda r: r["crps_sum"])
        for k, key, ref in (("CRPS", "crps", bc), ("CRPS-sum", "crps_sum", bs)):
            for tag, sfx in (("", ""), (", mean 0", "_mean0")):
                best = min(learned, key=lambda r: r[key + sfx])
                verdict = "≤" if best[key + sfx] <= ref[key] else ">"
                out.append(f"Best learned {k}{tag}: {best[key + sfx]:.4f} ({best['label']}, coverage "
                           f"{best['cov90' + sfx]:.3f}) {verdict} best of bootstrap / Gaussian / GARCH "
                           f"{ref[key]:.4f} ({ref['key']}).")  # fmt: skip
    if "ewma_gaussian" in base and classic:
        e = base["ewma_gaussian"]
        out.append(
            f"No-learning EWMA Gaussian: CRPS {e['crps']:.4f}, CRPS-sum {e['crps_sum']:.4f}, coverage "
            f"{e['cov90']:.3f} vs best classic baseline CRPS {min(r['crps'] for r in classic):.4f}, CRPS-sum "
            f"{min(r['crps_sum'] for r in classic):.4f}."
        )
    if "mc_noise_sd" in m:
        n = m["mc_noise_sd"]
        out.append(
            f"Monte-Carlo noise of a score from {m['setup']['n_samples']} paths (sd over {n['seeds']} re-draws of "
            f"the EWMA Gaussian's paths): CRPS {n['crps']:.4f}, CRPS-sum {n['crps_sum']:.4f}, coverage "
            f"{n['cov90']:.4f}, MSE {n['mse'] * 1e4:.3f}e-4. Training-seed noise comes on top and is not measured "
            "with one seed."
        )
    return ["- " + x for x in out]


def ablation_summary(preset, cfg, m):
    """summary.md of the ``stable_ablation`` experiment."""
    fits = {(r["variant"], r["seed"]): r for r in m["rows"]}.values()  # one training per variant and seed
    cost = sum(r["train_cpu_s"] for r in fits) + sum(r["sample_cpu_s"] for r in m["rows"])
    wall = sum(r["train_wall_s"] for r in fits) + sum(r["sample_wall_s"] for r in m["rows"])
    return "\n".join([
        f"# Forecaster ablation for issue 16 ({preset} preset)",
        "",
        f"Command: `python -m experiments run stable_ablation --preset {preset}`; finished "
        f"{time.strftime('%Y-%m-%d')}. This invocation: wall {m['wall_s'] / 60:.1f} min, process CPU "
        f"{m['cpu_s'] / 60:.1f} min (stages reused by `--resume` are not re-timed). Per stage, as first computed: "
        f"training + sampling {cost / 60:.1f} min CPU / {wall / 60:.1f} min wall, baselines "
        f"{m['baseline_cost']['cpu_s'] / 60:.1f} min CPU / {m['baseline_cost']['wall_s'] / 60:.1f} min wall; shared "
        "2-core machine loaded by other jobs (idle estimate ≈ CPU / 2).",
        "",
        ablation_setup_text(m),
        "",
        *ablation_table_lines(m),
        "",
        "![CRPS and coverage per row](ablation_crps_coverage.png)",
        "",
        "## What the numbers say",
        "",
        *ablation_findings(m),
        "",
        *ABLATION_DISCUSSION,
    ]) + "\n"  # fmt: skip


ABLATION_DISCUSSION = [
    "## Discussion",
    "",
    "The rows answer issue 16's question of what it takes for the learned forecaster to compete: the sampler, the "
    "scale the denoiser sees, the schedule and the training budget (written for the `standard` grid; the `quick` "
    "preset is a smoke run whose numbers mean little). Deterministic DDIM (η = 0) on the learned ε is "
    "over-dispersed at every budget and schedule tried; the ancestral chain or DDIM η = 1 is the sampler to use. "
    "The conditional mean of daily returns is not forecastable here (compare the MSE column with the zero "
    "forecast), so the skill that can be won is in the spread and the cross-asset structure; the no-learning EWMA "
    "Gaussian row shows how little there is to win on per-asset CRPS in these test years and that CRPS-sum is where "
    "the cross-asset structure pays. The last row is the configuration the `stable` experiment uses (the schedule "
    "that won at 1500 steps with the larger budget).",
    "",
    "Caveats. One training seed per variant in `standard` (three in `paper`); read differences against the "
    "Monte-Carlo noise above plus an unmeasured training-seed spread. The test windows (2015–2018) lie inside the "
    "`stable` experiment's test span (2006–2022), so the configuration chosen here has seen part of that span. The "
    "EWMA decay 0.94 is the RiskMetrics default, not tuned on the test years. The attention denoiser of the earlier "
    "sessions is not part of this ablation.",
]


def ablation_lines(cfg=None):
    """The stable summary's ablation section, read from the published stable_ablation standard run."""
    head = ["## The ablation that chose the forecaster", ""]
    f = ABLATION_PUBLISHED / "metrics.json"
    if not f.exists():
        return head + ["Not yet run: `python -m experiments run stable_ablation --preset standard`, then "
                       "`python -m experiments publish stable_ablation --preset standard`."]  # fmt: skip
    # the published run predates the glossary's n_* names: read its sample count under either key
    rec = json.loads(f.read_text().replace('"num_samples":', '"n_samples":'))
    m = rec["metrics"]
    chosen = []
    if cfg is not None:
        chosen = [
            "",
            f"This experiment uses the {cfg['denoiser'].upper()} denoiser with the per-date EWMA scale, the "
            f"{cfg['schedule']} {cfg['diffusion_steps']}-step schedule, "
            + (
                "the ancestral chain"
                if cfg["sampler"] == "ddpm"
                else f"DDIM η = {cfg['eta']} ({cfg['sample_steps']} steps)"
            )
            + f" and {cfg['steps']} training steps per model.",
        ]
    return head + [
        f"From the published `stable_ablation` run (`{rec['command']}`, finished {rec['finished'][:10]}; files in "
        "`docs/results/stable_ablation/standard/`).",
        "",
        ablation_setup_text(m),
        "",
        *ablation_table_lines(m),
        "",
        *ablation_findings(m),
        *chosen,
    ]


def _span(xs, spec):
    lo, hi = format(min(xs), spec), format(max(xs), spec)
    return lo if lo == hi else f"{lo}–{hi}"


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
    lines = [
        "| sampler | max mean z | max cov z | energy p | variance ratios | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in (("pipeline", "pipeline sampler (ancestral chain)"), ("ddim_eta0", "DDIM η=0")):
        r = s[name]
        vr = ", ".join(f"{v:.2f}" for v in r["variance_ratio"])
        lines.append(
            f"| {label} | {r['max_abs_mean_z']:.2f} | {r['max_abs_cov_z']:.2f} | {r['energy_p']:.3f} | {vr} | "
            f"{'passes' if r['passed'] else 'FAILS'} |"
        )
    return lines


def _calibration_texts(m):
    """Coverage by span, recalibration-window sensitivity and the known-law check, as prose fragments."""
    checks = m.get("calibration_checks", {})
    spans = checks.get("coverage_mean0_by_span", {})
    span_txt = ", ".join(f"{k} {v:.3f}" for k, v in spans.items()) or "not computed"
    cw = checks.get("calibration_windows", {})
    cw_txt = "not computed"
    if cw:
        rng = lambda k, spec: _span([v[k] for v in cw.values()], spec)  # noqa: E731
        cw_txt = (f"windows of {', '.join(cw)} decisions give CRPS {rng('crps', '.4f')}, CRPS-sum "
                  f"{rng('crps_sum', '.4f')} and coverage {rng('coverage90', '.3f')} on this run")  # fmt: skip
    vr = m.get("sanity", {}).get("pipeline", {}).get("variance_ratio")
    vr_txt = (
        f"variance ratios {_span(vr, '.2f')} in this run's known-law check"
        if vr
        else "see the known-law check"
    )
    return span_txt, cw_txt, vr_txt


def _regimes(years) -> str:
    """The market regimes a test span contains, for the discussion text."""
    named = {
        2000: "the dot-com crash",
        2008: "the 2008 crisis",
        2020: "the 2020 crash",
        2022: "the 2022 bear market",
    }
    hit = [v for y, v in named.items() if y in years]
    return ", including " + ", ".join(hit[:-1]) + (" and " if len(hit) > 1 else "") + hit[-1] if hit else ""


def _discussion(cfg, m):
    train = [b for v in m["train"].values() for b in v]
    cpu = sum(b["cpu_s"] for b in train) / 60
    wall = sum(b["wall_s"] for b in train) / 60
    f = next(iter(m["calibration_factors"].values()))
    ft = m["forecast"]
    raw = next(v for k, v in ft.items() if k.startswith("diffusion ("))
    zero_mean = next(v for k, v in ft.items() if k.startswith("diffusion, mean 0 ("))
    garch = ft.get("garch", {"crps": float("nan")})
    span_txt, cw_txt, vr_txt = _calibration_texts(m)
    return [
        "## Discussion",
        "",
        "**Forecasts.** Three diffusion rows are reported. *diffusion* is the model's own sample (its mean included); "
        "*mean 0* replaces each date's sample mean by zero (`recenter_paths`): the learned conditional mean of daily "
        "returns is estimation noise (its MSE is above the zero forecast's here; see also the ablation), so the "
        "skill that can be won is in the distribution; *calibrated spread* additionally rescales each date's spread "
        "by the ratio of realized to predicted squared errors over the previous "
        f"{cfg['calib_window']} decisions whose outcomes were already known (`calibrate_spread`, walk-forward, no "
        f"look-ahead; factors min / median / max {f[0]:.2f} / {f[1]:.2f} / {f[2]:.2f}). 90% coverage of the mean-0 "
        f"model alone by span: {span_txt} (target 0.90); CSDI's coarse 50-step schedule with the ancestral chain "
        f"is checked on the AR(1) law ({vr_txt}). Full disclosure: the calibration step was added after the first "
        "complete standard run showed the model too narrow on these test years, so that choice has seen the test "
        f"period; its one parameter was not tuned ({cw_txt}) and it uses only outcomes known at each decision. "
        f"Without calibration: raw model CRPS-sum {raw['crps_sum']:.4f}, mean-0 "
        f"model CRPS {zero_mean['crps']:.4f} (GARCH {garch['crps']:.4f}). The mean is not forecastable here: MSE "
        "equals the zero forecast by construction for the mean-0 rows, and the raw model's MSE "
        f"({raw['mse'] * 1e4:.4f}e-4) is {'above' if raw['mse'] > ft['zero forecast']['mse'] else 'not above'} "
        f"the zero forecast's ({ft['zero forecast']['mse'] * 1e4:.4f}e-4).",
        "",
        *([cfg["purpose"], ""] if cfg.get("purpose") else []),
        "**Allocation.** STABLE as published (precision fusion with P = I and no τ, then tangency weights) takes the "
        "model's noisy means at face value: the view covariance (the spread of 64 path means) is small, so the "
        "fused mean is close to the view mean and the tangency portfolio chases noise (high turnover; the "
        "net-exposure guard fires often). The paper's Sharpe 1.85 vs MVO 1.18 is not reproduced in this universe: "
        "no STABLE variant beats 1/N or sample MVO with a significant Sharpe difference (see the p-values). The paper "
        "tests 2024-09..2025-03 (about 6 months) on 37–55 stocks; our test spans "
        f"{len(cfg['test_years'])} years ({cfg['test_years'][0]}–{cfg['test_years'][-1]}"
        f"{_regimes(cfg['test_years'])}) on the 20 stocks that ship offline, so the numbers are not comparable one "
        "to one.",
        "",
        "**Macro inputs (proxies).** STABLE uses the market index, a USD index, Treasury spreads, VIX and gold. "
        "Offline data covering 1990–2022 has the S&P 500 index only (skfolio): the macro vector is the S&P 500 level "
        "and a VIX proxy (21-day realized S&P 500 volatility, % p.a.; VIX ships with `arch` for 2014–2019 only). "
        "`stable_macro_frame(variant='rich')` adds Moody's BAA–AAA spread (stand-in for Treasury spreads) and WTI "
        "oil (stand-in for gold), which end in 2018 and so cannot serve a test span with 2020 and 2022. No offline "
        "source has a US dollar index: omitted. Each series enters as its log-difference and level, z-scored on a "
        f"trailing ν = {cfg['nu']}-day window; the stock embedding is the Kalman-filtered time-varying β of each "
        "stock's standardized log return on the macro log-differences (plus 21/63-day momentum and 21-day "
        "volatility).",
        "",
        "**Choices where the paper is silent.** Horizon 5 trading days, history 20, month-end rebalancing with 10 bp "
        "proportional costs, k = 64 paths (> 20 assets, as Σ_view must be invertible), prior = mean and Ledoit–Wolf "
        "covariance of the trailing 756 days, guard = minimum-variance portfolio of Σ_BL when "
        f"1ᵀΣ_BL⁻¹μ_BL ≤ {cfg['min_net_exposure']}·‖Σ_BL⁻¹μ_BL‖₁, gross leverage cap {cfg['leverage_cap']} (rest in "
        "cash). The denoiser is a residual MLP with STABLE's two-level guidance and learned gate (not the paper's "
        "U-Net); its scale, schedule, sampler and budget follow the ablation below (the attention denoiser is not "
        "part of it).",
        "",
        f"**Cost.** Training and sampling: {len(train)} walk-forward models, {cpu:.1f} min process CPU / "
        f"{wall:.1f} min wall in total, as recorded by their stages on the shared 2-core machine (the baselines, "
        "backtests and known-law check come on top and are not timed separately). A `--resume` rerun reuses the "
        "cached stages and only recomputes the tables, backtests and this summary.",
        "",
        "**Bounded memory (issue 16, line 5).** `sample_paths` maps over chunks of `chunk_size` paths (256 here) "
        "and `energy_test` / `energy_distance` build the distance matrix and the permutation statistics in blocks; "
        "the unit tests check that chunked and all-at-once results agree. Peak memory is not measured by this "
        "experiment.",
    ]


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
        f"horizon {cfg['horizon']} days, {cfg['n_samples']} paths per date, walk-forward blocks of "
        f"{cfg['block_years']} years (a new model before each block), {cfg['steps']} training steps per model, "
        f"10 bp costs, monthly rebalancing. This invocation: wall {m['wall_s'] / 60:.1f} min, process CPU "
        f"{m['cpu_s'] / 60:.1f} min (stages reused by `--resume` are not re-timed; full-run cost under **Cost** "
        "below; shared 2-core machine, heavily loaded by other jobs; idle estimate ≈ CPU / 2).",
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
        *(["### Sharpe by regime", "", *_regime_lines(m)] if m["regimes"] else []),
    ]
    if "sanity" in m:
        lines += ["", "## Known-law check (AR(1), exact conditional Gaussian)", "",
                  "The pipeline's forecaster (same denoiser, schedule and sampler) trained on a 3-asset AR(1); 512 "
                  "paths for one history vs the exact law (criteria: every mean |z| < 4, covariance |z| < 4.5, "
                  "energy-test p > 0.005).", "", *_sanity_lines(m["sanity"])]  # fmt: skip
    lines += ["", *_discussion(cfg, m)]
    lines += ["", *ablation_lines(cfg)]
    return "\n".join(lines) + "\n"
