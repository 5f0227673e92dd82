"""Saddle-to-saddle dynamics (Zhang, Saxe & Latham, ICLR 2026): simulations held against theory.

Sections (each a resumable stage): two-layer linear net vs the Saxe et al. closed forms; init-scale sweep
(plateau durations, ln-scaling) and data-spectrum sweep (plateau count); diagonal linear net vs the Pesme &
Flammarion (2023) jump algorithm and the minimum-ℓ1 interpolator (scipy linprog); scalar-input ReLU net (kinks),
ReLU CNN (kernels) and linear attention (heads) with plateau saddle checks.
"""

from __future__ import annotations

from typing import Any

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import jaxkit.dynamics as dyn
from experiments import Anchor, Experiment, register
from jaxkit.evaluation import ToleranceEndpoint, endpoint_from_dict, verdict

QUICK: dict[str, Any] = {
    "linear": {"s": [4.0, 1.5, 0.5], "u0": 1e-4, "t1": 14.0, "n_save": 701},
    "init_sweep": {"s": [4.0, 1.5, 0.5], "scales": [1e-2, 1e-3, 1e-4, 1e-5, 1e-6], "seeds": 2, "t1": 20.0},
    "spectrum_sweep": {
        "spectra": [[4.0, 1.5, 0.5], [4.0, 2.0, 1.0], [4.0, 3.0, 2.5]],
        "u0": 1e-4,
    },
    "diagonal": {"alpha": 1e-6, "seed": 80, "n": 5, "d": 8, "t1": 80.0},
    "relu": {"width": 16, "scale": 1e-5, "lr": 0.05, "steps": 6000},
    "cnn": {"kernels": 4, "scale": 1e-6, "lr": 0.004, "steps": 1000, "samples": 64},
    "attention": {
        "dim": 3,
        "heads": 3,
        "eigs": [1.0, 0.6, 0.3],
        "n_ctx": 32,
        "n_seq": 256,
        "scale": 1e-3,
        "lr": 0.1,
        "steps": 4000,
    },
}
PAPER: dict[str, Any] = {
    "linear": {"s": [4.0, 1.5, 0.5], "u0": 1e-4, "t1": 14.0, "n_save": 2001},
    "init_sweep": {"s": [4.0, 1.5, 0.5], "scales": [10.0**-k for k in range(1, 11)], "seeds": 8, "t1": 30.0},
    "spectrum_sweep": {
        "spectra": [[4.0, s2, s3] for s2 in (0.5, 1.0, 2.0, 3.0) for s3 in (0.1, 0.3)],
        "u0": 1e-4,
    },
    "diagonal": {"alpha": 1e-10, "seed": 183, "n": 5, "d": 8, "t1": 400.0},
    "relu": {"width": 64, "scale": 1e-7, "lr": 0.02, "steps": 60000},
    "cnn": {"kernels": 8, "scale": 1e-8, "lr": 0.002, "steps": 10000, "samples": 512},
    "attention": {
        "dim": 6,
        "heads": 6,
        "eigs": [1.0, 0.8, 0.6, 0.4, 0.3, 0.2],
        "n_ctx": 64,
        "n_seq": 2048,
        "scale": 1e-4,
        "lr": 0.05,
        "steps": 40000,
    },
}

# Seconds (tests/experiments/test_smoke.py): every section, figure and closed form of quick, at fewer sweep points,
# seeds and gradient steps (the linear and diagonal flows are adaptive ODE solves: their cost is compilation).
SMOKE: dict[str, Any] = dict(
    QUICK,
    linear=dict(QUICK["linear"], n_save=201),
    init_sweep=dict(QUICK["init_sweep"], scales=[1e-2, 1e-4], seeds=1),
    spectrum_sweep=dict(QUICK["spectrum_sweep"], spectra=[[4.0, 2.0, 1.0]]),
    relu=dict(QUICK["relu"], width=8, steps=600),
    cnn=dict(QUICK["cnn"], steps=250, samples=32),
    attention=dict(QUICK["attention"], n_ctx=16, n_seq=64, steps=400),
)


# ------------------------------------------------------------------------------------------- declared primary endpoint
# Every prediction the page holds against theory, each within a tolerance set from the theory's own precision (not
# from the simulation's numbers), relative (absolute where the prediction is 0); an undetected prediction (a plateau
# the detector did not find, a crossing never reached) does not agree (jaxkit.evaluation.ToleranceEndpoint):
# - half_time (linear net and spectrum sweep, aligned start) and delay_per_decade: the Saxe et al. solution is exact
#   for the aligned, whitened problem; the simulation's only error is the ODE tolerance (rtol 1e-9) and the linear
#   interpolation of the crossing between saves, and the delay (τ/2s) ln 10 is exact up to O(u0/s) = 2e-4 at
#   u0 = 1e-4, s >= 0.5: 1e-3.
# - slope of the half-way time in ln(1/scale) (init sweep, random balanced starts): τ/2s is the u0 → 0 slope; a
#   straight-line fit of the exact closed form ln(s/u0 - 1)/2s over the declared scales deviates from it by up to
#   0.6% (s = 0.5, scales 1e-1 .. 1e-10); 2% (about 3 times that).
# - plateau_level (linear net, ½Σ_(j>k) s_j²) and saddle_level (diagonal net, the algorithm's saddle losses): the
#   u0 → 0 (α → 0) limits; at finite init the flattest point of a plateau still carries the tail of the mode just
#   learned and the growth of the next, a correction of order u0^(1 - 6 s_(k+1) / (4 s_k + 2 s_(k+1))) relative to
#   the gap (a few percent at u0 = 1e-4 for this spectrum, the constant not given by the theory): 10%.
# - jump_time (t / ln(1/α)) and min_l1_limit (max |β_∞ - β_ℓ1|, absolute: predicted 0) of the diagonal net: the
#   Pesme & Flammarion algorithm is the α → 0 limit, its rescaled times carry O(1/ln(1/α)) corrections: 1/ln(1/α).
# - attention_level (population plateau levels L_k of separate-head attention): the simulation's loss is a mean
#   over n_seq prompts of a squared, roughly Gaussian residual, relative standard deviation about sqrt(2/n_seq):
#   3 sqrt(2/n_seq).
# - order (learning order of the attention components), kinks (the ReLU net's final kink count against the
#   target's 2) and saddle (each detected ReLU / CNN plateau is a saddle, 1 = yes): exact, 0.
ENDPOINT_DECLARED = (
    "The primary endpoint (every prediction within a declared tolerance) and its tolerances were declared on "
    "2026-12-07, after the numbers of the earlier run (2026-12-04) had been seen; this run re-ran the preset with "
    "the endpoint declared in its config. The weakest choice is the 10% tolerance of the plateau and saddle "
    "levels, set knowing the earlier run's largest linear plateau-level error (4.1%); the theory states only a "
    "few-percent finite-initialization bias with an unknown constant."
)


