"""Hand-set SSM weights that recognize given languages exactly (expressivity by construction, not by training).

Every construction is an ordinary :class:`~jaxkit.ssm.SSMModel` (same code path as the trained models):
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
aa_star       layer 1: constant gate ``-1``, ``h_t + 1 = (-1)^t``;          time_invariant, signed, complex, dense
              layer 2: latch (or counter) of ``b``
since         ``(¬c) S b``: reset ``a = 0`` on ``b``/``c``, ``b`` writes 1   nonneg, signed, complex, dense
first_symbol  constant gate 1/2, ``h_t = 1 - 2^{-t}`` marks ``t = 1``;     every variant
              layer 2: constant gate 1 accumulates ``[t = 1, a]``
last_symbol   the head reads the current token                            every variant
anbncn        previous-symbol memory (gate 1/8) flags descents, a latch;   every variant (log precision);
              counters ``#a - #b`` and ``#b - #c`` with ``[h = 0]`` flags    fails in fixed width beyond the range
s5_word       one layer, ``N = 5``, four Householder factors per step       dense only
============  ============================================================  =====================================

Theory: parity needs a negative (or complex) eigenvalue (Grazzi et al. 2025; Sarrof et al. 2024), modular counting
needs rotations (complex or non-diagonal), flip-flop and star-free languages need only non-negative input-dependent
gates (Sarrof et al. 2024), counting needs unbounded precision (Alsmann, Noori & Lange 2026; Merrill et al. 2024);
time-invariant gates give MOD predicates such as $(aa)^*$ but are conjectured unable to express "since" (Alsmann et
al. 2026); non-solvable groups such as $S_5$ need non-diagonal transitions (Merrill et al. 2024; Grazzi et al. 2025).
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

from jaxkit._validate import check_choice, check_int, check_size, seed_rng

from ._languages import Task, get_task
from ._layers import COMPLEX_VARIANTS, VARIANTS, SSMLayer, SSMModel, check_tokens
from ._precision import Precision

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
            raise ValueError(f"selective_nonneg gates lie in [0, 1], cannot realize {x}")
        return np.array([BIG_NONNEG if x >= 1 else (-BIG_NONNEG if x <= 0 else np.log(x / (1 - x)))])
    if variant == "selective_signed":
        return np.array([BIG_SIGNED if x >= 1 else (-BIG_SIGNED if x <= -1 else np.arctanh(x))])
    if variant == "dense":  # N = 1: A = 1 - β, β = 2σ(z)
        beta = 1.0 - x
        return np.array(
            [BIG_NONNEG if beta >= 2 else (-BIG_NONNEG if beta <= 0 else np.log(beta / (2 - beta)))]
        )
    raise ValueError(f"variant {variant!r} has no scalar gate")


def _set(layer: SSMLayer, **arrays: np.ndarray) -> SSMLayer:
    for name, val in arrays.items():
        cur = getattr(layer, name)
        arr = jnp.asarray(val, jnp.float32)
        if cur is not None and cur.shape != arr.shape:
            raise ValueError(f"construction: {name} expected shape {cur.shape}, received {arr.shape}")
        layer = eqx.tree_at(lambda m, n=name: getattr(m, n), layer, arr, is_leaf=lambda x: x is None)
    return layer


def _scalar_layer(
    variant: str,
    D: int,
    H: int,
    gate_rows: dict,
    b_rows: dict,
    w1: np.ndarray,
    b1: np.ndarray,
    w2: np.ndarray,
    b2: np.ndarray | None = None,
    const_gate: Any = None,
) -> SSMLayer:
    """A one-state layer (``N = 1``). ``gate_rows[channel] = gate value when that channel is 1`` (one-hot
    channels) or, with ``const_gate``, a flag channel that switches the gate from ``const_gate`` to the value.
    ``b_rows[channel] = complex input added when that channel is 1``. ``w1`` acts on ``[feats, u]``."""
    layer = SSMLayer(variant, D, 1, key=jax.random.key(0), d_hidden=H)
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
    arrays = dict(
        gate_b=gb, in_w=iw, in_b=np.zeros(s), w1=w1, b1=b1, w2=w2, b2=np.zeros(D) if b2 is None else b2
    )
    if variant == "time_invariant":
        if gate_rows:
            raise ValueError("time_invariant gates cannot depend on the input")
    else:
        arrays["gate_w"] = gw
    return _set(layer, **arrays)


def _model(variant: str, V: int, D: int, layers: list, head_w: np.ndarray, head_b: np.ndarray) -> SSMModel:
    m = SSMModel(
        variant,
        V,
        2,
        key=jax.random.key(0),
        d_model=D,
        d_state=1,
        n_layers=len(layers),
        d_hidden=layers[0].w1.shape[0],
    )
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
        layer = SSMLayer("dense", D, 2, key=jax.random.key(0), d_hidden=1, n_householder=2)
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
        layer = _set(
            layer, gate_w=gw, gate_b=gb, in_w=iw, in_b=np.zeros(2), w1=w1d, b1=b1, w2=w2, b2=np.zeros(D)
        )
        model = SSMModel(
            "dense",
            2,
            2,
            key=jax.random.key(0),
            d_model=D,
            d_state=2,
            n_layers=1,
            d_hidden=1,
            n_householder=2,
        )
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
    layer = _scalar_layer(
        variant,
        D,
        1,
        rows,
        {0: omega - 1, 1: omega - 1},
        w1,
        b1,
        w2,
        const_gate=omega if variant == "time_invariant" else None,
    )
    return Construction(
        f"position_mod{m}",
        variant,
        _model(variant, 2, D, [layer], *_head(D, 2, 10.0 / delta, -10.0 / delta * (2.0 - delta))),
    )


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
    l1 = _scalar_layer(
        variant, D, 2, rows, {1: 1.0}, w1, b1, w2, const_gate=0.25 if variant == "time_invariant" else None
    )
    l2 = _latch_or_counter(variant, D, 2, 3)
    return Construction(
        "no_bb",
        variant,
        _model(variant, 2, D, [l1, l2], *_head(D, 3, -10.0, 5.0)),
        counting=variant == "time_invariant",
    )


def _dyck1(variant: str) -> Construction:
    # channels: 0 '(', 1 ')', 2 [h<0], 3 [h=0], 4 latch/counter of [h<0]
    D = 5
    w1 = np.zeros((5, 1 + D))
    w1[:, 0] = [-1.0, -1.0, 1.0, 1.0, 1.0]
    b1 = np.array([0.0, -1.0, 1.0, 0.0, -1.0])  # relu(-h), relu(-h-1), relu(h+1), relu(h), relu(h-1)
    w2 = np.zeros((D, 5))
    w2[2, :2] = [1.0, -1.0]  # [h < 0] for integer h
    w2[3, 2:] = [1.0, -2.0, 1.0]  # hat function = [h = 0]
    l1 = _scalar_layer(
        variant,
        D,
        5,
        {} if variant == "time_invariant" else {0: 1.0, 1: 1.0},
        {0: 1.0, 1: -1.0},
        w1,
        b1,
        w2,
        const_gate=1.0 if variant == "time_invariant" else None,
    )
    l2 = _latch_or_counter(variant, D, 2, 4)
    hw = np.zeros((2, D))
    hw[1, 3], hw[1, 4] = 10.0, -10.0
    return Construction(
        "dyck1", variant, _model(variant, 2, D, [l1, l2], hw, np.array([0.0, -5.0])), counting=True
    )


def _aa_star(variant: str) -> Construction:
    # channels: 0 a, 1 b, 2 [t even], 3 latch/counter of b. Layer 1: constant gate -1, h_t + 1 = (-1)^t.
    if variant == "selective_nonneg":
        raise ValueError(
            "aa_star: no construction for selective_nonneg (needs a negative or complex gate; "
            "fixed-width non-negative diagonal SSMs cannot recognize (aa)*)"
        )
    D = 4
    w1 = np.zeros((1, 1 + D))
    w1[0, 0] = 0.5
    w2 = np.zeros((D, 1))
    w2[2, 0] = 1.0  # relu(h/2 + 1) = 1 at even t (h = 0), 0 at odd t (h = -2)
    l1 = _scalar_layer(variant, D, 1, {}, {0: -2.0, 1: -2.0}, w1, np.array([1.0]), w2, const_gate=-1.0)
    l2 = _latch_or_counter(variant, D, 1, 3)
    hw = np.zeros((2, D))
    hw[1, 2], hw[1, 3] = 10.0, -10.0
    return Construction(
        "aa_star",
        variant,
        _model(variant, 2, D, [l1, l2], hw, np.array([0.0, -5.0])),
        counting=variant == "time_invariant",
    )


def _since(variant: str) -> Construction:
    # symbols a (filler), b, c: reset gate a = 0 on events, 1 on filler; b = 1 on b. h = [last event was b].
    if variant == "time_invariant":
        raise ValueError(
            "since: no construction for time_invariant (needs an input-dependent reset; Alsmann et "
            "al. 2026 conjecture time-invariant SSMs cannot express S)"
        )
    D = 4
    w1, b1, w2 = _identity_readout(D, 3)
    layer = _scalar_layer(variant, D, 1, {0: 1.0, 1: 0.0, 2: 0.0}, {1: 1.0}, w1, b1, w2)
    return Construction("since", variant, _model(variant, 3, D, [layer], *_head(D, 3, 10.0, -5.0)))


def _first_symbol(variant: str) -> Construction:
    # layer 1: constant gate 1/2 and input 1/2, h_t = 1 - 2^-t, so h_t = 1/2 only at t = 1: flag [t = 1 and a];
    # layer 2: constant gate 1 accumulates the flag (it fires at most once). Channels: 0 a, 1 b, 2 flag, 3 out.
    D = 4
    w1 = np.zeros((1, 1 + D))
    w1[0, 0], w1[0, 1] = -4.0, 1.0  # relu(u_a + 2 - 4h): u_a at t = 1, 0 later (h >= 3/4)
    w2 = np.zeros((D, 1))
    w2[2, 0] = 1.0
    l1 = _scalar_layer(variant, D, 1, {}, {0: 0.5, 1: 0.5}, w1, np.array([2.0]), w2, const_gate=0.5)
    w1b, b1b, w2b = _identity_readout(D, 3)
    l2 = _scalar_layer(variant, D, 1, {}, {2: 1.0}, w1b, b1b, w2b, const_gate=1.0)
    return Construction("first_symbol", variant, _model(variant, 2, D, [l1, l2], *_head(D, 3, 10.0, -5.0)))


def _last_symbol(variant: str) -> Construction:
    # the head reads the current symbol from the residual stream; the layer writes nothing
    D = 2
    layer = _scalar_layer(
        variant, D, 1, {}, {}, np.zeros((1, 1 + D)), np.zeros(1), np.zeros((D, 1)), const_gate=0.5
    )
    return Construction("last_symbol", variant, _model(variant, 2, D, [layer], *_head(D, 0, 10.0, -5.0)))


def _counter_hat(variant: str, D: int, b_rows: dict, out_ch: int) -> SSMLayer:
    """Counter (constant gate 1, input ``b_rows``) whose readout writes ``[h = 0]`` (a ReLU hat) to ``out_ch``."""
    w1 = np.zeros((3, 1 + D))
    w1[:, 0] = 1.0
    w2 = np.zeros((D, 3))
    w2[out_ch] = [1.0, -2.0, 1.0]  # relu(h+1) - 2 relu(h) + relu(h-1) = [h = 0] for integer h
    return _scalar_layer(variant, D, 3, {}, b_rows, w1, np.array([1.0, 0.0, -1.0]), w2, const_gate=1.0)


def _anbncn(variant: str) -> Construction:
    # channels: 0 a, 1 b, 2 c, 3 [x_{t-1} > x_t], 4 latch/counter of 3, 5 [#a = #b], 6 [#b = #c].
    # Layer 1 remembers the previous symbol: h_t = h_{t-1}/8 + e(x_t), e = (0, 1, 2), so
    # w = 8 h_t - 9 e(x_t) = h_{t-1} - e(x_t) lies in (e(x_{t-1}) - e(x_t)) + [0, 2/7]; [w >= 1] flags a descent.
    D = 7
    w1 = np.zeros((2, 1 + D))
    w1[:, 0], w1[:, 2], w1[:, 3] = 32.0, -36.0, -72.0  # 4w - 2 and 4w - 3
    w2 = np.zeros((D, 2))
    w2[3] = [1.0, -1.0]
    l1 = _scalar_layer(variant, D, 2, {}, {1: 1.0, 2: 2.0}, w1, np.array([-2.0, -3.0]), w2, const_gate=0.125)
    l2 = _latch_or_counter(variant, D, 3, 4)
    l3 = _counter_hat(variant, D, {0: 1.0, 1: -1.0}, 5)
    l4 = _counter_hat(variant, D, {1: 1.0, 2: -1.0}, 6)
    hw = np.zeros((2, D))
    hw[1, 4], hw[1, 5], hw[1, 6] = -10.0, 10.0, 10.0
    return Construction(
        "anbncn", variant, _model(variant, 3, D, [l1, l2, l3, l4], hw, np.array([0.0, -15.0])), counting=True
    )


def _transpositions(perm: tuple[int, ...]) -> list[tuple[int, int]]:
    """Transpositions ``(i, j)`` with ``Q = S_1 S_2 ⋯ S_r`` for the gather matrix ``Q u = u[perm]``."""
    n = len(perm)
    R = np.zeros((n, n))
    R[np.arange(n), perm] = 1.0
    swaps = []
    for i in range(n):
        if R[i, i] != 1.0:
            j = int(np.flatnonzero(R[:, i])[0])
            R[[i, j]] = R[[j, i]]
            swaps.append((i, j))
    return swaps


def _s5_word(variant: str) -> Construction:
    """One dense layer, ``N = 5``, four Householder factors: ``A(x)`` is the permutation matrix of symbol ``x``
    (at most four transpositions, each ``I - 2kkᵀ`` with ``k = (e_i - e_j)/√2``), ``b(x) = (A(x) - I) v`` with
    ``v = (0, 1, 2, 3, 4)``, so ``h_t + v`` is the running product applied to ``v`` (the images of 0..4); the head
    scores class ``c`` by ``<h_t + v, p_c>``, maximal exactly at the product (rearrangement inequality, margin ≥ 1).
    """
    if variant != "dense":
        raise ValueError(
            f"s5_word: no construction for {variant} (S5 is not solvable: diagonal gates cannot track "
            "it, Merrill et al. 2024; Shakerinava et al. 2026)"
        )
    task = get_task("s5_word")
    perms = [tuple(int(c) for c in a) for a in task.alphabet]
    V, n, m = len(perms), 5, 4
    D = V + n
    v = np.arange(n, dtype=float)
    gw = np.zeros((m * n + m, D))
    iw = np.zeros((n, D))
    for s_, p in enumerate(perms):
        swaps = _transpositions(p)[::-1]  # H_1 = S_r, ..., so H_m ⋯ H_1 = S_1 ⋯ S_r
        for j in range(m):
            k = np.zeros(n)
            if j < len(swaps):
                k[list(swaps[j])] = [1.0 / np.sqrt(2), -1.0 / np.sqrt(2)]
            else:
                k[0] = 1.0
            gw[j * n : (j + 1) * n, s_] = k
            gw[m * n + j, s_] = BIG_NONNEG if j < len(swaps) else -BIG_NONNEG
        Q = np.zeros((n, n))
        Q[np.arange(n), p] = 1.0
        iw[:, s_] = Q @ v - v
    layer = SSMLayer("dense", D, n, key=jax.random.key(0), d_hidden=n, n_householder=m)
    w1 = np.zeros((n, n + D))
    w1[:, :n] = np.eye(n)
    w2 = np.zeros((D, n))
    w2[V:, :] = np.eye(n)
    layer = _set(
        layer,
        gate_w=gw,
        gate_b=np.zeros(m * n + m),
        in_w=iw,
        in_b=np.zeros(n),
        w1=w1,
        b1=v,
        w2=w2,
        b2=np.zeros(D),
    )
    model = SSMModel(
        "dense", V, V, key=jax.random.key(0), d_model=D, d_state=n, n_layers=1, d_hidden=n, n_householder=m
    )
    hw = np.zeros((V, D))
    hw[:, V:] = np.array(perms, float)
    model = eqx.tree_at(lambda t: t.layers, model, (layer,))
    model = eqx.tree_at(lambda t: t.embed, model, jnp.asarray(np.eye(V, D), jnp.float32))
    model = eqx.tree_at(lambda t: t.head_w, model, jnp.asarray(hw, jnp.float32))
    model = eqx.tree_at(lambda t: t.head_b, model, jnp.zeros((V,), jnp.float32))
    return Construction("s5_word", variant, model)


CONSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "parity": ("selective_signed", "selective_complex", "dense"),
    "count_mod3": ("selective_complex", "dense"),
    "position_mod3": ("time_invariant", "selective_complex"),
    "flip_flop": ("selective_nonneg", "selective_signed", "selective_complex", "dense"),
    "no_bb": VARIANTS,
    "dyck1": VARIANTS,
    "aa_star": ("time_invariant", "selective_signed", "selective_complex", "dense"),
    "since": ("selective_nonneg", "selective_signed", "selective_complex", "dense"),
    "first_symbol": VARIANTS,
    "last_symbol": VARIANTS,
    "anbncn": VARIANTS,
    "s5_word": ("dense",),
}


def construct(task: str, variant: str) -> Construction:
    """The hand-set model recognizing ``task`` with gate class ``variant`` (see ``CONSTRUCTIONS``)."""
    check_choice("variant", variant, VARIANTS)
    if task.startswith("count_mod") and task[9:].isdigit():
        return _count_mod(variant, int(task[9:]))
    if task.startswith("position_mod") and task[12:].isdigit():
        return _position_mod(variant, int(task[12:]))
    builders = {
        "parity": _parity,
        "flip_flop": _flip_flop,
        "no_bb": _no_bb,
        "dyck1": _dyck1,
        "aa_star": _aa_star,
        "since": _since,
        "first_symbol": _first_symbol,
        "last_symbol": _last_symbol,
        "anbncn": _anbncn,
        "s5_word": _s5_word,
    }
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


def predict(
    c: Construction, tokens: np.ndarray, precision: Precision | None = None, chunk: int = 2048
) -> np.ndarray:
    """Per-position class predictions ``(B, T)`` of a construction (``precision`` forces recurrent rounding)."""
    check_int("chunk", chunk, minimum=1)
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError(f"tokens: expected a (batch, length) array, received shape {tokens.shape}")
    if 0 in tokens.shape:
        raise ValueError(f"tokens: expected a non-empty (batch, length) array, received shape {tokens.shape}")
    check_tokens("tokens", tokens, len(get_task(c.task).alphabet))
    B = tokens.shape[0]
    chunk = min(chunk, B)
    pad = (-B) % chunk  # equal chunks: one compilation
    tokens = np.concatenate([tokens, np.zeros((pad, tokens.shape[1]), tokens.dtype)]) if pad else tokens
    outs = [
        np.asarray(_predict(c.model, jnp.asarray(tokens[i : i + chunk]), precision))
        for i in range(0, tokens.shape[0], chunk)
    ]
    return np.concatenate(outs)[:B]


def _reference(task: Task, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-position reference labels and the positions where they are defined."""
    if task.labels is not None:  # languages, and transductions whose target is a function of the prefix
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


