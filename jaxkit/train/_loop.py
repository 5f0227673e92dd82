"""The shared fit loop: one jit-compiled optax step, periodic evaluation, logging, early stop, checkpoint/resume.

``loss_fn(model, batch, key) -> loss`` or ``-> (loss, aux_dict)`` (``has_aux=True``) where ``model`` is any pytree
(usually an Equinox module); only its inexact-array leaves are trained (``eqx.partition``). The per-step PRNG
key is ``fold_in(key, step)`` and batches come from ``data(step)``, so the whole run is a deterministic function
of (model, key, data, step count): a run killed at any moment and resumed from its last checkpoint ends with
bit-identical parameters and metric history.

Resuming continues the *same* run: each checkpoint records the run's signature (a hash of the PRNG key, the
optimizer state's structure, and the loss and update norm of the first step from the initial model), and
``fit(resume=True)`` recomputes that first step and refuses (``ValueError``) a checkpoint written with another key,
optimizer or learning rate, loss, data or initial model, unless ``resume_changes=True`` says to continue anyway.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from jaxkit._validate import check_key, library_errors

from ._checkpoint import CheckpointManager, CheckpointWarning
from ._sharding import _placement, is_primary, to_host


@dataclass
class FitResult:
    """What :func:`fit` returns.

    ``history`` holds one dict per logged/evaluated step (every step with the default ``log_every=1``):
    ``step`` (optimizer steps done, 1-based), ``loss`` (the training loss of that step's batch), the ``aux``
    metrics, ``eval_fn``'s metrics when it ran, and ``epoch`` (0-based: ``(step - 1) // steps_per_epoch``) when
    ``data`` has a ``steps_per_epoch`` (as :class:`ArrayLoader` does)."""

    model: Any
    opt_state: Any
    step: int
    history: list[dict] = field(default_factory=list)
    stopped_early: bool = False
    wall_time: float = 0.0
    resumed_from: int | None = None

    def __post_init__(self) -> None:
        _check_count("step", self.step, 0)
        w = self.wall_time
        if (
            isinstance(w, bool)
            or not isinstance(w, int | float | np.floating | np.integer)
            or not w >= 0
            or not math.isfinite(w)
        ):
            raise ValueError(f"wall_time: expected a finite number of seconds >= 0, received {w!r}")


def make_train_step(
    loss_fn: Callable[..., object], optimizer: optax.GradientTransformation, *, has_aux: bool = False
) -> Callable[[object, object, object, jax.Array], tuple[object, object, jax.Array, object]]:
    """Return ``step(model, opt_state, batch, key) -> (model, opt_state, loss, aux)``, jit-compiled (filter_jit)."""

    @eqx.filter_jit
    def step(model, opt_state, batch, key):
        params, static = eqx.partition(model, eqx.is_inexact_array)

        def objective(p):
            out = loss_fn(eqx.combine(p, static), batch, key)
            return out if has_aux else (out, {})

        (loss, aux), grads = jax.value_and_grad(objective, has_aux=True)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return eqx.combine(params, static), opt_state, loss, aux

    return step


def _to_float_dict(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        arr = to_host(v)
        out[k] = float(arr) if arr.ndim == 0 else arr.tolist()
    return out


def _check_count(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, received {value!r}")


def _check_fit_args(
    model,
    optimizer,
    loss_fn,
    data,
    n_steps,
    key,
    eval_fn,
    counts,
    patience,
    mode,
    monitor,
    checkpoint_dir,
    nonfinite,
) -> None:
    """Every check of :func:`fit`'s arguments, before anything is traced."""
    if isinstance(n_steps, bool) or not isinstance(n_steps, int | np.integer) or n_steps < 1:
        raise ValueError(
            f"n_steps: expected an integer >= 1 (optimizer steps to train for), received {n_steps!r}"
        )
    for name, value in counts.items():
        _check_count(name, value, 1 if name == "keep_checkpoints" else 0)
    if not isinstance(optimizer, optax.GradientTransformation):
        raise TypeError(
            f"optimizer: expected an optax.GradientTransformation, received {type(optimizer).__name__}"
        )
    for name, fn in (("loss_fn", loss_fn), ("data", data)):
        if not callable(fn):
            raise TypeError(f"{name}: expected a callable, received {type(fn).__name__}")
    if eval_fn is not None and not callable(eval_fn):
        raise TypeError(f"eval_fn: expected a callable or None, received {type(eval_fn).__name__}")
    check_key("key", key)
    if mode not in ("min", "max"):
        raise ValueError(f"mode: expected 'min' or 'max', received {mode!r}")
    if nonfinite not in ("raise", "ignore"):
        raise ValueError(f"nonfinite: expected 'raise' or 'ignore', received {nonfinite!r}")
    if patience is not None:
        _check_count("patience", patience, 1)
        if eval_fn is None:
            raise ValueError("patience: early stopping needs eval_fn to produce the monitored metric")
        if not isinstance(monitor, str):
            raise TypeError(f"monitor: expected a metric name (str), received {type(monitor).__name__}")
    if counts["checkpoint_every"] and checkpoint_dir is None:
        raise ValueError("checkpoint_dir: checkpoint_every > 0 needs a checkpoint_dir")
    if checkpoint_dir is not None:
        if not isinstance(checkpoint_dir, str | os.PathLike):
            raise TypeError(
                f"checkpoint_dir: expected a folder path (str or os.PathLike) or None, received "
                f"{type(checkpoint_dir).__name__}"
            )
        existing = next(
            (p for p in (Path(checkpoint_dir), *Path(checkpoint_dir).parents) if p.exists()), None
        )
        if existing is not None and not existing.is_dir():
            raise ValueError(
                f"checkpoint_dir: expected a folder (or a path where one can be made), but {existing} is a file"
            )
    params = jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_inexact_array))
    if not params:
        raise ValueError("model: expected a pytree with floating-point array leaves to train, received none")
    if all(np.size(p) == 0 for p in params):
        raise ValueError(
            "model: expected at least one parameter entry to train, received only empty arrays (shapes "
            f"{[tuple(np.shape(p)) for p in params]})"
        )
    for i, p in enumerate(params):
        if not isinstance(p, jax.core.Tracer) and not bool(jnp.all(jnp.isfinite(p))):
            raise ValueError(f"model: expected finite parameters, leaf {i} (shape {p.shape}) holds NaN/inf")