def endpoint_for(cfg: dict) -> ToleranceEndpoint:
    """The declared :class:`jaxkit.evaluation.ToleranceEndpoint` of a preset (tolerances above)."""
    inv_ln = float(f"{1.0 / np.log(1.0 / cfg['diagonal']['alpha']):.3g}")
    return ToleranceEndpoint(
        {
            "half_time": 1e-3,
            "delay_per_decade": 1e-3,
            "slope": 0.02,
            "plateau_level": 0.10,
            "saddle_level": 0.10,
            "jump_time": inv_ln,
            "min_l1_limit": inv_ln,
            "attention_level": float(f"{3 * np.sqrt(2 / cfg['attention']['n_seq']):.3g}"),
            "order": 0.0,
            "kinks": 0.0,
            "saddle": 0.0,
        }
    )


for _preset in (QUICK, PAPER, SMOKE):
    _preset["endpoint"] = endpoint_for(_preset).to_dict()


# ----------------------------------------------------------------------------------------------------------- linear
def _linear_problem(s: np.ndarray, seed: int = 0):
    rng = np.random.default_rng(seed)
    r = len(s)
    u, _ = np.linalg.qr(rng.normal(size=(r, r)))
    v, _ = np.linalg.qr(rng.normal(size=(r, r)))
    q, _ = np.linalg.qr(rng.normal(size=(r, r)))
    x = np.sqrt(r) * np.concatenate([q, np.eye(r)])  # whitened: XᵀX/P = I
    sigma = u @ np.diag(s) @ v.T
    return u, v, sigma, x


def _linear_flow(s, scales, seeds, t1, n_save, scheme):
    s = np.asarray(s, float)
    with jax.enable_x64(True):
        u, v, sigma, x = _linear_problem(s)
        X, Y, sig = jnp.asarray(x), jnp.asarray(x @ sigma.T), jnp.asarray(sigma)
        r = len(s)

        def loss(p):
            return dyn.mse_loss(dyn.linear_apply, p, X, Y)

        def init(key, scale):
            return dyn.init_linear(key, r, r, r, scale, scheme, target=sig if scheme == "aligned" else None)

        ts = jnp.linspace(0.0, t1, n_save)
        keys = jax.random.split(jax.random.key(0), seeds)
        res = dyn.gradient_flow_batch(
            loss, init, keys, jnp.asarray(scales), ts, solver=diffrax.Tsit5(), rtol=1e-9, atol=1e-12
        )
        prod = jnp.einsum("zytab,zytbc->zytac", res.params["W2"], res.params["W1"])
        modes = jnp.einsum("ai,zytab,bi->zyti", jnp.asarray(u), prod, jnp.asarray(v))
        ranks = jax.vmap(jax.vmap(jax.vmap(lambda m: dyn.effective_rank(m, tol=0.5 * float(s.min())))))(prod)
        return np.asarray(ts), np.asarray(res.loss), np.asarray(modes), np.asarray(ranks)


def _half_times(ts, modes, s):
    return np.array([dyn.crossing_time(ts, modes[:, i], s[i] / 2) for i in range(len(s))])


def run_linear(cfg):
    s = np.asarray(cfg["s"])
    ts, loss, modes, ranks = _linear_flow(
        s, [cfg["u0"], cfg["u0"] / 10], 1, cfg["t1"], cfg["n_save"], "aligned"
    )
    meas = _half_times(ts, modes[0, 0], s)
    pred = np.asarray(dyn.saxe_half_time(s, cfg["u0"]))
    found = dyn.plateaus(ts, loss[0, 0])
    levels = np.array([p.level for p in found])[: len(s)]
    plev = np.asarray(dyn.plateau_losses(s))[: len(s)]
    shift = _half_times(ts, modes[0, 1], s) - meas
    pshift = np.asarray(dyn.plateau_shift(s, 10.0))
    r = ranks[0, 0]
    return {
        "curves": {"ts": ts, "loss": loss[0, 0], "modes": modes[0, 0], "rank": r},
        "metrics": {
            "half_time_measured": meas,
            "half_time_predicted": pred,
            "half_time_max_rel_err": float(np.max(np.abs(meas / pred - 1))),
            "order_measured": np.argsort(meas).tolist(),
            "order_predicted": dyn.learning_order(s).tolist(),
            "plateau_level_measured": levels,
            "plateau_level_predicted": plev,
            "plateau_level_max_rel_err": float(np.max(np.abs(levels / plev[: len(levels)] - 1))),
            "rank_levels": np.unique(r).tolist(),
            "rank_monotone": bool(np.all(np.diff(r) >= 0)),
            "ln10_shift_measured": shift,
            "ln10_shift_predicted": pshift,
            "ln10_shift_max_rel_err": float(np.max(np.abs(shift / pshift - 1))),
        },
    }


