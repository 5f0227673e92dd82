"""Fill the summary templates of ``stable`` and ``stable_ablation`` (``experiments/templates/*.md``: the prose, with
``{placeholders}``) from a run's metrics. This module only builds numbers and tables; it holds no prose."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

TEMPLATES = Path(__file__).resolve().parent / "templates"
PAPER = {"STABLE": 1.85, "MVO": 1.18, "MSE": 3.51e-4}
_BASELINE_LABELS = {
    "bootstrap": "block bootstrap",
    "gaussian": "Gaussian",
    "garch": "GARCH(1,1) per asset",
    "ewma_gaussian": "EWMA vol × window correlation, Gaussian",
}
_SAMPLER_LABELS = {
    "ancestral": "ancestral ({T})",
    "ancestral_antithetic": "ancestral ({T}), antithetic",
    "ddim_eta1_20": "DDIM η=1 (20)",
    "ddim_eta0_20": "DDIM η=0 (20)",
    "ddim_eta0_10": "DDIM η=0 (10)",
}
_SCHEDULES = {"cosine": "cosine {T}", "quadratic": "CSDI quadratic {T}"}


def fill(template: str, **values) -> str:
    """The template ``experiments/templates/<template>`` with its ``{placeholders}`` filled."""
    return (TEMPLATES / template).read_text().format_map(values)


def _f(x, spec=".4f"):
    return "–" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)


# ----------------------------------------------------------------------------------------------------- stable
def _forecast_table(m):
    head = ["| forecaster | rows | energy (val) | energy (test) | CRPS-sum (test) | CRPS (test) | cov90 (test) | "
            "MSE ×1e-4 (test) |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    lines = []
    for key, r in m["forecast"].items():
        name, kind = key.rsplit(" [", 1)
        v, t = r["validation"], r["test"]
        label = _BASELINE_LABELS.get(name, name)
        lines.append(f"| {label} | {kind[:-1]} | {_f(v['energy'] * 1e2)} | {_f(t['energy'] * 1e2)} | "
                     f"{_f(t['crps_sum'])} | {_f(t['crps'])} | {_f(t['coverage90'], '.3f')} | {_f(t['mse'] * 1e4, '.3f')} |")  # fmt: skip
    return "\n".join(head + sorted(lines, key=lambda s: ("diffusion" not in s.split("|")[1], s)))


def _diff_cells(d) -> list[str]:
    """Paired differences (energy ×1e-2, CRPS-sum, CRPS) as ``mean [lo, hi]``, ``*`` when the CI excludes 0."""
    cells = []
    for met, sc in (("energy", 1e2), ("crps_sum", 1), ("crps", 1)):
        x = d[met]
        star = " *" if x["excludes_0"] else ""
        cells.append(f"{x['mean'] * sc:+.4f} [{x['ci'][0] * sc:+.4f}, {x['ci'][1] * sc:+.4f}]{star}")
    return cells


def _paired_table(m):
    lines = ["| forecaster − best baseline | energy ×1e-2 (95% CI) | CRPS-sum (95% CI) | CRPS (95% CI) |",
             "|---|---|---|---|"]  # fmt: skip
    for key, d in m["paired_test"].items():
        cells = _diff_cells(d)
        lines.append(f"| {key.split(' - ')[0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _paired_all_table(m):
    """Seed-mean post-processed diffusion minus every post-processed baseline (absent from older records)."""
    rows = m.get("paired_test_all_baselines")
    if not rows:
        return "Not recorded in this run."
    lines = ["| diffusion (seed mean) [post] − baseline [post] | energy ×1e-2 (95% CI) | CRPS-sum (95% CI) | "
             "CRPS (95% CI) |", "|---|---|---|---|"]  # fmt: skip
    for key, d in rows.items():
        base = key.split(" - ")[1].rsplit(" [", 1)[0]
        cells = _diff_cells(d)
        lines.append(f"| {_BASELINE_LABELS.get(base, base)} | " + " | ".join(cells) + " |")
    names = {"energy": "energy score", "crps_sum": "CRPS-sum"}
    for met in ("energy", "crps_sum"):
        won = sum(d[met]["excludes_0"] and d[met]["mean"] < 0 for d in rows.values())
        lost = sum(d[met]["excludes_0"] and d[met]["mean"] > 0 for d in rows.values())
        lines.append("")
        lines.append(f"On {names[met]} it is better than {won} of {len(rows)} post-processed baselines and worse "
                     f"than {lost} (paired 95% interval excluding 0); the rest are ties.")  # fmt: skip
    return "\n".join(lines)


def _allocation_table(m):
    lines = ["| strategy | Sharpe (95% CI) | ann. return | ann. vol | max DD | Δ vs 1/N [95% CI] (p) | Δ vs MVO [95% CI] (p) |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in m["allocation"].items():

        def diff(ref, r=r):
            d = r.get(f"vs {ref}")
            return (
                "–"
                if d is None
                else f"{d['diff']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}] ({d['p_value']:.2f})"
            )

        lines.append(f"| {name} | {r['sharpe']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}] | "
                     f"{_f(r.get('ann_return'), '.3f')} | {_f(r.get('ann_volatility'), '.3f')} | "
                     f"{_f(r.get('max_drawdown'), '.3f')} | {diff('1/N')} | {diff('MVO (sample)')} |")  # fmt: skip
    return "\n".join(lines)


def _mean_skill(m):
    """The forecaster's mean path against the zero forecast: recentering sets every post-processed mean path to 0,
    so the post-processed rows' MSE is exactly the zero forecast's."""
    raw = m["forecast"]["diffusion (seed mean) [raw]"]["test"]["mse"]
    zero = m["forecast"]["diffusion (seed mean) [post]"]["test"]["mse"]
    verdict = "no skill: its mean path is worse than predicting 0" if raw >= zero else "beats predicting 0"
    return (f"The raw diffusion forecaster's mean path has MSE {raw * 1e4:.3f}e-4 against {zero * 1e4:.3f}e-4 for the "
            f"zero forecast (every post-processed row: recentering sets the mean path to 0): {verdict}.")  # fmt: skip


def _secondary_table(m):
    """The other comparisons as one Holm-corrected family (absent from older records)."""
    sec = m.get("secondary")
    if not sec:
        return "Not recorded in this run (its per-date scores were not stored)."
    lines = ["| secondary comparison (test) | mean difference [95% CI] | block | p | Holm p | verdict |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for key, x in sec.items():
        lines.append(f"| {key} | {x['estimate']:+.4g} [{x['ci'][0]:+.4g}, {x['ci'][1]:+.4g}] | {x['block']} | "
                     f"{x['p']:.3g} | {x['p_adjusted']:.3g} | {x['word']} |")  # fmt: skip
    return "\n".join(lines)


def _verdict(m):
    # computed by jaxkit.evaluation from the declared endpoint and the stored records
    if "verdict_markdown" in m:
        return m["verdict_markdown"]
    d = m["paired_test"][f"diffusion (seed mean) [post] - {m['best_baseline']} [post]"]
    wins = [met for met in ("energy", "crps_sum") if d[met]["excludes_0"] and d[met]["mean"] < 0]
    loses = [met for met in ("energy", "crps_sum") if d[met]["excludes_0"] and d[met]["mean"] > 0]
    names = {"energy": "energy score", "crps_sum": "CRPS-sum"}
    if wins:
        return (f"**Yes**: the post-processed diffusion forecaster (mean over seeds) beats the best post-processed "
                f"baseline on {' and '.join(names[w] for w in wins)} with a paired 95% interval excluding 0.")  # fmt: skip
    if loses:
        return (f"**No**: the post-processed diffusion forecaster is *worse* than the best post-processed baseline on "
                f"{' and '.join(names[w] for w in loses)} (paired 95% interval excluding 0).")  # fmt: skip
    return (
        "**No**: on the test period neither the energy score nor CRPS-sum of the post-processed diffusion "
        "forecaster differs from the best post-processed baseline with a paired 95% interval excluding 0."
    )


def summary(preset, cfg, m) -> str:
    """summary.md of the ``stable`` experiment."""
    tr = m["train"]
    best = m["best_baseline"]
    stable = [m["allocation"][f"STABLE (published) s{s}"]["sharpe"] for s in m["seeds"]]
    return fill(
        "stable.md", preset=preset, finished=time.strftime("%Y-%m-%d"), wall_min=m["wall_s"] / 60,
        cpu_min=m["cpu_s"] / 60, p=m["periods"], n=m["n_decisions"], n_train=m["n_train"],
        n_assets=len(m["tickers"]), data_start=m["data_start"], seeds=len(m["seeds"]), cfg=cfg,
        train_cpu_min=np.mean([t["train_cpu_s"] for t in tr]) / 60,
        sample_cpu_min=np.mean([t["sample_cpu_s"] for t in tr]) / 60,
        baseline_cpu_min=m["baseline_cost"]["cpu_s"] / 60,
        forecast_table=_forecast_table(m), best_baseline=_BASELINE_LABELS.get(best, best), best_key=best,
        paired_table=_paired_table(m), paired_all_table=_paired_all_table(m), verdict=_verdict(m), secondary_table=_secondary_table(m), mean_skill=_mean_skill(m), allocation_table=_allocation_table(m),
        stable_sharpe_range=f"{min(stable):.2f} .. {max(stable):.2f}", mvo_sharpe=m["mvo_sharpe"],
        paper=PAPER, guard=100 * np.mean(list(m["guard_fraction"].values())),
        factors="; ".join(
            f"{_BASELINE_LABELS.get(k, k)} {np.min(v['factor']):.2f}–{np.max(v['factor']):.2f}"
            for k, v in m["postprocess"].items()
        ),
        sanity=_sanity_text(m.get("sanity")),
    )  # fmt: skip


def _sanity_text(s):
    if not s:
        return "Not run in this preset."
    out = []
    for name in ("pipeline", "ddim_eta0"):
        r = s[name]
        out.append(f"- {name}: max |mean z| {r['max_abs_mean_z']:.2f}, max |cov z| {r['max_abs_cov_z']:.2f}, "
                   f"energy-test p {r['energy_p']:.3f}: {'passed' if r['passed'] else '**failed**'}")  # fmt: skip
    return "\n".join(out)


# ------------------------------------------------------------------------------------------- stable_ablation
def ablation_rows(m):
    """Table rows of a ``stable_ablation`` metrics dict: the baselines, then every (variant, sampler) with its
    metrics averaged over seeds (``*_sd``: the spread over seeds, when there is more than one)."""
    rows = [{"key": k, "label": lab, "baseline": True, **m["baselines"][k]}
            for k, lab in _BASELINE_LABELS.items() if k in m["baselines"]]  # fmt: skip
    variants = {v["name"]: v for v in m["variants"]}
    groups = {}
    for r in m["rows"]:
        groups.setdefault((r["variant"], r["sampler"]), []).append(r)
    metrics = [
        k
        for k in m["rows"][0]
        if k.split("_mean0")[0] in ("crps", "crps_sum", "energy", "coverage90", "cov90", "mse")
    ]
    for (name, s), rs in groups.items():
        v, T = variants[name], variants[name]["diffusion_steps"]
        row = {"key": f"{name}/{s}", "baseline": False,
               "label": f"MLP, {'EWMA' if v['per_date_scale'] else 'fixed'} scale, "
                        f"{_SCHEDULES[v['schedule']].format(T=T)}, {v['steps']} steps, {_SAMPLER_LABELS[s].format(T=T)}",
               "train_cpu_s": float(np.mean([r["train_cpu_s"] for r in rs]))}  # fmt: skip
        for k in metrics:
            row[k] = float(np.mean([r[k] for r in rs]))
            if len(rs) > 1:
                row[k + "_sd"] = float(np.std([r[k] for r in rs], ddof=1))
        rows.append(row)
    return rows


def _ablation_table(m):
    lines = ["| forecaster | CRPS | CRPS-sum | energy ×1e-2 | cov90 | MSE ×1e-4 | CRPS, mean 0 | CRPS-sum, mean 0 | "
             "train CPU s |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in ablation_rows(m):  # runs before the energy score was added have no energy column (–)
        energy = r["energy"] * 1e2 if "energy" in r else None
        cov = r.get("coverage90", r.get("cov90"))
        lines.append(f"| {r['label']} | {_f(r['crps'])} | {_f(r['crps_sum'])} | {_f(energy)} | {_f(cov, '.3f')} | "
                     f"{_f(r['mse'] * 1e4, '.3f')} | {_f(r['crps_mean0'])} | {_f(r['crps_sum_mean0'])} | "
                     f"{_f(r.get('train_cpu_s'), '.0f')} |")  # fmt: skip
    return "\n".join(lines)


def ablation_summary(preset, cfg, m, finished=None):
    """summary.md of the ``stable_ablation`` experiment (``finished``: the run's date, default today)."""
    s = dict(m["setup"])
    s.setdefault("n_samples", s.get("num_samples"))  # records published before the rename
    fits = {(r["variant"], r["seed"]): r for r in m["rows"]}.values()
    return fill(
        "stable_ablation.md", preset=preset, finished=finished or time.strftime("%Y-%m-%d"), s=s, wall_min=m["wall_s"] / 60,
        cpu_min=m["cpu_s"] / 60, fit_cpu_min=sum(r["train_cpu_s"] for r in fits) / 60,
        fit_cpu_lo=min(r["train_cpu_s"] for r in fits) / 60, fit_cpu_hi=max(r["train_cpu_s"] for r in fits) / 60,
        n_fits=len(fits),
        baseline_cpu_min=m["baseline_cost"]["cpu_s"] / 60, zero_mse=m["zero_forecast_mse"] * 1e4,
        table=_ablation_table(m), mc_crps=m["mc_noise_sd"]["crps"], mc_crps_sum=m["mc_noise_sd"]["crps_sum"],
        mc_seeds=m["mc_noise_sd"]["seeds"],
    )  # fmt: skip
