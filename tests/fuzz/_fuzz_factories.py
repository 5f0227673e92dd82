"""Valid base calls for the exports that cannot be built from their signatures alone (they need a model, a file,
a user's function, a string naming a registered item), and builders for the jaxkit types that appear in
signatures. The edge table then perturbs one argument of these base calls at a time.

Each factory returns the keyword arguments of one small, valid call; sizes are the smallest that exercise the
function (the default fuzz run has to stay within its time budget).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit import diffusion as dm
from jaxkit import dynamics as dy
from jaxkit import evaluation as _ev
from jaxkit import forecast as fc
from jaxkit import operators as op
from jaxkit import ssm

KEY = jax.random.key(0)


def _normal(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@functools.cache
def _fno() -> op.NeuralOperator:
    return op.build_operator(
        op.OperatorConfig("fno", 1, 1, (4,), width=4, n_layers=1, proj_hidden=4), key=KEY
    )


@functools.cache
def _forecaster() -> fc.DiffusionForecaster:
    return fc.make_forecaster(
        n_assets=2,
        history=4,
        horizon=2,
        n_macro=1,
        n_signals=1,
        scale=np.ones(2, np.float32),
        key=KEY,
        denoiser=fc.MLPNet(hidden=8, depth=1, channels=4),
        diffusion_steps=4,
    )


def _windows() -> dict[str, np.ndarray]:
    return fc.ar1_windows(6, 4, 2, 0.5, np.eye(2, dtype=np.float32) * 0.1, seed=0)


@functools.cache
def _construction() -> ssm.Construction:
    return ssm.construct("parity", "dense")


def _unit(*shape: int) -> np.ndarray:
    x = _normal(*shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _dates(n: int = 400):
    import pandas as pd

    return pd.bdate_range("2015-01-01", periods=n)


def _frame(n: int = 300, cols: int = 3, positive: bool = True):
    import pandas as pd

    x = np.exp(np.cumsum(0.01 * _normal(n, cols, seed=7), 0)) if positive else _normal(n, cols, seed=7)
    return pd.DataFrame(x, index=_dates(n), columns=[f"c{i}" for i in range(cols)])


def _paired_records(n: int = 10, seed: int = 0) -> list[dict[str, Any]]:
    """Per-item records of a method ``m`` and a comparator ``c`` (metric ``x``, lower better)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    return [{"item": i, "arm": "c", "x": float(b)} for i, b in enumerate(base)] + [
        {"item": i, "arm": "m", "x": float(b - 0.5 + 0.1 * rng.normal())} for i, b in enumerate(base)
    ]


def _lin_loss(p: Any) -> Any:
    return 0.5 * jnp.sum((p["W"] - jnp.eye(2)) ** 2)


@functools.cache
def _dock() -> dict[str, Any]:
    """A small ligand (3 fragments) in a pseudo-pocket around its own conformer: the docking building blocks."""
    from rdkit import Chem
    from rdkit.Chem import AllChem

    from jaxkit import docking as dk

    mol = Chem.AddHs(Chem.MolFromSmiles("OCCc1ccc(CC(=O)N)cc1"))
    AllChem.EmbedMolecule(mol, randomSeed=0)
    lig = dk.ligand_fragments(mol, conformer="rdkit", seed=0)
    pos = dk.conformer_positions(lig.frag.mol)
    pocket = dk.pseudo_pocket(pos, np.random.default_rng(0))
    c = dk.build_complex(lig, pocket)
    f = lig.frag.n_fragments
    process = dk.docking_process()
    return {
        "mol": lig.frag.mol,
        "lig": lig,
        "frag": lig.frag,
        "pocket": pocket,
        "c": c,
        "positions": pos,
        "R": jnp.tile(jnp.eye(3), (f, 1, 1)),
        "T": jnp.zeros((f, 3)),
        "process": process,
        "model": dk.exact_model(process),
    }


def _dk(*names: str, **extra: Any) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        d = _dock()
        return {n.split("=")[0]: d[n.split("=")[-1]] for n in names} | extra

    return make


def _docking_types() -> dict[type, Callable[[], Any]]:
    from rdkit import Chem

    from jaxkit import docking as dk

    return {
        Chem.Mol: lambda: _dock()["mol"],
        dk.PreparedLigand: lambda: _dock()["lig"],
        dk.Fragmentation: lambda: _dock()["frag"],
        dk.Pocket: lambda: _dock()["pocket"],
        dk.DockingComplex: lambda: _dock()["c"],
        dm.SE3Diffusion: lambda: _dock()["process"],
    }


def _lno_forcing(x, t):
    """f(x, t) = sin(pi x) sin(5 t): the LNO data sets' forcing family."""
    return jnp.sin(jnp.pi * x) * jnp.sin(5.0 * t)


TYPE_FACTORIES: dict[type, Callable[[], Any]] = {
    dm.VPSchedule: dm.VPSchedule,
    dm.DiscreteSchedule: lambda: dm.discrete_schedule("linear", 8),
    ssm.Formula: lambda: ssm.parse("F a"),
    ssm.Construction: _construction,
    fc.DiffusionForecaster: _forecaster,
    op.NeuralOperator: _fno,
    op.OperatorConfig: lambda: op.OperatorConfig("fno", 1, 1, (4,), width=4, n_layers=1, proj_hidden=4),
}

