"""Build the FNO and LNO operator-learning datasets (``jaxkit.pde``) and benchmark the solvers.

``python -m experiments run pde_datasets --preset quick|paper`` generates every dataset (quick: few samples and
cheaper fine grids; paper: the published sizes and fine grids, cached under ``<out>/cache``), records generation
throughput and independent checks, and plots one sample of each. The solver benchmarks (``python -m experiments
bench pde``) live in ``experiments/bench_pde.py``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from experiments import Experiment, register
from jaxkit.evaluation import ToleranceEndpoint, endpoint_from_dict, verdict

_ALL = [
    "burgers",
    "darcy",
    "navier_stokes_1e-3",
    "navier_stokes_1e-4",
    "navier_stokes_1e-5",
    "navier_stokes_re40",
    "navier_stokes_re500",
    "navier_stokes_re5000",
    "duffing",
    "beam",
    "diffusion",
    "reaction_diffusion",
    "brusselator",
]

_QUICK_NS = {"fine_resolution": 64, "dt": 5e-4}  # dt = 1e-3 at 64² blows up for ν = 1e-5 (FNO scheme)
_QUICK_KF = {"fine_resolution": 64, "dt": 2e-3}  # IF-RK4; Re=5000 is under-resolved at 64² (see high_k check)
QUICK = {
    "cache": False,
    "datasets": {
        "burgers": {"n_train": 32, "n_test": 8, "resolution": 256, "options": {}},
        "darcy": {"n_train": 16, "n_test": 4, "resolution": 71, "options": {"fine_resolution": 141}},
        "navier_stokes_1e-3": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_NS},
        "navier_stokes_1e-4": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_NS},
        "navier_stokes_1e-5": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_NS},
        "navier_stokes_re40": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_KF},
        "navier_stokes_re500": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_KF},
        "navier_stokes_re5000": {"n_train": 2, "n_test": 2, "resolution": 64, "options": _QUICK_KF},
        "duffing": {"n_train": 32, "n_test": 8, "resolution": 2048, "options": {}},
        "beam": {"n_train": 32, "n_test": 8, "resolution": 41, "options": {}},
        "diffusion": {"n_train": 32, "n_test": 8, "resolution": 41, "options": {}},
        "reaction_diffusion": {"n_train": 32, "n_test": 8, "resolution": 40, "options": {}},
        "brusselator": {"n_train": 4, "n_test": 4, "resolution": 28, "options": {}},
    },
}
# Published sizes (FNO: Li et al. 2021; LNO: 200 train, 50 validation + 130 test drawn as one test split).
PAPER = {
    "cache": True,
    "datasets": {
        "burgers": {"n_train": 1000, "n_test": 200, "resolution": 8192, "options": {}},
        "darcy": {"n_train": 1000, "n_test": 200, "resolution": 421, "options": {}},
        "navier_stokes_1e-3": {"n_train": 1000, "n_test": 200, "resolution": 64, "options": {}},
        "navier_stokes_1e-4": {"n_train": 10000, "n_test": 200, "resolution": 64, "options": {}},
        "navier_stokes_1e-5": {"n_train": 1000, "n_test": 200, "resolution": 64, "options": {}},
        "navier_stokes_re40": {"n_train": 1000, "n_test": 200, "resolution": 64, "options": {}},
        "navier_stokes_re500": {"n_train": 1000, "n_test": 200, "resolution": 64, "options": {}},
        "navier_stokes_re5000": {"n_train": 1000, "n_test": 200, "resolution": 64, "options": {}},
        "duffing": {"n_train": 200, "n_test": 180, "resolution": 2048, "options": {}},
        "beam": {"n_train": 200, "n_test": 180, "resolution": 41, "options": {}},
        "diffusion": {"n_train": 200, "n_test": 180, "resolution": 41, "options": {}},
        "reaction_diffusion": {"n_train": 200, "n_test": 180, "resolution": 40, "options": {}},
        "brusselator": {"n_train": 200, "n_test": 180, "resolution": 28, "options": {}},
    },
}


# ------------------------------------------------------------------------------------------- declared primary endpoint
# Every independent check of the solvers and of the generated data (a solver against an exact solution or against
# SciPy's direct solve of the same system; generated samples against a closed form) within a relative L2 error of
# 1e-3: the data are meant to be accurate to 0.1 %, an order of magnitude below the ~1 % test errors the operator
# benchmarks built on them report. One tolerance for every check (prediction 0, so the tolerance is absolute on the
# relative error; see jaxkit.evaluation.ToleranceEndpoint).
ENDPOINT = ToleranceEndpoint({"rel_l2_vs_reference": 1e-3})
ENDPOINT_DECLARED = (
    "The primary endpoint (every independent check within a relative L2 error of 1e-3) was declared on "
    "2026-12-07, after the checks of the earlier standard run (2026-12-04) had been seen (largest: the beam data "
    "against its closed form, 2.95e-3); this run re-ran the preset with the endpoint declared in its config."
)


def endpoint_records(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per independent check: the solver checks (``solver_accuracy``) and the datasets' ``rel_err_*``
    checks (enstrophy and high-wavenumber indicators are diagnostics, not checks against a reference)."""
    recs = []
    for name, rec in metrics.get("solver_accuracy", {}).items():
        for k, v in rec.items():
            if k.startswith("rel_err_vs_"):
                recs.append({"unit": "solver", "item": f"{name} vs {k.removeprefix('rel_err_vs_')}",
                             "quantity": "rel_l2_vs_reference", "predicted": 0.0, "measured": float(v)})  # fmt: skip
    for name, rec in metrics.items():
        if name == "solver_accuracy":
            continue
        for k, v in rec.items():
            if k.startswith("rel_err_vs_"):
                recs.append({"unit": "dataset", "item": f"{name} vs {k.removeprefix('rel_err_vs_')}",
                             "quantity": "rel_l2_vs_reference", "predicted": 0.0, "measured": float(v)})  # fmt: skip
    return recs