@dataclass
class _State:
    """What a checkpoint holds and the loop updates: the model, optimizer state, key, step and early-stop state."""

    model: Any
    opt_state: Any
    key: jax.Array
    step: int = 0
    history: list[dict] = field(default_factory=list)
    best: float = math.inf
    bad_evals: int = 0
    signature: dict | None = None


def _signature(key: jax.Array, opt_state: Any, model0: Any, model1: Any, loss: Any) -> dict:
    """The run's signature from its first step ``model0 -> model1`` (see the module docstring)."""
    kd = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    a = jax.tree_util.tree_leaves(eqx.filter(model0, eqx.is_inexact_array))
    b = jax.tree_util.tree_leaves(eqx.filter(model1, eqx.is_inexact_array))
    u = [to_host(y).astype(np.float64) - to_host(x).astype(np.float64) for x, y in zip(a, b)]  # (gathered)
    return {
        "key_sha256": hashlib.sha256(np.asarray(kd).tobytes()).hexdigest(),
        "optimizer_state": str(jax.tree_util.tree_structure(opt_state)),
        "first_loss": float(loss),
        "first_update": [float(sum(np.sum(v * v) for v in u)), float(sum(np.sum(v) for v in u))],
    }


def _close(x: Any, y: Any, rtol: float = 1e-4) -> bool:
    x, y = np.atleast_1d(np.asarray(x, np.float64)), np.atleast_1d(np.asarray(y, np.float64))
    return x.shape == y.shape and bool(np.all(np.isclose(x, y, rtol=rtol, atol=1e-12, equal_nan=True)))


def _signature_changes(old: dict, new: dict) -> list[str]:
    out = []
    if old.get("key_sha256") != new["key_sha256"]:
        out.append("another PRNG key")
    if old.get("optimizer_state") != new["optimizer_state"]:
        out.append("another optimizer (its state has another structure)")
    elif not _close(old.get("first_update", []), new["first_update"]):
        out.append(
            f"another optimizer or learning rate (first update: squared norm {new['first_update'][0]:.6g}, "
            f"checkpointed run {old.get('first_update', [math.nan])[0]:.6g})"
        )
    if not _close(old.get("first_loss", math.nan), new["first_loss"]):
        out.append(
            f"another loss_fn, data or initial model (first-step loss {new['first_loss']:.6g}, checkpointed run "
            f"{old.get('first_loss', math.nan):.6g})"
        )
    return out


