"""FNO, LNO and RNO on the Laplace-neural-operator suite and Navier–Stokes Re=40 (RNO paper, ICLR 2026, Table 1).

Per dataset: the LNO repository's (github.com/qianyingcao/Laplace-Neural-Operator) sample counts, batch size,
learning rate, weight decay, step schedule, modes and width, for all three models (RNO paper: baselines "rerun with
aligned modes, width and epochs"); RNO sized to ≈172k parameters where the paper's counts apply (reaction–diffusion:
FNO 311k and LNO 64k reproduce exactly at width 48, modes 4×4, counting a complex weight once). Three seeds per
model, trained together as one vmapped ensemble (identical per-seed trajectories). Relative L2 on the validation
and test splits (validation for any choice, test reported), MSE for Navier–Stokes (the paper's metric there).

``paper`` keeps everything published except the number of epochs, scaled (with the LR step) so that each dataset
fits 60 minutes on an idle 2-core CPU (``epochs`` vs ``published_epochs`` in the config; per-step CPU times measured
before the run, recorded in the summary). ``quick`` is a tiny smoke run. Data definitions: reaction–diffusion is
the published data set regenerated exactly (``jaxkit.pde.lno.reaction_diffusion_published``); the repository does
not ship the other data files, so they are regenerated from our documented definitions (``jaxkit.pde.DATASETS``).
"""

from __future__ import annotations

import copy
import math
import resource
import time
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from experiments import Anchor, Experiment, register
from jaxkit.operators import FNO, LNO, RNO, count_params, relative_l2, train_ensemble
from jaxkit.pde import lno, make_dataset, subsample

ALPHA = 0.05

_2PI = 2 * math.pi
_SPLITS = dict(n_train=200, n_val=50, n_test=130)  # every LNO-repository folder (ntrain, nvali, ntest)
_LNO_2D = dict(norm=True, activation="sin", grid_features=True, endpoint=True)

_PAPER_DATA: dict[str, dict[str, Any]] = {  # in order of cost
    "reaction_diffusion": dict(
        source="published",
        **_SPLITS,
        batch_size=50,
        lr=0.002,
        published_epochs=1000,
        epochs=50,
        step_fraction=0.1,
        modes=(4, 4),
        width=48,
        rno_width=35,
        fno=dict(padding=0.1, endpoint=True),
        lno=dict(_LNO_2D, lengths=(2.0, 1.0)),
    ),
    "diffusion": dict(
        source="make_dataset",
        options={},
        resolution=41,
        **_SPLITS,
        batch_size=50,
        lr=0.002,
        published_epochs=1000,
        epochs=100,
        step_fraction=0.1,
        modes=(4, 4),
        width=16,
        fno=dict(padding=0.1, endpoint=True),
        lno=dict(_LNO_2D, lengths=(1.0, 1.0)),
    ),
    "duffing": dict(
        source="make_dataset",
        options={},
        resolution=2048,
        **_SPLITS,
        batch_size=20,
        lr=0.002,
        published_epochs=1000,
        epochs=60,
        step_fraction=0.1,
        modes=(16,),
        width=4,
        fno=dict(padding=0.1, endpoint=False),
        lno=dict(norm=False, activation="sin", grid_features=False, lengths=(20.48,), endpoint=False),
    ),
    "beam": dict(
        source="make_dataset",
        options={},
        resolution=41,
        **_SPLITS,
        batch_size=50,
        lr=0.002,
        published_epochs=1000,
        epochs=30,
        step_fraction=0.1,
        modes=(4, 4),
        width=16,
        fno=dict(padding=0.1, endpoint=True),
        lno=dict(_LNO_2D, lengths=(1.0, 2.0)),
    ),
    "brusselator": dict(
        source="make_dataset",
        options={},
        resolution=28,
        stride=2,
        n_train=800,
        n_val=100,
        n_test=200,
        batch_size=50,
        lr=0.005,
        published_epochs=300,
        epochs=5,
        step_fraction=1 / 3,
        modes=(4, 4, 4),
        width=8,
        proj_hidden=64,
        fno=dict(padding=0.1, endpoint=True),
        lno=dict(
            norm=True, activation="relu", grid_features=True, lengths=(19.0, 26 / 27, 26 / 27), endpoint=True
        ),
    ),
    "navier_stokes_re40": dict(
        source="make_dataset",
        options={"fine_resolution": 64, "dt": 0.01},
        resolution=64,
        n_train=200,
        n_val=50,
        n_test=100,
        batch_size=20,
        lr=0.001,
        published_epochs=500,
        epochs=12,
        step_fraction=0.2,
        modes=(12, 12),
        width=20,
        lno_modes=(4, 4),
        metric="mse",
        fno=dict(padding=0.0, endpoint=False, lengths=(_2PI, _2PI)),
        lno=dict(norm=True, activation="sin", grid_features=True, lengths=(_2PI, _2PI), endpoint=False),
    ),
}

# what else was tried (validation error decides; run after the main table): RNO at FNO's width, with the paper's
# normalization, and all three with 4x the epochs on reaction-diffusion
_VARIANTS = {
    "reaction_diffusion": {
        "RNO width 48": ("RNO", {"rno_width": 48}),
        "RNO + instance norm": ("RNO", {"rno_norm": "instance"}),
        "RNO 200 epochs": ("RNO", {"epochs": 200}),
        "FNO 200 epochs": ("FNO", {"epochs": 200}),
    }
}
PAPER = dict(
    datasets=_PAPER_DATA,
    n_layers=4,
    proj_hidden=128,
    weight_decay=1e-4,
    gamma=0.5,
    seeds=3,
    models=["FNO", "LNO", "RNO"],
    rd_operator_check=True,
    variants=_VARIANTS,
    endpoint=None,  # set below (_endpoint), declared before any run
)