TYPE_FACTORIES.update(_docking_types())

FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {
    # docking
    "jaxkit.docking.bond_gap": _dk("c", "R", "T"),
    "jaxkit.docking.pose_rmsd": _dk("c", "R", "T"),
    "jaxkit.docking.ligand_positions": _dk("c", "R", "T"),
    "jaxkit.docking.dummy_positions": _dk("c", "R", "T"),
    "jaxkit.docking.random_poses": _dk("c", n=2, key=KEY),
    "jaxkit.docking.dsm_loss": _dk("model", "process", "c", key=KEY),
    "jaxkit.docking.sample_poses": _dk("model", "process", "c", key=KEY, n_steps=2),
    "jaxkit.docking.dock_samples": _dk("model", "process", "c", key=KEY, n_samples=2, n_steps=2),
    "jaxkit.docking.to_angstrom": lambda: {"c": _dock()["c"], "x_scaled": jnp.zeros((4, 3))},
    "jaxkit.docking.fragment_frames": _dk("frag", "positions"),
    "jaxkit.docking.local_coordinates": _dk("frag", "positions"),
    "jaxkit.docking.build_complex": _dk("lig", "pocket"),
    "jaxkit.docking.with_positions": _dk("mol", "positions"),
    "jaxkit.docking.match_conformer": lambda: {
        "mol": _dock()["mol"],
        "target": _dock()["positions"],
        "restarts": 1,
        "scan_points": 8,
        "sweeps": 1,
    },
    "jaxkit.docking.consensus_counts": lambda: {
        "positions": np.stack([_dock()["positions"] + 0.1 * i for i in range(3)])
    },
    "jaxkit.docking.contact_score": lambda: {
        "ligand": _dock()["positions"],
        "pocket": np.asarray(_dock()["pocket"].positions),
    },
    "jaxkit.docking.pseudo_pocket": lambda: {
        "positions": _dock()["positions"],
        "rng": np.random.default_rng(0),
    },
    "jaxkit.docking.loose_pseudo_pocket": lambda: {
        "positions": _dock()["positions"],
        "rng": np.random.default_rng(0),
    },
    "jaxkit.docking.stack_complexes": lambda: {"complexes": [_dock()["c"], _dock()["c"]]},
    "jaxkit.docking.ligand_from_smiles": lambda: {"smiles": "CCO"},
    "jaxkit.docking.split_of": lambda: {"component_id": "ATP"},
    # diffusion
    "jaxkit.diffusion.check_time": lambda: {"schedule": dm.VPSchedule(), "t": np.float32(0.5)},
    "jaxkit.diffusion.check_time_grid": lambda: {"ts": np.linspace(1.0, 0.0, 5, dtype=np.float32)},
    "jaxkit.diffusion.denormalize": lambda: {"x": _normal(5, 3), "center": _normal(3, seed=1)},
    "jaxkit.diffusion.alpha_bars_from_betas": lambda: {"betas": np.linspace(1e-3, 0.1, 8, dtype=np.float32)},
    "jaxkit.diffusion.igso3.check_sigma": lambda: {"name": "sigma", "sigma": 0.5},
    "jaxkit.diffusion.DSMTerms": lambda: {"rot": jnp.float32(1.0), "trans": jnp.float32(2.0)},
    # dynamics
    # singular values (>= 0; the signature's random draw has negative entries, which are refused)
    "jaxkit.dynamics.plateau_losses": lambda: {"s": np.array([3.0, 2.0, 0.5])},
    "jaxkit.dynamics.linear_apply": lambda: {
        "params": dy.init_linear(KEY, 3, 4, 2, 0.1),
        "x": jnp.asarray(_normal(3)),
    },
    "jaxkit.dynamics.relu_apply": lambda: {
        "params": dy.init_relu(KEY, 3, 4, 2, 0.1),
        "x": jnp.asarray(_normal(3)),
    },
    "jaxkit.dynamics.quadratic_apply": lambda: {
        "params": dy.init_quadratic(KEY, 3, 4, 0.1),
        "x": jnp.asarray(_normal(3)),
    },
    "jaxkit.dynamics.relu_scalar_apply": lambda: {
        "params": dy.init_relu_scalar(KEY, 4, 0.1),
        "x": jnp.float32(0.3),
    },
    "jaxkit.dynamics.diagonal_apply": lambda: {
        "params": dy.init_diagonal(3, 0.1),
        "x": jnp.asarray(_normal(3)),
    },
    "jaxkit.dynamics.deep_linear_apply": lambda: {
        "params": dy.init_deep_linear(KEY, (3, 4, 4, 2), 0.1),
        "x": jnp.asarray(_normal(3)),
    },
    "jaxkit.dynamics.init_deep_linear": lambda: {"key": KEY, "dims": (3, 4, 2), "scale": 0.1},
    "jaxkit.dynamics.kink_count": lambda: {
        "params": dy.init_relu_scalar(KEY, 4, 0.5),
        "x_range": (-2.0, 2.0),
    },
    "jaxkit.dynamics.linear_fixed_point": lambda: {
        "sigma_yx": np.diag([3.0, 2.0, 1.0]).astype(np.float32),
        "modes": np.array([0, 1]),
        "hidden": 2,
    },
    "jaxkit.dynamics.crossing_time": lambda: {
        "ts": np.linspace(0, 1, 8, dtype=np.float32),
        "values": np.linspace(0, 1, 8, dtype=np.float32),
        "level": 0.5,
    },
    "jaxkit.dynamics.plateaus": lambda: {
        "ts": np.linspace(0.01, 1, 16, dtype=np.float32),
        "loss": np.linspace(1, 0.1, 16, dtype=np.float32),
    },
    "jaxkit.dynamics.saxe_half_time": lambda: {"s": np.float32(2.0), "u0": np.float32(0.01)},
    "jaxkit.dynamics.saddle_check": lambda: {"loss_fn": _lin_loss, "params": {"W": jnp.zeros((2, 2))}},
    "jaxkit.dynamics.grad_norms": lambda: {"loss_fn": _lin_loss, "trajectory": {"W": jnp.zeros((3, 2, 2))}},
    "jaxkit.dynamics.gradient_descent": lambda: {
        "loss_fn": _lin_loss,
        "params0": {"W": jnp.zeros((2, 2))},
        "lr": 0.1,
        "n_steps": 4,
    },
    "jaxkit.dynamics.gradient_flow": lambda: {
        "loss_fn": _lin_loss,
        "params0": {"W": jnp.zeros((2, 2))},
        "ts": np.linspace(0, 1, 4, dtype=np.float32),
    },
    "jaxkit.dynamics.mse_loss": lambda: {
        "apply": dy.linear_apply,
        "params": dy.init_linear(KEY, 3, 4, 2, 0.1),
        "inputs": _normal(5, 3),
        "targets": _normal(5, 2, seed=1),
    },
    # evaluation
    "jaxkit.evaluation.ToleranceEndpoint": lambda: {
        "tolerances": {"time": 0.01, "level": 0.1},
        "alpha": 0.05,
    },
    "jaxkit.evaluation.tolerance_status": lambda: {
        "endpoint": _ev.ToleranceEndpoint({"time": 0.01, "level": 0.1}),
        "records": [
            {"unit": "a", "item": "t0", "quantity": "time", "predicted": 1.0, "measured": 1.005},
            {"unit": "a", "item": "L0", "quantity": "level", "predicted": 0.5, "measured": None},
        ],
    },
    "jaxkit.evaluation.Endpoint": lambda: {
        "metric": "x",
        "method": "m",
        "comparator": "c",
        "test": "wilcoxon",
        "direction": "lower",
        "alpha": 0.05,
    },
    "jaxkit.evaluation.AgreementEndpoint": lambda: {"controls": {"z": ("x",)}, "alpha": 0.05},
    "jaxkit.evaluation.Verdict": lambda: {
        "word": "better",
        "estimate": -0.5,
        "ci": (-0.9, -0.1),
        "p": 0.01,
        "n": 12,
        "alpha": 0.05,
        "endpoint": {"kind": "paired"},
    },
    "jaxkit.evaluation.verdict": lambda: {
        "endpoint": _ev.Endpoint("x", "m", "c", "wilcoxon", "lower"),
        "records": _paired_records(),
    },
    "jaxkit.evaluation.secondary": lambda: {
        "comparisons": {
            "a": (_ev.Endpoint("x", "m", "c", "wilcoxon", "lower"), _paired_records()),
            "b": (_ev.Endpoint("x", "m", "c", "sign", "lower"), _paired_records(seed=1)),
        }
    },
    "jaxkit.evaluation.cell_status": lambda: {
        "endpoint": _ev.AgreementEndpoint(controls={"z": ("x",)}),
        "records": [
            {"unit": "A", "item": "x", "claim": True, "learned": True},
            {"unit": "A", "item": "z", "claim": False, "learned": False},
        ],
    },
    "jaxkit.evaluation.endpoint_from_dict": lambda: {
        "d": _ev.Endpoint("x", "m", "c", "wilcoxon", "lower").to_dict()
    },
    "jaxkit.evaluation.holm": lambda: {"pvalues": np.array([0.01, 0.04, 0.03])},
    "jaxkit.evaluation.mcnemar": lambda: {
        "method": np.array([1, 1, 0, 1, 1, 0, 1, 1]),
        "comparator": np.array([0, 1, 0, 0, 1, 0, 1, 0]),
    },
    "jaxkit.evaluation.survival": lambda: {"times": np.array([1.0, 3.0, np.inf, 2.0]), "horizon": 5.0},
    "jaxkit.evaluation.time_to_event": lambda: {
        "baseline": np.array([1.0, 3.0, 4.0, 2.0, 6.0]),
        "method": np.array([2.0, 1.0, 3.0, 1.0, 2.0]),
        "horizon": 8.0,
    },
    # forecast
    "jaxkit.forecast.score_paths": lambda: {"paths": _normal(3, 8, 2, 2), "truth": _normal(3, 2, 2, seed=1)},
    "jaxkit.forecast.fit_postprocess": lambda: {
        "paths": _normal(3, 8, 2, 2),
        "truth": _normal(3, 2, 2, seed=1),
    },
    "jaxkit.forecast.moment_z_scores": lambda: {
        "samples": _normal(64, 2),
        "mean": np.zeros(2, np.float32),
        "cov": np.eye(2, dtype=np.float32),
    },
    "jaxkit.forecast.forecaster_loss": lambda: {
        "model": _forecaster(),
        "batch": {k: jnp.asarray(v) for k, v in _windows().items()},
        "key": KEY,
    },
    "jaxkit.forecast.sample_paths": lambda: {
        "model": _forecaster(),
        "history": _normal(1, 4, 2),
        "macro": _normal(1, 1),
        "signals": _normal(1, 2, 1),
        "key": KEY,
        "n_samples": 2,
        "n_steps": 2,
    },
    "jaxkit.forecast.rolling_zscore": lambda: {"df": _frame(), "window": 20},
    "jaxkit.forecast.stable_macro_features": lambda: {"macro": _frame(), "norm_window": 20},
    "jaxkit.forecast.market_data_from_frames": lambda: {"prices": _frame(), "norm_window": 20},
    "jaxkit.forecast.walk_forward_splits": lambda: {
        "dates": np.asarray(_dates(800)),
        "test_years": [2017],
        "horizon": 2,
        "history": 4,
    },
    # operators
    "jaxkit.operators.predict": lambda: {
        "model": _fno(),
        "x": _normal(2, 1, 8),
        "x_normalizer": op.GaussianNormalizer(jnp.zeros(()), jnp.ones(())),
        "y_normalizer": op.GaussianNormalizer(jnp.zeros(()), jnp.ones(())),
    },
    "jaxkit.operators.evaluate": lambda: {
        "model": _fno(),
        "x": _normal(2, 1, 8),
        "y": _normal(2, 1, 8, seed=1),
        "x_normalizer": op.GaussianNormalizer(jnp.zeros(()), jnp.ones(())),
        "y_normalizer": op.GaussianNormalizer(jnp.zeros(()), jnp.ones(())),
    },
    "jaxkit.operators.count_params": lambda: {"model": _fno()},
    "jaxkit.operators.to_flax": lambda: {"model": _fno()},
    "jaxkit.operators.grid_spacing": lambda: {"grid": (8,), "lengths": (1.0,)},
    "jaxkit.operators.spectral_conv": lambda: {
        "u": jnp.asarray(_normal(2, 8)),
        "weight_re": jnp.asarray(_normal(3, 2, 2)),
        "weight_im": jnp.asarray(_normal(3, 2, 2, seed=1)),
    },
    "jaxkit.operators.mode_mix": lambda: {
        "x": jnp.asarray(_normal(2, 3) + 1j * _normal(2, 3, seed=1)),
        "w": jnp.asarray(_normal(2, 2, 3) + 1j * _normal(2, 2, 3, seed=2)),
    },
    "jaxkit.operators.train_operator": lambda: {
        "model": _fno(),
        "x_train": _normal(4, 1, 8),
        "y_train": _normal(4, 1, 8, seed=1),
        "epochs": 1,
        "batch_size": 2,
        "key": KEY,
        "progress": False,
    },
    # pde
    "jaxkit.pde.dataset_spec": lambda: {"name": "burgers"},
    "jaxkit.pde.allowed_resolutions": lambda: {"name": "burgers"},
    "jaxkit.pde.refined_resolution": lambda: {"name": "burgers", "resolution": 256, "factor": 2},
    "jaxkit.pde.subsample": lambda: {"x": _normal(2, 1024), "name": "burgers", "resolution": 256},
    "jaxkit.pde.darcy.solve": lambda: {"a": np.full((9, 9), 4.0, np.float32)},
    "jaxkit.pde.darcy.assemble": lambda: {"a": np.full((9, 9), 4.0, np.float32)},
    "jaxkit.pde.darcy.reference_solve": lambda: {"a": np.full((9, 9), 4.0, np.float32)},
    "jaxkit.pde.lno.duffing": lambda: {"forcing": jnp.sin, "ts": np.linspace(0, 1, 8, dtype=np.float32)},
    "jaxkit.pde.lno.beam_exact": lambda: {
        "amplitude": 1.0,
        "x": np.linspace(0, 1, 8, dtype=np.float32),
        "ts": np.linspace(0, 1, 4, dtype=np.float32),
    },
    "jaxkit.pde.lno.diffusion_exact": lambda: {
        "amplitude": 1.0,
        "x": np.linspace(0, 1, 8, dtype=np.float32),
        "ts": np.linspace(0, 1, 4, dtype=np.float32),
    },
    # the method-of-lines solvers: a valid node grid (equispaced, both ends; the solvers refuse any other) and a
    # smooth forcing f(x, t)
    **{
        f"jaxkit.pde.lno.{fn}": (
            lambda: {
                "forcing": _lno_forcing,
                "x": np.linspace(0, 1, 9, dtype=np.float32),
                "ts": np.linspace(0, 0.5, 4, dtype=np.float32),
            }
        )
        for fn in ("beam", "diffusion", "reaction_diffusion")
    },
    "jaxkit.pde.lno.reaction_diffusion_manufactured": lambda: {
        "amplitude": 1.0,
        "x": np.linspace(0, 1, 8, dtype=np.float32),
        "ts": np.linspace(0, 1, 4, dtype=np.float32),
    },
    # portfolio
    "jaxkit.portfolio.he_litterman_omega": lambda: {
        "cov": np.eye(3, dtype=np.float32) * 0.01,
        "P": np.eye(3, dtype=np.float32),
        "tau": 0.05,
    },
    "jaxkit.portfolio.idzorek_omega": lambda: {
        "confidences": np.array([0.5, 0.5, 0.5], np.float32),
        "cov": np.eye(3, dtype=np.float32) * 0.01,
        "P": np.eye(3, dtype=np.float32),
        "tau": 0.05,
    },
    "jaxkit.portfolio.rebalance_indices": lambda: {"dates": np.asarray(_dates(100))},
    "jaxkit.portfolio.run_backtest": lambda: {
        "prices": 100 * np.exp(np.cumsum(0.01 * _normal(30, 3), 0)),
        "rebalance_index": np.array([0, 10, 20]),
        "target_weights": np.full((3, 3), 1 / 3, np.float32),
    },
    "jaxkit.portfolio.sharpe_difference_test": lambda: {
        "returns_a": 0.01 * _normal(60) + 0.001,
        "returns_b": 0.01 * _normal(60, seed=1),
    },
    "jaxkit.portfolio.solve_qp_nonneg": lambda: {
        "H": np.eye(3, dtype=np.float32),
        "c": -np.ones(3, np.float32),
        "A": np.ones((1, 3), np.float32),
        "b": np.ones(1, np.float32),
    },
    "jaxkit.portfolio.walk_forward": lambda: {
        "prices": 100 * np.exp(np.cumsum(0.01 * _normal(80, 3), 0)),
        "strategy": lambda r, w: np.full(3, 1 / 3),
        "dates": np.asarray(_dates(80)),
        "start": 20,
    },
    # ssm
    "jaxkit.ssm.predict": lambda: {"c": _construction(), "tokens": np.array([[0, 1, 1, 0]])},
    "jaxkit.ssm.first_failure": lambda: {
        "c": ssm.construct("dyck1", "dense"),
        "precision": ssm.parse_precision("float5e10m"),
        "max_n": 64,
    },
    "jaxkit.ssm.verify": lambda: {"c": _construction(), "exhaustive_len": 4, "n_random": 10, "max_len": 16},
    "jaxkit.ssm.seed_interval": lambda: {"values": [0.5, 0.6, 0.7]},
    "jaxkit.ssm.parse": lambda: {"text": "F a"},
    "jaxkit.ssm.get_task": lambda: {"name": "parity"},
    "jaxkit.ssm.parse_precision": lambda: {"spec": "fixed4.8"},
    "jaxkit.ssm.construct": lambda: {"task": "parity", "variant": "dense"},
    "jaxkit.ssm.accepts": lambda: {"f": "F a", "traces": np.array([[[0], [1], [0]]], bool), "props": ["a"]},
    "jaxkit.ssm.evaluate": lambda: {"f": "F a", "traces": np.array([[[0], [1], [0]]], bool), "props": ["a"]},
    "jaxkit.ssm.prefix_labels": lambda: {
        "f": "F a",
        "traces": np.array([[[0], [1], [0]]], bool),
        "props": ["a"],
    },
    "jaxkit.ssm.reflection_scan": lambda: {
        "k": jnp.asarray(_unit(4, 2, 3)),
        "beta": jnp.full((4, 2), 0.5),
        "b": jnp.asarray(_normal(4, 3, seed=1)),
    },
    "jaxkit.ssm.householder_product": lambda: {"k": jnp.asarray(_unit(2, 3)), "beta": jnp.full((2,), 0.5)},
    # stability
    "jaxkit.stability.noise_stability": lambda: {
        "f": lambda x: jnp.tanh(x.sum(-1)),
        "x": _normal(64, 3),
        "rho": 0.5,
        "key": KEY,
    },
    "jaxkit.stability.average_sensitivity": lambda: {
        "f": lambda x: jnp.tanh(x.sum(-1)),
        "x": np.sign(_normal(64, 3)),
        "key": KEY,
        "domain": "boolean",
    },
    "jaxkit.stability.correlated_copy": lambda: {"x": jnp.asarray(_normal(16, 3)), "key": KEY, "rho": 0.5},
    "jaxkit.stability.char_dataset": lambda: {"text": "abcabcabd" * 20},
}