def _save(manager: CheckpointManager | None, s: _State) -> None:
    if manager is None:
        return
    params, _ = eqx.partition(s.model, eqx.is_inexact_array)
    manager.save(
        s.step,
        {"params": params, "opt_state": s.opt_state, "key": s.key},
        {
            "data_position": s.step,
            "history": s.history,
            "best": s.best,
            "bad_evals": s.bad_evals,
            "signature": s.signature,
        },
    )


def _resume(manager: CheckpointManager, s: _State, n_steps: int) -> int | None:
    """Load the newest valid checkpoint into ``s`` (falls back past damaged ones); returns its step or None."""
    params, static = eqx.partition(s.model, eqx.is_inexact_array)
    restored = manager.restore({"params": params, "opt_state": s.opt_state, "key": s.key})
    if restored is None:
        return None
    tree, meta = restored
    step = int(meta["step"])
    if step > n_steps:
        raise ValueError(
            f"n_steps: the checkpoint in {manager.directory} is at step {step}, beyond n_steps={n_steps}; "
            "resume with n_steps >= that step or start over (resume=False)"
        )
    s.model, s.opt_state, s.key = eqx.combine(tree["params"], static), tree["opt_state"], tree["key"]
    s.step, s.history = step, list(meta.get("history", []))
    s.best, s.bad_evals = float(meta.get("best", s.best)), int(meta.get("bad_evals", 0))
    s.signature = meta.get("signature")
    return step


def _prepare_checkpoints(checkpoint_dir, keep: int, resume: bool, s: _State, n_steps: int):
    """The checkpoint manager, after resuming (``resume``) or clearing an earlier run's checkpoints (not)."""
    if checkpoint_dir is None:
        return None, None
    manager = CheckpointManager(checkpoint_dir, keep=keep)
    if resume:
        return manager, _resume(manager, s, n_steps)
    removed = manager.clear()
    if removed:
        warnings.warn(
            f"checkpoint_dir {checkpoint_dir} held checkpoints of an earlier run (steps {removed}); resume=False "
            "starts over, so they were removed",
            CheckpointWarning,
            stacklevel=3,
        )
    return manager, None


class _Monitor:
    """Early stopping on ``eval_fn``'s ``monitor`` metric: stop after ``patience`` evaluations without improvement."""

    def __init__(self, patience: int | None, monitor: str, mode: str):
        self.patience, self.monitor, self.mode = patience, monitor, mode

    def update(self, s: _State, metrics: dict) -> bool:
        if self.patience is None:
            return False
        if self.monitor not in metrics:
            raise KeyError(f"monitor: eval_fn returned {sorted(metrics)}, which lacks {self.monitor!r}")
        value = metrics[self.monitor]
        if not math.isfinite(value):  # NaN compares false with everything: it would count as "no improvement"
            raise ValueError(
                f"eval_fn: the monitored metric {self.monitor!r} is {value} at step {s.step}; early stopping "
                "(patience) needs finite values"
            )
        if value < s.best if self.mode == "min" else value > s.best:
            s.best, s.bad_evals = value, 0
        else:
            s.bad_evals += 1
        return s.bad_evals >= self.patience


def _check_loss(loss: float, step: int, history: list[dict]) -> None:
    if not math.isfinite(loss):
        last = next((r["step"] for r in reversed(history) if math.isfinite(r.get("loss", math.nan))), None)
        raise FloatingPointError(
            f"loss_fn: the training loss is {loss} at step {step} (last finite logged loss at step {last}); "
            "lower the learning rate or check the data, or pass nonfinite='ignore' to keep going"
        )


def _steps_per_epoch(data: Any) -> int | None:
    """``data.steps_per_epoch`` when it is a positive integer (an :class:`ArrayLoader`), else None."""
    spe = getattr(data, "steps_per_epoch", None)
    return int(spe) if isinstance(spe, int | np.integer) and not isinstance(spe, bool) and spe > 0 else None