def _endpoint() -> dict:
    """The declared primary endpoint: RNO (the configuration chosen on validation) against the stronger baseline,
    FNO or LNO, whichever has the lower mean validation ``log10_error`` (a rule fixed before the run, not a choice
    made after it), on ``log10_error`` = log10 of the test error (relative L2; MSE where the dataset's metric is
    MSE), paired per (dataset, seed), Wilcoxon signed-rank, lower is better, α = 0.05. The log puts the datasets'
    errors on one scale: a paired difference is the log of the error ratio."""
    from jaxkit.evaluation import Endpoint

    return Endpoint(
        metric="log10_error", method="RNO", comparator=("FNO", "LNO"), test="wilcoxon", direction="lower",
        alpha=ALPHA, split="test", choose_on="val",
    ).to_dict()  # fmt: skip


PAPER["endpoint"] = _endpoint()


def _quick_data() -> dict[str, dict[str, Any]]:
    out = {}
    for name, d in _PAPER_DATA.items():
        q = copy.deepcopy(d)
        q.update(
            n_train=16, n_val=8, n_test=8, epochs=3, published_epochs=d["published_epochs"], batch_size=8
        )
        if name == "duffing":
            q.update(resolution=256, lno=dict(d["lno"], lengths=(2.56,)))
        if name in ("diffusion", "beam"):
            q.update(resolution=11)
        if name == "brusselator":
            q.update(
                options={"fine_resolution": 10, "n_t": 13, "t_final": 6.0},
                resolution=10,
                stride=1,
                lno=dict(d["lno"], lengths=(6.0, 1.0, 1.0)),
            )
        if name == "navier_stokes_re40":
            q.update(
                options={"fine_resolution": 32, "dt": 0.02, "t_final": 14, "n_in": 7},
                resolution=32,
                modes=(6, 6),
            )
        out[name] = q
    return out


# the largest part of ``paper`` that fits 60 min on an idle 2-core CPU: its two cheapest datasets at the paper
# preset's settings, and the two variants that do not multiply the epochs
STANDARD = dict(
    PAPER,
    datasets={k: _PAPER_DATA[k] for k in ("reaction_diffusion", "diffusion")},
    variants={
        "reaction_diffusion": {
            k: _VARIANTS["reaction_diffusion"][k] for k in ("RNO width 48", "RNO + instance norm")
        }
    },
)
QUICK = dict(
    PAPER,
    datasets=_quick_data(),
    seeds=2,
    rd_operator_check=False,
    variants={"reaction_diffusion": {"RNO + instance norm": ("RNO", {"rno_norm": "instance"})}},
)


def _smoke_data() -> dict[str, dict[str, Any]]:
    out = {}
    for name, q in _quick_data().items():
        q = dict(q, n_train=4, n_val=2, n_test=2, epochs=1, batch_size=2, width=4, proj_hidden=8)
        if name == "navier_stokes_re40":
            q.update(
                options={"fine_resolution": 16, "dt": 0.02, "t_final": 4, "n_in": 2},
                resolution=16,
                modes=(4, 4),
            )
        if name == "beam":  # the solver's fine grid 41 x 41 -> 21 x 21 (still subsampled to 11): 8 s -> 1.5 s
            q.update(options={"fine_resolution": 21, "n_t": 21})
        out[name] = q
    return out


# Seconds (tests/experiments/test_smoke.py): quick's six datasets (published reaction-diffusion included) at 4/2/2
# samples and one epoch, all three models at 2 seeds (one Fourier layer, width 4, projection 8: compilation is most
# of the cost), standard's two variants, and standard's training-operator
# check on the first 2 published test samples of 130 (amplitudes 0.84 and 9.04: one solved, one finite-time blow-up,
# so both of the check's branches run; a blow-up runs the solver to its step limit, about 3 s).
SMOKE = dict(
    QUICK,
    datasets=_smoke_data(),
    n_layers=1,
    proj_hidden=8,
    rd_operator_check=True,
    rd_operator_check_samples=2,
    variants=STANDARD["variants"],
)

ANCHORS = (
    Anchor("duffing/RNO_selected/test_rel_l2", 0.1663, "RNO paper, Duffing (second best LSM 0.1699)"),
    Anchor("beam/RNO_selected/test_rel_l2", 0.0219, "RNO paper, Euler-Bernoulli beam"),
    Anchor("beam/LNO/test_rel_l2", 0.0452, "RNO paper, beam, LNO (second best)"),
    Anchor("diffusion/RNO_selected/test_rel_l2", 0.0079, "RNO paper, diffusion"),
    Anchor("diffusion/LNO/test_rel_l2", 0.0081, "RNO paper, diffusion, LNO (second best)"),
    Anchor(
        "reaction_diffusion/RNO_selected/test_rel_l2",
        0.0899,
        "RNO paper, reaction-diffusion (second best ONO 0.0989)",
    ),
    Anchor("brusselator/RNO_selected/test_rel_l2", 0.1317, "RNO paper, Brusselator (second best ONO 0.1545)"),
    Anchor(
        "navier_stokes_re40/RNO_selected/test_mse",
        0.0049,
        "RNO paper, 2D Navier-Stokes Re=40 (MSE; their data)",
    ),
)
ANCHOR = {a.path.rsplit("/", 2)[0]: a for a in ANCHORS if "/RNO_selected/" in a.path}
SECOND = {
    "duffing": ("LSM", 0.1699),
    "beam": ("LNO", 0.0452),
    "diffusion": ("LNO", 0.0081),
    "reaction_diffusion": ("ONO", 0.0989),
    "brusselator": ("ONO", 0.1545),
}

