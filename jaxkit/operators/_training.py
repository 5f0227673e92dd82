"""Training and evaluation of neural operators on ``jaxkit.train`` (the FNO paper's recipe).

* Loss: relative L2 per sample, ``‖ŷ - y‖₂ / ‖y‖₂`` over channels and grid, averaged over the batch, computed on
  the *decoded* prediction (as in Li et al. 2021).
* Normalization: unit-Gaussian, with statistics per channel over samples and grid points (FNO normalizes per grid
  point; per channel keeps the normalizer independent of the resolution, which zero-shot super-resolution needs).
* Optimizer: Adam (lr 1e-3) with L2 weight decay 1e-4 added to the gradient (PyTorch ``Adam(weight_decay=...)``)
  and a step schedule ×``gamma`` (0.5) every ``step_epochs`` epochs (FNO: 100 of 500).
* Data parallel over all devices by default (``jaxkit.train.data_mesh``), when the batch divides evenly.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Key

from .._typing import Array, ArrayLike, Float, PRNGKey, Scalar, TreeT
from .._validate import check_finite, check_int, check_positive, finite_checked, library_errors
from ..train import ArrayLoader, data_mesh, ensemble_member, fit, fit_ensemble, init_ensemble

__all__ = [
    "GaussianNormalizer",
    "TrainedOperator",
    "evaluate",
    "fno_optimizer",
    "member",
    "mse",
    "predict",
    "relative_l2",
    "train_ensemble",
    "train_operator",
]


def _same_shape(pred: Any, target: Any) -> None:
    if np.shape(pred) != np.shape(target):
        raise ValueError(f"target: expected the shape of pred {np.shape(pred)}, received {np.shape(target)}")


def relative_l2(
    pred: Float[Array, "batch ..."], target: Float[Array, "batch ..."], *, per_sample: bool = False
) -> Scalar | Float[Array, " batch"]:
    """Mean over the batch of ``‖pred - target‖₂ / ‖target‖₂`` (norms over all non-batch axes); with
    ``per_sample=True`` the ``(batch,)`` ratios themselves. Computed in the inputs' dtype (float64 inputs under
    ``jax.enable_x64`` give float64 ratios).

    A sample whose target is identically zero has ratio 0 when the prediction is zero too (an exact match) and
    ``inf`` otherwise (no finite relative error exists; a training loss that meets one stops with
    ``FloatingPointError``), never NaN. Its gradient at a sample predicted exactly is 0 (the norm's minimum; the
    plain formula gives 0/0 = NaN there). An empty batch raises ``ValueError``; NaN/inf in ``pred`` or ``target``
    raise ``ValueError`` naming the argument, under ``jax.jit``/``vmap`` a run-time error (``equinox.error_if``)
    with the same message."""
    _same_shape(pred, target)
    if np.ndim(pred) < 1 or np.shape(pred)[0] == 0:
        raise ValueError(
            f"pred: expected a non-empty batch (batch, ...) of samples, received shape {np.shape(pred)}"
        )
    pred, target = finite_checked("pred", pred), finite_checked("target", target)
    return _relative_l2_core(pred, target, per_sample)


def _relative_l2_core(pred: Array, target: Array, per_sample: bool = False) -> Array:
    """:func:`relative_l2` without the value checks (shapes are the caller's). NaN in, NaN out: a NaN never reads
    as an exact match (ratio 0)."""
    b = pred.shape[0]
    sq = jnp.sum((pred - target).reshape(b, -1) ** 2, axis=1)
    # the norm's gradient at an exact match is 0/0: take 0 there (the minimum), never NaN. The tests are written
    # `== 0` so that a NaN (which compares False with everything) takes the sqrt branch and stays NaN.
    exact = sq == 0
    diff = jnp.where(exact, 0, jnp.sqrt(jnp.where(exact, 1, sq))).astype(sq.dtype)
    norm = jnp.sqrt(jnp.sum(target.reshape(b, -1) ** 2, axis=1))
    zero = norm == 0  # a NaN norm is not zero: diff / NaN = NaN below
    # zero target: 0 for an exact match, inf otherwise, NaN for a NaN diff (constants: no gradient flows there)
    at_zero = jnp.where(diff == 0, 0, jnp.where(jnp.isnan(diff), jnp.nan, jnp.inf)).astype(diff.dtype)
    ratio = jnp.where(zero, at_zero, diff / jnp.where(zero, 1, norm))
    return ratio if per_sample else jnp.mean(ratio)


def mse(pred: Float[Array, "batch ..."], target: Float[Array, "batch ..."]) -> Scalar:
    """Mean squared error over all entries. Empty arrays (no entry to average) and NaN/inf in ``pred`` or
    ``target`` raise ``ValueError`` naming the argument, under ``jax.jit``/``vmap`` a run-time error
    (``equinox.error_if``) with the same message."""
    _same_shape(pred, target)
    if np.size(pred) == 0:
        raise ValueError(f"pred: expected at least one entry to average, received shape {np.shape(pred)}")
    pred, target = finite_checked("pred", pred), finite_checked("target", target)
    return jnp.mean((pred - target) ** 2)


class GaussianNormalizer(eqx.Module):
    """``encode(x) = (x - μ_c) / (σ_c + eps)`` with per-channel statistics over samples and grid points."""

    mean: Array
    std: Array
    eps: float = eqx.field(static=True, default=1e-5)

    def __check_init__(self) -> None:
        if not (np.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps: expected a finite value >= 0, received {self.eps!r}")
        if isinstance(self.std, jax.core.Tracer) or isinstance(self.mean, jax.core.Tracer):
            return
        std = np.asarray(self.std, np.float64)
        if not np.all(np.isfinite(std)) or np.any(std < 0) or np.any(std + self.eps <= 0):
            raise ValueError(
                f"std: expected finite standard deviations >= 0 (std + eps > 0), received range "
                f"[{std.min() if std.size else 0:.3g}, {std.max() if std.size else 0:.3g}]"
            )
        check_finite("mean", self.mean)

    @classmethod
    def fit(cls, x: ArrayLike, eps: float = 1e-5) -> GaussianNormalizer:
        """Statistics of ``x`` with shape ``(n, channels, *grid)``."""
        x = np.asarray(x)
        if x.ndim < 3 or x.shape[0] == 0:
            raise ValueError(
                f"x: expected shape (samples, channels, *grid) with samples >= 1, received shape {x.shape}"
            )
        check_finite("x", x)
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (x.shape[1],) + (1,) * (x.ndim - 2)
        mean = x.mean(axis=axes, dtype=np.float64).reshape(shape)
        std = x.std(axis=axes, dtype=np.float64).reshape(shape)
        return cls(jnp.asarray(mean, jnp.float32), jnp.asarray(std, jnp.float32), eps)

    def _check_channels(self, x: Any) -> None:
        """``x`` is ``(c, *grid)`` (any leading batch axes) with the fitted channel count and grid rank (a scalar
        ``mean``, one statistic for every entry, broadcasts to any ``x``)."""
        if self.mean.ndim == 0:
            return
        c, nd, shape = self.mean.shape[0], self.mean.ndim, tuple(np.shape(x))
        if len(shape) < nd or shape[len(shape) - nd] != c:
            raise ValueError(
                f"x: expected shape ({c}, *grid) with {c} channels and a {nd - 1}-D grid (as fitted), "
                f"received {shape}"
            )

    def encode(self, x: Float[Array, "c *grid"]) -> Float[Array, "c *grid"]:
        """``(x - μ) / (σ + eps)`` for ``x`` ``(c, *grid)`` with the fitted ``c`` (else ``ValueError``); NaN/inf in
        ``x`` raise (``ValueError``, a run-time error under ``jax.jit``)."""
        self._check_channels(x)
        return (finite_checked("x", x) - self.mean) / (self.std + self.eps)

    def decode(self, x: Float[Array, "c *grid"]) -> Float[Array, "c *grid"]:
        """``x (σ + eps) + μ``, ``x`` as in :meth:`encode`; NaN/inf in ``x`` (a diverged model's output) raise."""
        self._check_channels(x)
        return finite_checked("x", x) * (self.std + self.eps) + self.mean


def fno_optimizer(
    lr: float = 1e-3, weight_decay: float = 1e-4, *, step_every: int = 100, gamma: float = 0.5
) -> optax.GradientTransformation:
    """Adam with PyTorch-style L2 weight decay and a staircase schedule ``lr·gamma^⌊step/step_every⌋``."""
    check_positive("lr", lr)
    check_positive("weight_decay", weight_decay, strict=False)
    check_int("step_every", step_every, minimum=1)
    if not 0 < float(gamma) <= 1:
        raise ValueError(f"gamma: expected a decay factor in (0, 1], received {gamma!r}")
    schedule = optax.exponential_decay(lr, transition_steps=step_every, decay_rate=gamma, staircase=True)
    return optax.chain(
        optax.add_decayed_weights(weight_decay), optax.scale_by_adam(), optax.scale_by_learning_rate(schedule)
    )


@eqx.filter_jit
def _predict_batch(model: Any, xn: Any, yn: Any, x: Array) -> Array:
    return jax.vmap(lambda s: yn.decode(model(xn.encode(s))))(x)


@library_errors
def predict(
    model: eqx.Module,
    x: ArrayLike,
    x_normalizer: GaussianNormalizer,
    y_normalizer: GaussianNormalizer,
    *,
    batch_size: int = 32,
) -> np.ndarray:
    """Decoded predictions for ``x`` ``(n, c_in, *grid)`` (any resolution the model accepts), in chunks."""
    x = np.asarray(x, np.float32)
    if x.ndim < 3:
        raise ValueError(f"x: expected shape (samples, channels, *grid), received shape {x.shape}")
    if x.shape[0] == 0:
        raise ValueError(f"x: expected at least one sample, received shape {x.shape}")
    check_int("batch_size", batch_size, minimum=1)
    check_finite("x", x)
    out = []
    for i in range(0, x.shape[0], batch_size):
        out.append(
            np.asarray(_predict_batch(model, x_normalizer, y_normalizer, jnp.asarray(x[i : i + batch_size])))
        )
    return np.concatenate(out, axis=0)


def evaluate(
    model: eqx.Module,
    x: ArrayLike,
    y: ArrayLike,
    x_normalizer: GaussianNormalizer,
    y_normalizer: GaussianNormalizer,
    *,
    batch_size: int = 32,
) -> dict[str, float]:
    """``{"rel_l2", "mse"}`` of the model's decoded predictions against ``y``."""
    pred = predict(model, x, x_normalizer, y_normalizer, batch_size=batch_size)
    y = np.asarray(y, np.float32)
    check_finite("y", y)
    if pred.shape != y.shape:
        raise ValueError(f"y: expected shape {pred.shape} (the predictions'), received shape {y.shape}")
    b = y.shape[0]
    diff = np.linalg.norm((pred - y).reshape(b, -1), axis=1)
    norm = np.linalg.norm(y.reshape(b, -1), axis=1)
    _check_nonzero_targets("y", y)
    return {"rel_l2": float(np.mean(diff / norm)), "mse": float(np.mean((pred - y) ** 2))}


_SAVE_FORMAT = "jaxkit.operators.TrainedOperator/1"


def _model_record(model: Any) -> dict[str, Any]:
    """``{"class", "config"}`` that rebuilds ``model``'s skeleton (FNO, RNO or LNO)."""
    from ._lno import LNO
    from ._models import NeuralOperator

    if isinstance(model, LNO):
        return {"class": "LNO", "config": model.config.to_dict()}
    if isinstance(model, NeuralOperator):
        return {"class": model.config.kind.upper(), "config": model.config.to_dict()}
    raise TypeError(
        f"model: TrainedOperator.save stores FNO, RNO and LNO models (rebuilt from their config), received "
        f"{type(model).__name__}; save another Equinox model with jaxkit.train.save_checkpoint("
        "path, eqx.filter(model, eqx.is_array)) or eqx.tree_serialise_leaves"
    )


def _skeleton(record: dict[str, Any]) -> Any:
    """A model of the recorded class and config (weights to be overwritten by the checkpoint)."""
    from ._lno import LNO
    from ._models import build_operator

    key = jax.random.key(0)
    cfg = {k: tuple(v) if isinstance(v, list) else v for k, v in record["config"].items()}  # JSON lists
    if record["class"] == "LNO":
        return LNO(**cfg, key=key)
    if record["class"] in ("FNO", "RNO"):
        return build_operator(cfg, key=key)
    raise ValueError(
        f"model class: expected 'FNO', 'RNO' or 'LNO' in the checkpoint, found {record['class']!r}"
    )


@dataclass
class TrainedOperator:
    """What :func:`train_operator` returns: the trained ``model`` with its input/output normalizers, the training
    ``history`` (one record at the end of each epoch: ``step``, 0-based ``epoch``, ``loss`` of that step's batch,
    and the test metrics when evaluated) and timings. :meth:`save` / :meth:`load` store and restore all of it in
    one call."""

    model: eqx.Module
    x_normalizer: GaussianNormalizer
    y_normalizer: GaussianNormalizer
    history: list[dict] = field(default_factory=list)
    epoch_time: float = float("nan")  # seconds per epoch after compilation (median)
    wall_time: float = 0.0
    n_steps: int = 0  # optimizer steps taken

    def __post_init__(self) -> None:
        # the timings and the step count are records: refused when they cannot be one (NaN epoch_time is the
        # default, "not measured"); the stored values are kept as given
        et = float(self.epoch_time)
        if np.isinf(et) or et < 0:
            raise ValueError(
                f"epoch_time: expected seconds >= 0 (or NaN, not measured), received {self.epoch_time!r}"
            )
        check_positive("wall_time", self.wall_time, strict=False)
        steps = float(np.asarray(self.n_steps))
        if not np.isfinite(steps) or steps < 0 or steps != round(steps):
            raise ValueError(f"n_steps: expected an integer >= 0, received {self.n_steps!r}")

    def predict(self, x: ArrayLike, batch_size: int = 32) -> np.ndarray:
        return predict(self.model, x, self.x_normalizer, self.y_normalizer, batch_size=batch_size)

    def evaluate(self, x: ArrayLike, y: ArrayLike, batch_size: int = 32) -> dict[str, float]:
        return evaluate(self.model, x, y, self.x_normalizer, self.y_normalizer, batch_size=batch_size)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the model weights, its config (class and :class:`OperatorConfig`/:class:`LNOConfig`), both
        normalizers, the history and timings to the checkpoint folder ``path`` (a verified orbax checkpoint of
        :func:`jaxkit.train.save_checkpoint`: written atomically, every byte checksummed). Returns the path.

        An existing ``path`` is replaced only with ``overwrite=True`` and only if it is a saved
        ``TrainedOperator`` (never an unrelated folder). Works for FNO, RNO and LNO models (ensemble members
        included); other models raise ``TypeError`` naming the alternative.
        """
        from ..train import CheckpointError, read_metadata, save_model_checkpoint

        path = Path(path)
        record = _model_record(self.model)
        if path.exists():
            try:
                is_ours = read_metadata(path).get("format") == _SAVE_FORMAT
            except CheckpointError:
                is_ours = False
            if not is_ours:
                raise FileExistsError(
                    f"path: {path} exists and is not a saved TrainedOperator; choose a new folder"
                )
            if not overwrite:
                raise FileExistsError(
                    f"path: {path} already holds a saved TrainedOperator; pass overwrite=True"
                )
        tree = {
            "model": eqx.filter(self.model, eqx.is_array),
            "x_normalizer": {"mean": self.x_normalizer.mean, "std": self.x_normalizer.std},
            "y_normalizer": {"mean": self.y_normalizer.mean, "std": self.y_normalizer.std},
        }
        metadata = {
            "format": _SAVE_FORMAT,
            "model": record,
            "normalizer_eps": [float(self.x_normalizer.eps), float(self.y_normalizer.eps)],
            "normalizer_shapes": [
                list(np.shape(self.x_normalizer.mean)),
                list(np.shape(self.y_normalizer.mean)),
            ],
            "history": self.history,
            "epoch_time": float(self.epoch_time),
            "wall_time": float(self.wall_time),
            "n_steps": int(self.n_steps),
        }
        skeleton = _skeleton(record)
        like = {
            "model": eqx.filter(skeleton, eqx.is_array),
            "x_normalizer": {"mean": self.x_normalizer.mean, "std": self.x_normalizer.std},
            "y_normalizer": {"mean": self.y_normalizer.mean, "std": self.y_normalizer.std},
        }
        return save_model_checkpoint(path, tree, metadata, overwrite=overwrite, like=like)

    @classmethod
    def load(cls, path: str | Path) -> TrainedOperator:
        """The :class:`TrainedOperator` saved by :meth:`save` at ``path``: same weights, config, normalizers,
        history and timings, so it predicts bit-for-bit as the saved one. Every byte is verified first
        (``jaxkit.train.CheckpointError`` on a missing, corrupted or foreign checkpoint)."""
        from ..train import CheckpointError, load_checkpoint, read_metadata

        path = Path(path)
        meta = read_metadata(path)
        if meta.get("format") != _SAVE_FORMAT:
            raise CheckpointError(
                f"checkpoint {path} is not a saved TrainedOperator (format {meta.get('format')!r}, expected "
                f"{_SAVE_FORMAT!r})"
            )
        model = _skeleton(meta["model"])
        params, static = eqx.partition(model, eqx.is_array)
        (xs, ys) = (tuple(s) for s in meta["normalizer_shapes"])
        like = {
            "model": params,
            "x_normalizer": {"mean": jnp.zeros(xs, jnp.float32), "std": jnp.zeros(xs, jnp.float32)},
            "y_normalizer": {"mean": jnp.zeros(ys, jnp.float32), "std": jnp.zeros(ys, jnp.float32)},
        }
        tree, _ = load_checkpoint(path, like)
        x_eps, y_eps = meta["normalizer_eps"]
        return cls(
            eqx.combine(tree["model"], static),
            GaussianNormalizer(tree["x_normalizer"]["mean"], tree["x_normalizer"]["std"], x_eps),
            GaussianNormalizer(tree["y_normalizer"]["mean"], tree["y_normalizer"]["std"], y_eps),
            list(meta["history"]),
            float(meta["epoch_time"]),
            float(meta["wall_time"]),
            int(meta["n_steps"]),
        )


def _loss_fn(xn: GaussianNormalizer, yn: GaussianNormalizer) -> Callable:
    def loss(model, batch, key):
        x, y = batch
        pred = jax.vmap(lambda s: yn.decode(model(xn.encode(s))))(x)
        # the unchecked core: the data are checked before training, the decoded prediction by ``decode``; a NaN
        # loss (NaN in, NaN out) stops ``fit`` with FloatingPointError. The public function's two run-time checks
        # (eqx.error_if) would cost 3-5x the loss itself on CPU (jitted, (32, 64, 64): ~0.1 ms -> ~0.4-0.7 ms).
        return _relative_l2_core(pred, y)

    return loss


def _check_nonzero_targets(name: str, y: ArrayLike) -> None:
    """The relative L2 loss ``‖ŷ − y‖ / ‖y‖`` divides by each target's norm, computed in float32: refuse a target
    sample whose float32 norm is 0 — all zeros, or entries so small (below ~1e-19) that their squares underflow —
    since its loss is infinite whatever the model predicts. No-op on a tracer."""
    if isinstance(y, jax.core.Tracer):
        return
    flat = np.reshape(np.asarray(y, np.float32), (np.shape(y)[0], -1))
    with np.errstate(under="ignore"):
        norm = np.sqrt(np.sum(flat * flat, axis=1, dtype=np.float32))
    zero = np.flatnonzero(norm == 0)
    if zero.size:
        raise ValueError(
            f"{name}: expected targets with a nonzero norm (the relative L2 error divides by it), received "
            f"{zero.size} sample(s) whose float32 norm is 0 (all-zero, or entries too small to square in float32), "
            f"e.g. index {int(zero[0])}"
        )


@library_errors
def train_operator(
    model: eqx.Module,
    x_train: ArrayLike,
    y_train: ArrayLike,
    *,
    epochs: int,
    batch_size: int = 20,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    step_epochs: int = 100,
    gamma: float = 0.5,
    key: PRNGKey,
    x_test: ArrayLike | None = None,
    y_test: ArrayLike | None = None,
    eval_every_epochs: int = 0,
    mesh: jax.sharding.Mesh | str | None = "auto",
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | str = True,
) -> TrainedOperator:
    """Train an FNO/RNO with the FNO paper's recipe (relative-L2 loss, Adam, step LR) on ``jaxkit.train.fit``.

    ``mesh="auto"`` splits batches over all devices when there are several and ``batch_size`` divides evenly;
    pass ``None`` for one device or a mesh from :func:`jaxkit.train.data_mesh`. With ``checkpoint_dir`` the run
    checkpoints every epoch and ``resume=True`` continues a killed run bit-identically.
    """
    x_train, y_train = _as_float32("x_train", x_train), _as_float32("y_train", y_train)
    check_int("epochs", epochs, minimum=1)
    check_int("batch_size", batch_size, minimum=1)
    if x_train.shape[0] != y_train.shape[0]:
        raise ValueError(
            f"y_train: expected {x_train.shape[0]} samples (as x_train), received {y_train.shape[0]}"
        )
    check_finite("x_train", x_train)
    check_finite("y_train", y_train)
    _check_nonzero_targets("y_train", y_train)
    check_int("step_epochs", step_epochs, minimum=1)
    check_int("eval_every_epochs", eval_every_epochs, minimum=0)
    xn, yn = GaussianNormalizer.fit(x_train), GaussianNormalizer.fit(y_train)
    k_fit, k_data = jax.random.split(key)
    batch_size = _clamped_batch_size(batch_size, x_train.shape[0])
    loader = ArrayLoader((x_train, y_train), batch_size, key=k_data)
    spe = loader.steps_per_epoch
    if isinstance(mesh, str):
        if mesh != "auto":
            raise ValueError(f"mesh: expected 'auto', None or a jax.sharding.Mesh, received {mesh!r}")
        n_dev = jax.device_count()
        mesh = data_mesh() if n_dev > 1 and batch_size % n_dev == 0 else None
    optimizer = fno_optimizer(lr, weight_decay, step_every=step_epochs * spe, gamma=gamma)
    eval_fn = None
    if x_test is not None and y_test is not None:
        xt, yt = np.asarray(x_test, np.float32), np.asarray(y_test, np.float32)

        def eval_fn(m):
            r = evaluate(m, xt, yt, xn, yn)
            return {"test_rel_l2": r["rel_l2"], "test_mse": r["mse"]}

    stamps: list[float] = []
    result = fit(
        model,
        optimizer,
        _loss_fn(xn, yn),
        loader,
        n_steps=epochs * spe,
        key=k_fit,
        eval_fn=eval_fn if eval_every_epochs else None,
        eval_every=eval_every_epochs * spe,
        log_every=spe,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=spe if checkpoint_dir is not None else 0,
        resume=resume,
        mesh=mesh,
        progress=progress,
        callback=lambda step, rec: stamps.append(time.perf_counter()),
    )
    diffs = np.diff(stamps)
    epoch_time = float(np.median(diffs)) if diffs.size else float(result.wall_time)
    return TrainedOperator(result.model, xn, yn, result.history, epoch_time, result.wall_time, result.step)


def _as_float32(name: str, x: ArrayLike) -> np.ndarray:
    """``x`` as float32 (the operators train in float32), with a ``UserWarning`` when float64 data is downcast."""
    arr = np.asarray(x)
    if arr.dtype == np.float64:
        warnings.warn(
            f"{name}: float64 data is converted to float32 (the neural operators train in float32); pass float32 "
            "arrays to silence this",
            UserWarning,
            stacklevel=3,
        )
    return arr.astype(np.float32)


def _clamped_batch_size(batch_size: int, n: int) -> int:
    """``min(batch_size, n)``, with a ``UserWarning`` when ``batch_size`` is larger than the training set."""
    if batch_size > n:
        warnings.warn(
            f"batch_size: {batch_size} is more than the {n} training samples; every batch holds all {n} "
            "(pass batch_size <= the number of samples to silence this)",
            UserWarning,
            stacklevel=3,
        )
    return min(batch_size, n)


def member(ensemble: TreeT, i: int) -> TreeT:
    """The ``i``-th model of an ensemble built with ``eqx.filter_vmap`` (:func:`jaxkit.train.ensemble_member`)."""
    return ensemble_member(ensemble, i, name="ensemble")


def train_ensemble(
    make_model: Callable[[PRNGKey], eqx.Module],
    keys: Key[Array, " members"],
    x_train: ArrayLike,
    y_train: ArrayLike,
    *,
    epochs: int,
    batch_size: int = 20,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    step_epochs: int = 100,
    gamma: float = 0.5,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | str = True,
) -> list[TrainedOperator]:
    """Train one model per key (e.g. several seeds) *at once* with :func:`jaxkit.train.fit_ensemble`: the models
    are stacked with ``eqx.filter_vmap`` and trained by one compiled step on the sum of their losses.

    Member $i$ is initialized by ``make_model(k_0)`` and shuffles its data with ``k_1``, where
    ``(k_0, k_1) = split(keys[i])``, and the optimizer acts member by member, so it follows exactly (up to
    floating-point reassociation) the trajectory of ``train_operator(make_model(k_0), ..., key=keys[i],
    mesh=None)``; the ensemble only saves compilations. ``epoch_time`` of each result is the ensemble's time per
    epoch divided by the number of members (amortized). Runs on one device.
    """
    keys = jnp.asarray(keys)
    x_train, y_train = _as_float32("x_train", x_train), _as_float32("y_train", y_train)
    check_int("epochs", epochs, minimum=1)
    check_int("batch_size", batch_size, minimum=1)
    check_int("step_epochs", step_epochs, minimum=1)
    if keys.ndim < 1 or keys.shape[0] < 1:
        raise ValueError(f"keys: expected a stack of PRNG keys (n_members, ...), received shape {keys.shape}")
    if x_train.shape[0] != y_train.shape[0]:
        raise ValueError(
            f"y_train: expected {x_train.shape[0]} samples (as x_train), received {y_train.shape[0]}"
        )
    check_finite("x_train", x_train)
    check_finite("y_train", y_train)
    _check_nonzero_targets("y_train", y_train)
    n = keys.shape[0]
    xn, yn = GaussianNormalizer.fit(x_train), GaussianNormalizer.fit(y_train)
    init_keys, data_keys = (jnp.stack(ks) for ks in zip(*(jax.random.split(k) for k in keys)))
    batch_size = _clamped_batch_size(batch_size, x_train.shape[0])
    loaders = [ArrayLoader((x_train, y_train), batch_size, key=k) for k in data_keys]
    spe = loaders[0].steps_per_epoch

    def data(step: int) -> Any:  # member i's own shuffle, stacked on the member axis
        return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *(ld(step) for ld in loaders))

    data.steps_per_epoch = spe

    stamps: list[float] = []
    result = fit_ensemble(
        init_ensemble(make_model, init_keys),
        fno_optimizer(lr, weight_decay, step_every=step_epochs * spe, gamma=gamma),
        _loss_fn(xn, yn),
        data,
        n_steps=epochs * spe,
        keys=keys,
        member_data=True,
        log_every=spe,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=spe if checkpoint_dir is not None else 0,
        resume=resume,
        progress=progress,
        callback=lambda step, rec: stamps.append(time.perf_counter()),
    )
    diffs = np.diff(stamps)
    epoch_time = (float(np.median(diffs)) if diffs.size else float(result.wall_time)) / n
    out = []
    for i in range(n):
        hist = [{"step": h["step"], "epoch": h["epoch"], "loss": h["member_loss"][i]} for h in result.history]
        out.append(
            TrainedOperator(
                member(result.model, i), xn, yn, hist, epoch_time, result.wall_time / n, result.step
            )
        )
    return out
