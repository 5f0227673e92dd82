"""Hand-set SSM weights that recognise given languages exactly (expressivity by construction, not by training).

Every construction is an ordinary :class:`~jaxkit.ssm._layers.SSMModel` (same code path as the trained models):
one-hot embeddings in the first ``|Σ|`` channels of the residual stream, gates saturated to their exact extreme
values (``σ(±50)``, ``tanh(±30)`` round to 0/1/±1 in float32 and float64), ReLU readouts that write binary flags
into spare channels, and a linear head whose class-1 logit is positive exactly on members.

============  ============================================================  =====================================
language      mechanism                                                     variants
============  ============================================================  =====================================
parity        ``p_t = (1 - 2x_t) p_{t-1} + x_t`` (a sign flip)              signed, complex, dense
count_mod{m}  ``h_t = ω^{c_t} - 1`` via ``a = ω^{x}``, ``b = ω^{x} - 1``      complex; dense (2 reflections = rotation)
position_mod  the same with a constant ``a = ω`` (t counts itself)          time_invariant (and every complex one)
flip_flop     reset gate ``a = 0`` on writes, ``b`` = written bit          nonneg, signed, complex, dense
no_bb         layer 1: ``a = 1/4`` decaying memory flags ``bb``;            nonneg, signed, complex, dense (latch);
              layer 2: a set-reset latch (``a = 1 - f``, ``b = f``)        time_invariant (counter instead)
dyck1         layer 1: counter ``a = 1``, ``b = ±1``; flags ``h<0``, ``h=0``; every variant (unbounded precision);
              layer 2: latch (or counter) of "went below zero"            fails in fixed width beyond the range
============  ============================================================  =====================================

Theory: parity needs a negative (or complex) eigenvalue (Grazzi et al. 2025; Sarrof et al. 2024), modular counting
needs rotations (complex or non-diagonal), flip-flop and star-free languages need only non-negative input-dependent
gates (Sarrof et al. 2024), counting needs unbounded precision (Alsmann, Noori & Lange 2026; Merrill et al. 2024).
:func:`verify` checks a construction on all strings up to a length and on random strings up to another, and
:func:`first_failure` measures where a counting construction breaks in fixed-width arithmetic.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._validate import check_choice, check_int

from ._languages import Task, get_task
from ._layers import COMPLEX_VARIANTS, VARIANTS, SSMLayer, SSMModel

BIG_NONNEG, BIG_SIGNED = 50.0, 30.0


@dataclass(frozen=True)
class Construction:
    """A hand-set model for ``task`` in gate class ``variant``; ``counting`` marks unbounded-counter designs."""

    task: str
    variant: str
    model: Any
    counting: bool = False
    note: str = ""


# ------------------------------------------------------------------------------------------------- gate logits
def _diag_logits(variant: str, value: Any) -> np.ndarray:
    """Gate logits (length 1 for real, 2 = [modulus, phase] for complex) giving the gate ``value`` exactly."""
    v = complex(value)
    if variant in COMPLEX_VARIANTS:
        r, ph = abs(v), np.angle(v) / np.pi  # phase = π tanh(z_θ)
        zr = BIG_NONNEG if r >= 1 else (-BIG_NONNEG if r <= 0 else np.log(r / (1 - r)))
        zt = BIG_SIGNED if ph >= 1 else (-BIG_SIGNED if ph <= -1 else np.arctanh(ph))
        return np.array([zr, zt])
    x = v.real
    if variant == "selective_nonneg":
        if x < 0:
            raise ValueError(f"selective_nonneg gates lie in [0, 1], cannot realise {x}")
        return np.array([BIG_NONNEG if x >= 1 else (-BIG_NONNEG if x <= 0 else np.log(x / (1 - x)))])
    if variant == "selective_signed":
        return np.array([BIG_SIGNED if x >= 1 else (-BIG_SIGNED if x <= -1 else np.arctanh(x))])
    if variant == "dense":  # N = 1: A = 1 - β, β = 2σ(z)
        beta = 1.0 - x
        return np.array([BIG_NONNEG if beta >= 2 else (-BIG_NONNEG if beta <= 0 else np.log(beta / (2 - beta)))])
    raise ValueError(f"variant {variant!r} has no scalar gate")


def _set(layer: SSMLayer, **arrays: np.ndarray) -> SSMLayer:
    for name, val in arrays.items():
        cur = getattr(layer, name)
        arr = jnp.asarray(val, jnp.float32)
        if cur is not None and cur.shape != arr.shape:
            raise ValueError(f"construction: {name} expected shape {cur.shape}, received {arr.shape}")
        layer = eqx.tree_at(lambda m, n=name: getattr(m, n), layer, arr, is_leaf=lambda x: x is None)
    return layer


def _scalar_layer(variant: str, D: int, H: int, gate_rows: dict,
                  b_rows: dict, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray | None = None,
                  const_gate: Any = None) -> SSMLayer:
    """A one-state layer (``N = 1``). ``gate_rows[channel] = gate value when that channel is 1`` (one-hot
    channels) or, with ``const_gate``, a flag channel that switches the gate from ``const_gate`` to the value.
    ``b_rows[channel] = complex input added when that channel is 1``. ``w1`` acts on ``[feats, u]``."""
    layer = SSMLayer(variant, D, 1, key=jax.random.PRNGKey(0), d_hidden=H)
    cplx = variant in COMPLEX_VARIANTS
    g = 2 if cplx else (2 if variant == "dense" else 1)
    gw = np.zeros((g, D))
    gb = np.zeros(g)
    if variant == "dense":  # k = 1 (fixed), β from the scalar logit
        gb[0] = 1.0
        if const_gate is not None:
            gb[1] = _diag_logits(variant, const_gate)[0]
        for ch, val in gate_rows.items():
            gw[1, ch] = _diag_logits(variant, val)[0] - (gb[1] if const_gate is not None else 0.0)
    else:
        if const_gate is not None:
            gb[:] = _diag_logits(variant, const_gate)
        for ch, val in gate_rows.items():
            gw[:, ch] = _diag_logits(variant, val) - (gb if const_gate is not None else 0.0)
    s = 2 if cplx else 1
    iw = np.zeros((s, D))
    for ch, val in b_rows.items():
        iw[0, ch] = complex(val).real
        if cplx:
            iw[1, ch] = complex(val).imag
    f = s + D
    if w1.shape[1] != f:  # w1 given on [Re h, u]: insert the Im h column for complex states
        w1 = np.concatenate([w1[:, :1], np.zeros((w1.shape[0], f - w1.shape[1])), w1[:, 1:]], 1)
    arrays = dict(gate_b=gb, in_w=iw, in_b=np.zeros(s), w1=w1, b1=b1, w2=w2,
                  b2=np.zeros(D) if b2 is None else b2)
    if variant == "time_invariant":
        if gate_rows:
            raise ValueError("time_invariant gates cannot depend on the input")
    else:
        arrays["gate_w"] = gw
    return _set(layer, **arrays)


def _model(variant: str, V: int, D: int, layers: list, head_w: np.ndarray, head_b: np.ndarray) -> SSMModel:
    m = SSMModel(variant, V, 2, key=jax.random.PRNGKey(0), d_model=D, d_state=1, n_layers=len(layers),
                 d_hidden=layers[0].w1.shape[0])
    embed = np.zeros((V, D))
    embed[:, :V] = np.eye(V)
    m = eqx.tree_at(lambda t: t.layers, m, tuple(layers))
    m = eqx.tree_at(lambda t: t.embed, m, jnp.asarray(embed, jnp.float32))
    m = eqx.tree_at(lambda t: t.head_w, m, jnp.asarray(head_w, jnp.float32))
    return eqx.tree_at(lambda t: t.head_b, m, jnp.asarray(head_b, jnp.float32))


def _head(D: int, ch: int, scale: Any, offset: Any) -> tuple[np.ndarray, np.ndarray]:
    """Class-1 logit ``scale · u[ch] + offset``, class-0 logit 0."""
    hw = np.zeros((2, D))
    hw[1, ch] = scale
    return hw, np.array([0.0, offset])


def _identity_readout(D: int, out_ch: int, shift: Any = 0.0) -> tuple:
    """Hidden unit ``relu(Re h + shift)`` written to ``out_ch`` (``Re h + shift >= 0`` by design)."""
    w1 = np.zeros((1, 1 + D))
    w1[0, 0] = 1.0
    w2 = np.zeros((D, 1))
    w2[out_ch, 0] = 1.0
    return w1, np.array([shift]), w2


# ------------------------------------------------------------------------------------------------- constructions
def _parity(variant: str) -> Construction:
    # symbols 0/1; p_t = (1 - 2 x_t) p_{t-1} + x_t is the parity of #1s; accept when p = 0 (even)
    D = 3
    w1, b1, w2 = _identity_readout(D, 2)
    layer = _scalar_layer(variant, D, 1, {0: 1.0, 1: -1.0}, {1: 1.0}, w1, b1, w2)
    return Construction("parity", variant, _model(variant, 2, D, [layer], *_head(D, 2, -10.0, 5.0)))


def _count_mod(variant: str, m: int) -> Construction:
    # h_t = ω^{c_t} - 1: accept when Re h = 0, members are separated from the rest by δ = (1 - cos 2π/m) / 2
    D = 3
    omega = np.exp(2j * np.pi / m)
    delta = (1 - np.cos(2 * np.pi / m)) / 2
    w1, b1, w2 = _identity_readout(D, 2, shift=2.0)
    head = _head(D, 2, 10.0 / delta, -10.0 / delta * (2.0 - delta))
    name = f"count_mod{m}"
    if variant in COMPLEX_VARIANTS and variant != "time_invariant":
        layer = _scalar_layer(variant, D, 1, {0: 1.0, 1: omega}, {1: omega - 1}, w1, b1, w2)
        return Construction(name, variant, _model(variant, 2, D, [layer], *head))
    if variant == "dense":  # rotation by 2π/m = product of two reflections with normals π/m apart
        layer = SSMLayer("dense", D, 2, key=jax.random.PRNGKey(0), d_hidden=1, n_householder=2)
        k1, k2 = np.array([1.0, 0.0]), np.array([np.cos(np.pi / m), np.sin(np.pi / m)])
        R = (np.eye(2) - 2 * np.outer(k2, k2)) @ (np.eye(2) - 2 * np.outer(k1, k1))
        gb = np.concatenate([k1, k2, [0.0, 0.0]])
        gw = np.zeros((6, D))
        gw[4:, 0] = -BIG_NONNEG  # symbol 0: β = 0, identity
        gw[4:, 1] = BIG_NONNEG  # symbol 1: β = 2, two reflections
        iw = np.zeros((2, D))
        iw[:, 1] = R @ np.array([1.0, 0.0]) - np.array([1.0, 0.0])
        w1d = np.zeros((1, 2 + D))
        w1d[0, 0] = 1.0
        layer = _set(layer, gate_w=gw, gate_b=gb, in_w=iw, in_b=np.zeros(2), w1=w1d, b1=b1, w2=w2, b2=np.zeros(D))
        model = SSMModel("dense", 2, 2, key=jax.random.PRNGKey(0), d_model=D, d_state=2, n_layers=1, d_hidden=1,
                         n_householder=2)
        model = eqx.tree_at(lambda t: t.layers, model, (layer,))
        model = eqx.tree_at(lambda t: t.embed, model, jnp.asarray(np.eye(2, D), jnp.float32))
        model = eqx.tree_at(lambda t: t.head_w, model, jnp.asarray(head[0], jnp.float32))
        model = eqx.tree_at(lambda t: t.head_b, model, jnp.asarray(head[1], jnp.float32))
        return Construction(name, variant, model)
    raise ValueError(f"count_mod{m}: no construction for {variant} (needs a rotation: complex or dense)")


def _position_mod(variant: str, m: int) -> Construction:
    if variant not in COMPLEX_VARIANTS:
        raise ValueError(f"position_mod{m}: no construction for {variant} (needs a complex rotation)")
    D = 3
    omega = np.exp(2j * np.pi / m)
    delta = (1 - np.cos(2 * np.pi / m)) / 2
    w1, b1, w2 = _identity_readout(D, 2, shift=2.0)
    rows = {} if variant == "time_invariant" else {0: omega, 1: omega}
    layer = _scalar_layer(variant, D, 1, rows, {0: omega - 1, 1: omega - 1}, w1, b1, w2,
                          const_gate=omega if variant == "time_invariant" else None)
    return Construction(f"position_mod{m}", variant,
                        _model(variant, 2, D, [layer], *_head(D, 2, 10.0 / delta, -10.0 / delta * (2.0 - delta))))


def _flip_flop(variant: str) -> Construction:
    if variant == "time_invariant":
        raise ValueError("flip_flop: no construction for time_invariant (needs an input-dependent reset)")
    # symbols w0, w1, i, r: a = 0 on writes, 1 otherwise; b = written bit; h = last written bit
    D = 5
    w1, b1, w2 = _identity_readout(D, 4)
    layer = _scalar_layer(variant, D, 1, {0: 0.0, 1: 0.0, 2: 1.0, 3: 1.0}, {1: 1.0}, w1, b1, w2)
    return Construction("flip_flop", variant, _model(variant, 4, D, [layer], *_head(D, 4, 10.0, -5.0)))


def _latch_or_counter(variant: str, D: int, flag_ch: int, out_ch: int) -> SSMLayer:
    """Layer whose state becomes 1 (latch) or counts (time-invariant) when channel ``flag_ch`` is 1."""
    w1, b1, w2 = _identity_readout(D, out_ch)
    if variant == "time_invariant":
        return _scalar_layer(variant, D, 1, {}, {flag_ch: 1.0}, w1, b1, w2, const_gate=1.0)
    return _scalar_layer(variant, D, 1, {flag_ch: 0.0}, {flag_ch: 1.0}, w1, b1, w2, const_gate=1.0)


def _no_bb(variant: str) -> Construction:
    # channels: 0 a, 1 b, 2 flag "bb here", 3 latch output
    D = 4
    w1 = np.zeros((2, 1 + D))
    w1[:, 0] = 10.0
    b1 = np.array([-11.0, -12.0])  # flag = relu(10h - 11) - relu(10h - 12) ∈ {0, 1}
    w2 = np.zeros((D, 2))
    w2[2] = [1.0, -1.0]
    rows = {} if variant == "time_invariant" else {0: 0.25, 1: 0.25}
    l1 = _scalar_layer(variant, D, 2, rows, {1: 1.0}, w1, b1, w2,
                       const_gate=0.25 if variant == "time_invariant" else None)
    l2 = _latch_or_counter(variant, D, 2, 3)
    return Construction("no_bb", variant, _model(variant, 2, D, [l1, l2], *_head(D, 3, -10.0, 5.0)),
                        counting=variant == "time_invariant")


def _dyck1(variant: str) -> Construction:
    # channels: 0 '(', 1 ')', 2 [h<0], 3 [h=0], 4 latch/counter of [h<0]
    D = 5
    w1 = np.zeros((5, 1 + D))
    w1[:, 0] = [-1.0, -1.0, 1.0, 1.0, 1.0]
    b1 = np.array([0.0, -1.0, 1.0, 0.0, -1.0])  # relu(-h), relu(-h-1), relu(h+1), relu(h), relu(h-1)
    w2 = np.zeros((D, 5))
    w2[2, :2] = [1.0, -1.0]  # [h < 0] for integer h
    w2[3, 2:] = [1.0, -2.0, 1.0]  # hat function = [h = 0]
    l1 = _scalar_layer(variant, D, 5, {} if variant == "time_invariant" else {0: 1.0, 1: 1.0},
                       {0: 1.0, 1: -1.0}, w1, b1, w2, const_gate=1.0 if variant == "time_invariant" else None)
    l2 = _latch_or_counter(variant, D, 2, 4)
    hw = np.zeros((2, D))
    hw[1, 3], hw[1, 4] = 10.0, -10.0
    return Construction("dyck1", variant, _model(variant, 2, D, [l1, l2], hw, np.array([0.0, -5.0])), counting=True)


CONSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "parity": ("selective_signed", "selective_complex", "dense"),
    "count_mod3": ("selective_complex", "dense"),
    "position_mod3": ("time_invariant", "selective_complex"),
    "flip_flop": ("selective_nonneg", "selective_signed", "selective_complex", "dense"),
    "no_bb": VARIANTS,
    "dyck1": VARIANTS,
}


def construct(task: str, variant: str) -> Construction:
    """The hand-set model recognising ``task`` with gate class ``variant`` (see ``CONSTRUCTIONS``)."""
    check_choice("variant", variant, VARIANTS)
    if task.startswith("count_mod") and task[9:].isdigit():
        return _count_mod(variant, int(task[9:]))
    if task.startswith("position_mod") and task[12:].isdigit():
        return _position_mod(variant, int(task[12:]))
    builders = {"parity": _parity, "flip_flop": _flip_flop, "no_bb": _no_bb, "dyck1": _dyck1}
    if task not in builders:
        raise ValueError(f"task: no construction for {task!r}; available {sorted(CONSTRUCTIONS)}")
    if task == "parity" and variant in ("time_invariant", "selective_nonneg"):
        raise ValueError(f"parity: no construction for {variant} (needs a negative or complex gate)")
    return builders[task](variant)


# ------------------------------------------------------------------------------------------------- verification
@eqx.filter_jit
def _predict(model: Any, tokens: jax.Array, precision: Any = None) -> jax.Array:
    # the step-by-step recurrence (the parallel form agrees to 1e-5 and is tested separately; it compiles slower)
    logits = jax.vmap(lambda t: model(t, mode="recurrent", precision=precision))(tokens)
    return jnp.argmax(logits, -1)


def predict(c: Construction, tokens: np.ndarray, precision: Any = None, chunk: int = 2048) -> np.ndarray:
    """Per-position class predictions ``(B, T)`` of a construction (``precision`` forces recurrent rounding)."""
    B = tokens.shape[0]
    chunk = min(chunk, B)
    pad = (-B) % chunk  # equal chunks: one compilation
    tokens = np.concatenate([tokens, np.zeros((pad, tokens.shape[1]), tokens.dtype)]) if pad else tokens
    outs = [np.asarray(_predict(c.model, jnp.asarray(tokens[i:i + chunk]), precision))
            for i in range(0, tokens.shape[0], chunk)]
    return np.concatenate(outs)[:B]


def _reference(task: Task, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-position reference labels and the positions where they are defined."""
    if task.kind == "recognition":
        return task.labels(tokens.astype(np.int64)).astype(np.int32), np.ones(tokens.shape, bool)
    if task.name == "flip_flop":  # the construction outputs the last written bit at every position
        last = np.zeros(tokens.shape[0], np.int64)
        out = np.zeros(tokens.shape, np.int32)
        seen = np.zeros(tokens.shape, bool)
        ever = np.zeros(tokens.shape[0], bool)
        for t in range(tokens.shape[1]):
            w = tokens[:, t] < 2
            last = np.where(w, tokens[:, t], last)
            ever |= w
            out[:, t], seen[:, t] = last, ever
        return out, seen
    if task.name.startswith("position_mod"):
        m = int(task.name[12:])
        lab = (np.arange(1, tokens.shape[1] + 1) % m == 0).astype(np.int32)
        return np.broadcast_to(lab, tokens.shape), np.ones(tokens.shape, bool)
    raise ValueError(f"no per-position reference for {task.name}")