_DATA_NOTES = {
    "reaction_diffusion": "the published `data.mat` regenerated exactly (max difference 2e-13, checked against the "
    "file in the repository snapshot, commit 78c64ef). Validation/test decay 20x faster than training (rate 1 vs "
    "0.05) and satisfy the stated PDE only with D = 1 instead of 1 - 0.95/pi^2: an extrapolation test.",
    "duffing": "the repository's `data.mat` is not in the snapshot (large files stored outside git). Ours: x'' + "
    "0.5x' + x + x^3 = A sin 5t, A ~ U[0.05, 10], zero initial state, t_j = 0.01 j (2048 points); validation and "
    "test drawn like the training set (the published test set may extrapolate, as the reaction-diffusion one does).",
    "diffusion": "data not in the snapshot. Ours: u_t = u_xx + A sin(pi x) sin 5t on [0,1], u = 0 at both ends, "
    "41 x 21 nodes on [0,1] x [0,1]: a one-parameter family, linear in A (likely easier than the published set).",
    "beam": "data not in the snapshot. Ours: u_tt + u_xxxx = A sin(pi x) sin 5t, simply supported, zero initial "
    "state, 41 x 41 nodes on [0,1] x [0,2]: a one-parameter family, linear in A (likely easier than theirs).",
    "brusselator": "their `Brusselator_force_train.npz` (800 train / 200 test, per the PaddleScience port's config) "
    "is on Google Drive, not reachable here. Ours: a = 1, b = 3, D_u = D_v = 0.01, zero flux, forcing A sin(wt) "
    "(A ~ U[0,1], w ~ U[0.5,2]) added to u, 28 x 28 nodes subsampled to every 2nd node (14 x 14, as the "
    "reference), 39 times on [0,19]. A related public generator (py-pde, D_0 = 1, D_1 = 0.5, GP forcing) suggests "
    "their dynamics differ.",
    "navier_stokes_re40": "the RNO paper's Navier-Stokes sets are unpublished. Ours: Kolmogorov flow, forcing "
    "-4 cos 4y, nu = 1/40 on the [0, 2pi)^2 torus, w0 ~ GRF(alpha 2.5, tau 7), IF-RK4 with dt = 0.01 at 64^2, map "
    "w(t = 1..10) -> w(t = 11..20). An MSE scales with the data's amplitude (our vorticity sd ~ 2.7), so it is not "
    "comparable to the paper's 0.0049 in absolute terms; the relative L2 is reported too. 'Published epochs' "
    "here are the FNO paper's 500 (the RNO paper's Navier-Stokes budget is not stated); n = 200/50/100 is ours.",
}
_MODEL_NOTES = [
    "All models: unit-Gaussian normalization per channel of inputs and outputs, relative-L2 loss on decoded "
    "predictions, Adam with L2 weight decay 1e-4 (PyTorch `Adam(weight_decay=...)`), step decay x0.5 with the "
    "published step scaled with the epochs; final model evaluated (no early stopping, as the repository).",
    "LNO: the reference's architecture (lift, one pole-residue Laplace layer + 1x1 residual, sin / ReLU MLP, "
    "parameter-free instance norm in 2-D/3-D) and initialization; each channel pair keeps its own poles in the "
    "transient term (the reference reuses the output-channel index in the pole tensor's input slot there). The "
    "reference trains LNO on raw (1-D/2-D) or range-normalized (Brusselator) data; here it shares the pipeline.",
    "FNO / RNO: 4 spectral blocks, GELU, 10% zero padding on non-periodic grids, MLP head 128 (64 for the "
    "Brusselator, as LNO). RNO: `RieszSpectralConv`, mixed global + local branch, first-order Riesz multipliers, "
    "no normalization by default (the paper mentions one; a per-sample instance norm after the block could remove "
    "the amplitude these one-parameter sets are made of). The variants tried (width 48, instance norm) compete "
    "with it on validation; the winner is the RNO headline. RNO width 35 on reaction-diffusion (176,937 "
    "parameters, the paper's ~172k; width 34 gives 167,129).",
]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ---------------------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------------------
def load_data(name: str, d: dict, seed: int, cache: Any) -> dict[str, np.ndarray]:
    """Train / validation / test arrays ``(n, c, *grid)``; validation = extra samples drawn like the training set
    (reaction–diffusion: the published validation split)."""
    if d["source"] == "published":
        out = {}
        for split in ("train", "val", "test"):
            f, u, _, _ = lno.reaction_diffusion_published(split, dtype=np.float32)
            n = d[f"n_{split}"]
            out[f"x_{split}"], out[f"y_{split}"] = f[:n, None], u[:n, None]
        return out
    n_tr, n_val = d["n_train"], d["n_val"]
    ds = make_dataset(
        name,
        n_train=n_tr + n_val,
        n_test=d["n_test"],
        resolution=d["resolution"],
        seed=seed,
        cache_dir=cache,
        progress=True,
        **d["options"],
    )
    arrays = {
        "x_train": ds.x_train[:n_tr],
        "y_train": ds.y_train[:n_tr],
        "x_val": ds.x_train[n_tr:],
        "y_val": ds.y_train[n_tr:],
        "x_test": ds.x_test,
        "y_test": ds.y_test,
    }
    stride = d.get("stride", 1)
    return {k: subsample(v, name, stride=stride) for k, v in arrays.items()}