def solver_accuracy(
    burgers_n: tuple[int, ...] = (1024, 8192), ns_n: int = 64, darcy_n: tuple[int, ...] = (141, 421)
) -> dict[str, Any]:
    """Each solver against an exact solution, at the published grids and steps, with its time per solve.

    Burgers (ETDRK4, ν = 0.1, t = 1, the FNO setting) vs the Cole–Hopf solution at n = 1024 and 8192; the FNO
    Navier–Stokes scheme (Crank–Nicolson + explicit advection, dt = 1e-4 as published, 64²) and IF-RK4 vs the
    Taylor–Green vortex (ν = 1e-3, t = 1); Darcy (PCG, 141² and 421² nodes, a GRF-thresholded coefficient as in
    the dataset) vs SciPy ``spsolve`` of the same finite-difference system. The grid arguments default to these
    published grids (the ``smoke`` preset passes small ones).
    """
    import jax
    import jax.numpy as jnp

    from jaxkit.pde import burgers, darcy, grf_neumann, navier_stokes

    def timed(fn):
        jax.block_until_ready(fn())  # compile
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn())
        return np.asarray(out, np.float64), time.perf_counter() - t0

    def rel(a, b):
        return float(np.linalg.norm(a - b) / np.linalg.norm(b))

    out: dict[str, Any] = {}
    for n in burgers_n:
        x = np.arange(n) / n
        u0 = np.asarray(burgers.cole_hopf_solution(x, 0.0, nu=0.1), np.float32)
        u1, wall = timed(lambda u0=u0: burgers.solve(u0, nu=0.1, t_final=1.0))
        exact = np.asarray(burgers.cole_hopf_solution(x, 1.0, nu=0.1), np.float64)
        out[f"burgers_n{n}"] = {"rel_err_vs_cole_hopf": rel(u1, exact), "solve_s": wall}
    n, nu = ns_n, 1e-3
    w0 = np.asarray(navier_stokes.taylor_green(n, 0.0, nu=nu), np.float32)
    exact = np.asarray(navier_stokes.taylor_green(n, 1.0, nu=nu), np.float64)
    for scheme, dt in (("cn", 1e-4), ("ifrk4", 1e-3)):
        w1, wall = timed(
            lambda s=scheme, d=dt: navier_stokes.solve(w0, nu=nu, t_final=1.0, dt=d, scheme=s)[-1]
        )
        out[f"navier_stokes_{scheme}_dt{dt:g}"] = {"rel_err_vs_taylor_green": rel(w1, exact), "solve_s": wall}
    for n in darcy_n:
        g = np.asarray(grf_neumann(jax.random.key(0), (n, n), alpha=2.0, tau=3.0))
        a = np.where(g >= 0, 12.0, 3.0).astype(np.float32)
        u, wall = timed(lambda a=a: darcy.solve(jnp.asarray(a)))
        t0 = time.perf_counter()
        ref = darcy.reference_solve(a.astype(np.float64))
        out[f"darcy_n{n}"] = {
            "rel_err_vs_spsolve": rel(u, ref),
            "solve_s": wall,
            "spsolve_s": time.perf_counter() - t0,
        }
    return out