# ----------------------------------------------------------------------------- docking: confidence, batch, held out
# Small real inputs: the ligand/pocket of ``_dock`` (a pseudo-pocket around a 3-fragment ligand) and, for the
# files, the PoseBusters 1S3V test complex shipped with the posebusters package.


@functools.cache
def _tmp() -> Any:
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="jaxkit-fuzz-"))
    atexit.register(shutil.rmtree, path, True)  # removed when the test process ends
    return path


@functools.cache
def _confidence() -> dict[str, Any]:
    from jaxkit import docking as dk
    from jaxkit.docking._confidence import pad_pose

    d = _dock()
    inputs = dk.confidence_inputs(d["c"])
    model = dk.ConfidenceModel(width=4, depth=1, n_rbf=4, k_pocket=4, key=KEY)
    poses = [d["positions"], d["positions"] + 1.5]
    x = np.stack([pad_pose(p, inputs) for p in poses]).astype(np.float32)
    one = (inputs, x, np.zeros((2, 0), np.float32), np.array([1.0, 0.0], np.float32))
    two = (inputs, x[::-1].copy(), np.zeros((2, 0), np.float32), np.array([0.0, 1.0], np.float32))
    path = _tmp() / "confidence.ckpt"
    dk.save_confidence_model(path, model, {"note": "fuzz"})
    return {"inputs": inputs, "model": model, "poses": poses, "x": x, "data": [one, two], "path": path}