# ---------------------------------------------------------------------------------------------------------------
# models, training, evaluation
# ---------------------------------------------------------------------------------------------------------------
def model_factory(kind: str, c_in: int, c_out: int, d: dict, cfg: dict):
    hidden = d.get("proj_hidden", cfg["proj_hidden"])
    if kind == "LNO":
        return lambda key: LNO(
            c_in, c_out, d.get("lno_modes", d["modes"]), d["width"], proj_hidden=hidden, key=key, **d["lno"]
        )
    fno = dict(d["fno"])
    lengths = fno.pop("lengths", None)
    if kind == "FNO":
        return lambda key: FNO(
            c_in, c_out, d["modes"], d["width"], cfg["n_layers"], proj_hidden=hidden, key=key, **fno
        )
    width = d.get("rno_width", d["width"])
    return lambda key: RNO(
        c_in,
        c_out,
        d["modes"],
        width,
        cfg["n_layers"],
        proj_hidden=hidden,
        lengths=lengths,
        norm=d.get("rno_norm"),
        key=key,
        **fno,
    )


def _errors(pred: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    with jax.enable_x64(True):  # in float64 (the published metrics agree to ~1e-8 relative)
        rel = relative_l2(jnp.asarray(pred, jnp.float64), jnp.asarray(y, jnp.float64), per_sample=True)
    return np.asarray(rel), float(np.mean((pred - y) ** 2))


def train_and_evaluate(
    ctx, name: str, kind: str, data: dict, d: dict, label: str | None = None
) -> dict[str, Any]:
    """Train the seed ensemble of one model kind; errors per seed on validation and test."""
    cfg = ctx.config
    c_in, c_out = data["x_train"].shape[1], data["y_train"].shape[1]
    make = model_factory(kind, c_in, c_out, d, cfg)
    keys = jax.random.split(jax.random.key(ctx.seed), cfg["seeds"])
    step_epochs = max(1, round(d["epochs"] * d["step_fraction"]))
    t0, c0 = time.perf_counter(), _cpu()
    trained = train_ensemble(
        make,
        keys,
        data["x_train"],
        data["y_train"],
        epochs=d["epochs"],
        batch_size=d["batch_size"],
        lr=d["lr"],
        weight_decay=cfg["weight_decay"],
        step_epochs=step_epochs,
        gamma=cfg["gamma"],
        checkpoint_dir=ctx.checkpoint_dir(f"{ctx.preset}-{name}-{label or kind}"),
        resume=ctx.resume,
        progress=f"{name}:{kind}",
    )
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    res: dict[str, Any] = {
        "val_rel_l2_seeds": [],
        "test_rel_l2_seeds": [],
        "val_mse_seeds": [],
        "test_mse_seeds": [],
    }
    for t in trained:
        for split in ("val", "test"):
            rel, mse = _errors(t.predict(data[f"x_{split}"]), np.asarray(data[f"y_{split}"]))
            res[f"{split}_rel_l2_seeds"].append(float(rel.mean()))
            res[f"{split}_mse_seeds"].append(mse)
    for key in ("val_rel_l2", "test_rel_l2", "val_mse", "test_mse"):
        res[key], res[key + "_std"] = float(np.mean(res[key + "_seeds"])), float(np.std(res[key + "_seeds"]))
    shape = eqx.filter_eval_shape(make, jax.random.key(0))
    res.update(
        params=count_params(shape),
        params_complex_as_one=count_params(shape, complex_as_one=True),
        epochs=d["epochs"],
        step_epochs=step_epochs,
        batch_size=d["batch_size"],
        lr=d["lr"],
        train_wall_s=wall,
        train_cpu_s=cpu,
        epoch_time_s=float(trained[0].epoch_time) * cfg["seeds"],
        final_train_loss=[float(t.history[-1]["loss"]) for t in trained],
    )
    return res


def run_dataset(ctx, name: str, d: dict) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), _cpu()
    data = ctx.stage(f"{ctx.preset}-{name}-data", lambda: load_data(name, d, ctx.seed, ctx.out_dir / "data"))
    out: dict[str, Any] = {
        "grid": list(data["x_train"].shape[2:]),
        "channels": [data["x_train"].shape[1], data["y_train"].shape[1]],
        "n": [int(data[f"x_{s}"].shape[0]) for s in ("train", "val", "test")],
        "data_wall_s": time.perf_counter() - t0,
        "data_cpu_s": _cpu() - c0,
    }
    for kind in ctx.config["models"]:
        out[kind] = ctx.stage(
            f"{ctx.preset}-{name}-{kind}", lambda kind=kind: train_and_evaluate(ctx, name, kind, data, d)
        )
    return out


def rd_training_operator_check(n_samples: int | None = None) -> dict[str, Any]:
    """The published reaction-diffusion test inputs pushed through the *training* operator (the PDE with
    D = 1 - 0.95/π², solved by the method of lines from the exact u(x, 0)) and compared with the published labels:
    how far the test labels are from what the training data define. ``n_samples``: the first n test samples only
    (``None``: all; the ``smoke`` preset takes a few)."""
    import equinox as eqx
    import jax.numpy as jnp

    f, u, x, t = lno.reaction_diffusion_published("test")
    u = u[:n_samples]
    amps = u[:, 10, 0] / np.sin(np.pi * x[10])
    xf = np.linspace(0.0, 2.0, 157, dtype=np.float32)  # 4x refined grid

    @eqx.filter_jit
    def solve(a):
        shape = lambda xx, tt: a * jnp.sin(jnp.pi * xx) * jnp.exp(-tt)  # noqa: E731
        forcing = lambda xx, tt: (1 - jnp.pi**2) * shape(xx, tt) + shape(xx, tt) ** 2  # noqa: E731
        return lno.reaction_diffusion(forcing, xf, t.astype(np.float32), u0=shape(xf, 0.0))[::4]

    rel, blow = [], []
    for a, target in zip(amps.astype(np.float32), u):
        try:
            pred = np.asarray(solve(a))
            if not np.all(np.isfinite(pred)):
                raise FloatingPointError
            rel.append(_errors(pred[None], np.asarray(target)[None])[0][0])
        except Exception:  # finite-time blow-up: diffrax reaches its step limit
            blow.append(float(a))
    return {
        "n_solved": len(rel),
        "n_blow_up": len(blow),
        "min_blow_up_amplitude": min(blow, default=np.nan),
        "rel_l2_mean_solved": float(np.mean(rel)),
        "rel_l2_median_solved": float(np.median(rel)),
    }


