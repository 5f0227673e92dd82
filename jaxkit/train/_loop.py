"""The shared fit loop: one jit-compiled optax step, periodic evaluation, logging, early stop, checkpoint/resume.

``loss_fn(model, batch, key) -> loss`` or ``-> (loss, aux_dict)`` (``has_aux=True``) where ``model`` is any pytree
(usually an Equinox module); only its inexact-array leaves are trained (``eqx.partition``). The per-step PRNG
key is ``fold_in(key, step)`` and batches come from ``data(step)``, so the whole run is a deterministic function
of (model, key, data, step count): a run killed at any moment and resumed from its last checkpoint ends with
bit-identical parameters and metric history.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from ._checkpoint import CheckpointManager
from ._sharding import replicate, shard_batch


@dataclass
class FitResult:
    """What :func:`fit` returns. ``history`` holds one dict per logged/evaluated step."""

    model: Any
    opt_state: Any
    step: int
    history: list[dict] = field(default_factory=list)
    stopped_early: bool = False
    wall_time: float = 0.0
    resumed_from: int | None = None


def make_train_step(loss_fn: Callable, optimizer: optax.GradientTransformation, *, has_aux: bool = False):
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
        arr = np.asarray(v)
        out[k] = float(arr) if arr.ndim == 0 else arr.tolist()
    return out


def fit(
    model: Any,
    optimizer: optax.GradientTransformation,
    loss_fn: Callable,
    data: Callable[[int], Any],
    *,
    n_steps: int,
    key: jax.Array,
    has_aux: bool = False,
    eval_fn: Callable[[Any], dict] | None = None,
    eval_every: int = 0,
    log_every: int = 1,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 0,
    keep_checkpoints: int = 2,
    resume: bool = False,
    patience: int | None = None,
    monitor: str = "val_loss",
    mode: str = "min",
    mesh: jax.sharding.Mesh | None = None,
    progress: bool | str = True,
    callback: Callable[[int, dict], None] | None = None,
    opt_state: Any = None,
) -> FitResult:
    """Train ``model`` for ``n_steps`` optimizer steps.

    Args:
        data: ``data(step)`` returns the batch for that global step (e.g. :class:`ArrayLoader`).
        eval_fn: ``eval_fn(model) -> dict`` of floats, called every ``eval_every`` steps and at the end.
        checkpoint_dir: folder for atomic checkpoints of params, optimizer state, PRNG key, step (= data
            position) and history, written every ``checkpoint_every`` steps and at the end.
        resume: continue from the newest checkpoint in ``checkpoint_dir`` if there is one.
        patience: stop when ``eval_fn``'s ``monitor`` metric has not improved (``mode`` "min" or "max") for
            ``patience`` consecutive evaluations.
        mesh: data-parallel mesh (:func:`jaxkit.train.data_mesh`); batches are split over it, params replicated.
        callback: ``callback(step, record)`` after each logged step (for custom logging).
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 0:
        raise ValueError(f"n_steps: expected an integer >= 0, received {n_steps!r}")
    if mode not in ("min", "max"):
        raise ValueError(f"mode: expected 'min' or 'max', received {mode!r}")
    if patience is not None and eval_fn is None:
        raise ValueError("patience: early stopping needs eval_fn to produce the monitored metric")
    if checkpoint_every and checkpoint_dir is None:
        raise ValueError("checkpoint_dir: checkpoint_every > 0 needs a checkpoint_dir")

    params, static = eqx.partition(model, eqx.is_inexact_array)
    if opt_state is None:
        opt_state = optimizer.init(params)
    if mesh is not None:
        model = replicate(model, mesh)
        opt_state = replicate(opt_state, mesh)
    step_fn = make_train_step(loss_fn, optimizer, has_aux=has_aux)

    history: list[dict] = []
    start = 0
    best = math.inf if mode == "min" else -math.inf
    bad_evals = 0
    manager = CheckpointManager(checkpoint_dir, keep=keep_checkpoints) if checkpoint_dir is not None else None
    resumed_from = None
    if resume and manager is not None and manager.latest() is not None:
        params, _ = eqx.partition(model, eqx.is_inexact_array)
        restored, meta = manager.restore({"params": params, "opt_state": opt_state, "key": key})
        model = eqx.combine(restored["params"], static)
        opt_state, key = restored["opt_state"], restored["key"]
        start = int(meta["step"])
        history = list(meta.get("history", []))
        best = float(meta.get("best", best))
        bad_evals = int(meta.get("bad_evals", 0))
        resumed_from = start

    def save(step: int) -> None:
        if manager is None:
            return
        p, _ = eqx.partition(model, eqx.is_inexact_array)
        manager.save(
            step,
            {"params": p, "opt_state": opt_state, "key": key},
            {"data_position": step, "history": history, "best": best, "bad_evals": bad_evals},
        )

    def improved(value: float) -> bool:
        return value < best if mode == "min" else value > best

    t0 = time.perf_counter()
    stopped = False
    desc = progress if isinstance(progress, str) else "train"
    bar = tqdm(total=n_steps, initial=start, desc=desc, disable=not progress, leave=False)
    for step in range(start, n_steps):
        batch = data(step)
        if mesh is not None:
            batch = shard_batch(batch, mesh)
        model, opt_state, loss, aux = step_fn(model, opt_state, batch, jax.random.fold_in(key, step))
        done = step + 1
        record: dict | None = None
        if log_every and (done % log_every == 0 or done == n_steps):
            record = {"step": done, "loss": float(loss), **_to_float_dict(aux)}
        if eval_fn is not None and ((eval_every and done % eval_every == 0) or done == n_steps):
            metrics = _to_float_dict(eval_fn(model))
            record = {"step": done, "loss": float(loss), **_to_float_dict(aux), **metrics}
            if patience is not None:
                if monitor not in metrics:
                    raise KeyError(f"monitor: eval_fn returned {sorted(metrics)}, which lacks {monitor!r}")
                if improved(metrics[monitor]):
                    best, bad_evals = metrics[monitor], 0
                else:
                    bad_evals += 1
                    stopped = bad_evals >= patience
        if record is not None:
            history.append(record)
            bar.set_postfix(loss=f"{record['loss']:.4g}")
            if callback is not None:
                callback(done, record)
        bar.update(1)
        if manager is not None and ((checkpoint_every and done % checkpoint_every == 0) or done == n_steps or stopped):
            save(done)
        if stopped:
            break
    bar.close()
    jax.block_until_ready(jax.tree_util.tree_leaves(model))
    final_step = (step + 1) if n_steps > start else start
    return FitResult(
        model=model,
        opt_state=opt_state,
        step=final_step,
        history=history,
        stopped_early=stopped,
        wall_time=time.perf_counter() - t0,
        resumed_from=resumed_from,
    )


def global_norm(tree: Any) -> jax.Array:
    """Euclidean norm of all inexact leaves of a pytree."""
    leaves = [x for x in jax.tree_util.tree_leaves(tree) if eqx.is_inexact_array(x)]
    return jnp.sqrt(sum(jnp.sum(jnp.abs(x) ** 2) for x in leaves))