@functools.cache
def _ligand_files() -> dict[str, Any]:
    smi = _tmp() / "ligands.smi"
    smi.write_text("CCO ethanol\nc1ccccc1O phenol\n")
    return {"smi": smi}


def _ranked() -> list[Any]:
    from jaxkit import docking as dk

    mol = _dock()["mol"]
    return [
        dk.RankedPose(0, mol, -5.0, 0.1, False, ["clashes"], rank=0),
        dk.RankedPose(1, mol, -4.0, 0.2, None, [], rank=1),
    ]


def _example() -> Any:
    from jaxkit import docking as dk

    d = _dock()
    return dk.DockingExample("XYZ", d["mol"], d["pocket"], "train", "ccd")


FACTORIES.update(
    {
        "jaxkit.docking.ConfidenceInputs": lambda: {
            f: np.asarray(getattr(_confidence()["inputs"], f))
            for f in (
                "atom_features",
                "pair_features",
                "atom_mask",
                "pocket",
                "pocket_features",
                "pocket_mask",
                "center",
            )
        },
        "jaxkit.docking.confidence_loss": lambda: {
            "model": _confidence()["model"],
            "inputs": _confidence()["inputs"],
            "x": jnp.asarray(_confidence()["x"]),
            "extra": jnp.zeros((2, 0)),
            "labels": jnp.array([1.0, 0.0]),
        },
        "jaxkit.docking.confidence_scores": lambda: {
            "model": _confidence()["model"],
            "inputs": _confidence()["inputs"],
            "poses": _confidence()["poses"],
        },
        "jaxkit.docking.train_confidence": lambda: {
            "data": _confidence()["data"],
            "n_steps": 1,
            "width": 4,
            "depth": 1,
            "key": KEY,
        },
        "jaxkit.docking.cross_validate_rankings": lambda: {
            "data": _confidence()["data"],
            "energies": [np.array([-5.0, -4.0]), np.array([-3.0, -6.0])],
            "n_folds": 2,
            "n_steps": 1,
            "width": 4,
            "depth": 1,
            "key": KEY,
        },
        "jaxkit.docking.save_confidence_model": lambda: {
            "path": _tmp() / "saved.ckpt",
            "model": _confidence()["model"],
            "overwrite": True,
        },
        "jaxkit.docking.load_confidence_model": lambda: {"path": _confidence()["path"]},
        "jaxkit.docking.LigandRecord": lambda: {"index": 0, "name": "ethanol", "mol": _dock()["mol"]},
        "jaxkit.docking.is_ligand_library": lambda: {"path": _ligand_files()["smi"]},
        "jaxkit.docking.read_ligands": lambda: {"path": _ligand_files()["smi"]},
        "jaxkit.docking.pose_fields": lambda: {"pose": _ranked()[0], "warnings": ["w"]},
        "jaxkit.docking.ranking_warning": lambda: {"ranked": _ranked(), "pb_budget": 1},
        "jaxkit.docking.check_no_held_out": lambda: {"examples": [_example()]},
        "jaxkit.docking.HeldOutLigands": lambda: {
            "codes": frozenset({"ATP"}),
            "blocks": frozenset({"ZKHQWZAMYRWXGA"}),
            "pdb_ids": frozenset({"1abc"}),
            "by_block": {"ZKHQWZAMYRWXGA": "1abc"},
            "formulas": frozenset(),
        },
    }
)