def run(ctx) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for name, d in ctx.progress(list(ctx.config["datasets"].items()), desc="datasets"):
        metrics[name] = run_dataset(ctx, name, d)
    for name, variants in ctx.config.get("variants", {}).items():
        base = ctx.config["datasets"][name]
        data = load_data(name, base, ctx.seed, ctx.out_dir / "data")  # cached by make_dataset
        for label, (kind, overrides) in variants.items():
            metrics[name].setdefault("variants", {})[label] = ctx.stage(
                f"{ctx.preset}-{name}-variant-{label}",
                lambda n=name, k=kind, d=dict(base, **overrides), lab=label, dat=data: train_and_evaluate(
                    ctx, n, k, dat, d, lab
                ),
            )
    select_and_compare(metrics, ctx.config)
    if ctx.config.get("rd_operator_check") and "reaction_diffusion" in metrics:
        metrics["reaction_diffusion"]["training_operator_check"] = ctx.stage(
            f"{ctx.preset}-reaction_diffusion-operator-check",
            lambda: rd_training_operator_check(ctx.config.get("rd_operator_check_samples")),
        )
    metrics |= score(metrics, ctx.config)
    _figure(ctx, metrics)
    ctx.write_summary(summary(ctx, metrics))
    return metrics


# ---------------------------------------------------------------------------------------------------------------
# selection on validation, paired comparisons
# ---------------------------------------------------------------------------------------------------------------


def _select_rno(m: dict, met: str) -> dict[str, Any]:
    """The RNO configuration with the lowest mean validation error among the base RNO and its variants."""
    cands = {"RNO": m["RNO"]} | {lab: r for lab, r in m.get("variants", {}).items() if lab.startswith("RNO")}
    label = min(cands, key=lambda k: cands[k][f"val_{met}"])
    out = dict(cands[label])
    out["variant"] = label
    out["candidates_val"] = {k: float(v[f"val_{met}"]) for k, v in cands.items()}
    return out


def paired_comparison(a: list[float], b: list[float]) -> dict[str, Any]:
    """Paired per-seed comparison of errors ``a`` (method) and ``b`` (baseline), seed i against seed i.

    Verdict ``"lower"`` / ``"higher"`` (the method's error vs the baseline's) only when the per-seed ranges do not
    overlap *and* the paired t-test (``scipy.stats.ttest_rel``) gives p < 0.05; otherwise ``"tie"``. The exact
    Wilcoxon signed-rank p is shown too: with n seeds its smallest two-sided value is 2/2^n (0.25 for 3 seeds), so
    at 3 seeds it cannot decide alone.
    """
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    overlap = bool(max(a.min(), b.min()) <= min(a.max(), b.max()))
    p_t = float(stats.ttest_rel(a, b).pvalue) if np.any(d != d[0]) else (0.0 if d[0] != 0 else 1.0)
    p_w = float(stats.wilcoxon(a, b, method="exact").pvalue) if np.any(d != 0) else 1.0
    verdict = "tie" if overlap or p_t >= ALPHA else ("lower" if d.mean() < 0 else "higher")
    return {
        "diff_seeds": d.tolist(),
        "mean_diff": float(d.mean()),
        "median_diff": float(np.median(d)),
        "ranges_overlap": overlap,
        "p_ttest_rel": p_t,
        "p_wilcoxon_exact": p_w,
        "verdict": verdict,
    }


def _datasets(metrics: dict, cfg: dict) -> dict[str, dict]:
    """The per-dataset entries of ``metrics`` (it also holds the endpoint, its records and verdicts)."""
    return {n: m for n, m in metrics.items() if n in cfg["datasets"]}


def endpoint_records(metrics: dict, cfg: dict) -> list[dict[str, Any]]:
    """Per-item records of the endpoint: one per (dataset, seed), arm (RNO = the configuration chosen on
    validation, FNO, LNO) and split (val, test), with the error and its log10."""
    recs = []
    for name, m in _datasets(metrics, cfg).items():
        met = _metric(name, cfg["datasets"][name])
        for arm, r in (("RNO", m["RNO_selected"]), ("FNO", m.get("FNO")), ("LNO", m.get("LNO"))):
            if r is None:
                continue
            for split in ("val", "test"):
                for i, v in enumerate(r[f"{split}_{met}_seeds"]):
                    recs.append({
                        "item": f"{name}/seed{i}", "dataset": name, "seed": i, "arm": arm, "split": split,
                        "metric": met, "error": float(v), "log10_error": float(np.log10(v)),
                    })  # fmt: skip
    return recs


def score(metrics: dict, cfg: dict) -> dict[str, Any]:
    """The headline (the declared endpoint) and, as one Holm-corrected secondary family, RNO against the baseline
    the comparator rule did not pick, on test (same records, same test), from the stored per-seed errors."""
    from jaxkit.evaluation import Endpoint, endpoint_from_dict, secondary, verdict

    recs = endpoint_records(metrics, cfg)
    endpoint = endpoint_from_dict(cfg["endpoint"])
    v = verdict(endpoint, recs)
    family = {
        f"RNO vs {b}": (
            Endpoint(endpoint.metric, "RNO", b, endpoint.test, endpoint.direction, endpoint.alpha, "test"),
            recs,
        )
        for b in ("FNO", "LNO")
        if b != v.comparator  # the primary comparison is not in the secondary family
    }
    sec = secondary(family)
    return {
        "endpoint": endpoint.to_dict(),
        "endpoint_records": recs,
        "verdict": v.to_dict(),
        "verdict_markdown": v.markdown(),
        "secondary": {k: s.to_dict() for k, s in sec.items()},
    }