def _record(
    done: int, n_steps: int, loss, aux: dict, eval_fn, eval_every: int, log_every: int, model, spe=None
):
    """The history record for step ``done`` (None if nothing is logged) and the eval metrics (None if no eval)."""
    evaluate = eval_fn is not None and ((eval_every and done % eval_every == 0) or done == n_steps)
    logged = log_every and (done % log_every == 0 or done == n_steps)
    if not (evaluate or logged):
        return None, None
    metrics = None
    if evaluate:
        got = eval_fn(model)
        if not isinstance(got, dict):
            raise TypeError(
                f"eval_fn: expected a dict of metric name -> float (e.g. {{'val_loss': 0.1}}), received "
                f"{type(got).__name__}"
            )
        metrics = _to_float_dict(got)
    epoch = {} if spe is None else {"epoch": (done - 1) // spe}
    return {"step": done, **epoch, "loss": float(loss), **_to_float_dict(aux), **(metrics or {})}, metrics


@library_errors
def fit(
    model: object,
    optimizer: optax.GradientTransformation,
    loss_fn: Callable[..., object],
    data: Callable[[int], object],
    *,
    n_steps: int,
    key: jax.Array,
    has_aux: bool = False,
    eval_fn: Callable[..., Mapping[str, object]] | None = None,
    eval_every: int = 0,
    log_every: int = 1,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 0,
    keep_checkpoints: int = 2,
    resume: bool = False,
    patience: int | None = None,
    monitor: str = "val_loss",
    mode: Literal["min", "max"] = "min",
    mesh: jax.sharding.Mesh | None = None,
    progress: bool | str = True,
    callback: Callable[[int, dict[str, object]], None] | None = None,
    opt_state: optax.OptState | None = None,
    nonfinite: Literal["raise", "ignore"] = "raise",
    resume_changes: bool = False,
) -> FitResult:
    """Train ``model`` for ``n_steps`` optimizer steps.

    Args:
        data: ``data(step)`` returns the batch for that global step (e.g. :class:`ArrayLoader`).
        eval_fn: ``eval_fn(model) -> dict`` of floats, called every ``eval_every`` steps and at the end.
        checkpoint_dir: folder for atomic, checksummed checkpoints (:class:`CheckpointManager`) of params,
            optimizer state, PRNG key, step (= data position) and history, written every ``checkpoint_every``
            steps and at the end.
        resume: continue from the newest valid checkpoint in ``checkpoint_dir`` if there is one (a damaged newest
            checkpoint is skipped with a :class:`CheckpointWarning`). With ``resume=False`` the checkpoints of an
            earlier run in ``checkpoint_dir`` are removed (with a warning): the run starts over. A checkpoint of a
            run with another key, optimizer (or learning rate), loss, data or initial model is refused
            (``ValueError``; see the module docstring) unless ``resume_changes=True``, which continues from it
            anyway (e.g. to fine-tune with a new learning rate; the first step is recomputed once to check).
        patience: stop when ``eval_fn``'s ``monitor`` metric has not improved (``mode`` "min" or "max") for
            ``patience`` consecutive evaluations.
        mesh: data-parallel mesh (:func:`jaxkit.train.data_mesh`); batches are split over it, params replicated.
            ``None``: :func:`jaxkit.train.default_mesh` (every device of every process after
            :func:`jaxkit.train.initialize_distributed`, else one device). In a multi-process run ``data(step)``
            returns the same global batch in every process; each process places only its own devices' rows
            (``jax.make_array_from_process_local_data``), checkpoints are written once (process 0 and orbax's
            per-process array shards) and resume under any process count; the progress bar shows on process 0.
        callback: ``callback(step, record)`` after each logged step (for custom logging; runs in every process,
            :func:`jaxkit.train.is_primary` tells process 0).
        nonfinite: ``"raise"`` (default): a NaN/inf training loss at a logged step (and at the end) raises
            ``FloatingPointError`` naming the step; ``"ignore"`` keeps training.

    Raises:
        ValueError/TypeError: invalid arguments (before anything is traced), non-finite initial parameters, or a
            checkpoint beyond ``n_steps``. CheckpointError: no valid checkpoint left to resume from.
    """
    counts = {
        "eval_every": eval_every,
        "log_every": log_every,
        "checkpoint_every": checkpoint_every,
        "keep_checkpoints": keep_checkpoints,
    }
    _check_fit_args(
        model,
        optimizer,
        loss_fn,
        data,
        n_steps,
        key,
        eval_fn,
        counts,
        patience,
        mode,
        monitor,
        checkpoint_dir,
        nonfinite,
    )
    if opt_state is None:
        opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))
    placement = _placement(mesh)
    if placement is not None:
        model, opt_state = placement.place_state(model), placement.place_state(opt_state)
    s = _State(model, opt_state, key, best=math.inf if mode == "min" else -math.inf)
    manager, resumed_from = _prepare_checkpoints(checkpoint_dir, keep_checkpoints, resume, s, n_steps)
    step_fn = make_train_step(loss_fn, optimizer, has_aux=has_aux)
    if resumed_from is not None and not resume_changes:
        _check_resumed_run(s, step_fn, model, opt_state, data, key, placement, manager)
    early = _Monitor(patience, monitor, mode)

    t0 = time.perf_counter()
    stopped, loss = False, None
    desc = progress if isinstance(progress, str) else "train"
    bar = tqdm(
        total=n_steps, initial=s.step, desc=desc, disable=not progress or not is_primary(), leave=False
    )
    while s.step < n_steps and not stopped:
        batch = data(s.step)
        if placement is not None:
            batch = placement.place_batch(batch)
        first = s.model if s.step == 0 else None
        s.model, s.opt_state, loss, aux = step_fn(
            s.model, s.opt_state, batch, jax.random.fold_in(s.key, s.step)
        )
        if first is not None:
            s.signature = _signature(s.key, s.opt_state, first, s.model, loss)
        s.step += 1
        record, metrics = _record(
            s.step, n_steps, loss, aux, eval_fn, eval_every, log_every, s.model, _steps_per_epoch(data)
        )
        if record is not None:
            if nonfinite == "raise":
                _check_loss(record["loss"], s.step, s.history)
            stopped = metrics is not None and early.update(s, metrics)
            s.history.append(record)
            bar.set_postfix(loss=f"{record['loss']:.4g}")
            if callback is not None:
                callback(s.step, record)
        bar.update(1)
        if manager is not None and (
            (checkpoint_every and s.step % checkpoint_every == 0) or s.step == n_steps or stopped
        ):
            _save(manager, s)
    bar.close()
    if nonfinite == "raise" and loss is not None:
        _check_loss(float(loss), s.step, s.history)
    jax.block_until_ready(jax.tree_util.tree_leaves(s.model))
    return FitResult(
        model=s.model,
        opt_state=s.opt_state,
        step=s.step,
        history=s.history,
        stopped_early=stopped,
        wall_time=time.perf_counter() - t0,
        resumed_from=resumed_from,
    )