def verify(
    c: Construction,
    *,
    exhaustive_len: int = 12,
    n_random: int = 10_000,
    max_len: int = 1000,
    seed: int = 0,
    precision: Precision | None = None,
    max_exhaustive: int = 2**18,
) -> dict[str, int]:
    """Check ``c`` on every string up to ``exhaustive_len`` and on ``n_random`` random strings up to ``max_len``.

    Every string up to ``L`` is a prefix of a string of length ``L`` and the models are causal, so running all
    ``|Σ|^L`` strings of length ``L`` and comparing per-position outputs with per-prefix labels covers them all
    (for large alphabets ``L`` is lowered until ``|Σ|^L <= max_exhaustive``; the length used is returned).
    Random strings: lengths uniform in ``[1, max_len]``; for languages, half of every batch of 500 is a balanced
    member/non-member sample of one such length, the other half uniform strings (padded to a common length; only positions inside each string are scored).
    """
    check_int("exhaustive_len", exhaustive_len, minimum=1)
    check_int("n_random", n_random, minimum=0)
    check_int("max_len", max_len, minimum=1)
    check_int("max_exhaustive", max_exhaustive, minimum=1)
    check_size("n_random", 8 * n_random)  # the int64 lengths of every random string, drawn at once
    task = get_task(c.task)
    V = task.vocab
    L = exhaustive_len
    while V**L > max_exhaustive and L > 1:
        L -= 1
    toks = np.array(list(itertools.product(range(V), repeat=L)), np.int32)
    ref, defined = _reference(task, toks)
    pred = predict(c, toks, precision)
    exh_err = int(((pred != ref) & defined).sum())
    rng = seed_rng(seed)
    rand_err, n_checked = 0, 0
    if n_random:
        lengths = rng.integers(1, max_len + 1, n_random)
        batch = 500
        for i in range(0, n_random, batch):
            ls = lengths[i : i + batch].copy()
            T = max_len  # one shape for every batch: one compilation
            toks = rng.integers(0, V, (len(ls), T)).astype(np.int32)
            half = len(ls) // 2
            if (
                task.kind == "recognition" and half
            ):  # half the batch: balanced members / non-members of one length
                ls[:half] = ls[0]
                toks[:half, : ls[0]] = task.sample(rng, half, int(ls[0])).tokens
            ref, defined = _reference(task, toks)
            pred = predict(c, toks, precision)
            inside = np.arange(T)[None, :] < ls[:, None]
            rand_err += int(((pred != ref) & defined & inside).sum())
            n_checked += int((defined & inside).sum())
    return {
        "exhaustive_len": L,
        "exhaustive_errors": exh_err,
        "random_strings": n_random,
        "random_positions": n_checked,
        "random_errors": rand_err,
    }