def _secondary_lines(metrics: dict) -> list[str]:
    if "verdict_markdown" not in metrics:
        return []
    lines = [
        "",
        metrics["verdict_markdown"],
        "",
        "Primary endpoint: log10 test error of RNO (chosen on validation) minus the "
        "stronger baseline's (FNO or LNO, lower mean validation log10 error), paired per dataset and seed, Wilcoxon "
        "signed-rank; the seeds of one dataset share its data, so they are not independent draws of datasets.",
        "",
        "Secondary (Holm-corrected within this page): RNO against the other baseline, same records and test.",
        "",
        "| comparison | median difference of log10 error [95% CI] | p | Holm p | verdict |",
        "|---|---|---|---|---|",
    ]
    for k, s in metrics.get("secondary", {}).items():
        lines.append(
            f"| {k} | {s['estimate']:+.3f} [{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}] | {s['p']:.3g} | "
            f"{s['p_adjusted']:.3g} | {s['word']} |"
        )
    if metrics.get("endpoint_declared"):
        lines += ["", f"Re-scored: {metrics['endpoint_declared']}"]
    return lines


def select_and_compare(metrics: dict, cfg: dict) -> dict:
    """Add ``RNO_selected`` (chosen on validation) and paired test comparisons vs FNO and LNO to every dataset
    (in place; a pure function of the stored per-seed errors, so published runs can be reprocessed)."""
    for name, m in _datasets(metrics, cfg).items():
        met = _metric(name, cfg["datasets"][name])
        sel = _select_rno(m, met)
        m["RNO_selected"] = sel
        key = f"test_{met}_seeds"
        m["comparisons"] = {
            f"RNO_selected vs {k}": paired_comparison(sel[key], m[k][key]) for k in ("FNO", "LNO") if k in m
        }
    return metrics


# ---------------------------------------------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------------------------------------------
def _metric(name: str, d: dict) -> str:
    return "mse" if d.get("metric") == "mse" else "rel_l2"


def _figure(ctx, metrics: dict) -> None:
    import matplotlib.pyplot as plt

    metrics = _datasets(metrics, ctx.config)
    names = list(metrics)
    fig, ax = plt.subplots(figsize=(10, 4))
    x = np.arange(len(names))
    for i, kind in enumerate(ctx.config["models"]):
        shown = "RNO_selected" if kind == "RNO" and "RNO_selected" in metrics[names[0]] else kind
        key = [f"test_{_metric(n, ctx.config['datasets'][n])}" for n in names]
        vals = [metrics[n][shown][k] for n, k in zip(names, key)]
        errs = [metrics[n][shown][k + "_std"] for n, k in zip(names, key)]
        label = "RNO (chosen on validation)" if shown == "RNO_selected" else kind
        ax.bar(x + (i - 1) * 0.27, vals, 0.27, yerr=errs, label=label)
    paper = [ANCHOR[n].value if n in ANCHOR else np.nan for n in names]
    ax.scatter(x + 0.27, paper, marker="*", s=120, color="k", zorder=3, label="RNO, paper")
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("test error (rel. L2; MSE for Navier-Stokes), mean ± sd over seeds")
    ax.legend()
    fig.tight_layout()
    ctx.save_figure(fig, "lno_suite.png")
    plt.close(fig)


def _pm(r: dict, key: str) -> str:
    return f"{r[key]:.4g} ± {r[key + '_std']:.2g}"


_VERDICT = {"lower": "RNO lower", "higher": "RNO higher", "tie": "tie"}


def _row(name: str, m: dict, d: dict) -> str:
    met = _metric(name, d)
    f, lno, r = m["FNO"], m["LNO"], m["RNO_selected"]
    key = f"test_{met}"
    a = ANCHOR.get(name)
    paper = f"{a.value}" if a else "-"
    gap = f"{r[key] / a.value:.2f}×" if a else "-"
    within = ("yes" if r[key] <= 1.5 * a.value else "no") if a else "-"
    cmp = m["comparisons"]
    order = " / ".join(_VERDICT[cmp[f"RNO_selected vs {k}"]["verdict"]] for k in ("FNO", "LNO"))
    return (
        f"| {name} | {met} | {r['epochs']}/{d['published_epochs']} | {_pm(f, key)} | {_pm(lno, key)} | "
        f"{_pm(r, key)} ({r['variant']}) | {paper} | {gap} | {within} | {order} | "
        f"{f['params_complex_as_one']} / {lno['params_complex_as_one']} / {r['params_complex_as_one']} |"
    )