def run_init_sweep(cfg):
    s = np.asarray(cfg["s"])
    scales = np.asarray(cfg["scales"])
    ts, loss, modes, _ = _linear_flow(s, scales, cfg["seeds"], cfg["t1"], 1001, "balanced")
    meas = np.array(
        [[_half_times(ts, modes[k, j], s) for j in range(len(scales))] for k in range(cfg["seeds"])]
    )
    pred = np.array([np.asarray(dyn.saxe_half_time(s, u0)) for u0 in scales])
    counts = np.array(
        [[len(dyn.plateaus(ts, loss[k, j])) for j in range(len(scales))] for k in range(cfg["seeds"])]
    )
    # slope of half-way time vs ln(1/u0): theory τ/(2s)
    ln_inv = np.log(1 / scales)
    slopes = [float(np.polyfit(ln_inv, np.nanmean(meas[:, :, i], 0), 1)[0]) for i in range(len(s))]
    return {
        "curves": {"ts": ts, "loss": loss[0]},
        "metrics": {
            "scales": scales,
            "half_time_measured_mean": np.nanmean(meas, 0),
            "half_time_predicted_aligned": pred,
            "slope_vs_ln_inv_scale_measured": slopes,
            "slope_predicted_tau_over_2s": (1 / (2 * s)).tolist(),
            "plateau_count_seed0": counts[0].tolist(),
        },
    }


def run_spectrum_sweep(cfg):
    rows = []
    curves = []
    for spec in cfg["spectra"]:
        s = np.asarray(spec)
        t1 = float(1.5 * dyn.saxe_half_time(s.min(), cfg["u0"]))
        ts, loss, modes, _ = _linear_flow(s, [cfg["u0"]], 1, t1, 801, "aligned")
        meas = _half_times(ts, modes[0, 0], s)
        pred = np.asarray(dyn.saxe_half_time(s, cfg["u0"]))
        found = dyn.plateaus(ts, loss[0, 0])
        rows.append(
            {
                "s": spec,
                "plateaus_found": len(found),
                "half_time_measured": meas,
                "half_time_predicted": pred,
                "max_rel_err": float(np.max(np.abs(meas / pred - 1))),
            }
        )
        curves.append((ts, loss[0, 0]))
    return {"curves": curves, "metrics": {"rows": rows}}


# --------------------------------------------------------------------------------------------------------- diagonal
def run_diagonal(cfg):
    rng = np.random.default_rng(cfg["seed"])
    X = rng.normal(size=(cfg["n"], cfg["d"]))
    b_star = np.zeros(cfg["d"])
    b_star[[0, 3, 5]] = [2.0, -1.2, 0.6]
    y = X @ b_star
    jumps = dyn.diagonal_jumps(X, y)
    b_l1 = dyn.min_l1_interpolator(X, y)
    with jax.enable_x64(True):
        Xj, yj = jnp.asarray(X), jnp.asarray(y)

        def loss(p):
            return dyn.mse_loss(dyn.diagonal_apply, p, Xj, yj)

        ts = dyn.log_times(cfg["t1"], 1500, 0.1)
        res = dyn.gradient_flow(
            loss,
            dyn.init_diagonal(cfg["d"], cfg["alpha"]),
            ts,
            solver=diffrax.Tsit5(),
            rtol=1e-8,
            atol=1e-12,
            grad_tol=1e-12,
        )
        beta = np.asarray(res.params["u"] * res.params["v"])
    ts = np.asarray(ts)
    scale = np.log(1 / cfg["alpha"])
    meas = np.array(
        [
            dyn.crossing_time(ts, np.abs(beta[:, i]), 0.5 * abs(jumps.saddles[k + 1][i])) / scale
            for k, i in enumerate(jumps.coords)
        ]
    )
    return {
        "curves": {
            "ts": ts / scale,
            "loss": np.asarray(res.loss),
            "beta": beta,
            "jumps": jumps.times,
            "saddle_losses": jumps.losses,
        },
        "metrics": {
            "jump_times_measured": meas,
            "jump_times_predicted": jumps.times,
            "jump_time_max_rel_err": float(np.max(np.abs(meas / jumps.times - 1))),
            "saddle_losses_predicted": jumps.losses,
            "activated_coords": jumps.coords,
            "final_vs_min_l1_max_abs": float(np.abs(beta[-1] - b_l1).max()),
            "algorithm_vs_min_l1_max_abs": float(np.abs(jumps.saddles[-1] - b_l1).max()),
        },
    }


# -------------------------------------------------------------------------------------------------------- nonlinear
def _plateau_checks(loss, res):
    """Saddle check of every plateau before the last (``dyn.plateau_saddle_checks``), as metrics rows."""
    return [
        {k: v for k, v in c._asdict().items() if k != "index"} for c in dyn.plateau_saddle_checks(loss, res)
    ]


def run_relu(cfg):
    x = jnp.linspace(-1.0, 1.0, 41)
    y = 2.0 * jax.nn.relu(x - 0.3) + 1.0 * jax.nn.relu(-x - 0.4)

    def loss(p):
        return dyn.mse_loss(dyn.relu_scalar_apply, p, x, y)

    res = dyn.gradient_descent(
        loss,
        dyn.init_relu_scalar(jax.random.key(0), cfg["width"], cfg["scale"]),
        cfg["lr"],
        cfg["steps"],
        save_every=cfg["steps"] // 300,
    )
    traj = jax.tree.map(np.asarray, res.params)
    kinks = np.array(
        [
            dyn.kink_count({k: v[j] for k, v in traj.items()}, (-1.0, 1.0), 0.1, 0.05)
            for j in range(len(res.ts))
        ]
    )
    checks = _plateau_checks(loss, res)
    return {
        "curves": {"ts": np.asarray(res.ts) * cfg["lr"], "loss": np.asarray(res.loss), "measure": kinks},
        "metrics": {
            "kink_levels": np.unique(kinks).tolist(),
            "monotone": bool(np.all(np.diff(kinks) >= 0)),
            "plateaus": checks,
            "all_saddles": all(c["is_saddle"] for c in checks),
        },
    }


