"""Length-generalisation probes: train on lengths <= 40 with a curriculum, test per length on 41..500.

Protocol in the spirit of Deletang et al. (2023): for each task, every (seed, learning rate) pair is trained on
strings of length 1..``train_max_len`` (the longest allowed length grows linearly from ``curriculum_start`` to
``train_max_len`` over the first ``curriculum_frac`` of the steps), then scored on fresh balanced samples at each
test length. A task is **solved** when the best (seed, lr) run reaches a mean accuracy over the test lengths of at
least ``threshold`` (Deletang et al. report the best run; we also keep every run).

All runs of one model class (tasks × seeds × learning rates) are trained together: the models are stacked with
``eqx.filter_vmap`` and one compiled ``lax.scan`` over training steps updates all of them (Adam with per-run
learning rates, global-norm clipping). Tasks share one padded vocabulary and class set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxkit._validate import check_choice, check_int, check_range

from ._languages import get_task
from ._layers import VARIANTS, SSMModel
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
    steps: int = 400
    batch: int = 32
    lrs: tuple[float, ...] = (1e-3, 3e-3)
    seeds: int = 2
    train_max_len: int = 40
    curriculum_start: int = 5
    curriculum_frac: float = 0.5
    n_train_per_length: int = 128
    test_lengths: tuple[int, ...] = (41, 60, 100, 200, 500)
    n_test: int = 64
    threshold: float = 0.9
    eval_chunk: int = 64
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("model", self.model, MODELS)
        check_choice("positional", self.positional, POSITIONAL)
        if not self.tasks:
            raise ValueError("tasks: expected at least one task name, received an empty list")
        for t in self.tasks:
            get_task(t)
        for name in ("steps", "batch", "seeds", "train_max_len", "n_train_per_length", "n_test"):
            check_int(name, getattr(self, name), minimum=1)
        check_range("threshold", self.threshold, 0.0, 1.0)
        check_range("curriculum_frac", self.curriculum_frac, 0.0, 1.0)
        if not self.lrs or any(lr <= 0 for lr in self.lrs):
            raise ValueError(f"lrs: expected positive learning rates, received {self.lrs}")
        if not self.test_lengths or min(self.test_lengths) < 1:
            raise ValueError(f"test_lengths: expected positive lengths, received {self.test_lengths}")


def make_model(cfg: ProbeConfig, vocab: int, n_classes: int, key: Any) -> Any:
    """One model of class ``cfg.model`` (an SSM gate class or the transformer baseline)."""
    if cfg.model == "transformer":
        return CausalTransformer(vocab, n_classes, key=key, d_model=cfg.d_model, n_heads=cfg.n_heads,
                                 n_layers=cfg.n_layers, positional=cfg.positional,
                                 max_len=max(2 * max(cfg.test_lengths) + 2, 64))
    return SSMModel(cfg.model, vocab, n_classes, key=key, d_model=cfg.d_model, d_state=cfg.d_state,
                    n_layers=cfg.n_layers, n_householder=cfg.n_householder)


def _stack_data(tasks: Sequence[Any], lengths: Sequence[int], n: int, rng: np.random.Generator, pad: int,
                T: int) -> dict[str, np.ndarray]:
    """Samples of every task at every length, padded to ``T``: arrays ``(tasks, len(lengths) * n, T)``."""
    out = {k: [] for k in ("tokens", "targets", "mask", "final")}
    for task in tasks:
        per = {k: [] for k in out}
        for L in lengths:
            b = task.sample(rng, n, int(L))
            t_len = b.tokens.shape[1]
            padw = ((0, 0), (0, T - t_len))
            per["tokens"].append(np.pad(b.tokens, padw, constant_values=pad))
            per["targets"].append(np.pad(b.targets, padw))
            per["mask"].append(np.pad(b.mask, padw))
            per["final"].append(np.pad(b.final, padw))
        for k in out:
            out[k].append(np.concatenate(per[k]))
    return {k: np.stack(v) for k, v in out.items()}


def _loss(model: Any, tokens: jax.Array, targets: jax.Array, mask: jax.Array) -> jax.Array:
    logits = jax.vmap(model)(tokens)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits, targets)
    return jnp.sum(ce * mask) / jnp.maximum(mask.sum(), 1)


def train_runs(cfg: ProbeConfig, seed: int = 0, progress: Callable | None = None) -> dict[str, Any]:
    """Train every (task, seed, lr) run of ``cfg`` and score it at each test length.

    Returns ``{"runs": [{"task", "seed", "lr", "acc_by_length", "mean_acc", "final_loss"}...],
    "per_task": {task: {"acc_by_length", "solved", "seeds", "best_lr", "best_seed", "mean_over_runs"}}}``.
    """
    import time

    timing = {}
    t0 = time.perf_counter()
    tasks = [get_task(t) for t in cfg.tasks]
    V = max(t.vocab for t in tasks) + 1  # + a padding token
    C = max(t.n_classes for t in tasks)
    pad = V - 1
    rng = np.random.default_rng(seed)
    Ttr = max(t.seq_len(cfg.train_max_len) for t in tasks)
    train = _stack_data(tasks, range(1, cfg.train_max_len + 1), cfg.n_train_per_length, rng, pad, Ttr)
    runs = [(ti, s, lr) for ti in range(len(tasks)) for s in range(cfg.seeds) for lr in cfg.lrs]
    R = len(runs)
    task_idx = jnp.asarray([r[0] for r in runs])
    lr_arr = jnp.asarray([r[2] for r in runs], jnp.float32)
    keys = jnp.stack([jax.random.fold_in(jax.random.PRNGKey(seed), 1000 * r[0] + r[1]) for r in runs])
    models = eqx.filter_jit(eqx.filter_vmap(lambda k: make_model(cfg, V, C, k)))(keys)
    params, static = eqx.partition(models, eqx.is_inexact_array)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.scale_by_adam())
    opt_state = jax.jit(jax.vmap(opt.init))(params)
    data = {k: jnp.asarray(v) for k, v in train.items()}
    timing["data"] = time.perf_counter() - t0
    M = cfg.n_train_per_length
    ramp = max(int(cfg.steps * cfg.curriculum_frac), 1)

    def run_step(p, o, lr, ti, key, step):
        cur = jnp.clip(cfg.curriculum_start + (cfg.train_max_len - cfg.curriculum_start) * step // ramp,
                       1, cfg.train_max_len)
        k1, k2 = jax.random.split(key)
        L = jax.random.randint(k1, (cfg.batch,), 1, cur + 1)
        j = jax.random.randint(k2, (cfg.batch,), 0, M)
        idx = (L - 1) * M + j
        tok, tgt, msk = data["tokens"][ti, idx], data["targets"][ti, idx], data["mask"][ti, idx]
        loss, g = jax.value_and_grad(lambda q: _loss(eqx.combine(q, static_one), tok, tgt, msk))(p)
        upd, o = opt.update(g, o, p)
        p = jax.tree_util.tree_map(lambda a, u: a - lr * u, p, upd)
        return p, o, loss

    static_one = static

    def chunk(carry, steps):
        def body(c, step):
            p, o, key = c
            key, sub = jax.random.split(key)
            ks = jax.random.split(sub, R)
            p, o, loss = jax.vmap(run_step, in_axes=(0, 0, 0, 0, 0, None))(p, o, lr_arr, task_idx, ks, step)
            return (p, o, key), loss

        return jax.lax.scan(body, carry, steps)

    chunk = jax.jit(chunk)
    n_chunks = min(10, cfg.steps)
    bounds = np.linspace(0, cfg.steps, n_chunks + 1).astype(int)
    carry = (params, opt_state, jax.random.PRNGKey(seed + 1))
    losses = []
    it = range(n_chunks)
    if progress is not None:
        it = progress(it, desc=f"train {cfg.model}", total=n_chunks)
    sizes = np.diff(bounds)
    for c in it:
        steps = jnp.arange(bounds[c], bounds[c + 1])
        if sizes[c] != sizes[0]:  # keep one compiled shape: pad by repeating the last step index
            steps = jnp.concatenate([steps, jnp.full((sizes[0] - sizes[c],), bounds[c + 1] - 1)])
        carry, loss = chunk(carry, steps)
        losses.append(np.asarray(loss))
        key_t = "train_first_chunk" if c == 0 else "train_rest"
        timing[key_t] = timing.get(key_t, 0.0) + (time.perf_counter() - t0 - sum(timing.values()))
    params = carry[0]
    final_loss = np.concatenate(losses)[-max(1, cfg.steps // 20):].mean(0)

    # ---- evaluation at each test length (fresh balanced samples)
    Tte = max(t.seq_len(max(cfg.test_lengths)) for t in tasks)
    test = _stack_data(tasks, cfg.test_lengths, cfg.n_test, rng, pad, Tte)

    @eqx.filter_jit
    def predict(p, tok):
        m = eqx.combine(p, static_one)
        return jnp.argmax(jax.vmap(m)(tok), -1)

    timing["test_data"] = time.perf_counter() - t0 - sum(timing.values())
    n_len = len(cfg.test_lengths)
    results = []
    it2 = range(R)
    if progress is not None:
        it2 = progress(it2, desc=f"eval {cfg.model}", total=R)
    for r in it2:
        ti = runs[r][0]
        p_r = jax.tree_util.tree_map(lambda a, r=r: a[r], params)
        toks, tgt, fin = test["tokens"][ti], test["targets"][ti], test["final"][ti]
        B = toks.shape[0]
        ch = min(cfg.eval_chunk, B)
        padn = (-B) % ch
        tk = np.concatenate([toks, np.full((padn, toks.shape[1]), pad, toks.dtype)]) if padn else toks
        pred = np.concatenate([np.asarray(predict(p_r, jnp.asarray(tk[i:i + ch]))) for i in range(0, len(tk), ch)])
        pred = pred[:B]
        correct = ((pred == tgt) & fin).reshape(n_len, cfg.n_test, -1).sum((1, 2))
        total = fin.reshape(n_len, cfg.n_test, -1).sum((1, 2))
        acc = {int(L): float(c / max(n, 1)) for L, c, n in zip(cfg.test_lengths, correct, total)}
        results.append({"task": cfg.tasks[ti], "seed": runs[r][1], "lr": runs[r][2], "acc_by_length": acc,
                        "mean_acc": float(np.mean(list(acc.values()))), "final_loss": float(final_loss[r])})
    per_task = {}
    for name in cfg.tasks:
        rs = [x for x in results if x["task"] == name]
        best = max(rs, key=lambda x: x["mean_acc"])
        per_task[name] = {"acc_by_length": best["acc_by_length"], "solved": bool(best["mean_acc"] >= cfg.threshold),
                          "seeds": cfg.seeds, "best_lr": best["lr"], "best_seed": best["seed"],
                          "mean_over_runs": float(np.mean([x["mean_acc"] for x in rs]))}
    timing["eval"] = time.perf_counter() - t0 - sum(timing.values())
    return {"config": asdict(cfg), "runs": results, "per_task": per_task, "timing": timing}


__all__ = ["MODELS", "ProbeConfig", "make_model", "train_runs"]