def _pb_1s3v() -> tuple[Any, Any]:
    """The PoseBusters test complex 1S3V shipped with the posebusters package: protein PDB and ligand SDF."""
    from pathlib import Path

    import posebusters

    d = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
    return d / "1s3v_protein_one_lig_removed.pdb", d / "1s3v_ligand.sdf"


FACTORIES.update(
    {
        "jaxkit.docking.confidence_training_data": lambda: {
            "score_model": __import__("jaxkit.docking", fromlist=["x"]).build_model(
                __import__("jaxkit.docking", fromlist=["x"]).ModelConfig(
                    width=4, depth=1, n_rbf=4, k_pocket=4
                ),
                KEY,
            ),
            "examples": [_example()],
            "key": KEY,
            "n_samples": 1,
            "n_steps": 1,
        },
        "jaxkit.docking.dock_many": lambda: {
            "protein": _pb_1s3v()[0],
            "ligands": ["CCOc1ccccc1C(=O)N"],
            "out_dir": _tmp() / "batch",
            "pocket": str(_pb_1s3v()[1]),
            "n_samples": 1,
            "n_steps": 1,
            "rank": False,
            "pb_budget": 0,
        },
    }
)


# ---------------------------------------------------------------------------------------------------------------
# dynamics / pde / diffusion: factories for exports that were PENDING (issue 49, branch i49a). Kept in one block,
# apart from the table above, so that merging beside the docking factories stays simple.
# ---------------------------------------------------------------------------------------------------------------