# A cheap published run: every solver against an exact solution, and every dataset at a few samples on its
# published grid (throughput; the paper sizes follow from samples/s).
STANDARD = {
    "cache": False,
    "solver_accuracy": True,
    "datasets": {
        name: dict(spec, n_train=min(spec["n_train"], 8), n_test=min(spec["n_test"], 2))
        for name, spec in PAPER["datasets"].items()
        if name in ("burgers", "darcy", "duffing", "beam", "diffusion", "reaction_diffusion", "brusselator")
    },
}


# Seconds (tests/experiments/test_smoke.py): every path of quick and standard at tiny sizes: each dataset generator
# (navier_stokes_1e-4 left out: the same generator as 1e-3 and 1e-5, and leaving one out takes the summary's
# not-generated estimate that standard prints), Darcy stored at its fine grid (the spsolve check standard takes),
# the Navier-Stokes sets to t = 3 on a 16² grid, and the solver checks on small grids (Burgers 256, Navier-Stokes
# 16², Darcy 15² and 29² nodes) instead of the published ones.
_SMOKE_NS = {"fine_resolution": 16, "dt": 5e-3, "t_final": 3, "n_in": 1}
_SMOKE_KF = {"fine_resolution": 16, "dt": 1e-2, "t_final": 3, "n_in": 1}
SMOKE = dict(
    STANDARD,
    solver_accuracy_grids={"burgers_n": [256], "ns_n": 16, "darcy_n": [15, 29]},
    datasets={
        "burgers": {"n_train": 2, "n_test": 1, "resolution": 64, "options": {"fine_resolution": 128}},
        "darcy": {"n_train": 2, "n_test": 1, "resolution": 15, "options": {"fine_resolution": 15}},
        "navier_stokes_1e-3": {"n_train": 1, "n_test": 1, "resolution": 8, "options": _SMOKE_NS},
        "navier_stokes_1e-5": {"n_train": 1, "n_test": 1, "resolution": 8, "options": _SMOKE_NS},
        "navier_stokes_re40": {"n_train": 1, "n_test": 1, "resolution": 8, "options": _SMOKE_KF},
        "navier_stokes_re500": {"n_train": 1, "n_test": 1, "resolution": 8, "options": _SMOKE_KF},
        "navier_stokes_re5000": {"n_train": 1, "n_test": 1, "resolution": 8, "options": _SMOKE_KF},
        "duffing": {"n_train": 2, "n_test": 1, "resolution": 256, "options": {"fine_resolution": 512}},
        "beam": {"n_train": 2, "n_test": 2, "resolution": 11, "options": {"fine_resolution": 11, "n_t": 11}},
        "diffusion": {
            "n_train": 2,
            "n_test": 2,
            "resolution": 11,
            "options": {"fine_resolution": 11, "n_t": 11},
        },
        "reaction_diffusion": {
            "n_train": 2,
            "n_test": 1,
            "resolution": 10,
            "options": {"fine_resolution": 10},
        },
        "brusselator": {
            "n_train": 2,
            "n_test": 1,
            "resolution": 10,
            "options": {"fine_resolution": 10, "n_t": 9, "t_final": 4.0},
        },
    },
)


