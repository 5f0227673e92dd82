"""Length-generalization probes: train on lengths <= 40 with a curriculum, test per length beyond.

Protocol in the spirit of Deletang et al. (2023) and Grazzi et al. (2025): every (task, seed, learning rate) run is
trained on strings of length 1..``train_max_len`` (the longest allowed length grows linearly from
``curriculum_start`` to ``train_max_len`` over the first ``curriculum_frac`` of the steps), then scored on fresh
samples at in-distribution lengths (``train_eval_lengths``) and at each test length. A task is **solved** when the
best run reaches a mean test accuracy of at least ``threshold``; a run whose in-distribution accuracy stays below
``learned_threshold`` was **not learned** at this budget (a training failure says nothing about expressivity).

All runs of one model class are members of one stacked ensemble trained by :func:`jaxkit.train.fit_ensemble`
(one compiled step for all of them; Adam with per-member learning rates through ``optax.inject_hyperparams``,
per-member global-norm clipping, a warmup-cosine learning-rate factor), so a probe checkpoints and resumes like any
``fit`` run. Tasks share one padded vocabulary and class set; every member draws its batches from its own task.
"""

from __future__ import annotations

import functools
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxkit._typing import PRNGKey
from jaxkit._validate import check_choice, check_int, check_range
from jaxkit.train import fit_ensemble, init_ensemble

from ._languages import get_task
from ._layers import MODES, VARIANTS, SSMModel
from ._transformer import POSITIONAL, CausalTransformer

MODELS = VARIANTS + ("transformer",)


@dataclass(frozen=True)
class ProbeConfig:
    """What to train and how to score it (defaults: a small model, a short run)."""

    tasks: tuple[str, ...] = ("parity",)
    model: str = "selective_signed"
    d_model: int = 32
    d_state: int = 16
    n_layers: int = 2
    n_householder: int = 2
    n_heads: int = 4
    positional: str = "rope"
    mode: str = "parallel"
    n_steps: int = 400
    batch_size: int = 32
    lrs: tuple[float, ...] = (1e-3, 3e-3)
    n_seeds: int = 2
    train_max_len: int = 40
    curriculum_start: int = 5
    curriculum_frac: float = 0.5
    warmup_frac: float = 0.05
    final_lr_fraction: float = 0.1
    n_train_per_length: int = 128
    train_eval_lengths: tuple[int, ...] = (24, 27, 30, 33, 36, 39)
    test_lengths: tuple[int, ...] = (41, 60, 100, 200, 500)
    n_test: int = 64
    threshold: float = 0.9
    learned_threshold: float = 0.98
    eval_chunk: int = 64
    log_every: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("model", self.model, MODELS)
        check_choice("positional", self.positional, POSITIONAL)
        check_choice("mode", self.mode, MODES)
        if not self.tasks:
            raise ValueError("tasks: expected at least one task name, received an empty list")
        for t in self.tasks:
            get_task(t)
        for name in ("n_steps", "batch_size", "n_seeds", "train_max_len", "n_train_per_length", "n_test"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("log_every", self.log_every, minimum=0)
        for name in ("threshold", "learned_threshold", "curriculum_frac", "warmup_frac", "final_lr_fraction"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        if not self.lrs or any(lr <= 0 for lr in self.lrs):
            raise ValueError(f"lrs: expected positive learning rates, received {self.lrs}")
        for name in ("test_lengths", "train_eval_lengths"):
            lengths = getattr(self, name)
            if not lengths or min(lengths) < 1:
                raise ValueError(f"{name}: expected positive lengths, received {lengths}")


def make_model(cfg: ProbeConfig, vocab: int, n_classes: int, key: PRNGKey) -> SSMModel | CausalTransformer:
    """One model of class ``cfg.model`` (an SSM gate class or the transformer baseline)."""
    if cfg.model == "transformer":
        return CausalTransformer(
            vocab,
            n_classes,
            key=key,
            d_model=cfg.d_model,
            n_heads=cfg.n_heads,
            n_layers=cfg.n_layers,
            positional=cfg.positional,
            max_len=max(2 * max(cfg.test_lengths) + 2, 64),
        )
    return SSMModel(
        cfg.model,
        vocab,
        n_classes,
        key=key,
        d_model=cfg.d_model,
        d_state=cfg.d_state,
        n_layers=cfg.n_layers,
        n_householder=cfg.n_householder,
    )


def _stack_data(
    tasks: Sequence[Any], lengths: Sequence[int], n: int, rng: np.random.Generator, pad: int, T: int
) -> dict[str, np.ndarray]:
    """Samples of every task at every length, padded to ``T``: arrays ``(tasks, len(lengths) * n, T)``."""
    out = {k: [] for k in ("tokens", "targets", "mask", "final")}
    for task in tasks:
        per = {k: [] for k in out}
        for L in lengths:
            b = task.sample(rng, n, int(L))
            padw = ((0, 0), (0, T - b.tokens.shape[1]))
            per["tokens"].append(np.pad(b.tokens, padw, constant_values=pad).astype(np.int32))
            per["targets"].append(np.pad(b.targets, padw).astype(np.int32))
            per["mask"].append(np.pad(b.mask, padw))
            per["final"].append(np.pad(b.final, padw))
        for k in out:
            out[k].append(np.concatenate(per[k]))
    return {k: np.stack(v) for k, v in out.items()}


def _apply(model: Any, tokens: jax.Array, mode: str) -> jax.Array:
    if isinstance(model, SSMModel):
        return jax.vmap(lambda t: model(t, mode=mode))(tokens)
    return jax.vmap(model)(tokens)


def _member_loss(model: Any, batch: dict, key: Any, mode: str = "parallel") -> tuple[jax.Array, dict]:
    """Masked cross-entropy of one member on its batch; aux: accuracy at the scored positions."""
    del key
    logits = _apply(model, batch["tokens"], mode)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits, batch["targets"])
    loss = jnp.sum(ce * batch["mask"]) / jnp.maximum(batch["mask"].sum(), 1)
    hit = (jnp.argmax(logits, -1) == batch["targets"]) & batch["final"]
    return loss, {"acc": hit.sum() / jnp.maximum(batch["final"].sum(), 1)}


def _batches(cfg: ProbeConfig, train: dict, task_of: np.ndarray, seed: int) -> Callable[[int], dict]:
    """``data(step)``: every member's batch, uniform lengths up to the curriculum cap (a pure function of step)."""
    M = cfg.n_train_per_length
    ramp = max(int(cfg.n_steps * cfg.curriculum_frac), 1)
    R = len(task_of)

    def data(step: int) -> dict:
        cur = int(
            np.clip(
                cfg.curriculum_start + (cfg.train_max_len - cfg.curriculum_start) * step // ramp,
                1,
                cfg.train_max_len,
            )
        )
        rng = np.random.default_rng([seed, 7919, step])
        L = rng.integers(1, cur + 1, (R, cfg.batch_size))
        idx = (L - 1) * M + rng.integers(0, M, (R, cfg.batch_size))
        return {k: v[task_of[:, None], idx] for k, v in train.items()}

    return data


def _optimizer(cfg: ProbeConfig) -> optax.GradientTransformation:
    factor = optax.warmup_cosine_decay_schedule(
        0.0, 1.0, max(int(cfg.warmup_frac * cfg.n_steps), 1), cfg.n_steps, end_value=cfg.final_lr_fraction
    )
    return optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.inject_hyperparams(optax.adam)(learning_rate=1e-3),
        optax.scale_by_schedule(factor),
    )