def run_cnn(cfg):
    n, ks, channels = 12, 4, 2
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.normal(size=(cfg["samples"], n)), jnp.float32)
    wt = np.array([[1.0, 0.5, 0.0, 0.0], [0.0, 0.0, -0.5, 1.0]])
    teacher = {
        "w": jnp.asarray(wt / np.linalg.norm(wt, axis=1, keepdims=True)),
        "a": jnp.array([[2.0, 0.0], [0.0, 0.7]]),
    }
    apply = dyn.NETWORKS["cnn_relu"].apply
    Y = jax.vmap(apply, in_axes=(None, 0))(teacher, X)

    def loss(p):
        return dyn.mse_loss(apply, p, X, Y)

    p0 = dyn.init_cnn(jax.random.key(0), cfg["kernels"], ks, channels, cfg["scale"])
    res = dyn.gradient_descent(loss, p0, cfg["lr"], cfg["steps"], save_every=max(cfg["steps"] // 250, 1))
    eff = np.asarray(jax.vmap(lambda p: dyn.effective_rank(p["a"] @ p["w"], tol=0.2))(res.params))
    checks = _plateau_checks(loss, res)
    return {
        "curves": {"ts": np.asarray(res.ts) * cfg["lr"], "loss": np.asarray(res.loss), "measure": eff},
        "metrics": {
            "kernel_levels": np.unique(eff).tolist(),
            "monotone": bool(np.all(np.diff(eff) >= 0)),
            "plateaus": checks,
            "all_saddles": all(c["is_saddle"] for c in checks),
        },
    }


def run_attention(cfg):
    dim = cfg["dim"]
    lam = np.asarray(cfg["eigs"])
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(dim, dim)))
    chol = np.linalg.cholesky(q @ np.diag(lam) @ q.T)
    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    xs = jax.random.normal(k1, (cfg["n_seq"], cfg["n_ctx"], dim)) @ chol.T
    xq = jax.random.normal(k2, (cfg["n_seq"], dim)) @ chol.T
    w = jax.random.normal(k3, (cfg["n_seq"], dim))
    data, yq = (xs, jnp.einsum("bnd,bd->bn", xs, w), xq), jnp.einsum("bd,bd->b", xq, w)
    out: dict[str, Any] = {"curves": {}, "metrics": {}}
    for kind in ("separate", "merged"):
        apply = dyn.attention_separate_apply if kind == "separate" else dyn.attention_merged_apply

        def loss(p, apply=apply):
            return dyn.mse_loss(apply, p, data, yq)

        if kind == "separate":
            p0 = dyn.init_attention_separate(jax.random.key(1), dim, cfg["heads"], cfg["scale"])
        else:
            p0 = dyn.init_attention_merged(jax.random.key(1), dim, 1, cfg["scale"])
        res = dyn.gradient_descent(loss, p0, cfg["lr"], cfg["steps"], save_every=max(cfg["steps"] // 400, 1))
        if kind == "separate":
            gam = jnp.einsum("th,thi,thj->tij", res.params["v"], res.params["q"], res.params["k"])
            measure = np.asarray(jax.vmap(lambda p: dyn.active_heads(p, 0.1))(res.params))
        else:
            gam = jnp.einsum("th,thij->tji", res.params["v"], res.params["W"])
            measure = np.asarray(jax.vmap(lambda g: dyn.effective_rank(g, tol=0.3))(gam))
        comp = np.asarray(jnp.einsum("di,tde,ei->ti", q, gam, q)) * lam
        ts = np.asarray(res.ts) * cfg["lr"]
        times = np.array([dyn.crossing_time(ts, comp[:, i], 0.5) for i in range(dim)])
        checks = _plateau_checks(loss, res) if kind == "separate" else []
        out["curves"][kind] = {"ts": ts, "loss": np.asarray(res.loss), "measure": measure, "comp": comp}
        out["metrics"][kind] = {
            "component_half_times": times,
            "order_measured": np.argsort(times).tolist(),
            "order_predicted": dyn.learning_order(lam).tolist(),
            "plateaus_before_convergence": len(
                [p for p in dyn.plateaus(ts, np.asarray(res.loss)) if p.end < ts[-1]]
            ),
            "measure_levels": np.unique(measure).tolist(),
            "plateau_checks": checks,
        }
    return out


# ------------------------------------------------------------------------------------- closed forms vs simulation
def attention_plateau_levels(eigs, n_ctx: int) -> np.ndarray:
    """Population loss of separate-head linear attention at the saddle where the top ``k`` eigen-directions are
    learned (k = 0..d), Gaussian prompts x ~ N(0, Σ), w ~ N(0, I), N context points:

        L_k = ½ [tr Σ − Σ_{i≤k} λ_i² / ((1 + 1/N) λ_i + tr Σ / N)],

    the minimum over Γ = Σ_{i≤k} c_i q_i q_iᵀ of ½ E[(x_qᵀ(I − Γ Ŝ) w)²] (Ŝ the context covariance; its Wishart
    second moment gives the 1/N terms; c_i = 1 / ((1 + 1/N) λ_i + tr Σ / N))."""
    lam = np.sort(np.asarray(eigs, float))[::-1]
    tr = lam.sum()
    gain = lam**2 / ((1 + 1 / n_ctx) * lam + tr / n_ctx)
    return 0.5 * (tr - np.concatenate([[0.0], np.cumsum(gain)]))


def diagonal_saddle_levels(curves: dict) -> np.ndarray:
    """Measured loss on each plateau between predicted jumps: the median loss over the middle half (in log time)
    of the interval between consecutive jump times (before the first jump: from t = jumps[0]/10)."""
    ts, loss, jumps = np.asarray(curves["ts"]), np.asarray(curves["loss"]), np.asarray(curves["jumps"])
    edges = np.concatenate([[jumps[0] / 10], jumps])
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        la, lb = np.log(a), np.log(b)
        sel = (ts >= np.exp(la + 0.25 * (lb - la))) & (ts <= np.exp(lb - 0.25 * (lb - la)))
        out.append(float(np.median(loss[sel])) if sel.any() else float("nan"))
    return np.asarray(out)


def closed_forms(out: dict, cfg: dict) -> dict:
    """Theory beside simulation for every network: linear (Saxe et al.), diagonal (Pesme & Flammarion), separate-
    head linear attention (plateau levels above); ReLU and CNN have no closed form, their plateaus are checked to
    be saddles (gradient ≈ 0, a negative Hessian eigenvalue)."""
    lin = out["linear"]["metrics"]
    dg = out["diagonal"]
    att = out["attention"]["metrics"]["separate"]
    acfg = cfg["attention"]
    levels = attention_plateau_levels(acfg["eigs"], acfg["n_ctx"])
    halves = np.asarray(att["component_half_times"])
    rows = []
    for c in att["plateau_checks"]:
        mid = 0.5 * (c["start"] + c["end"]) * acfg["lr"]  # checks are in steps, half times in steps × lr
        k = int(np.sum(halves < mid))
        rows.append({"learned": k, "measured": c["level"], "predicted": float(levels[k])})
    diag_meas = diagonal_saddle_levels(dg["curves"])
    diag_pred = np.asarray(dg["metrics"]["saddle_losses_predicted"])[: len(diag_meas)]
    return {
        "linear": {
            "half_time_measured": np.asarray(lin["half_time_measured"]).tolist(),
            "half_time_predicted": np.asarray(lin["half_time_predicted"]).tolist(),
            "plateau_level_measured": np.asarray(lin["plateau_level_measured"]).tolist(),
            "plateau_level_predicted": np.asarray(lin["plateau_level_predicted"]).tolist(),
        },
        "diagonal": {
            "jump_time_measured": np.asarray(dg["metrics"]["jump_times_measured"]).tolist(),
            "jump_time_predicted": np.asarray(dg["metrics"]["jump_times_predicted"]).tolist(),
            "saddle_level_measured": diag_meas.tolist(),
            "saddle_level_predicted": diag_pred.tolist(),
            "saddle_level_max_rel_err": float(np.max(np.abs(diag_meas / diag_pred - 1))),
        },
        "attention_separate": {
            "plateau_levels_predicted": levels.tolist(),
            "plateaus": rows,
            "plateau_level_max_rel_err": max(
                (abs(r["measured"] / r["predicted"] - 1) for r in rows), default=None
            ),
            "order_measured": att["order_measured"],
            "order_predicted": att["order_predicted"],
        },
    }


def _closed_form_summary(cf: dict, metrics: dict) -> list[str]:
    lin, dg, at = cf["linear"], cf["diagonal"], cf["attention_separate"]
    f = lambda xs: ", ".join(f"{x:.4g}" for x in xs)  # noqa: E731
    lines = [
        "",
        "## Closed form beside simulation",
        "",
        "| network | quantity | theory | simulation |",
        "|---|---|---|---|",
        f"| two-layer linear (Saxe et al.) | half-way time per mode | {f(lin['half_time_predicted'])} | "
        f"{f(lin['half_time_measured'])} |",
        f"| two-layer linear | plateau loss levels ½Σ_(j>k) s_j² | {f(lin['plateau_level_predicted'])} | "
        f"{f(lin['plateau_level_measured'])} |",
        f"| diagonal (Pesme & Flammarion) | jump times t / ln(1/α) | {f(dg['jump_time_predicted'])} | "
        f"{f(dg['jump_time_measured'])} |",
        f"| diagonal | saddle loss levels | {f(dg['saddle_level_predicted'])} | {f(dg['saddle_level_measured'])} |",
        "| linear attention, separate heads | plateau levels L_k (k learned) | "
        + ", ".join(f"k={r['learned']}: {r['predicted']:.4g}" for r in at["plateaus"])
        + " | "
        + ", ".join(f"{r['measured']:.4g}" for r in at["plateaus"])
        + " |",
        f"| linear attention, separate heads | learning order (eigen-directions) | {at['order_predicted']} | "
        f"{at['order_measured']} |",
        f"| ReLU, scalar input | plateaus are saddles (no closed form) | grad ≈ 0, min eig < 0 | "
        f"{sum(c['is_saddle'] for c in metrics['relu']['plateaus'])}/{len(metrics['relu']['plateaus'])} saddles |",
        f"| ReLU CNN | plateaus are saddles (no closed form) | grad ≈ 0, min eig < 0 | "
        f"{sum(c['is_saddle'] for c in metrics['cnn']['plateaus'])}/{len(metrics['cnn']['plateaus'])} saddles |",
        "",
        "Attention levels are the population loss at the k-direction saddle, L_k = ½[tr Σ − Σ_(i≤k) λ_i² / "
        "((1 + 1/N) λ_i + tr Σ / N)] (Gaussian prompts, N context points); the simulation trains on a finite "
        "sample of prompts, so its levels differ by sampling noise. Diagonal levels are the median loss over the "
        "middle of each interval between predicted jumps.",
    ]
    return lines


# ---------------------------------------------------------------------------------------------------------- figures
def _figure_linear(ctx, plt, lin, cfg):
    """Linear net: loss + rank vs time with the Saxe closed form overlaid."""
    c = lin["curves"]
    s = np.asarray(cfg["linear"]["s"])
    theory_u = np.asarray(dyn.saxe_mode(c["ts"][:, None], s[None], cfg["linear"]["u0"]))
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    ax[0].plot(c["ts"], c["loss"], lw=2, label="gradient flow")
    ax[0].plot(c["ts"], 0.5 * np.sum((s - theory_u) ** 2, 1), "k--", label="Saxe closed form")
    for lv in dyn.plateau_losses(s):
        ax[0].axhline(float(lv), color="gray", lw=0.5)
    ax[0].set(xlabel="t (steps × η)", ylabel="loss", yscale="log", title="two-layer linear, u0=1e-4")
    ax[0].legend()
    ax2 = ax[0].twinx()
    ax2.step(c["ts"], c["rank"], "r", where="post", alpha=0.6)
    ax2.set_ylabel("effective rank", color="r")
    for i in range(len(s)):
        ax[1].plot(c["ts"], c["modes"][:, i], label=f"s={s[i]}")
        ax[1].plot(c["ts"], theory_u[:, i], "k--", lw=0.8)
    ax[1].set(xlabel="t", ylabel="mode strength u_i", title="modes vs closed form (dashed)")
    ax[1].legend()
    fig.subplots_adjust(wspace=0.35)
    ctx.save_figure(fig, "linear.png")
    plt.close(fig)


def _figure_sweeps(ctx, plt, sweep, spec, cfg):
    """Init-scale sweep (loss curves, half-way time vs ln 1/scale) and data-spectrum sweep."""
    m = sweep["metrics"]
    s = np.asarray(cfg["linear"]["s"])
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    for j, sc in enumerate(m["scales"]):
        ax[0].plot(sweep["curves"]["ts"], sweep["curves"]["loss"][j], label=f"scale {sc:.0e}")
    ax[0].set(
        yscale="log", xlabel="t", ylabel="loss", title="init-scale sweep (balanced, random orientation)"
    )
    ax[0].legend(fontsize=7)
    ln_inv = np.log(1 / np.asarray(m["scales"]))
    for i in range(len(s)):
        ax[1].plot(ln_inv, m["half_time_measured_mean"][:, i], "o", label=f"mode s={s[i]}")
        ax[1].plot(ln_inv, m["half_time_predicted_aligned"][:, i], "k--", lw=0.8)
    ax[1].set(xlabel="ln(1/scale)", ylabel="half-way time", title="slope τ/2s (dashed: aligned theory)")
    ax[1].legend(fontsize=7)
    ctx.save_figure(fig, "init_sweep.png")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 3.8))
    for (ts, lv), row in zip(spec["curves"], spec["metrics"]["rows"]):
        ax.plot(ts, lv, label=f"s={row['s']} ({row['plateaus_found']} plateaus)")
    ax.set(yscale="log", xlabel="t", ylabel="loss", title="data-spectrum sweep")
    ax.legend(fontsize=7)
    ctx.save_figure(fig, "spectrum_sweep.png")
    plt.close(fig)