def _paper_minutes(name: str, rec: dict) -> str:
    """Generation time of the published size at the measured rate (includes one compilation: an upper bound)."""
    spec = PAPER["datasets"].get(name)
    if spec is None:
        return "-"
    n = spec["n_train"] + spec["n_test"]
    return f"{n} samples: {n / rec['samples_per_s'] / 60:.3g}"


def _checks(name: str, ds: Any) -> dict[str, float]:
    """Independent checks on generated samples (float64 host references)."""
    from jaxkit.pde import darcy, lno

    out: dict[str, float] = {}
    if name == "darcy":
        # the stored solution is the subsample of the fine solve; compare with spsolve when stored at full res
        p = ds.metadata["params"]
        if ds.metadata["resolution"] == p["fine_resolution"]:
            ref = darcy.reference_solve(np.asarray(ds.x_train[0, 0], np.float64), p["f"])
            out["rel_err_vs_spsolve"] = float(np.linalg.norm(ds.y_train[0, 0] - ref) / np.linalg.norm(ref))
    elif name in ("beam", "diffusion"):
        x, t = ds.grid
        p = ds.metadata["params"]
        shape = np.sin(np.pi * x / p["length"])[:, None] * np.sin(p["omega"] * t)[None, :]
        errs = []
        for f, u in zip(ds.x_test[:, 0], ds.y_test[:, 0]):
            amp = float(np.sum(f * shape) / np.sum(shape * shape))
            if name == "beam":
                ex = np.asarray(lno.beam_exact(amp, x, t, omega=p["omega"], ei=p["ei"], rho_a=p["rho_a"]))
            else:
                ex = np.asarray(lno.diffusion_exact(amp, x, t, omega=p["omega"], d=p["d"]))
            errs.append(np.linalg.norm(u - ex) / np.linalg.norm(ex))
        out["rel_err_vs_closed_form"] = float(np.mean(errs))
    elif name.startswith("navier_stokes"):
        out["enstrophy_first"] = float(np.mean(ds.x_test[:, 0] ** 2))
        out["enstrophy_last"] = float(np.mean(ds.y_test[:, -1] ** 2))
        # under-resolution / instability indicator: energy fraction above 1/4 of the grid's wavenumbers
        w_hat = np.abs(np.fft.fft2(np.asarray(ds.y_test[:, -1], np.float64))) ** 2
        k = np.abs(np.fft.fftfreq(w_hat.shape[-1], 1.0 / w_hat.shape[-1]))
        high = (k[:, None] > w_hat.shape[-1] / 4) | (k[None, :] > w_hat.shape[-1] / 4)
        out["high_k_energy_frac"] = float(w_hat[:, high].sum() / w_hat.sum())
    return out


def _panel(ax, arr: np.ndarray, grid: tuple, title: str) -> None:
    """Draw one channels-first sample: a curve (1-D grid), an image (2-D: last channel), or the last time."""
    if len(grid) == 1:
        ax.plot(grid[0], arr[0])
    else:
        img = arr[-1]
        if img.ndim == 3:  # (t, x, y): space-constant inputs as a time curve, outputs at the last time
            if np.allclose(img[:, 0, 0], img[:, -1, -1]) and np.ptp(img[0]) == 0:
                ax.plot(grid[0], img[:, 0, 0])
                ax.set_title(title, fontsize=8)
                return
            img = img[-1]
        ax.imshow(np.asarray(img).T, origin="lower", cmap="RdBu_r", aspect="auto")
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_title(title, fontsize=8)