def _attention_sample() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One in-context regression prompt: xs (N, D), ys (N,), x_query (D,)."""
    xs = _normal(6, 3, seed=3)
    return xs, xs @ np.array([1.0, -0.5, 0.25], np.float32), _normal(3, seed=4)


def _scalar_net_loss(p: Any) -> Any:
    """The two-layer scalar linear net on target 1: ``½(1 − ab)²``, a strict saddle at a = b = 0."""
    return 0.5 * (1.0 - p["a"] * p["b"]) ** 2


def _flow_result() -> dy.FlowResult:
    """The exact gradient flow of ``_scalar_net_loss`` from the balanced start a = b = 1e-2 (Saxe et al. 2014):
    ``u = ab = 1/(1 + (1/u0 − 1) e^{−2t})``, a plateau near the saddle, then the drop to the minimum."""
    ts = np.linspace(0.0, 8.0, 33)
    u = 1.0 / (1.0 + (1.0 / 1e-4 - 1.0) * np.exp(-2.0 * ts))
    a = np.sqrt(u).astype(np.float32)
    return dy.FlowResult(
        jnp.asarray(ts, jnp.float32),
        {"a": jnp.asarray(a), "b": jnp.asarray(a)},
        jnp.asarray(0.5 * (1.0 - u) ** 2, jnp.float32),
        jnp.float32(ts[-1]),
        jnp.bool_(False),
    )


FACTORIES.update(
    {
        "jaxkit.dynamics.Network": lambda: {
            "apply": dy.linear_apply,
            "unit_spec": dict(dy.NETWORKS["linear"].unit_spec),
        },
        "jaxkit.dynamics.active_heads": lambda: {"params": dy.init_attention_separate(KEY, 3, 2, 1.0)},
        "jaxkit.dynamics.active_kernels": lambda: {"params": dy.init_cnn(KEY, 2, 3, 2, 1.0)},
        "jaxkit.dynamics.attention_separate_apply": lambda: {
            "params": dy.init_attention_separate(KEY, 3, 2, 1.0),
            "x": _attention_sample(),
        },
        "jaxkit.dynamics.attention_merged_apply": lambda: {
            "params": dy.init_attention_merged(KEY, 3, 2, 1.0),
            "x": _attention_sample(),
        },
        "jaxkit.dynamics.cnn_apply": lambda: {
            "params": dy.init_cnn(KEY, 2, 3, 2, 1.0),
            "x": jnp.asarray(_normal(6)),
        },
        "jaxkit.dynamics.embed_unit": lambda: {
            "params": dy.init_linear(KEY, 3, 2, 2, 0.1),
            "unit_spec": dict(dy.NETWORKS["linear"].unit_spec),
        },
        "jaxkit.dynamics.plateau_saddle_checks": lambda: {
            "loss_fn": _scalar_net_loss,
            "result": _flow_result(),
        },
    }
)


def _vp_call(**arrays: Any) -> Callable[[], dict[str, Any]]:
    """A call on the VP schedule at t = 0.5 with the named (3,)-vectors (distinct seeds)."""

    def make() -> dict[str, Any]:
        vecs = {k: _normal(3, seed=s) if v is None else v for s, (k, v) in enumerate(arrays.items())}
        return {"schedule": dm.VPSchedule(), "t": np.float32(0.5)} | vecs

    return make


def _score_fn(x: Any, t: Any) -> Any:
    """The exact score of a standard normal target, ``-x``."""
    return -x


def _rot_score_fn(R: Any, t: Any) -> Any:
    return jnp.zeros(R.shape[:-2] + (3,), R.dtype)


def _rotations(n: int) -> np.ndarray:
    from jaxkit.geometry import so3

    return np.asarray(so3.exp(jnp.asarray(0.3 * _normal(n, 3, seed=5))))


FACTORIES.update(
    {
        "jaxkit.diffusion.conditional_score": _vp_call(x_t=None, x0=None),
        "jaxkit.diffusion.eps_to_score": _vp_call(eps=None),
        "jaxkit.diffusion.score_to_eps": _vp_call(score=None),
        "jaxkit.diffusion.predict_x0": _vp_call(x_t=None, eps=None),
        "jaxkit.diffusion.q_sample": _vp_call(x0=None, noise=None),
        "jaxkit.diffusion.marginal_coefs": _vp_call(),
        "jaxkit.diffusion.gaussian_marginal_score": _vp_call(
            x_t=None, mean=None, std=np.full(3, 0.5, np.float32)
        ),
        "jaxkit.diffusion.q_posterior": lambda: {
            "schedule": dm.discrete_schedule("linear", 8),
            "x0": _normal(3, seed=0),
            "x_t": _normal(3, seed=1),
            "t": np.int32(3),
        },
        "jaxkit.diffusion.probability_flow_sample": lambda: {
            "score_fn": _score_fn,
            "schedule": dm.VPSchedule(),
            "x_T": _normal(2, 3),
            "ts": np.linspace(1.0, 1e-3, 4, dtype=np.float32),
        },
        "jaxkit.diffusion.reverse_sde_sample": lambda: {
            "score_fn": _score_fn,
            "schedule": dm.VPSchedule(),
            "x_T": _normal(2, 3),
            "key": KEY,
            "ts": np.linspace(1.0, 1e-3, 4, dtype=np.float32),
        },
        "jaxkit.diffusion.so3_diffusion.probability_flow_sample": lambda: {
            "score_fn": _rot_score_fn,
            "schedule": dm.VESchedule(),
            "R_T": _rotations(2),
            "ts": np.linspace(1.0, 1e-3, 4, dtype=np.float32),
        },
        "jaxkit.diffusion.so3_diffusion.reverse_sde_sample": lambda: {
            "score_fn": _rot_score_fn,
            "schedule": dm.VESchedule(),
            "R_T": _rotations(2),
            "key": KEY,
            "ts": np.linspace(1.0, 1e-3, 4, dtype=np.float32),
        },
    }
)

FACTORIES.update(
    {
        "jaxkit.pde.darcy.apply_operator": lambda: {
            "a": np.full((9, 9), 4.0, np.float32),
            "u_interior": _normal(7, 7),
        },
    }
)

FACTORIES.update(
    {
        "jaxkit.pde.PDEDataset": lambda: {
            "name": "burgers",
            "x_train": _normal(3, 1, 8),
            "y_train": _normal(3, 1, 8, seed=1),
            "x_test": _normal(2, 1, 8, seed=2),
            "y_test": _normal(2, 1, 8, seed=3),
            "grid": (np.linspace(0, 1, 8),),
        },
    }
)


def _spec_fields() -> dict[str, Any]:
    """Every field of the registered Burgers recipe (a valid DatasetSpec, built again field by field)."""
    import dataclasses

    from jaxkit import pde

    spec = pde.dataset_spec("burgers")
    return {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}


FACTORIES["jaxkit.pde.DatasetSpec"] = _spec_fields


def _model_checkpoint() -> dict[str, Any]:
    """A two-leaf model saved over its own earlier file (``overwrite=True``), ``like`` of the same structure."""
    tree = {"w": jnp.asarray(_normal(3, 2)), "b": jnp.zeros((2,))}
    return {
        "path": _tmp() / "model.ckpt",
        "tree": tree,
        "metadata": {"note": "fuzz"},
        "overwrite": True,
        "like": tree,
    }


FACTORIES["jaxkit.train.save_model_checkpoint"] = _model_checkpoint

# A single array is a pytree of one leaf, and gets the edge table of an array (a dict of leaves would get none).
FACTORIES["jaxkit.train.global_norm"] = lambda: {"tree": jnp.asarray(_normal(3, 2))}


def _discrete_schedule_tables() -> dict[str, Any]:
    """The five tables of a valid schedule (its values are checked: betas in (0, 1), products in (0, 1])."""
    s = dm.discrete_schedule("linear", 8)
    names = ("betas", "alphas", "alpha_bars", "alpha_bars_prev", "posterior_variance")
    return {n: getattr(s, n) for n in names}


FACTORIES["jaxkit.diffusion.DiscreteSchedule"] = _discrete_schedule_tables


def _tiny_probe_run() -> dict[str, Any]:
    """One tiny SSM probe: one task, one seed, one learning rate, 5 steps (the signature's default config trains
    the published probe, minutes)."""
    from jaxkit.ssm import ProbeConfig

    cfg = ProbeConfig(
        tasks=("flip_flop",),
        model="selective_signed",
        d_model=4,
        d_state=2,
        n_layers=1,
        n_steps=5,
        batch_size=4,
        lrs=(1e-2,),
        n_seeds=1,
        train_max_len=6,
        curriculum_start=2,
        n_train_per_length=4,
        train_eval_lengths=(6,),
        val_lengths=(8,),
        test_lengths=(9,),
        n_test=4,
        eval_chunk=8,
        log_every=5,
    )
    return {"cfg": cfg, "seed": 0}


FACTORIES["jaxkit.ssm.train_runs"] = _tiny_probe_run

# Per-subpackage factory modules (kept apart so that work on one subpackage does not touch this file).
from _fuzz_factories_docking import FACTORIES as _DOCKING_FACTORIES  # noqa: E402
from _fuzz_factories_forecast import FACTORIES as _FORECAST_FACTORIES  # noqa: E402
from _fuzz_factories_misc import FACTORIES as _MISC_FACTORIES  # noqa: E402
from _fuzz_factories_operators import FACTORIES as _OPERATORS_FACTORIES  # noqa: E402
from _fuzz_factories_ssm import FACTORIES as _SSM_FACTORIES  # noqa: E402
from _fuzz_factories_stability import FACTORIES as _STABILITY_FACTORIES  # noqa: E402
from _fuzz_factories_train import FACTORIES as _TRAIN_FACTORIES  # noqa: E402

for _extra in (_FORECAST_FACTORIES, _OPERATORS_FACTORIES, _STABILITY_FACTORIES, _TRAIN_FACTORIES):
    FACTORIES.update(_extra)
FACTORIES.update(_MISC_FACTORIES)
FACTORIES.update(_SSM_FACTORIES)
FACTORIES.update(_DOCKING_FACTORIES)
