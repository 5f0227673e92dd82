"""Length-generalization probes: train on lengths <= 40 with a curriculum, test per length beyond.

Protocol in the spirit of Deletang et al. (2023) and Grazzi et al. (2025): every (task, seed, learning rate) run is
trained on strings of length 1..``train_max_len`` (the longest allowed length grows linearly from
``curriculum_start`` to ``train_max_len`` over the first ``curriculum_frac`` of the steps), then scored on fresh
samples at in-distribution lengths (``train_eval_lengths``), at validation lengths (``val_lengths``, beyond the
training lengths and disjoint from the test lengths) and at each test length. Selection reads validation only: for
every seed the learning rate with the best validation accuracy is chosen (:func:`select_runs`), and a task is
**solved** (learned with length generalization) when the chosen runs' test accuracy, averaged over seeds, is at
least ``threshold``; a t-interval over seeds is reported beside it. A task whose in-distribution accuracy stays
below ``learned_threshold`` was **not learned** at this budget (a training failure says nothing about
expressivity).

All runs of one model class are members of one stacked ensemble trained by :func:`jaxkit.train.fit_ensemble`
(one compiled step for all of them; Adam with per-member learning rates through ``optax.inject_hyperparams``,
per-member global-norm clipping, a warmup-cosine learning-rate factor), so a probe checkpoints and resumes like any
``fit`` run. Tasks share one padded vocabulary and class set; every member draws its batches from its own task.
"""

from __future__ import annotations

import functools
import json
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.stats

from jaxkit._typing import ArrayInput, PRNGKey
from jaxkit._validate import check_choice, check_int, check_range, library_errors, seed_rng
from jaxkit.train import fit_ensemble, init_ensemble, load_checkpoint, read_metadata, save_checkpoint

from ._languages import Task, get_task
from ._layers import MODES, VARIANTS, SSMModel
from ._transformer import POSITIONAL, CausalTransformer

MODELS = VARIANTS + ("transformer",)
"""The model names ``ProbeConfig(models=...)`` accepts: the gate classes of :data:`VARIANTS` and
``"transformer"`` (:class:`CausalTransformer`). A tuple of str."""


_PREDICT_CHUNK = 256  # strings per padded batch in TrainedProbe.predict (bounded memory)