def _check_resumed_run(s: _State, step_fn, model0, opt0, data, key, placement, manager) -> None:
    """Refuse to resume a checkpoint whose run signature differs from this run's (recomputes the first step)."""
    if s.signature is None:
        warnings.warn(
            f"resume: the checkpoint in {manager.directory} records no run signature (older jaxkit); cannot check "
            "that it was written with the same key, optimizer and loss",
            CheckpointWarning,
            stacklevel=3,
        )
        return
    batch = data(0)
    if placement is not None:
        batch = placement.place_batch(batch)
    m1, o1, loss, _ = step_fn(model0, opt0, batch, jax.random.fold_in(key, 0))
    changes = _signature_changes(s.signature, _signature(key, o1, model0, m1, loss))
    if changes:
        raise ValueError(
            f"resume: the checkpoint in {manager.directory} (step {s.step}) was written by a run with "
            f"{'; '.join(changes)}. Pass resume_changes=True to continue from it anyway, or resume=False to "
            "start over"
        )


def global_norm(tree: object) -> jax.Array:
    """Euclidean norm of all inexact leaves of a pytree.

    A non-finite leaf gives a non-finite norm (NaN for a NaN entry, inf for an infinite one), as
    ``optax.global_norm``, so divergence is visible: training loops read the norm to detect it (a documented
    exception, docs/contracts.md)."""
    leaves = [x for x in jax.tree_util.tree_leaves(tree) if eqx.is_inexact_array(x)]
    return jnp.sqrt(sum(jnp.sum(jnp.abs(x) ** 2) for x in leaves))