def verify(c: Construction, *, exhaustive_len: int = 12, n_random: int = 10_000, max_len: int = 1000,
           seed: int = 0, precision: Any = None, max_exhaustive: int = 2**18) -> dict:
    """Check ``c`` on every string up to ``exhaustive_len`` and on ``n_random`` random strings up to ``max_len``.

    Every string up to ``L`` is a prefix of a string of length ``L`` and the models are causal, so running all
    ``|Σ|^L`` strings of length ``L`` and comparing per-position outputs with per-prefix labels covers them all
    (for large alphabets ``L`` is lowered until ``|Σ|^L <= max_exhaustive``; the length used is returned).
    Random strings: lengths uniform in ``[1, max_len]``; for languages, half of every batch of 500 is a balanced
    member/non-member sample of one such length, the other half uniform strings (padded to a common length; only positions inside each string are scored).
    """
    check_int("exhaustive_len", exhaustive_len, minimum=1)
    check_int("n_random", n_random, minimum=0)
    task = get_task(c.task)
    V = task.vocab
    L = exhaustive_len
    while V**L > max_exhaustive and L > 1:
        L -= 1
    toks = np.array(list(itertools.product(range(V), repeat=L)), np.int32)
    ref, defined = _reference(task, toks)
    pred = predict(c, toks, precision)
    exh_err = int(((pred != ref) & defined).sum())
    rng = np.random.default_rng(seed)
    rand_err, n_checked = 0, 0
    if n_random:
        lengths = rng.integers(1, max_len + 1, n_random)
        batch = 500
        for i in range(0, n_random, batch):
            ls = lengths[i:i + batch].copy()
            T = max_len  # one shape for every batch: one compilation
            toks = rng.integers(0, V, (len(ls), T)).astype(np.int32)
            half = len(ls) // 2
            if task.kind == "recognition":  # half the batch: balanced members / non-members of one length
                ls[:half] = ls[0]
                toks[:half, : ls[0]] = task.sample(rng, half, int(ls[0])).tokens
            ref, defined = _reference(task, toks)
            pred = predict(c, toks, precision)
            inside = np.arange(T)[None, :] < ls[:, None]
            rand_err += int(((pred != ref) & defined & inside).sum())
            n_checked += int((defined & inside).sum())
    return {"exhaustive_len": L, "exhaustive_errors": exh_err, "random_strings": n_random,
            "random_positions": n_checked, "random_errors": rand_err}


def first_failure(c: Construction, precision: Any, *, max_n: int = 4096) -> int | None:
    """Smallest ``n`` such that the construction misclassifies ``(^n )^n`` (Dyck-1) or its analogue under
    ``precision``; None if all ``n <= max_n`` pass. Measured by running the model, not predicted."""
    if c.task != "dyck1":
        raise ValueError(f"first_failure: defined for counting constructions (dyck1), received {c.task!r}")
    ns = np.arange(1, max_n + 1)
    T = 2 * max_n
    lo, hi = 0, len(ns)
    # evaluate in chunks of n, each string padded with ')' after its end (scored only at position 2n - 1)
    for start in range(0, max_n, 256):
        chunk = ns[start:start + 256]
        toks = np.ones((len(chunk), T), np.int32)
        for j, n in enumerate(chunk):
            toks[j, :n] = 0
        pred = predict(c, toks[:, : 2 * int(chunk.max())], precision, chunk=64)
        ok = pred[np.arange(len(chunk)), 2 * chunk - 1] == 1
        if not ok.all():
            return int(chunk[np.argmin(ok)])
    del lo, hi
    return None


__all__ = ["CONSTRUCTIONS", "Construction", "construct", "first_failure", "predict", "verify"]