def _plot(ctx: Any, samples: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in _ALL if n in samples]
    fig, axes = plt.subplots(2, len(names), figsize=(2.4 * len(names), 4.8), squeeze=False)
    for j, name in enumerate(names):
        x, y, grid = samples[name]
        _panel(axes[0, j], x, grid, f"{name}\ninput")
        _panel(axes[1, j], y, grid, "target")
    fig.tight_layout()
    ctx.save_figure(fig, "samples.png")
    plt.close(fig)


def _build(ctx: Any, name: str, spec: dict[str, Any], cache_dir: Any) -> tuple[dict[str, Any], tuple]:
    from jaxkit.pde import make_dataset

    t0 = time.perf_counter()
    ds = make_dataset(
        name,
        n_train=spec["n_train"],
        n_test=spec["n_test"],
        resolution=spec["resolution"],
        seed=ctx.seed,
        cache_dir=cache_dir,
        **spec["options"],
    )
    wall = time.perf_counter() - t0
    n = spec["n_train"] + spec["n_test"]
    rec = {
        "x_shape": list(ds.x_train.shape),
        "y_shape": list(ds.y_train.shape),
        "wall_s": wall,
        "samples_per_s": n / wall,
        "y_rms": float(np.sqrt(np.mean(np.asarray(ds.y_train) ** 2))),
        "finite": bool(np.all(np.isfinite(ds.y_train)) and np.all(np.isfinite(ds.y_test))),
        **_checks(name, ds),
    }
    sample = (np.asarray(ds.x_train[0]), np.asarray(ds.y_train[0]), ds.grid)
    return rec, sample