COUNTING_MEMBERS = {
    "dyck1": 2,
    "anbncn": 3,
}  # language -> k, the member (^n )^n or a^n b^n c^n has length k n


def first_failure(c: Construction, precision: Precision | None, *, max_n: int = 4096) -> int | None:
    """Smallest ``n`` such that the construction rejects the member ``(^n )^n`` (Dyck-1) or ``a^n b^n c^n`` under
    ``precision``; None if all ``n <= max_n`` pass. Measured by running the model, not predicted."""
    if c.task not in COUNTING_MEMBERS:
        raise ValueError(
            f"c: expected a counting construction (task in {sorted(COUNTING_MEMBERS)}; first_failure counts "
            f"a^n b^n c^n or (^n )^n), received a construction of task {c.task!r}"
        )
    check_int("max_n", max_n, minimum=1)
    k = COUNTING_MEMBERS[c.task]
    ns = np.arange(1, max_n + 1)
    # evaluate in chunks of n, each member padded with its last symbol (scored only at position k n - 1)
    for start in range(0, max_n, 256):
        chunk = ns[start : start + 256]
        T = k * int(chunk.max())
        toks = np.full((len(chunk), T), k - 1, np.int32)
        for j, n in enumerate(chunk):
            toks[j, : k * n] = np.repeat(np.arange(k), n)
        pred = predict(c, toks, precision, chunk=64)
        ok = pred[np.arange(len(chunk)), k * chunk - 1] == 1
        if not ok.all():
            return int(chunk[np.argmin(ok)])
    return None


__all__ = ["CONSTRUCTIONS", "Construction", "construct", "first_failure", "predict", "verify"]