def _figure_diagonal(ctx, plt, diag, cfg):
    """Diagonal net: loss with the predicted jump times and saddle levels, and the coordinates."""
    d = diag["curves"]
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    ax[0].plot(d["ts"], d["loss"], lw=2, label=f"flow, α={cfg['diagonal']['alpha']:g}")
    for t, lv in zip(d["jumps"], d["saddle_losses"][:-1]):
        ax[0].axvline(t, color="k", ls="--", lw=0.8)
        ax[0].axhline(lv, color="gray", lw=0.5)
    ax[0].set(
        xscale="log",
        yscale="log",
        xlabel="t / ln(1/α)",
        ylabel="loss",
        title="diagonal net: dashed = predicted jumps",
    )
    ax[1].plot(d["ts"], np.abs(d["beta"]))
    ax[1].set(xscale="log", xlabel="t / ln(1/α)", ylabel="|β_i|", title="coordinates")
    ctx.save_figure(fig, "diagonal.png")
    plt.close(fig)


def _figure_architectures(ctx, plt, relu, cnn, att, levels=None):
    """Nonlinear architectures: loss and complexity measure (kinks, kernels, heads, rank); dashed: the closed-form
    plateau levels of separate-head attention."""
    fig, ax = plt.subplots(1, 4, figsize=(18, 3.8))
    panels = [
        (relu, "ReLU (scalar input)", "kinks"),
        (cnn, "ReLU CNN", "effective kernels"),
        ({"curves": att["curves"]["separate"]}, "attention (separate K, Q)", "active heads"),
        ({"curves": att["curves"]["merged"]}, "attention (merged KQ)", "rank of Γ"),
    ]
    for i, (a, (res, title, lab)) in enumerate(zip(ax, panels)):
        cc = res["curves"]
        a.plot(cc["ts"], cc["loss"], lw=2)
        if i == 2 and levels is not None:
            for lv in levels[:-1]:
                a.axhline(lv, color="k", ls="--", lw=0.6)
        a.set(yscale="log", xlabel="t", ylabel="loss", title=title)
        b = a.twinx()
        b.step(cc["ts"], cc["measure"], "r", where="post", alpha=0.6)
        b.set_ylabel(lab, color="r")
    fig.subplots_adjust(wspace=0.55)
    ctx.save_figure(fig, "architectures.png")
    plt.close(fig)