def _accuracy(
    cfg: ProbeConfig, models: Any, runs: list, data: dict, lengths: Sequence[int], n: int, pad: int
) -> list[dict[int, float]]:
    """Per-run accuracy at each length (scored positions of fresh samples of the run's task)."""
    params, static = eqx.partition(models, eqx.is_array)

    @jax.jit
    def predict(p, tok):
        return jnp.argmax(_apply(eqx.combine(p, static), tok, cfg.mode), -1)

    out = []
    for r, (ti, _, _) in enumerate(runs):
        p_r = jax.tree_util.tree_map(lambda a, r=r: a[r], params)
        toks, tgt, fin = data["tokens"][ti], data["targets"][ti], data["final"][ti]
        B, ch = toks.shape[0], min(cfg.eval_chunk, toks.shape[0])
        padn = (-B) % ch
        tk = np.concatenate([toks, np.full((padn, toks.shape[1]), pad, toks.dtype)]) if padn else toks
        pred = np.concatenate(
            [np.asarray(predict(p_r, jnp.asarray(tk[i : i + ch]))) for i in range(0, len(tk), ch)]
        )
        hit = ((pred[:B] == tgt) & fin).reshape(len(lengths), n, -1).sum((1, 2))
        tot = fin.reshape(len(lengths), n, -1).sum((1, 2))
        out.append({int(L): float(c / max(t, 1)) for L, c, t in zip(lengths, hit, tot)})
    return out