@dataclass(frozen=True)
class ProbeConfig:
    """What to train and how to score it (defaults: a small model, a short run).

    ``tasks`` holds task names (see ``TASKS``) or :class:`Task` objects; ``state_norm`` RMS-normalizes each layer's
    state before its readout, ``ring_init`` starts the gates near 1 and ``saturating`` lets them reach 1 exactly,
    ``coupled_input`` scales each write by ``1 - |a|`` (``dense``: by the mean ``β / 2``) and ``conv_width`` adds
    a short causal convolution before the gates, ``step_gate`` gives ``dense`` one shared step size per step (see
    :class:`SSMLayer`; ignored by the other models); ``bos`` prepends a start token to every
    string (not trained on, not scored). The defaults are the recipe of the published ``ssm_expressivity`` runs.
    ``val_lengths`` must be disjoint from ``test_lengths``.
    """

    tasks: tuple[str | Task, ...] = ("parity",)
    model: str = "selective_signed"
    d_model: int = 32
    d_state: int = 16
    n_layers: int = 2
    n_householder: int = 2
    state_norm: bool = True
    ring_init: bool = True
    saturating: bool = True
    coupled_input: bool = True
    conv_width: int = 4
    step_gate: bool = True
    bos: bool = True
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
    val_lengths: tuple[int, ...] = (57, 60)
    test_lengths: tuple[int, ...] = (99, 102, 249, 252)
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
        if isinstance(self.tasks, str | Task) or not self.tasks:
            raise ValueError(
                f"tasks: expected a non-empty tuple of task names or Task objects, received {self.tasks!r}"
            )
        object.__setattr__(self, "tasks", tuple(self.tasks))
        for t in self.tasks:
            get_task(t)
        names = self.task_names
        if len(set(names)) != len(names):
            raise ValueError(f"tasks: expected distinct task names, received {names}")
        for name in ("n_steps", "batch_size", "n_seeds", "train_max_len", "n_train_per_length", "n_test"):
            check_int(name, getattr(self, name), minimum=1)
        for name in (
            "d_model", "d_state", "n_layers", "n_householder", "n_heads", "curriculum_start", "eval_chunk",
        ):  # fmt: skip
            check_int(name, getattr(self, name), minimum=1)
        check_int("conv_width", self.conv_width, minimum=0)
        check_int("log_every", self.log_every, minimum=0)
        for name in ("threshold", "learned_threshold", "curriculum_frac", "warmup_frac", "final_lr_fraction"):
            check_range(name, getattr(self, name), 0.0, 1.0)
        if not self.lrs or any(lr <= 0 for lr in self.lrs):
            raise ValueError(f"lrs: expected positive learning rates, received {self.lrs}")
        for name in ("test_lengths", "train_eval_lengths", "val_lengths"):
            lengths = getattr(self, name)
            if not lengths or min(lengths) < 1:
                raise ValueError(f"{name}: expected positive lengths, received {lengths}")
        if set(self.val_lengths) & set(self.test_lengths):
            raise ValueError(
                f"val_lengths: expected lengths disjoint from test_lengths {self.test_lengths}, received "
                f"{self.val_lengths}"
            )

    @property
    def task_names(self) -> tuple[str, ...]:
        """The task names, in order (a :class:`Task` object contributes its ``name``)."""
        return tuple(t.name if isinstance(t, Task) else t for t in self.tasks)

    def resolved_tasks(self) -> list[Task]:
        """The :class:`Task` objects (names looked up in ``TASKS``)."""
        return [get_task(t) for t in self.tasks]

    def to_dict(self) -> dict:
        """The configuration as JSON-able data (tasks by name)."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["tasks"] = list(self.task_names)
        return json.loads(json.dumps(d))


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
        state_norm=cfg.state_norm,
        ring_init=cfg.ring_init,
        saturating=cfg.saturating,
        coupled_input=cfg.coupled_input,
        conv_width=cfg.conv_width,
        step_gate=cfg.step_gate and cfg.model == "dense",
    )


def _stack_data(
    tasks: Sequence[Any],
    lengths: Sequence[int],
    n: int,
    rng: np.random.Generator,
    pad: int,
    T: int,
    bos: int | None = None,
) -> dict[str, np.ndarray]:
    """Samples of every task at every length, padded to ``T`` (after a leading ``bos`` token when given, which is
    neither trained nor scored): arrays ``(tasks, len(lengths) * n, T + (bos is not None))``."""
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
    out = {k: np.stack(v) for k, v in out.items()}
    if bos is not None:
        out = {
            k: np.concatenate([np.full(v.shape[:2] + (1,), bos if k == "tokens" else 0, v.dtype), v], -1)
            for k, v in out.items()
        }
    return out


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


@eqx.filter_jit
def _predict_eval(model: Any, tok: jax.Array, mode: str, want_logp: bool) -> tuple[jax.Array, ...]:
    """Classes ``(B, T)`` (and, with ``want_logp``, log-probabilities ``(B, T, C)``) of one trained member. One
    module-level function: every evaluation of a probe with the same architecture and shapes reuses one compiled
    program (a closure per call compiled one per call)."""
    logits = _apply(model, tok, mode)
    pred = jnp.argmax(logits, -1)
    return (pred, jax.nn.log_softmax(logits, -1)) if want_logp else (pred,)


@eqx.filter_jit
def _run_params(params: Any, r: jax.Array) -> Any:
    """Run ``r``'s parameters of a stacked ensemble (leading axis: runs): one compiled gather for every leaf
    (an eager ``a[r]`` per leaf dispatches one operation per leaf and run)."""
    return jax.tree_util.tree_map(lambda a: a[r], params)


def _accuracy(
    cfg: ProbeConfig,
    models: Any,
    runs: list,
    data: dict,
    lengths: Sequence[int],
    n: int,
    pad: int,
    losses: list | None = None,
) -> list[dict[int, float]]:
    """Per-run accuracy at each length (scored positions of fresh samples of the run's task); with ``losses`` (a
    list) it also appends each run's mean cross-entropy (nats) over the scored positions of every length."""
    params, static = eqx.partition(models, eqx.is_array)
    want_logp = losses is not None

    def predict(p, tok):
        return _predict_eval(eqx.combine(p, static), tok, cfg.mode, want_logp)

    out = []
    for r, (ti, _, _) in enumerate(runs):
        p_r = _run_params(params, jnp.asarray(r))
        toks, tgt, fin = data["tokens"][ti], data["targets"][ti], data["final"][ti]
        B, ch = toks.shape[0], min(cfg.eval_chunk, toks.shape[0])
        padn = (-B) % ch
        tk = np.concatenate([toks, np.full((padn, toks.shape[1]), pad, toks.dtype)]) if padn else toks
        chunks = [predict(p_r, jnp.asarray(tk[i : i + ch])) for i in range(0, len(tk), ch)]
        pred = np.concatenate([np.asarray(c[0]) for c in chunks])
        hit = ((pred[:B] == tgt) & fin).reshape(len(lengths), n, -1).sum((1, 2))
        tot = fin.reshape(len(lengths), n, -1).sum((1, 2))
        if losses is not None:
            logp = np.concatenate([np.asarray(c[1]) for c in chunks])[:B]
            nll = -np.take_along_axis(logp, np.clip(tgt, 0, logp.shape[-1] - 1)[..., None], -1)[..., 0]
            losses.append(float(nll[fin].mean()) if fin.any() else float("nan"))
        out.append({int(L): float(c / max(t, 1)) for L, c, t in zip(lengths, hit, tot)})
    return out


