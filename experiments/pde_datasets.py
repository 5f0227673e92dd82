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


def run(ctx: Any) -> dict[str, Any]:
    from jaxkit.pde import make_dataset

    cfg = ctx.config
    cache_dir = ctx.out_dir / "cache" if cfg.get("cache") else None
    metrics: dict[str, Any] = {}
    samples: dict[str, Any] = {}
    for name in ctx.progress(list(cfg["datasets"]), desc="datasets"):
        spec = cfg["datasets"][name]

        def build(name=name, spec=spec):
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

        rec, sample = ctx.stage(f"dataset_{name}", build)
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
        f"Preset `{ctx.preset}`, seed {ctx.seed}.",
        "",
        "| dataset | x shape | y shape | wall s | samples/s | check |",
        "|---|---|---|---|---|---|",
    ]
    for name, rec in metrics.items():
        check = ", ".join(
            f"{k}={v:.3g}" for k, v in rec.items() if k.startswith(("rel_err", "enstrophy", "high_k"))
        )
        lines.append(
            f"| {name} | {rec['x_shape']} | {rec['y_shape']} | {rec['wall_s']:.1f} | "
            f"{rec['samples_per_s']:.2f} | {check} |"
        )
    lines += ["", "![samples](samples.png)", ""]
    ctx.write_summary("\n".join(lines))
    return metrics


register(
    Experiment(
        name="pde_datasets",
        reproduces="FNO (Li et al. 2021) Burgers/Darcy/Navier-Stokes and LNO (Cao et al. 2023) datasets, regenerated",
        presets={"quick": QUICK, "paper": PAPER},
        run=run,
        description=__doc__ or "",
    )
)