def _figures(ctx, out, cfg):
    import matplotlib.pyplot as plt

    _figure_linear(ctx, plt, out["linear"], cfg)
    _figure_sweeps(ctx, plt, out["init_sweep"], out["spectrum_sweep"], cfg)
    _figure_diagonal(ctx, plt, out["diagonal"], cfg)
    levels = attention_plateau_levels(cfg["attention"]["eigs"], cfg["attention"]["n_ctx"])
    _figure_architectures(ctx, plt, out["relu"], out["cnn"], out["attention"], levels)


# the summary's headline numbers, declared for the check of the published pages against metrics.json
# (tests/docs/test_published_numbers.py)
_HEADLINE_BLOCK = [
    "<!-- headline",
    "linear/half_time_max_rel_err | .1e",
    "linear/ln10_shift_max_rel_err | .1e",
    "linear/plateau_level_max_rel_err | .1%",
    "init_sweep/slope_vs_ln_inv_scale_measured/0 | .4f",
    "init_sweep/slope_vs_ln_inv_scale_measured/2 | .4f",
    "diagonal/jump_time_max_rel_err | .1%",
    "closed_form/diagonal/saddle_level_max_rel_err | .1%",
    "diagonal/final_vs_min_l1_max_abs | .1e",
    "closed_form/attention_separate/plateau_level_max_rel_err | .1%",
    "relu/final_loss | .4f",
    "-->",
    "",
]


def _attention_plateaus(cf: dict, am: dict) -> str:
    """Which predicted plateaus (k components learned, k = 0 .. heads - 1) were detected, and which were not."""
    predicted = cf["plateau_levels_predicted"][:-1]  # the last level (all learned) is the end, not a plateau
    found = {p["learned"] for p in cf["plateaus"]}
    missed = [k for k in range(len(predicted)) if k not in found]
    text = (
        f"on the {len(found)} of {len(predicted)} predicted plateaus detected (k = {sorted(found)} learned)"
    )
    if missed:
        levels = ", ".join(f"{predicted[k]:.2f}" for k in missed)
        times = ", ".join(f"{t:.0f}" for t in am["component_half_times"])
        text += (
            f"; the plateaus at k = {missed} (levels {levels}) were not detected (half-way times of the "
            f"components: {times})"
        )
    return text