def select_runs(runs: Sequence[Mapping[str, object]]) -> dict[int, int]:
    """For each seed, the index (into ``runs``) of the run chosen on validation.

    Every run is a dict with ``"seed"``, ``"val_acc"`` (mean validation accuracy), ``"train_acc"``
    (in-distribution) and optionally ``"val_loss"`` (mean validation cross-entropy); the chosen run of a seed
    maximizes ``(val_acc, train_acc, -val_loss)`` (a missing ``val_loss`` counts as 0), the first such run on a
    tie. No other key is read, so a test accuracy cannot leak into the choice.
    """

    def key(r: dict) -> tuple[float, float, float]:
        return float(r["val_acc"]), float(r["train_acc"]), -float(r.get("val_loss", 0.0))

    chosen: dict[int, int] = {}
    for i, r in enumerate(runs):
        missing = [k for k in ("seed", "val_acc", "train_acc") if k not in r]
        if missing:
            raise ValueError(f"runs: run {i} has no {missing} (expected keys 'seed', 'val_acc', 'train_acc')")
        s = int(r["seed"])
        j = chosen.get(s)
        if j is None or key(r) > key(runs[j]):
            chosen[s] = i
    return dict(sorted(chosen.items()))


def seed_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Student-t interval for the mean of per-seed values (``scipy.stats.t``), clipped to [0, 1]. It needs at least
    two values: with one seed no interval is available, and ``ValueError`` says so (it used to return
    ``[x, x]``, a zero-width interval that looks like certainty)."""
    check_range("confidence", confidence, 0.0, 1.0, closed=False)
    v = np.asarray(values, float)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(
            f"values: expected a non-empty 1-D sequence of finite per-seed values, received {values!r}"
        )
    if v.size < 2:
        raise ValueError(
            f"values: a confidence interval over seeds needs at least 2 per-seed values, received {v.size} "
            "(not available from one seed)"
        )
    m = float(v.mean())
    if float(v.std(ddof=1)) == 0.0:
        return m, m
    lo, hi = scipy.stats.t.interval(confidence, v.size - 1, loc=m, scale=scipy.stats.sem(v))
    return float(max(lo, 0.0)), float(min(hi, 1.0))


def _summarize(
    cfg: ProbeConfig,
    runs: list,
    test_acc: list,
    val_acc: list,
    train_acc: list,
    history: list,
    val_loss: list | None = None,
) -> tuple[list, dict]:
    results = []
    names = cfg.task_names
    for r, (ti, s, lr) in enumerate(runs):
        curve = [{"step": h["step"], "loss": h["member_loss"][r], "acc": h["acc"][r]} for h in history]
        results.append(
            {
                "task": names[ti],
                "seed": s,
                "lr": lr,
                "acc_by_length": test_acc[r],
                "mean_acc": float(np.mean(list(test_acc[r].values()))),
                "val_acc_by_length": val_acc[r],
                "val_acc": float(np.mean(list(val_acc[r].values()))),
                "val_loss": float(val_loss[r]) if val_loss is not None else float("nan"),
                "train_acc_by_length": train_acc[r],
                "train_acc": float(np.mean(list(train_acc[r].values()))),
                "final_loss": float(np.mean([c["loss"] for c in curve[-3:]])) if curve else float("nan"),
                "curve": curve,
            }
        )
    per_task = {}
    for name in names:
        idx = [i for i, x in enumerate(results) if x["task"] == name]
        sub = [{k: results[i][k] for k in ("seed", "val_acc", "train_acc", "val_loss")} for i in idx]
        chosen = [idx[j] for j in select_runs(sub).values()]
        test = [results[i]["mean_acc"] for i in chosen]
        train = [results[i]["train_acc"] for i in chosen]
        best = max(
            chosen, key=lambda i: (results[i]["val_acc"], results[i]["train_acc"], -results[i]["val_loss"])
        )
        lengths = list(results[chosen[0]]["acc_by_length"])
        per_task[name] = {
            "chosen_runs": chosen,
            "best_run": best,
            "chosen_lrs": [results[i]["lr"] for i in chosen],
            "test_acc": float(np.mean(test)),
            "test_ci": list(seed_interval(test)) if len(test) > 1 else None,  # None: one seed, not available
            "test_acc_per_seed": test,
            "val_acc": float(np.mean([results[i]["val_acc"] for i in chosen])),
            "train_acc": float(np.mean(train)),
            "acc_by_length": {
                L: float(np.mean([results[i]["acc_by_length"][L] for i in chosen])) for L in lengths
            },
            "solved": bool(np.mean(test) >= cfg.threshold),
            "learned": bool(np.mean(train) >= cfg.learned_threshold),
            "n_seeds": cfg.n_seeds,
            "n_seeds_solved": int(sum(t >= cfg.threshold for t in test)),
            "n_runs": len(idx),
        }
    return results, per_task


class TrainedProbe:
    """One trained probe model with its task and configuration: predicts on new strings, saves and loads.

    ``model`` maps ``(T,)`` token ids (the task's alphabet, then a start id when ``config.bos``, then a padding id)
    to ``(T, n_classes)`` logits; :meth:`logits` and :meth:`predict` add the start token themselves.
    """

    def __init__(
        self, model: SSMModel | CausalTransformer, task: Task, config: ProbeConfig, vocab: int, n_classes: int
    ):
        check_int("vocab", vocab, minimum=1)
        check_int("n_classes", n_classes, minimum=1)
        self.model, self.task, self.config = model, task, config
        self.vocab, self.n_classes = int(vocab), int(n_classes)

    def logits(self, tokens: ArrayInput) -> jax.Array:
        """Logits ``(T, C)`` for one token sequence ``(T,)`` or ``(B, T, C)`` for a batch ``(B, T)`` of the task's
        token ids (the start token, when the probe uses one, is prepended here and its output dropped)."""
        tokens = jnp.asarray(tokens)
        single = tokens.ndim == 1
        tokens = tokens[None] if single else tokens
        if self.config.bos:
            tokens = jnp.concatenate(
                [jnp.full((tokens.shape[0], 1), self.vocab - 2, tokens.dtype), tokens], 1
            )
        out = _apply(self.model, tokens, self.config.mode)[:, int(self.config.bos) :]
        return out[0] if single else out

    def predict(self, strings: Sequence[str | Sequence[str]]) -> np.ndarray:
        """The predicted class at the last position of each string (for a recognition task: 1 = member).

        ``strings`` are strings over the task alphabet (or symbol lists); they may differ in length.
        """
        if isinstance(strings, str):
            raise TypeError("strings: expected a sequence of strings, received one str; wrap it in a list")
        enc = [np.asarray(self.task.encode(s)) for s in strings]
        if any(e.size == 0 for e in enc):
            raise ValueError("strings: expected non-empty strings, received an empty one")
        if not enc:
            return np.zeros((0,), np.int64)
        # one padded batch per chunk: the models are causal, so padding after a string's last token leaves the
        # logits at that token unchanged; lengths round up to a power of two so repeated calls reuse compilations
        longest = max(e.size for e in enc)
        width = max(16, 1 << (longest - 1).bit_length())
        if getattr(self.model, "positional", None) == "learned":  # learned positions end at max_len
            width = max(longest, min(width, self.model.max_len - int(self.config.bos)))
        out = []
        for i in range(0, len(enc), _PREDICT_CHUNK):
            chunk = enc[i : i + _PREDICT_CHUNK]
            toks = np.full((len(chunk), width), self.vocab - 1, np.int32)
            for j, e in enumerate(chunk):
                toks[j, : e.size] = e
            logits = np.asarray(self.logits(toks))
            out += [int(np.argmax(logits[j, e.size - 1])) for j, e in enumerate(chunk)]
        return np.array(out, np.int64)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the model and its configuration to the checkpoint folder ``path`` (``jaxkit.train`` format).

        The configuration must describe the model (``ValueError`` otherwise: the file would not load back). An
        existing ``path`` is replaced only with ``overwrite=True`` and only if it holds a saved TrainedProbe
        (``FileExistsError`` otherwise); the replacement is atomic (the old one or the new one, never neither)."""
        meta = {
            "format": "jaxkit.ssm.TrainedProbe/1",
            "config": self.config.to_dict(),
            "task": self.task.name,
            "vocab": self.vocab,
            "n_classes": self.n_classes,
        }
        like = eqx.filter(
            make_model(self.config, self.vocab, self.n_classes, jax.random.key(0)), eqx.is_array
        )
        try:
            return save_checkpoint(
                path, eqx.filter(self.model, eqx.is_array), meta, overwrite=overwrite, like=like
            )
        except ValueError as e:
            if str(e).startswith("tree:") and "NaN/inf" in str(e):
                raise ValueError(f"model: {str(e)[6:].strip()}") from None
            if str(e).startswith("tree:"):
                raise ValueError(
                    f"config: does not describe the probe's model ({str(e)[6:].strip()})"
                ) from None
            raise

    @classmethod
    def load(cls, path: str | Path, task: Task | None = None) -> TrainedProbe:
        """Read a probe written by :meth:`save`; ``task``: the :class:`Task` when its name is not registered."""
        meta = read_metadata(path)
        if meta.get("format") != "jaxkit.ssm.TrainedProbe/1":
            raise ValueError(
                f"path: {path} is not a saved TrainedProbe (metadata format {meta.get('format')!r})"
            )
        c = dict(meta["config"])
        c.setdefault("step_gate", False)  # probes saved before the field existed have no shared step size
        for k, v in c.items():
            if isinstance(v, list):
                c[k] = tuple(v)
        if task is not None:
            if task.name != meta["task"]:
                raise ValueError(
                    f"task: the probe was trained on {meta['task']!r}, received task {task.name!r}"
                )
            c["tasks"] = tuple(task if n == task.name else n for n in c["tasks"])
        cfg = ProbeConfig(**c)
        like = make_model(cfg, meta["vocab"], meta["n_classes"], jax.random.key(0))
        params, static = eqx.partition(like, eqx.is_array)
        params, _ = load_checkpoint(path, params)
        return cls(
            eqx.combine(params, static), get_task(task or meta["task"]), cfg, meta["vocab"], meta["n_classes"]
        )


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


@library_errors
def train_runs(
    cfg: ProbeConfig,
    seed: int = 0,
    progress: Callable[..., object] | None = None,
    *,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    return_models: bool = False,
) -> dict[str, Any]:  # Any: the JSON summary (config, runs, per_task, timing)
    """Train every (task, seed, lr) run of ``cfg`` as one stacked ensemble and score it per length.

    ``checkpoint_dir``/``resume``: checkpoints of the ensemble (parameters, optimizer state, history) written by
    :func:`jaxkit.train.fit_ensemble` about ten times per run; a resumed run ends bit-identical to an uninterrupted
    one. Returns ``{"config", "runs": [{"task", "seed", "lr", "acc_by_length", "mean_acc", "val_acc_by_length",
    "val_acc", "train_acc", "train_acc_by_length", "final_loss", "curve"}...], "per_task": {task: {"chosen_runs",
    "best_run", "test_acc", "test_ci", "test_acc_per_seed", "val_acc", "train_acc", "acc_by_length", "solved",
    "learned", ...}}, "timing"}``: ``acc_by_length``/``mean_acc`` are test accuracies, ``curve`` the run's training
    loss and batch accuracy per logged step; per task the runs are chosen on validation only (:func:`select_runs`).
    With ``return_models=True`` the result also holds ``"models"``: one :class:`TrainedProbe` per run (same order
    as ``"runs"``; ``per_task[name]["best_run"]`` indexes the validation-best one).
    """
    t0, c0 = time.perf_counter(), _cpu_seconds()
    tasks = cfg.resolved_tasks()
    # + a padding token (the last id) and, with cfg.bos, a start token before it
    V, C = max(t.vocab for t in tasks) + 1 + int(cfg.bos), max(t.n_classes for t in tasks)
    pad = V - 1
    bos = V - 2 if cfg.bos else None
    rng = seed_rng(seed)
    Ttr = max(t.seq_len(cfg.train_max_len) for t in tasks)
    train = _stack_data(tasks, range(1, cfg.train_max_len + 1), cfg.n_train_per_length, rng, pad, Ttr, bos)
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
        checkpoint_every=max(cfg.n_steps // 10, 2) if checkpoint_dir else 0,  # and at the last step
        resume=resume,
        progress=f"train {cfg.model}" if progress is not None else False,
    )
    timing = {
        "train_wall": time.perf_counter() - t0,
        "train_cpu": _cpu_seconds() - c0,
        "resumed_from": res.resumed_from,
    }
    Tte = max(t.seq_len(max(cfg.test_lengths)) for t in tasks)
    test = _stack_data(tasks, cfg.test_lengths, cfg.n_test, rng, pad, Tte, bos)
    Tin = max(t.seq_len(max(cfg.train_eval_lengths)) for t in tasks)
    indist = _stack_data(tasks, cfg.train_eval_lengths, cfg.n_test, rng, pad, Tin, bos)
    Tval = max(t.seq_len(max(cfg.val_lengths)) for t in tasks)
    val = _stack_data(tasks, cfg.val_lengths, cfg.n_test, rng, pad, Tval, bos)
    test_acc = _accuracy(cfg, res.model, runs, test, cfg.test_lengths, cfg.n_test, pad)
    train_acc = _accuracy(cfg, res.model, runs, indist, cfg.train_eval_lengths, cfg.n_test, pad)
    val_loss: list[float] = []
    val_acc = _accuracy(cfg, res.model, runs, val, cfg.val_lengths, cfg.n_test, pad, val_loss)
    results, per_task = _summarize(cfg, runs, test_acc, val_acc, train_acc, res.history, val_loss)
    timing.update(wall=time.perf_counter() - t0, cpu=_cpu_seconds() - c0)
    out = {"config": cfg.to_dict(), "runs": results, "per_task": per_task, "timing": timing}
    if return_models:
        params, static = eqx.partition(res.model, eqx.is_array)
        out["models"] = [
            TrainedProbe(
                eqx.combine(_run_params(params, jnp.asarray(r)), static),
                tasks[ti],
                cfg,
                V,
                C,
            )
            for r, (ti, _, _) in enumerate(runs)
        ]
    return out


__all__ = [
    "MODELS",
    "ProbeConfig",
    "TrainedProbe",
    "make_model",
    "seed_interval",
    "select_runs",
    "train_runs",
]