def _summarize(
    cfg: ProbeConfig, runs: list, test_acc: list, train_acc: list, history: list
) -> tuple[list, dict]:
    results = []
    for r, (ti, s, lr) in enumerate(runs):
        curve = [{"step": h["step"], "loss": h["member_loss"][r], "acc": h["acc"][r]} for h in history]
        results.append(
            {
                "task": cfg.tasks[ti],
                "seed": s,
                "lr": lr,
                "acc_by_length": test_acc[r],
                "mean_acc": float(np.mean(list(test_acc[r].values()))),
                "train_acc_by_length": train_acc[r],
                "train_acc": float(np.mean(list(train_acc[r].values()))),
                "final_loss": float(np.mean([c["loss"] for c in curve[-3:]])) if curve else float("nan"),
                "curve": curve,
            }
        )
    per_task = {}
    for name in cfg.tasks:
        rs = [x for x in results if x["task"] == name]
        best = max(rs, key=lambda x: (x["mean_acc"], x["train_acc"]))
        learned = max(x["train_acc"] for x in rs)
        per_task[name] = {
            "acc_by_length": best["acc_by_length"],
            "solved": bool(best["mean_acc"] >= cfg.threshold),
            "learned": bool(learned >= cfg.learned_threshold),
            "best_train_acc": float(learned),
            "n_seeds": cfg.n_seeds,
            "best_lr": best["lr"],
            "best_seed": best["seed"],
            "n_runs_solved": int(sum(x["mean_acc"] >= cfg.threshold for x in rs)),
            "n_runs": len(rs),
            "mean_over_runs": float(np.mean([x["mean_acc"] for x in rs])),
        }
    return results, per_task


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def train_runs(
    cfg: ProbeConfig,
    seed: int = 0,
    progress: Callable | None = None,
    *,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
) -> dict[str, Any]:  # Any: the JSON summary (config, runs, per_task, timing)
    """Train every (task, seed, lr) run of ``cfg`` as one stacked ensemble and score it per length.

    ``checkpoint_dir``/``resume``: checkpoints of the ensemble (parameters, optimizer state, history) written by
    :func:`jaxkit.train.fit_ensemble` about ten times per run; a resumed run ends bit-identical to an uninterrupted
    one. Returns ``{"config", "runs": [{"task", "seed", "lr", "acc_by_length", "mean_acc", "train_acc",
    "train_acc_by_length", "final_loss", "curve"}...], "per_task": {task: {"acc_by_length", "solved", "learned",
    "best_train_acc", ...}}, "timing"}``; ``curve`` is the run's training loss and batch accuracy per logged step.
    """
    t0, c0 = time.perf_counter(), _cpu_seconds()
    tasks = [get_task(t) for t in cfg.tasks]
    V, C = max(t.vocab for t in tasks) + 1, max(t.n_classes for t in tasks)  # + a padding token
    pad = V - 1
    rng = np.random.default_rng(seed)
    Ttr = max(t.seq_len(cfg.train_max_len) for t in tasks)
    train = _stack_data(tasks, range(1, cfg.train_max_len + 1), cfg.n_train_per_length, rng, pad, Ttr)
    runs = [(ti, s, lr) for ti in range(len(tasks)) for s in range(cfg.n_seeds) for lr in cfg.lrs]
    init_keys = jnp.stack([jax.random.fold_in(jax.random.key(seed), 1000 * ti + s) for ti, s, _ in runs])
    models = init_ensemble(lambda k: make_model(cfg, V, C, k), init_keys)
    log_every = cfg.log_every or max(cfg.n_steps // 50, 1)
    res = fit_ensemble(
        models,
        _optimizer(cfg),
        functools.partial(_member_loss, mode=cfg.mode),
        _batches(cfg, train, np.array([r[0] for r in runs]), seed),
        n_steps=cfg.n_steps,
        keys=jax.random.split(jax.random.key(seed + 1), len(runs)),
        hyperparams={"learning_rate": [r[2] for r in runs]},
        member_data=True,
        has_aux=True,
        log_every=log_every,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=max(cfg.n_steps // 10, 1) if checkpoint_dir else 0,
        resume=resume,
        progress=f"train {cfg.model}" if progress is not None else False,
    )
    timing = {
        "train_wall": time.perf_counter() - t0,
        "train_cpu": _cpu_seconds() - c0,
        "resumed_from": res.resumed_from,
    }
    Tte = max(t.seq_len(max(cfg.test_lengths)) for t in tasks)
    test = _stack_data(tasks, cfg.test_lengths, cfg.n_test, rng, pad, Tte)
    Tin = max(t.seq_len(max(cfg.train_eval_lengths)) for t in tasks)
    indist = _stack_data(tasks, cfg.train_eval_lengths, cfg.n_test, rng, pad, Tin)
    test_acc = _accuracy(cfg, res.model, runs, test, cfg.test_lengths, cfg.n_test, pad)
    train_acc = _accuracy(cfg, res.model, runs, indist, cfg.train_eval_lengths, cfg.n_test, pad)
    results, per_task = _summarize(cfg, runs, test_acc, train_acc, res.history)
    timing.update(wall=time.perf_counter() - t0, cpu=_cpu_seconds() - c0)
    return {"config": asdict(cfg), "runs": results, "per_task": per_task, "timing": timing}


__all__ = ["MODELS", "ProbeConfig", "make_model", "train_runs"]