def _num(x) -> float | None:
    """A measured value for a record: ``None`` where it is missing or NaN (the prediction was not detected)."""
    return None if x is None or not np.isfinite(float(x)) else float(x)


def endpoint_records(metrics: dict, cfg: dict) -> list[dict]:
    """One record per prediction the page compares with theory (``{"unit", "item", "quantity", "predicted",
    "measured"}``, ``measured`` ``None`` where the simulation did not show the predicted feature)."""
    recs: list[dict] = []

    def add(unit, item, quantity, predicted, measured):
        recs.append({"unit": unit, "item": item, "quantity": quantity, "predicted": float(predicted),
                     "measured": _num(measured)})  # fmt: skip

    lm, cf = metrics["linear"], metrics["closed_form"]
    s = np.asarray(cfg["linear"]["s"])
    for i, si in enumerate(s):
        add(
            "linear",
            f"half_time s={si:g}",
            "half_time",
            lm["half_time_predicted"][i],
            lm["half_time_measured"][i],
        )
    for i, si in enumerate(s):
        add("linear", f"delay s={si:g}", "delay_per_decade", lm["ln10_shift_predicted"][i],
            lm["ln10_shift_measured"][i])  # fmt: skip
    levels = list(lm["plateau_level_measured"])
    for k, pred in enumerate(lm["plateau_level_predicted"]):
        add("linear", f"level k={k}", "plateau_level", pred, levels[k] if k < len(levels) else None)
    sw = metrics["init_sweep"]
    for i, si in enumerate(np.asarray(cfg["init_sweep"]["s"])):
        add("init_sweep", f"slope s={si:g}", "slope", sw["slope_predicted_tau_over_2s"][i],
            sw["slope_vs_ln_inv_scale_measured"][i])  # fmt: skip
    for row in metrics["spectrum_sweep"]["rows"]:
        unit = "spectrum " + "/".join(f"{x:g}" for x in row["s"])
        for i, si in enumerate(row["s"]):
            add(unit, f"half_time s={si:g}", "half_time", row["half_time_predicted"][i],
                row["half_time_measured"][i])  # fmt: skip
    dg = cf["diagonal"]
    for k, (pred, meas) in enumerate(zip(dg["jump_time_predicted"], dg["jump_time_measured"])):
        add("diagonal", f"jump {k + 1}", "jump_time", pred, meas)
    for k, (pred, meas) in enumerate(zip(dg["saddle_level_predicted"], dg["saddle_level_measured"])):
        add("diagonal", f"level {k}", "saddle_level", pred, meas)
    add("diagonal", "limit vs min-l1", "min_l1_limit", 0.0, metrics["diagonal"]["final_vs_min_l1_max_abs"])
    at = cf["attention_separate"]
    found: dict[int, float] = {}
    for r in at["plateaus"]:
        found.setdefault(r["learned"], r["measured"])  # the first detected plateau at each k
    for k, pred in enumerate(at["plateau_levels_predicted"][:-1]):  # the last level (all learned) is the end
        add("attention", f"level k={k}", "attention_level", pred, found.get(k))
    for r, (pred, meas) in enumerate(zip(at["order_predicted"], at["order_measured"])):
        add("attention", f"order rank {r}", "order", pred, meas)
    add("relu", "final kinks", "kinks", 2, metrics["relu"]["final_kinks"])
    for net in ("relu", "cnn"):
        for i, c in enumerate(metrics[net]["plateaus"]):
            add(net, f"plateau {i} saddle", "saddle", 1, float(bool(c["is_saddle"])))
    return recs


def _verdict_detail(metrics: dict) -> str:
    """Per quantity: how many predictions agree, and the errors of those that do not."""
    v = metrics["verdict"]
    d, st = v["details"], {f"{r['unit']}/{r['item']}": r for r in metrics["endpoint_records"]}
    per = "; ".join(f"{q} {c['agree']}/{c['n']}" for q, c in d["per_quantity"].items())

    def err(name):
        r, e = st[name], d["errors"][name]
        rel = "absolute" if r["predicted"] == 0 else "relative"
        return f"{name} ({rel} error {e:.3g}, tolerance {v['endpoint']['tolerances'][r['quantity']]:g})"

    outside = ", ".join(err(n) for n in d["disagree"]) or "none"
    return (
        f"Predictions agreeing per quantity: {per}. Outside tolerance: {outside}. Undetected: "
        f"{', '.join(d['undetected']) or 'none'}. The tolerances (relative, absolute where the prediction is 0) come "
        "from the theory's own precision: exact closed forms 1e-3 (half-way times, delay per decade), the fitted "
        "ln-slope 2% (the closed form's own finite-scale fit deviates by up to 0.6%), finite-init plateau and "
        "saddle levels 10% (u0 → 0 limits), diagonal jump times and the min-ℓ1 limit 1/ln(1/α) (the α → 0 "
        "algorithm's correction), attention levels 3·sqrt(2/n_seq) (sampling noise of the prompts), orders, "
        "kink count and saddle checks exact (the comment above `endpoint_for` in experiments/saddle_to_saddle.py "
        "gives the reasons)."
    )