def _accuracy_lines(accuracy: dict[str, Any], cfg: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += [
        "## Solvers against exact solutions (published grids and steps)",
        "",
        "| solver | reference | relative L2 error | s per solve |",
        "|---|---|---|---|",
    ]
    for key, rec in accuracy.items():
        ref = next(k for k in rec if k.startswith("rel_err"))
        lines.append(
            f"| {key} | {ref.removeprefix('rel_err_vs_').replace('_', ' ')} | {rec[ref]:.2e} | "
            f"{rec['solve_s']:.3g}"
            + (f" (spsolve {rec['spsolve_s']:.3g})" if "spsolve_s" in rec else "")
            + " |"
        )
    lines += ["", "## Dataset generation", ""]
    skipped = [n for n in PAPER["datasets"] if n not in cfg["datasets"]]
    cn = accuracy.get("navier_stokes_cn_dt0.0001")
    if skipped and cn:
        per_unit = cn["solve_s"]  # one 64² sample, FNO scheme at dt = 1e-4, one time unit
        lines += [
            "Not generated in this preset: " + ", ".join(skipped) + ". At the measured "
            f"{per_unit:.3g} s per sample and time unit (64², dt = 1e-4, one sample per solve), the FNO "
            f"ν = 1e-3 set alone (1200 samples to t = 50) would take ≈ {1200 * 50 * per_unit / 3600:.3g} h "
            "unbatched here; `--preset paper` generates them in batches.",
            "",
        ]
    return lines


def _headline_block(accuracy: dict | None, datasets: dict) -> list[str]:
    """The summary's headline numbers (solver errors and times as the tables print them), declared for the check
    of the published pages against metrics.json (tests/docs/test_published_numbers.py)."""
    keys = []
    for name, rec in (accuracy or {}).items():
        keys += [f"solver_accuracy/{name}/{k} | .2e" for k in rec if k.startswith("rel_err")]
        keys += [f"solver_accuracy/{name}/{k} | .3g" for k in ("solve_s", "spsolve_s") if k in rec]
    keys += [f"{name}/wall_s | .1f" for name in datasets]
    return ["<!-- headline", *keys, "-->", ""] if keys else []


def run(ctx: Any) -> dict[str, Any]:

    cfg = ctx.config
    grids = cfg.get("solver_accuracy_grids", {})  # smoke only: small grids (default: the published ones)
    accuracy = (
        ctx.stage("solver_accuracy", lambda: solver_accuracy(**grids)) if cfg.get("solver_accuracy") else None
    )
    cache_dir = ctx.out_dir / "cache" if cfg.get("cache") else None
    metrics: dict[str, Any] = {}
    samples: dict[str, Any] = {}
    for name in ctx.progress(list(cfg["datasets"]), desc="datasets"):
        spec = cfg["datasets"][name]

        rec, sample = ctx.stage(
            f"dataset_{name}", lambda name=name, spec=spec: _build(ctx, name, spec, cache_dir)
        )
        metrics[name] = rec
        samples[name] = sample
        print(
            f"[pde_datasets] {name}: x {rec['x_shape']} y {rec['y_shape']} in {rec['wall_s']:.1f} s "
            f"({rec['samples_per_s']:.2f} samples/s)"
        )
    _plot(ctx, samples)
    lines = [
        "# pde_datasets",
        "",
        *_headline_block(accuracy, metrics),
        f"Preset `{ctx.preset}`, seed {ctx.seed}. Times are wall seconds on the machine of the run (2 CPU cores, "
        "shared with other jobs); a dataset's wall time includes one compilation, so the estimate for the "
        "published size is an upper bound.",
        "",
    ]
    if accuracy is not None:
        metrics["solver_accuracy"] = accuracy
        lines += _accuracy_lines(accuracy, cfg)
    lines += [
        "| dataset | x shape | y shape | wall s | samples/s | published size: est. min | check |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rec in metrics.items():
        if name == "solver_accuracy":
            continue
        check = ", ".join(
            f"{k}={v:.3g}" for k, v in rec.items() if k.startswith(("rel_err", "enstrophy", "high_k"))
        )
        lines.append(
            f"| {name} | {rec['x_shape']} | {rec['y_shape']} | {rec['wall_s']:.1f} | "
            f"{rec['samples_per_s']:.2f} | {_paper_minutes(name, rec)} | {check} |"
        )
    lines += ["", "![samples](samples.png)", ""]
    lines += _verdict_lines(metrics, cfg)
    ctx.write_summary("\n".join(lines))
    return metrics


def _verdict_lines(metrics: dict[str, Any], cfg: dict[str, Any]) -> list[str]:
    """The headline from the declared endpoint over every check's record (stored with the run)."""
    records = endpoint_records(metrics)
    if not records:
        return []
    endpoint = endpoint_from_dict(cfg["endpoint"])
    v = verdict(endpoint, records)
    metrics.update(endpoint=endpoint.to_dict(), endpoint_records=records, verdict=v.to_dict())
    metrics["choices_after_results"] = [ENDPOINT_DECLARED]
    rows = [f"| {r['unit']} | {r['item']} | {r['measured']:.3g} |" for r in records]
    return [
        "## Verdict",
        "",
        v.markdown(),
        "",
        ENDPOINT_DECLARED,
        "",
        "| check of | against | relative L2 error |",
        "|---|---|---|",
        *rows,
        "",
    ]


for _preset in (QUICK, STANDARD, PAPER, SMOKE):
    _preset["endpoint"] = ENDPOINT.to_dict()

register(
    Experiment(
        name="pde_datasets",
        reproduces="FNO (Li et al. 2021) Burgers/Darcy/Navier-Stokes and LNO (Cao et al. 2023) datasets, regenerated",
        presets={"smoke": SMOKE, "quick": QUICK, "standard": STANDARD, "paper": PAPER},
        run=run,
        description=__doc__ or "",
    )
)