def _cost_lines(cfg: dict, metrics: dict) -> list[str]:
    ds = cfg["datasets"]
    lines: list[str] = []
    lines += [
        "",
        "Cost per dataset (this run; the machine was shared with other jobs, so wall > CPU/2):",
        "",
        "| dataset | grid | n train/val/test | CPU s (data) | CPU s FNO / LNO / RNO | wall s total | "
        "CPU s total / 2 |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, m in metrics.items():
        cpus = [m[k]["train_cpu_s"] for k in cfg["models"]]
        wall = m["data_wall_s"] + sum(m[k]["train_wall_s"] for k in cfg["models"])
        lines.append(
            f"| {n} | {'×'.join(map(str, m['grid']))} | {'/'.join(map(str, m['n']))} | "
            f"{m['data_cpu_s']:.0f} | {' / '.join(f'{c:.0f}' for c in cpus)} | {wall:.0f} | "
            f"{(m['data_cpu_s'] + sum(cpus)) / 2:.0f} |"
        )
    lines += [
        "",
        "Budget: the `paper` preset keeps the repository's sample counts, batch size, learning rate, weight "
        "decay, schedule shape, modes and widths, and runs the number of epochs in the table (the LR step "
        "scaled with it), sized from per-step CPU times measured before the run so that every dataset fits "
        "well inside 60 min on an idle 2-core machine. Full published epochs would cost, at the CPU time per "
        "epoch measured here:",
        "",
    ]
    for n, m in metrics.items():
        per_epoch = sum(m[k]["train_cpu_s"] / m[k]["epochs"] for k in cfg["models"])
        lines.append(
            f"- {n}: {ds[n]['published_epochs']} epochs ≈ {per_epoch * ds[n]['published_epochs'] / 7200:.1f} h "
            "on an idle 2-core machine (CPU time / 2)"
        )
    return lines


def _headline_block(metrics: dict) -> list[str]:
    """The summary's headline numbers (test and validation errors, paired p-values, training CPU seconds as the
    tables print them), declared for the check of the published pages against metrics.json
    (tests/docs/test_published_numbers.py)."""
    keys = []
    for name, d in metrics.items():
        if not isinstance(d, dict) or "RNO_selected" not in d or "test_rel_l2" not in d["RNO_selected"]:
            continue
        keys += [f"{name}/RNO_selected/test_rel_l2 | .4g", f"{name}/RNO_selected/test_rel_l2_std | .2g"]
        keys += [
            f"{name}/{m}/val_rel_l2 | .4g" for m in ("RNO_selected", "RNO") if "val_rel_l2" in d.get(m, {})
        ]
        keys += [f"{name}/{m}/test_rel_l2 | .4g" for m in ("FNO", "LNO") if "test_rel_l2" in d.get(m, {})]
        keys += [f"{name}/comparisons/{c}/p_ttest_rel | .3g" for c in d.get("comparisons", {})]
        keys += [
            f"{name}/{m}/train_cpu_s | .0f" for m in ("FNO", "LNO", "RNO") if "train_cpu_s" in d.get(m, {})
        ]
    return ["<!-- headline", *keys, "-->", ""] if keys else []


def _baseline_lines(metrics: dict, ds: dict) -> list[str]:
    """How far each baseline sits from its own published error (a comparison against a baseline far off its
    published level is labeled as such), and what the gaps rest on."""
    out = []
    for a in ANCHORS:
        name, model = a.path.split("/")[:2]
        if model == "RNO_selected" or name not in metrics or model not in metrics[name]:
            continue
        ours = metrics[name][model].get("test_rel_l2")
        if ours is None:
            continue
        ratio = ours / a.value
        weak = ratio > 2.0
        out.append(
            f"{'**Against a weak baseline.** ' if weak else ''}{model} on {name}: test rel-L2 {ours:.4g}, "
            f"{ratio:.1f}× the {a.value} the RNO paper reports for it ({ds[name]['epochs']} of "
            f"{ds[name]['published_epochs']} epochs, on our data)"
            + (
                f"; 'RNO lower than {model}' here compares against this {model}, far from its published level."
                if weak
                else "."
            )
        )
    if out:
        out = ["", *out]
    out += [
        "",
        "No curve of error against epochs was recorded, so how much of each gap to the published numbers comes from "
        "the shortened training and how much from the data is not measured here.",
    ]
    return out


def summary(ctx, metrics: dict) -> str:
    cfg = ctx.config
    ds = cfg["datasets"]
    scored = metrics
    metrics = _datasets(metrics, cfg)
    lines = [
        "# lno_suite: FNO, LNO and RNO on the LNO suite and Navier-Stokes Re=40",
        "",
        *_headline_block(metrics),
        *_secondary_lines(scored)[1:],
        "",
        f"Preset `{ctx.preset}`, seed {ctx.seed}, {cfg['seeds']} seeds per model (one vmapped ensemble). "
        "Test error of the final model, mean ± sd over seeds. **RNO** is the configuration chosen on validation "
        "among the base RNO and the variants tried (lowest mean validation error; named in brackets); its test "
        "error is the headline. *gap* = ours / paper. *RNO vs FNO / LNO*: paired per seed (seed i against seed i); "
        "a difference is called only when the per-seed ranges do not overlap and a paired t-test "
        "(`scipy.stats.ttest_rel`) gives p < 0.05, otherwise **tie**. Params counted as in the papers (a complex "
        "weight counts once).",
        "",
        "| dataset | metric | epochs run/published | FNO | LNO | RNO (chosen) | RNO, paper | gap | within 1.5× | "
        "RNO vs FNO / LNO | params FNO / LNO / RNO |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(n, metrics[n], ds[n]) for n in metrics]
    lines += [
        "",
        "Descriptive, per dataset (uncorrected and not a verdict: the headline is the primary endpoint above). "
        "Paired comparisons on test (RNO chosen minus baseline, per seed; Wilcoxon's exact two-sided p cannot go "
        f"below {2 / 2 ** cfg['seeds']:.2f} with {cfg['seeds']} seeds, so it is shown but cannot decide):",
        "",
        "| dataset | comparison | per-seed differences | ranges overlap | paired t-test p | Wilcoxon p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in metrics:
        for lab, c in metrics[n]["comparisons"].items():
            lines.append(
                f"| {n} | {lab.replace('RNO_selected', 'RNO')} | "
                f"{', '.join(f'{x:+.4f}' for x in c['diff_seeds'])} | {'yes' if c['ranges_overlap'] else 'no'} | "
                f"{c['p_ttest_rel']:.3g} | {c['p_wilcoxon_exact']:.2f} | {_VERDICT[c['verdict']]} |"
            )
    treated = sorted({n for n in metrics if metrics[n].get("variants")})
    if treated:
        lines += [
            "",
            f"The variants were tried for RNO only ({', '.join(treated)}): FNO and LNO were not given the same "
            "choices, so where an RNO variant wins, the RNO-vs-baseline comparison favors RNO by that choice.",
        ]
    lines += _baseline_lines(metrics, ds)
    for n in [n for n in metrics if _metric(n, ds[n]) == "mse"]:
        lines += [
            "",
            f"{n}, test relative L2: "
            + ", ".join(f"{k} {_pm(metrics[n][k], 'test_rel_l2')}" for k in cfg["models"])
            + ".",
        ]
    lines += [
        "",
        "Validation errors (the split used for any choice; RNO = the base configuration):",
        "",
        "| dataset | FNO | LNO | RNO | RNO chosen |",
        "|---|---|---|---|---|",
    ]
    for n in metrics:
        key = f"val_{_metric(n, ds[n])}"
        sel = metrics[n]["RNO_selected"]
        lines.append(
            f"| {n} | "
            + " | ".join(_pm(metrics[n][k], key) for k in cfg["models"])
            + f" | {sel['variant']}: {_pm(sel, key)} |"
        )
    var = [(n, lab, r) for n in metrics for lab, r in metrics[n].get("variants", {}).items()]
    if var:
        lines += [
            "",
            "## What else was tried (validation decides, test shown; the winner is the headline above)",
            "",
            "| dataset | variant | epochs | params | val rel-L2 | test rel-L2 |",
            "|---|---|---|---|---|---|",
        ]
        for n, lab, r in var:
            lines.append(
                f"| {n} | {lab} | {r['epochs']} | {r['params_complex_as_one']} | {_pm(r, 'val_rel_l2')} | "
                f"{_pm(r, 'test_rel_l2')} |"
            )
    lines += _cost_lines(cfg, metrics)
    lines += ["", "## Data definitions (ours vs the published sets)", ""]
    lines += [f"- **{n}**: {_DATA_NOTES[n]}" for n in metrics if n in _DATA_NOTES]
    chk = metrics.get("reaction_diffusion", {}).get("training_operator_check")
    if chk:
        lines += [
            "",
            "Reaction-diffusion, the published test inputs through the *training* operator (our method-of-"
            f"lines solver, D = 1 - 0.95/π², exact u(x, 0)): {chk['n_blow_up']} of 130 samples blow up in "
            f"finite time (A ≥ {chk['min_blow_up_amplitude']:.2f}); on the other {chk['n_solved']} the "
            f"solution differs from the published labels by rel. L2 {chk['rel_l2_mean_solved']:.3f} (mean; "
            f"median {chk['rel_l2_median_solved']:.3f}). The labels follow only the pointwise relation "
            "f = (1 - π²)u + u² shared by all splits, so this test rewards a model that learned that "
            "relation rather than the training dynamics.",
        ]
    lines += ["", "## Models and training", ""] + [f"- {t}" for t in _MODEL_NOTES]
    lines += [
        "",
        f"Command: `python -m experiments run lno_suite --preset {ctx.preset} --seed {ctx.seed} --resume` "
        "(metrics.json records the command, date and versions).",
        "",
        "![test errors](lno_suite.png)",
        "",
    ]
    return "\n".join(lines)


register(
    Experiment(
        name="lno_suite",
        reproduces="RNO paper (ICLR 2026) Table 1: LNO-suite rel. L2 (Duffing, beam, diffusion, reaction-diffusion, "
        "Brusselator) and Navier-Stokes Re=40 MSE; FNO, LNO, RNO at the LNO repository's settings",
        presets={
            "smoke": copy.deepcopy(SMOKE),
            "quick": copy.deepcopy(QUICK),
            "standard": copy.deepcopy(STANDARD),
            "paper": copy.deepcopy(PAPER),
        },
        run=run,
        anchors=ANCHORS,
        description="FNO vs LNO vs RNO, 3 seeds each, LNO-repository settings with epochs fitted to 60 min/dataset.",
    )
)


def reprocess(folder: str) -> None:
    """Recompute selection, comparisons, summary and figure of a published run folder from its stored
    per-seed metrics (no training): ``python -m experiments.lno_suite reprocess docs/results/lno_suite/standard``."""
    import json
    from pathlib import Path
    from types import SimpleNamespace

    import matplotlib

    matplotlib.use("Agg")
    path = Path(folder)
    rec = json.loads((path / "metrics.json").read_text())
    if "endpoint" not in rec["config"]:  # a run from before the endpoint was declared: re-scored, and says so
        rec["config"]["endpoint"] = _endpoint()
        rec["metrics"]["endpoint_declared"] = (
            "the primary endpoint was declared after this run (2026-12-07); its verdict is recomputed from the "
            "stored per-seed errors (no retraining)."
        )
    select_and_compare(rec["metrics"], rec["config"])
    rec["metrics"] |= score(rec["metrics"], rec["config"])
    rec["anchors"] = [{"path": a.path, "value": a.value, "source": a.source} for a in ANCHORS]
    rec["reprocessed"] = f"python -m experiments.lno_suite reprocess {folder}"

    def save_figure(fig, filename):
        fig.savefig(path / filename, dpi=120, bbox_inches="tight")

    ctx = SimpleNamespace(
        config=rec["config"], preset=rec["preset"], seed=rec["seed"], save_figure=save_figure
    )
    _figure(ctx, rec["metrics"])
    (path / "summary.md").write_text(summary(ctx, rec["metrics"]))
    (path / "metrics.json").write_text(json.dumps(rec, indent=2) + "\n")


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "reprocess":
        sys.exit("usage: python -m experiments.lno_suite reprocess RUN_FOLDER")
    reprocess(sys.argv[2])
