"""Method comparison: train baseline / regularizer / Grokfast on a stack of seeds, and time-to-target statistics.

The experiments (`grokking`, `sparse_parity`, `next_token`, `stability_sweep`) are configuration plus calls to
this module:

* :class:`MethodSpec` names a method: its regularizer strength ``gamma`` and correlation ``rho`` (the paper's
  agreement regularizer, or the Gaussian-embedding alternative) and an optional Grokfast-EMA ``(α, λ)``.
* :func:`method_optimizer` is AdamW (shared learning rate, betas and weight decay), preceded by Grokfast-EMA.
* :func:`stacked_batches` draws per-seed minibatches (or the full batch) as a pure function of ``(seed, step)``.
* :func:`train_method` trains ``S`` stacked models with :func:`jaxkit.train.fit_ensemble` (checkpoints,
  ``--resume``).
* :func:`stacked_eval` evaluates every stacked model (accuracy, loss, and the paper's agreement
  $E\\sum_i M(X)_i M(Y)_i$ under token resampling) in one compiled call.
* :func:`speedup_ci` / :func:`compare_speed` / :func:`compare_steps`: steps to a target per seed and the
  headline speedup under the evaluation protocol (:mod:`jaxkit.evaluation`). Seed ``s`` of every method shares
  the initialization, the data split and the batch order, so comparisons are paired per seed: the median paired
  speedup $100\\,(1 - m_s / b_s)$ with a bootstrap CI and the Wilcoxon test when every seed reaches the target;
  otherwise seeds that never reach it are censored (not counted as the run length) and the headline is the
  restricted-mean speedup with the log-rank test, beside the fraction that reached the target (Wilson CI).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxkit._typing import ArrayInput

from .._validate import check_int, check_range, check_size
from ..evaluation import survival, time_to_event
from ..train import ensemble_size, fit_ensemble
from ._checks import check_gamma, check_rho
from ._grokfast import grokfast_ema
from ._regularizer import (
    Method,
    _cross_entropy,
    make_loss_fn,
    make_member_loss_fn,
    model_logits,
    token_agreement,
)
from ._seeds import steps_to_target


class _MethodSpecFields(NamedTuple):
    name: str
    gamma: float = 0.0
    rho: float = 0.0
    grokfast: tuple[float, float] | None = None
    regularizer: Method = "agreement"
    detach_clean: bool = False


class MethodSpec(_MethodSpecFields):
    """One training method. ``gamma = 0`` and ``grokfast = None`` is the baseline.

    ``gamma`` is checked to be a finite strength ``>= 0`` and ``rho`` a correlation in ``[-1, 1]`` (a
    ``ValueError``/``TypeError`` naming the field)."""

    __slots__ = ()

    def __new__(
        cls,
        name: str,
        gamma: float = 0.0,
        rho: float = 0.0,
        grokfast: tuple[float, float] | None = None,
        regularizer: Method = "agreement",
        detach_clean: bool = False,
    ) -> MethodSpec:
        check_gamma(gamma)
        check_rho(rho)
        return super().__new__(cls, name, gamma, rho, grokfast, regularizer, detach_clean)


def standard_methods(
    gamma: float, rho: float, *, grokfast: tuple[float, float] = (0.98, 2.0)
) -> tuple[MethodSpec, ...]:
    """``baseline``, ``regularizer`` (agreement, ``(γ, ρ)``) and ``grokfast`` (EMA ``α``, ``λ``; published 0.98, 2)."""
    check_gamma(gamma)
    check_rho(rho)
    return (
        MethodSpec("baseline"),
        MethodSpec("regularizer", gamma=gamma, rho=rho),
        MethodSpec("grokfast", grokfast=grokfast),
    )


def method_optimizer(
    spec: MethodSpec, *, lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.98)
) -> optax.GradientTransformation:
    """AdamW with decoupled weight decay; Grokfast-EMA (if ``spec.grokfast``) acts on the gradients before it."""
    check_range("lr", lr, 0.0, np.inf, closed=False)
    check_range("weight_decay", weight_decay, 0.0, np.inf)
    adamw = optax.adamw(lr, b1=betas[0], b2=betas[1], weight_decay=weight_decay)
    if spec.grokfast is None:
        return adamw
    return optax.chain(grokfast_ema(*spec.grokfast), adamw)


class StackedBatches:
    """``batch(step)``: per-seed minibatches ``(S, B, ...)`` without replacement within a step, a pure function of
    ``(seed, step)`` (so a resumed run sees the same batches); ``batch_size=None`` is the full batch."""

    def __init__(self, xs: ArrayInput, ys: ArrayInput, batch_size: int | None, seed: int, extra: tuple = ()):
        check_int("seed", seed, minimum=0)
        self.xs, self.ys, self.batch_size, self.seed, self.extra = (
            np.asarray(xs),
            np.asarray(ys),
            batch_size,
            seed,
            extra,
        )
        for name, a in (("xs", self.xs), ("ys", self.ys)):
            if a.ndim < 2:
                raise ValueError(f"{name}: expected shape (S, N, ...) (seeds, examples), received {a.shape}")
        if self.xs.shape[:2] != self.ys.shape[:2]:
            raise ValueError(
                f"ys: expected leading shape {self.xs.shape[:2]} (seeds, examples) matching xs {self.xs.shape}, "
                f"received {self.ys.shape}"
            )
        n = self.xs.shape[1]
        if batch_size is not None:
            check_int("batch_size", batch_size, minimum=1)
            if batch_size > n:
                raise ValueError(
                    f"batch_size: expected at most the {n} training examples per seed, received {batch_size}"
                )
        self._full = (jnp.asarray(self.xs), jnp.asarray(self.ys), *extra)

    def __call__(self, step: int):
        if self.batch_size is None:
            return self._full
        rng = np.random.default_rng([self.seed, step])
        s, n = self.xs.shape[:2]
        idx = np.argsort(rng.random((s, n)), axis=1)[:, : self.batch_size]
        take = lambda a: np.take_along_axis(a, idx.reshape(idx.shape + (1,) * (a.ndim - 2)), axis=1)
        return (take(self.xs), take(self.ys), *self.extra)


def stacked_batches(
    xs: ArrayInput, ys: ArrayInput, batch_size: int | None, seed: int, extra: tuple[object, ...] = ()
) -> StackedBatches:
    """Per-seed data ``xs`` ``(S, N, ...)``, ``ys`` ``(S, N, ...)`` (the same ``S, N``, else ``ValueError``) ->
    ``data(step)`` for :func:`jaxkit.train.fit`; ``extra`` arrays (e.g. per-seed ``γ``, ``ρ`` for
    :func:`jaxkit.stability.make_member_loss_fn`) are appended."""
    return StackedBatches(xs, ys, batch_size, seed, extra)


def stacked_eval(
    val_x: ArrayInput,
    val_y: ArrayInput,
    *,
    positions: ArrayInput | None = -1,
    agreement: tuple[float, int, ArrayInput | None, int | None] | None = None,
    key: jax.Array | None = None,
    train: tuple[ArrayInput, ArrayInput] | None = None,
) -> Callable[[object], dict[str, jax.Array]]:
    """``eval(models) -> {"val_acc", "val_loss", ["train_acc"], ["agreement"]}`` (one array entry per seed).

    ``val_x`` ``(S, N, T)`` and ``val_y`` per seed (``(S, N)`` for ``positions=-1``, ``(S, N, T)`` for all);
    ``agreement = (rho, vocab_size, noise_mask, n)`` adds the paper's $E\\sum_i M(X)_i M(Y)_i$ on the first ``n``
    validation inputs (all if ``None``; fixed noise ``key``). ``train = (x, y)`` adds the training accuracy.
    """
    vx, vy = jnp.asarray(val_x), jnp.asarray(val_y)
    tr = None if train is None else (jnp.asarray(train[0]), jnp.asarray(train[1]))
    keys = jax.random.split(jax.random.key(0) if key is None else key, vx.shape[0])

    def one(model, x, y, k, t):
        logits = model_logits(model, x, positions)
        out = {"val_acc": jnp.mean(jnp.argmax(logits, -1) == y), "val_loss": _cross_entropy(logits, y)}
        if t is not None:
            out["train_acc"] = jnp.mean(jnp.argmax(model_logits(model, t[0], positions), -1) == t[1])
        if agreement is not None:
            rho, vocab, mask, n = agreement
            out["agreement"] = token_agreement(
                model, x[:n], k, rho=rho, vocab_size=vocab, positions=positions, noise_mask=mask
            )
        return out

    run = eqx.filter_jit(eqx.filter_vmap(one))
    return lambda models: run(models, vx, vy, keys, tr)


def train_method(
    models: object,
    spec: MethodSpec,
    data: Callable[[int], object],
    *,
    n_seeds: int,
    n_steps: int,
    lr: float,
    weight_decay: float,
    betas: tuple[float, float] = (0.9, 0.98),
    vocab_size: int | None = None,
    positions: ArrayInput | None = -1,
    noise_mask: ArrayInput | None = None,
    per_member: bool = False,
    eval_fn: Callable[..., object] | None = None,
    eval_every: int = 100,
    key: jax.Array,
    checkpoint_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool | str = False,
    return_model: bool = False,
) -> dict[str, object]:
    """Train ``n_seeds`` stacked models with ``spec`` for ``n_steps`` (:func:`jaxkit.train.fit_ensemble`,
    checkpointed every ``max(eval_every, n_steps // 8)`` steps, ``resume=True`` continues a killed run).

    ``data(step)`` returns per-seed batches (every leaf carries the seed axis first, :func:`stacked_batches`).
    Seed $s$ draws its noise from ``fold_in(split(key, n_seeds)[s], step)``, so it trains exactly as
    ``fit(seed_s, method_optimizer(spec, ...), make_loss_fn(...), data_s, key=split(key, n_seeds)[s])`` would
    alone (up to floating-point reassociation). ``per_member=True``: the batches carry per-seed ``(γ, ρ)``
    (sweeps; :func:`make_member_loss_fn`) and ``spec.gamma``/``spec.rho`` are ignored. Returns
    ``{"history", "wall_time_s", "cpu_time_s"}`` with the evaluated records only (per-seed lists under each
    metric, ``member_loss`` and the loss's ``task``/``penalty``); with ``return_model=True`` also the trained
    stack under ``"model"``.
    """
    check_int("n_seeds", n_seeds, minimum=1)
    if ensemble_size(models, name="models") != n_seeds:
        raise ValueError(
            f"n_seeds: expected the stack's member count {ensemble_size(models)}, received {n_seeds}"
        )
    kw = dict(
        vocab_size=vocab_size,
        positions=positions,
        noise_mask=noise_mask,
        method=spec.regularizer,
        detach_clean=spec.detach_clean,
    )
    inner = make_member_loss_fn(**kw) if per_member else make_loss_fn(gamma=spec.gamma, rho=spec.rho, **kw)
    cpu0 = time.process_time()
    res = fit_ensemble(
        models,
        method_optimizer(spec, lr=lr, weight_decay=weight_decay, betas=betas),
        inner,
        data,
        n_steps=n_steps,
        keys=jax.random.split(key, n_seeds),
        member_data=True,
        has_aux=True,
        eval_fn=eval_fn,
        eval_every=eval_every,
        log_every=eval_every,
        checkpoint_dir=checkpoint_dir,
        checkpoint_every=max(eval_every, n_steps // 8) if checkpoint_dir is not None else 0,
        resume=resume,
        progress=progress,
    )
    hist = [r for r in res.history if "val_acc" in r or "val_loss" in r]
    out = {"history": hist, "wall_time_s": res.wall_time, "cpu_time_s": time.process_time() - cpu0}
    return out | ({"model": res.model} if return_model else {})


def speedup_ci(
    base_steps: Sequence[int | None],
    steps: Sequence[int | None],
    censor: int,
    *,
    n_boot: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, object]:
    """The protocol's headline speedup of ``steps`` against ``base_steps`` (paired per seed; ``None`` = the seed
    never reached the target within ``censor`` steps, a censored run).

    When every seed of both methods reaches the target the headline is the median over seeds of the paired
    speedup $100(1 - m_s/b_s)$ with its percentile-bootstrap CI and the Wilcoxon signed-rank p-value of the step
    differences; otherwise it is the restricted-mean speedup $100(1 - \\mathrm{RMST}_m/\\mathrm{RMST}_b)$ up to
    ``censor`` with a paired bootstrap CI and the log-rank p-value (:func:`jaxkit.evaluation.time_to_event`,
    whose full output is under ``"comparison"``). Returns ``{"headline", "speedup_pct", "ci_low", "ci_high",
    "excludes_zero", "p_value", "test", "comparison"}``.
    """
    check_int("n_boot", n_boot, minimum=100)
    check_int("censor", censor, minimum=1)
    if len(base_steps) != len(steps) or len(steps) < 2:
        raise ValueError(
            f"base_steps, steps: expected paired per-seed lists of equal length >= 2, received {len(base_steps)} "
            f"and {len(steps)}"
        )
    # the bootstrap draws all n_boot resamples of the 2n paired values at once (a float64 and an index each)
    check_size(
        "n_boot",
        16 * n_boot * 2 * len(steps),
        hint=f"lower n_boot ({n_boot} resamples of {2 * len(steps)} values)",
    )
    res = time_to_event(base_steps, steps, censor, level=level, n_resamples=n_boot, seed=seed)
    if res["headline"] == "paired":
        pc = res["paired"]
        head = (pc["median"], pc["ci_low"], pc["ci_high"], pc["wilcoxon_p"], "Wilcoxon")
    else:
        rs = res["rmst_speedup"]
        head = (rs["value"], rs["ci_low"], rs["ci_high"], res["logrank_p"], "log-rank")
    return {
        "headline": res["headline"],
        "speedup_pct": float(head[0]),
        "ci_low": float(head[1]),
        "ci_high": float(head[2]),
        "excludes_zero": bool(head[1] > 0 or head[2] < 0),
        "p_value": head[3],
        "test": head[4],
        "comparison": res,
    }


def compare_speed(
    runs: dict[str, dict[str, object]],
    metric: str,
    target: float,
    n_steps: int,
    *,
    mode: str = "max",
    baseline: str = "baseline",
    n_boot: int = 10_000,
) -> dict[str, dict[str, object]]:
    """Per method: steps-to-target statistics (:func:`median_spread` fields, the reached fraction's Wilson CI
    ``reached_ci``) and, against ``baseline``, the protocol's headline speedup (:func:`speedup_ci`); seed ``s`` of
    each method pairs with seed ``s`` of the baseline."""
    if baseline not in runs:
        raise ValueError(f"runs: expected a {baseline!r} entry, received methods {sorted(runs)}")
    check_int("n_steps", n_steps, minimum=1)
    per = {m: steps_to_target(r["history"], metric, target, mode=mode) for m, r in runs.items()}
    return compare_steps(per, n_steps, baseline=baseline, n_boot=n_boot)


def compare_steps(
    per_seed: dict[str, Sequence[int | None]],
    n_steps: int,
    *,
    baseline: str = "baseline",
    n_boot: int = 10_000,
) -> dict[str, dict[str, object]]:
    """:func:`compare_speed` from per-seed steps to the target (``None`` = not reached within ``n_steps``), e.g.
    the ``per_seed`` lists stored in a run's ``metrics.json``."""
    from ._seeds import median_spread

    if baseline not in per_seed:
        raise ValueError(f"per_seed: expected a {baseline!r} entry, received methods {sorted(per_seed)}")
    check_int("n_steps", n_steps, minimum=1)
    n_base = len(per_seed[baseline])
    for m, st in per_seed.items():
        if len(st) != n_base or (len(per_seed) > 1 and len(st) < 2):  # compared pairwise with the baseline
            raise ValueError(
                f"per_seed: expected paired per-seed lists of equal length >= 2 (one entry per seed), received "
                f"{len(st)} for {m!r} and {n_base} for {baseline!r}"
            )
    out = {}
    for m, st in per_seed.items():
        row = median_spread(st, n_steps)
        surv = survival(st, n_steps)
        row["reached_ci"] = [surv["reached"]["ci_low"], surv["reached"]["ci_high"]]
        row["km_median"] = surv["km_median"]
        row["rmst"] = surv["rmst"]
        if m != baseline:
            row |= speedup_ci(per_seed[baseline], st, n_steps, n_boot=n_boot)
        out[m] = row
    return out


def split_members(
    history: Sequence[dict[str, object]], groups: dict[str, Sequence[int]]
) -> dict[str, dict[str, object]]:
    """Split the history of ONE stacked run (per-member lists) into one pseudo-run per group of member indices,
    e.g. the cells of a sweep: ``{name: {"history": [...]}}`` with the selected columns, in the given order."""
    out = {}
    for name, cols in groups.items():
        cols = list(cols)
        rows = []
        for r in history:
            row = {}
            for k, v in r.items():
                row[k] = [v[c] for c in cols] if isinstance(v, list) and len(v) > max(cols) else v
            rows.append(row)
        out[name] = {"history": rows}
    return out


def _p(p: float | None) -> str:
    return "—" if p is None else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def speed_table(stats: dict[str, dict[str, object]], *, baseline: str = "baseline") -> str:
    """Markdown table of :func:`compare_speed` output: per method the seeds that reached the target (Wilson 95%
    CI), the Kaplan–Meier median steps, and the headline speedup against the baseline with its test."""
    rows = [
        "| method | reached [95% CI] | median steps (Kaplan–Meier) | speedup vs baseline [95% CI] | headline | p |",
        "|---|---|---|---|---|---|",
    ]
    for m, s in stats.items():
        lo, hi = s["reached_ci"]
        reached = f"{s['reached']}/{s['n_seeds']} [{lo:.2f}, {hi:.2f}]"
        if m == baseline:
            rows.append(f"| {m} | {reached} | {_km_median(s)} | — | — | — |")
            continue
        km = _km_median(s)
        kind = "median paired" if s["headline"] == "paired" else "restricted mean"
        sp = f"{s['speedup_pct']:+.1f}% [{s['ci_low']:+.1f}, {s['ci_high']:+.1f}]"
        rows.append(f"| {m} | {reached} | {km} | {sp} | {kind} | {s['test']} {_p(s['p_value'])} |")
    return "\n".join(rows) + "\n"


def _km_median(row: dict) -> str:
    if row["km_median"] is None:
        return f"> {row['max']:.0f} (not reached by half)"
    return f"{row['km_median']:.0f}"