def summary(ctx, metrics: dict) -> str:
    """Reader-facing summary: theory beside simulation for every network, sweeps, figures."""
    lm, dm, sw = metrics["linear"], metrics["diagonal"], metrics["init_sweep"]
    am = metrics["attention"]["separate"]
    rows = metrics["spectrum_sweep"]["rows"]
    cf = metrics["closed_form"]
    at_err = cf["attention_separate"]["plateau_level_max_rel_err"]
    lines = [
        "# saddle_to_saddle: simulations held against closed forms",
        "",
        *_HEADLINE_BLOCK,
        f"Preset `{ctx.preset}`, seed {ctx.seed}. Gradient flow (float64, adaptive Tsit5) for the linear and "
        "diagonal nets, small-step gradient descent (time = steps × learning rate) for ReLU, CNN and attention.",
        "",
        metrics["verdict_markdown"],
        "",
        _verdict_detail(metrics),
        "",
        f"- **Two-layer linear** (whitened inputs, aligned start u0 = {ctx.config['linear']['u0']:g}): half-way "
        f"times match the Saxe et al. closed form to {lm['half_time_max_rel_err']:.1e} (max relative error), the "
        f"delay per decade of init scale to {lm['ln10_shift_max_rel_err']:.1e}; plateau levels ½Σ_(j>k) s_j² "
        f"within {lm['plateau_level_max_rel_err']:.1%} (the next mode already grows on a plateau at finite u0); "
        f"effective rank steps through {lm['rank_levels']}.",
        f"- **Init-scale sweep** ({len(sw['scales'])} scales, {ctx.config['init_sweep']['seeds']} random "
        "balanced starts each): half-way time grows linearly in ln(1/scale) with slopes "
        f"{', '.join(f'{x:.4f}' for x in sw['slope_vs_ln_inv_scale_measured'])} vs τ/2s = "
        f"{', '.join(f'{x:.4f}' for x in sw['slope_predicted_tau_over_2s'])}.",
        f"- **Data-spectrum sweep** ({len(rows)} spectra): half-way times within "
        f"{max(r['max_rel_err'] for r in rows):.1e} of theory for every mode; plateaus found per spectrum "
        f"{[r['plateaus_found'] for r in rows]} (close singular values merge plateaus).",
        f"- **Diagonal net** (α = {ctx.config['diagonal']['alpha']:g}): jump times within "
        f"{dm['jump_time_max_rel_err']:.1%} of the Pesme & Flammarion algorithm (exact only as α → 0), saddle "
        f"levels within {cf['diagonal']['saddle_level_max_rel_err']:.1%}; the limit is the minimum-ℓ1 "
        f"interpolator to {dm['final_vs_min_l1_max_abs']:.1e}.",
        f"- **Linear attention, separate heads** ({ctx.config['attention']['heads']} heads): components learned "
        f"in the predicted order {am['order_measured']} (predicted {am['order_predicted']}); the number of heads "
        f"whose |v| ||k|| ||q|| exceeds 0.1 takes the values {am['measure_levels']} along the run (`measure_levels`, not a list of "
        "heads); plateau levels within "
        + (f"{at_err:.1%}" if at_err is not None else "n/a")
        + f" of the population closed form {_attention_plateaus(cf['attention_separate'], am)}. Merged key-query: "
        f"{metrics['attention']['merged']['plateaus_before_convergence']} plateaus before convergence.",
        f"- **ReLU, scalar input**: kinks {metrics['relu']['kink_levels']}"
        + (
            ""
            if metrics["relu"]["monotone"]
            else " (the kink count is not monotone along the run: it drops at least once)"
        )
        + f"; the run ends before it converges: {metrics['relu']['final_kinks']} kink at the end (the target "
        f"has 2; loss {metrics['relu']['final_loss']:.2g})"
        + f"; **ReLU CNN**: effective kernels {metrics['cnn']['kernel_levels']}. Every detected plateau of both "
        f"is a saddle (gradient ≈ 0, negative Hessian eigenvalue): ReLU "
        f"{'yes' if metrics['relu']['all_saddles'] else 'no'}, CNN {'yes' if metrics['cnn']['all_saddles'] else 'no'}.",
    ]
    lines += _closed_form_summary(cf, metrics)
    lines += ["", "## Choices made after seeing results", "", f"- {ENDPOINT_DECLARED}"]
    lines += [
        "",
        f"Command: `python -m experiments run saddle_to_saddle --preset {ctx.preset} --seed {ctx.seed} --resume` "
        "(metrics.json records the command, date and versions).",
        "",
        "![linear](linear.png)",
        "",
        "![sweeps](init_sweep.png)",
        "",
        "![spectrum](spectrum_sweep.png)",
        "",
        "![diagonal](diagonal.png)",
        "",
        "![architectures](architectures.png)",
        "",
    ]
    return "\n".join(lines)


def run(ctx) -> dict:
    cfg = ctx.config
    steps = [
        ("linear", run_linear),
        ("init_sweep", run_init_sweep),
        ("spectrum_sweep", run_spectrum_sweep),
        ("diagonal", run_diagonal),
        ("relu", run_relu),
        ("cnn", run_cnn),
        ("attention", run_attention),
    ]
    out = {}
    for key, fn in ctx.progress(steps, desc="sections"):
        out[key] = ctx.stage(key, lambda fn=fn, key=key: fn(cfg[key]))
    metrics = {k: v["metrics"] for k, v in out.items()}
    metrics["closed_form"] = closed_forms(out, cfg)
    relu_curves = out["relu"]["curves"]
    metrics["relu"]["final_kinks"] = int(relu_curves["measure"][-1])
    metrics["relu"]["final_loss"] = float(relu_curves["loss"][-1])
    endpoint = endpoint_from_dict(cfg["endpoint"])
    metrics["endpoint"] = endpoint.to_dict()
    metrics["endpoint_records"] = endpoint_records(metrics, cfg)
    v = verdict(endpoint, metrics["endpoint_records"])
    metrics["verdict"] = v.to_dict()
    metrics["verdict_markdown"] = v.markdown()
    metrics["choices_after_results"] = [ENDPOINT_DECLARED]
    _figures(ctx, out, cfg)
    ctx.write_summary(summary(ctx, metrics))
    return metrics


register(
    Experiment(
        name="saddle_to_saddle",
        reproduces="Zhang, Saxe & Latham (ICLR 2026) saddle-to-saddle figures; Pesme & Flammarion (2023) Fig. 1",
        presets={"smoke": SMOKE, "quick": QUICK, "paper": PAPER},
        run=run,
        anchors=(
            Anchor("linear/half_time_max_rel_err", 0.0, "Saxe et al. closed form (exact in the limit)"),
            Anchor("linear/ln10_shift_max_rel_err", 0.0, "(τ/2s) ln 10 per decade of init scale"),
            Anchor("diagonal/final_vs_min_l1_max_abs", 0.0, "Pesme & Flammarion 2023: limit is min-ℓ1"),
        ),
        description="Simplicity bias via saddle-to-saddle dynamics across linear, ReLU, CNN, attention, diagonal nets.",
    )
)
