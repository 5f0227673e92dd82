"""SSM layers with the gate classes of the expressivity literature.

One layer family: ``h_t = A(x_t) h_{t-1} + B(x_t)`` (``h_0 = 0``), ``y_t = x_t + MLP([h_t, x_t])``, stacked with
residual connections. The gate class fixes what ``A`` may be (Alsmann, Noori & Lange 2026; Merrill et al. 2024;
Sarrof et al. 2024; Grazzi et al. 2025):

====================  ==============================================================  ===================
variant               transition ``A(x)``                                             like
====================  ==============================================================  ===================
``time_invariant``    complex diagonal ``σ(ν) e^{iπ tanh θ}``, independent of ``x``   S4D / LRU
``selective_nonneg``  real diagonal ``σ(W x + c) ∈ [0, 1]``                           Mamba
``selective_signed``  real diagonal ``tanh(W x + c) ∈ [-1, 1]``                       Grazzi et al. 2025
``selective_complex`` complex diagonal ``σ(W_r x + c_r) e^{iπ tanh(W_θ x + c_θ)}``    complex Mamba / RG-LRU
``dense``             ``Π_j (I - β_j k_j k_jᵀ)``, ``β_j = 2σ(·) ∈ [0, 2]``, ``|k_j| = 1``  DeltaNet (Grazzi)
====================  ==============================================================  ===================

``B(x) = W_b x + c_b`` (complex for the complex variants) depends on the input in every variant. Diagonal variants
evaluate in parallel with the linear-scan kernel (``jaxkit.kernels.linear_scan``, its XLA reference, ``lax.scan``, on CPU); the
``dense`` variant uses its own associative scan over ``(A, b)`` pairs. ``mode="recurrent"`` is the step-by-step
``lax.scan``; with a :data:`~jaxkit.ssm.Precision` format every gate, input, state update and activation is rounded.
A layer acts on one sequence ``(T, d)``; batch with ``jax.vmap``.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import PRNGKey
from jaxkit._validate import (
    check_choice,
    check_finite,
    check_int,
    check_key,
    check_ndim,
    check_norm,
    check_size,
    error_if_invalid,
    finite_checked,
    is_tracer,
    range_checked,
    traced_check,
)
from jaxkit.kernels.linear_scan import linear_scan as _kernel_linear_scan

from ._precision import Precision
from ._precision import quantize_unchecked as quantize  # NaN/inf pass through: model internals


class GateClasses(tuple):
    """The SSM gate classes, the ``variant`` names of :class:`SSMLayer` / :class:`SSMModel`, :func:`construct`
    and ``ProbeConfig(models=...)``: ``time_invariant`` (input-independent complex diagonal transition, S4D /
    LRU), ``selective_nonneg`` (real diagonal gates in [0, 1], Mamba), ``selective_signed`` (real diagonal gates
    in [-1, 1]), ``selective_complex`` (input-dependent complex diagonal gates) and ``dense`` (products of
    generalized Householder reflections, DeltaNet). A tuple of str; iterate it or test membership
    (``"dense" in VARIANTS``)."""


GateClasses.__module__ = "jaxkit.ssm"  # help() names the public package

VARIANTS: tuple[str, ...] = GateClasses(
    ("time_invariant", "selective_nonneg", "selective_signed", "selective_complex", "dense")
)
"""The five SSM gate classes (``variant`` names), from the weakest transition to the most expressive:
``time_invariant`` (input-independent complex diagonal, S4D / LRU), ``selective_nonneg`` (real diagonal in
[0, 1], Mamba), ``selective_signed`` (real diagonal in [-1, 1]), ``selective_complex`` (input-dependent complex
diagonal) and ``dense`` (products of Householder reflections, DeltaNet). A tuple of str."""
COMPLEX_VARIANTS = ("time_invariant", "selective_complex")
"""The gate classes whose state is complex (a tuple of str, a subset of :data:`VARIANTS`)."""
MODES = ("parallel", "recurrent")
_SAT = 0.25  # stretch of a saturating gate (0.05 held the complex gate short of |a| = 1: see the SSM reproduction page)
_PHASE_DEAD = 0.2  # half-width of the saturating phase's dead zone (in units of pi, after the stretch)


def _scan_operand(name: str, x: Any, ndim: int, check_finite: bool) -> jax.Array:
    """A scan operand as a JAX array of ``ndim`` dimensions with a numeric (real or complex) dtype, finite when
    ``check_finite`` (``ValueError`` eagerly, an ``eqx.error_if`` run-time error under ``jax.jit``)."""
    if not is_tracer(x):
        arr = np.asarray(x)
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"{name}: expected a numeric array, received dtype {arr.dtype}")
        x = jnp.asarray(arr if arr.dtype.kind in "fc" else arr.astype(jnp.result_type(float)))
    check_ndim(name, x, ndim)
    return finite_checked(name, x) if check_finite else x


def _same_leading(names: tuple[str, str], x: jax.Array, y: jax.Array, n: int) -> None:
    if x.shape[:n] != y.shape[:n]:
        raise ValueError(
            f"{names[1]}: expected leading shape {x.shape[:n]} to match {names[0]} {x.shape}, received {y.shape}"
        )


def diagonal_scan(
    a: jax.Array,
    b: jax.Array,
    *,
    mode: str = "parallel",
    precision: Precision | None = None,
    check_finite: bool = True,
) -> jax.Array:
    """All states of ``h_t = a_t ⊙ h_{t-1} + b_t`` (``h_0 = 0``) for ``a, b`` of shape ``(T, N)``.

    ``mode="parallel"`` uses the linear-scan kernel when present; ``"recurrent"`` a sequential ``lax.scan`` in which
    each update is rounded to ``precision`` (one rounding per fused multiply-add). NaN/inf in ``a`` or ``b`` raise
    ``ValueError`` (a run-time error under ``jax.jit``) instead of spreading into every later state;
    ``check_finite=False`` skips that check (the layers, whose inputs are already checked, do).
    """
    check_choice("mode", mode, MODES)
    a = _scan_operand("a", a, 2, check_finite)
    b = _scan_operand("b", b, 2, check_finite)
    if a.shape != b.shape:
        raise ValueError(f"b: expected shape {a.shape} to match a, received {b.shape}")
    if a.shape[0] == 0:
        raise ValueError(f"a: expected at least one time step (shape (T, N) with T >= 1), received {a.shape}")
    return _diagonal_scan(a, b, mode=mode, precision=precision)


def _diagonal_scan(a: jax.Array, b: jax.Array, *, mode: str, precision: Precision | None) -> jax.Array:
    if mode == "parallel" and precision is None:
        return _kernel_linear_scan(a, b, check_finite=False)  # checked by the caller (diagonal_scan, layers)
    a = quantize(a, precision)
    b = quantize(b, precision)

    def step(h, ab):
        h = quantize(ab[0] * h + ab[1], precision)
        return h, h

    return jax.lax.scan(step, jnp.zeros(a.shape[1:], jnp.result_type(a, b)), (a, b))[1]


def householder_product(k: jax.Array, beta: jax.Array) -> jax.Array:
    """``H_n ⋯ H_1`` with ``H_j = I - β_j k_j k_jᵀ`` for unit ``k`` of shape ``(n, N)`` and ``β`` of shape ``(n,)``.

    With ``β ∈ [0, 2]`` every eigenvalue lies in ``[-1, 1]`` (Grazzi et al. 2025); ``β = 2`` is a reflection.
    Rows of ``k`` that are not unit vectors (``|‖k_j‖ - 1| > 1e-4``) and ``β`` outside ``[0, 2]`` raise
    ``ValueError`` (a run-time error under ``jax.jit``): the product would silently stop being a product of
    (generalized) reflections with eigenvalues in ``[-1, 1]``.
    """
    if k.ndim != 2 or beta.shape != k.shape[:1]:
        raise ValueError(
            f"beta: expected shape ({k.shape[0] if k.ndim else '?'},) for k of shape (n, N) = {k.shape}, "
            f"received {beta.shape}"
        )
    if is_tracer(k):
        k = error_if_invalid(
            k,
            ~(jnp.abs(jnp.linalg.norm(k, axis=-1) - 1.0) <= 1e-4),  # NaN/inf compare False: refused too
            "k: expected unit vectors (|norm - 1| <= 0.0001)",
        )
    else:
        check_finite("k", k)
        check_norm("k", k, unit=True)
    beta = range_checked("beta", beta, 0.0, 2.0, what="Householder coefficients")
    return _householder_product(k, beta)


def _householder_product(k: jax.Array, beta: jax.Array) -> jax.Array:
    if k.ndim != 2 or beta.shape != k.shape[:1]:
        raise ValueError(
            f"beta: expected shape ({k.shape[0] if k.ndim else '?'},) for k of shape (n, N) = {k.shape}, "
            f"received {beta.shape}"
        )
    n_state = k.shape[-1]
    eye = jnp.eye(n_state, dtype=k.dtype)

    def body(acc, kb):
        kj, bj = kb
        return (eye - bj * jnp.outer(kj, kj)) @ acc, None

    return jax.lax.scan(body, eye, (k, beta))[0]


def dense_scan(
    A: jax.Array,
    b: jax.Array,
    *,
    mode: str = "parallel",
    precision: Precision | None = None,
    check_finite: bool = True,
) -> jax.Array:
    """All states of ``h_t = A_t h_{t-1} + b_t`` (``h_0 = 0``), ``A`` of shape ``(T, N, N)``, ``b`` ``(T, N)``.

    NaN/inf in ``A`` or ``b`` raise as in :func:`diagonal_scan` (``check_finite=False`` skips the check)."""
    check_choice("mode", mode, MODES)
    A = _scan_operand("A", A, 3, check_finite)
    b = _scan_operand("b", b, 2, check_finite)
    T, N = b.shape
    if A.shape != (T, N, N):
        raise ValueError(f"A: expected shape ({T}, {N}, {N}) to match b {b.shape}, received {A.shape}")
    return _dense_scan(A, b, mode=mode, precision=precision)


def _dense_scan(A: jax.Array, b: jax.Array, *, mode: str, precision: Precision | None) -> jax.Array:
    if mode == "parallel" and precision is None:

        def combine(left, right):
            a1, b1 = left
            a2, b2 = right
            return a2 @ a1, jnp.einsum("...ij,...j->...i", a2, b1) + b2

        return jax.lax.associative_scan(combine, (A, b), axis=0)[1]
    A = quantize(A, precision)
    b = quantize(b, precision)

    def step(h, ab):
        h = quantize(ab[0] @ h + ab[1], precision)
        return h, h

    return jax.lax.scan(step, jnp.zeros(b.shape[1:], b.dtype), (A, b))[1]


def reflection_scan(k: jax.Array, beta: jax.Array, b: jax.Array, *, check_finite: bool = True) -> jax.Array:
    """All states of ``h_t = H_{t,n} ⋯ H_{t,1} h_{t-1} + b_t`` (``h_0 = 0``, ``H_{t,j} = I - β_{t,j} k_{t,j} k_{t,j}ᵀ``).

    The same recurrence as :func:`dense_scan` of :func:`householder_product` matrices, but each reflection is
    applied to the state directly (``h - β k (kᵀ h)``: ``O(nN)`` per step instead of forming ``N × N`` products);
    ``k`` is ``(T, n, N)``, ``beta`` ``(T, n)``, ``b`` ``(T, N)``. Sequential (``lax.scan``), no rounding. NaN/inf
    inputs raise as in :func:`diagonal_scan` (``check_finite=False`` skips the check).
    """
    k = _scan_operand("k", k, 3, check_finite)
    beta = _scan_operand("beta", beta, 2, check_finite)
    b = _scan_operand("b", b, 2, check_finite)
    T, n, N = k.shape
    if beta.shape != (T, n):
        raise ValueError(f"beta: expected shape ({T}, {n}) to match k {k.shape}, received {beta.shape}")
    if b.shape != (T, N):
        raise ValueError(f"b: expected shape ({T}, {N}) to match k {k.shape}, received {b.shape}")

    def reflect(h, kb):
        kj, bj = kb
        return h - bj * kj * jnp.dot(kj, h), None

    def step(h, inp):
        kt, bt, b_t = inp
        h = jax.lax.scan(reflect, h, (kt, bt))[0] + b_t
        return h, h

    return jax.lax.scan(step, jnp.zeros(b.shape[1:], b.dtype), (k, beta, b))[1]


def _layer_bytes(
    variant: str,
    d_model: int,
    d_state: int,
    d_hidden: int,
    n_householder: int,
    conv_width: int,
    step_gate: bool,
) -> int:
    """The float32 parameters of one :class:`SSMLayer`, in bytes (checked before any is allocated)."""
    g = _n_gate(variant, d_state, n_householder, step_gate)
    s = 2 * d_state if variant in COMPLEX_VARIANTS else d_state
    f = s + d_model
    return 4 * (
        (g + s) * (d_model + 1) + conv_width * d_model + d_hidden * (f + 1) + d_model * (d_hidden + 1)
    )


def _n_gate(variant: str, d_state: int, n_householder: int, step_gate: bool = False) -> int:
    if variant in COMPLEX_VARIANTS:
        return 2 * d_state
    if variant == "dense":
        return n_householder * (d_state + 1) + int(step_gate)
    return d_state


class SSMLayer(eqx.Module):
    """One gated SSM layer with an MLP readout and a residual connection (acts on ``(T, d_model)``).

    ``state_norm=True`` divides the state features by their root mean square (``h / sqrt(mean(h²) + 1e-6)``)
    before the readout MLP, so a state whose magnitude drifts with the length (a near-1 gate accumulating, a
    slowly decaying memory) reads the same at length 500 as at length 40; off, the readout sees ``h`` itself.
    ``ring_init=True`` starts the selective gates near 1 (as the time-invariant one always does, LRU-style: at zero
    input ``|a| ~ U[0.9, 0.999]``; for ``dense`` the eigenvalue ``1 - β`` along each reflection vector), so
    training starts from a long memory instead of forgetting within a few steps. ``saturating=True`` lets every
    gate reach the ends of its range exactly (``|a| = 1``, ``a = 0``, ``β = 0`` or ``2``) through the stretched
    ``clip((1 + 2ε) σ(z) - ε, 0, 1)`` (``clip((1 + 2ε) tanh z, -1, 1)`` for the signed gate, ``ε = 0.25``)
    instead of only approaching them: a memory that must last 500 steps needs a gate of exactly 1 (float32
    rounds ``σ(z)`` to 1 only for ``z > 17``). ``coupled_input=True`` scales the write by how much the gate
    forgets, ``b_t ← (1 - |a_t|) b_t`` (``dense``: by the mean ``β_t / 2``, as DeltaNet writes ``β k vᵀ``), as in
    Mamba's discretization (``Δ`` sets both) and the RG-LRU: a gate of exactly 1 then holds the state exactly,
    with no drift from later inputs. ``conv_width=K > 0`` passes the layer input through a depthwise causal
    convolution of width ``K`` before the gates and writes read it, ``ũ_t = Σ_{j<K} w_j ⊙ u_{t-j}`` (Mamba's
    ``conv1d``, DeltaNet's short convolutions; initialized to the identity, ``w_0 = 1``): a gate can then depend on the
    previous few tokens (e.g. open only right after the start token) instead of inferring them from a decaying
    state. A finite window adds no counting or modular power. ``step_gate=True`` (``dense`` only) adds one shared
    step size per step, ``β_j = 2 g s_j`` with ``g, s_j ∈ [0, 1]`` (Mamba's ``Δ`` scales every entry of ``A``
    alike): a hold (``A = I``, and with ``coupled_input`` no write) then needs the one gate ``g = 0`` instead of
    every ``β_j = 0``; ``ring_init`` starts ``g`` near 0 and ``s_j`` at 1/2. The class (the range of ``A``) is
    unchanged: each factor is still a generalized Householder reflection with ``β_j ∈ [0, 2]``.
    """

    variant: str = eqx.field(static=True)
    d_model: int = eqx.field(static=True)
    d_state: int = eqx.field(static=True)
    n_householder: int = eqx.field(static=True)
    state_norm: bool = eqx.field(static=True)
    saturating: bool = eqx.field(static=True)
    coupled_input: bool = eqx.field(static=True)
    step_gate: bool = eqx.field(static=True)
    gate_w: jax.Array | None
    gate_b: jax.Array
    conv_w: jax.Array | None
    in_w: jax.Array
    in_b: jax.Array
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array

    def __init__(
        self,
        variant: str,
        d_model: int,
        d_state: int,
        *,
        key: PRNGKey,
        d_hidden: int | None = None,
        n_householder: int = 1,
        state_norm: bool = False,
        ring_init: bool = False,
        saturating: bool = False,
        coupled_input: bool = False,
        conv_width: int = 0,
        step_gate: bool = False,
    ):
        check_choice("variant", variant, VARIANTS)
        check_int("d_model", d_model, minimum=1)
        if step_gate and variant != "dense":
            raise ValueError(
                f"step_gate: only the 'dense' variant has a shared step size, received {variant!r}"
            )
        check_int("conv_width", conv_width, minimum=0)
        check_int("d_state", d_state, minimum=1)
        check_int("n_householder", n_householder, minimum=1)
        d_hidden = 2 * d_model if d_hidden is None else d_hidden
        check_int("d_hidden", d_hidden, minimum=1)
        check_key("key", key)
        check_size(
            "d_model, d_state, d_hidden, n_householder, conv_width",
            _layer_bytes(variant, d_model, d_state, d_hidden, n_householder, conv_width, bool(step_gate)),
        )
        self.variant, self.d_model, self.d_state, self.n_householder = (
            variant,
            d_model,
            d_state,
            n_householder,
        )
        self.state_norm, self.saturating = bool(state_norm), bool(saturating)
        self.coupled_input, self.step_gate = bool(coupled_input), bool(step_gate)
        kg, kb, k1, k2, kp = jax.random.split(key, 5)
        g = _n_gate(variant, d_state, n_householder, self.step_gate)
        s = 2 * d_state if variant in COMPLEX_VARIANTS else d_state
        scale = 1.0 / np.sqrt(d_model)
        if variant == "time_invariant":  # LRU-style ring init: |a| in [0.9, 0.999], small phases
            r = jax.random.uniform(kp, (d_state,), minval=0.9, maxval=0.999)
            ph = jax.random.uniform(jax.random.fold_in(kp, 1), (d_state,), minval=-0.2, maxval=0.2)
            self.gate_w = None
            self.gate_b = jnp.concatenate([jnp.log(r / (1 - r)), jnp.arctanh(ph)])
        else:
            self.gate_w = scale * jax.random.normal(kg, (g, d_model))
            if variant == "selective_complex":
                bias = jnp.concatenate([jnp.full((d_state,), 2.0), jnp.zeros((d_state,))])
            elif variant == "dense":
                bias = jnp.zeros((g,))
            else:
                bias = jnp.full((g,), 2.0 if variant == "selective_nonneg" else 1.0)
            if ring_init:  # |a| (dense: the eigenvalue 1 - β along each k) in [0.9, 0.999] at zero input
                m = n_householder if variant == "dense" else d_state
                r = jax.random.uniform(kp, (m,), minval=0.9, maxval=0.999)
                # the unit-interval gate value wanted: |a|, β_j / 2, or the shared step g = mean(1 - r) (with
                # s_j = 1/2, β_j = 1 - r on average)
                if variant != "dense":
                    u = r
                else:
                    u = jnp.mean(1 - r, keepdims=True) if self.step_gate else (1 - r) / 2
                if saturating:  # the pre-clip value, inside (0, 1) so that the gradient flows
                    u = (u + _SAT) / (1 + 2 * _SAT)
                if variant == "selective_signed":
                    bias = jnp.arctanh(r / (1 + 2 * _SAT) if saturating else r)
                elif variant == "dense" and self.step_gate:  # s_j biases stay 0 (s_j = 1/2)
                    bias = bias.at[-1:].set(jnp.log(u / (1 - u)))
                elif variant == "dense":
                    bias = bias.at[n_householder * d_state :].set(jnp.log(u / (1 - u)))
                else:
                    bias = bias.at[:d_state].set(jnp.log(u / (1 - u)))
            self.gate_b = bias
        self.in_w = scale * jax.random.normal(kb, (s, d_model))
        self.in_b = jnp.zeros((s,))
        self.conv_w = jnp.zeros((conv_width, d_model)).at[0].set(1.0) if conv_width else None
        f = s + d_model
        self.w1 = jax.random.normal(k1, (d_hidden, f)) / np.sqrt(f)
        self.b1 = jnp.zeros((d_hidden,))
        self.w2 = jax.random.normal(k2, (d_model, d_hidden)) / np.sqrt(d_hidden)
        self.b2 = jnp.zeros((d_model,))

    def transitions(self, u: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(A, b)`` for inputs ``u`` of shape ``(T, d)``: ``A`` is ``(T, N)`` (diagonal) or ``(T, N, N)``."""
        u = self._short_conv(u)
        n = self.d_state
        z = jnp.broadcast_to(self.gate_b, (u.shape[0], self.gate_b.shape[0]))
        if self.gate_w is not None:
            z = z + u @ self.gate_w.T
        bin_ = u @ self.in_w.T + self.in_b
        v = self.variant
        if v in COMPLEX_VARIANTS:
            r = self._unit(z[:, :n])
            a = r * jnp.exp(1j * jnp.pi * self._phase(z[:, n:]))
            return a, self._couple(jax.lax.complex(bin_[:, :n], bin_[:, n:]), 1 - r)
        if v == "selective_nonneg":
            a = self._unit(z)
            return a, self._couple(bin_, 1 - a)
        if v == "selective_signed":
            t = jnp.tanh(z)
            a = jnp.clip((1 + 2 * _SAT) * t, -1.0, 1.0) if self.saturating else t
            return a, self._couple(bin_, 1 - jnp.abs(a))
        k, beta = self._reflections(z)
        return jax.vmap(_householder_product)(k, beta), self._couple(bin_, beta.mean(-1, keepdims=True) / 2)

    def _phase(self, z: jax.Array) -> jax.Array:
        """The complex gate's phase in units of ``π``: ``tanh z``, or with ``saturating`` the stretched
        ``t = clip((1 + 2ε) tanh z, -1, 1)`` with a dead zone, ``sign(t) max(|t| - δ, 0) / (1 - δ)`` (``δ = 0.2``),
        so that both a phase of exactly 0 (a rotation-free hold: a phase of 1e-3 turns a held state by 0.5 rad in
        500 steps) and exactly ``±π`` are reached on open sets of ``z``."""
        t = jnp.tanh(z)
        if not self.saturating:
            return t
        t = jnp.clip((1 + 2 * _SAT) * t, -1.0, 1.0)
        return jnp.sign(t) * jnp.maximum(jnp.abs(t) - _PHASE_DEAD, 0.0) / (1 - _PHASE_DEAD)

    def _short_conv(self, u: jax.Array) -> jax.Array:
        """``conv_width > 0``: the depthwise causal convolution ``Σ_{j<K} w_j ⊙ u_{t-j}`` (zeros before ``t = 0``)."""
        if self.conv_w is None:
            return u
        K, T = self.conv_w.shape[0], u.shape[0]
        padded = jnp.concatenate([jnp.zeros((K - 1, u.shape[1]), u.dtype), u], 0)
        return sum(self.conv_w[j] * padded[K - 1 - j : K - 1 - j + T] for j in range(K))

    def _couple(self, b: jax.Array, scale: jax.Array) -> jax.Array:
        """``coupled_input``: the write ``b`` scaled by how much the gate forgets (``1 - |a|``; dense: mean β/2)."""
        return b * scale if self.coupled_input else b

    def _reflections(self, z: jax.Array) -> tuple[jax.Array, jax.Array]:
        n, m = self.d_state, self.n_householder
        k = z[:, : m * n].reshape(-1, m, n)
        k = k / jnp.sqrt(jnp.sum(k**2, axis=-1, keepdims=True) + 1e-12)
        if self.step_gate:  # β_j = 2 g s_j: one shared step size g times a per-factor strength s_j
            return k, 2.0 * self._unit(z[:, -1:]) * self._unit(z[:, m * n : m * n + m])
        return k, 2.0 * self._unit(z[:, m * n :])

    def _unit(self, z: jax.Array) -> jax.Array:
        """``σ(z)``, or with ``saturating`` the stretched ``clip((1 + 2ε) σ(z) - ε, 0, 1)`` (``ε = 0.25``)."""
        s = jax.nn.sigmoid(z)
        return jnp.clip((1 + 2 * _SAT) * s - _SAT, 0.0, 1.0) if self.saturating else s

    def states(
        self, u: jax.Array, *, mode: str = "parallel", precision: Precision | None = None
    ) -> jax.Array:
        """All hidden states ``(T, N)`` (complex for the complex variants).

        ``dense`` with ``mode="recurrent"`` and no ``precision`` applies the reflections to the state one by one
        (:func:`reflection_scan`, the cheap sequential form); with a ``precision`` it rounds ``A_t`` and every update.
        """
        if self.variant == "dense" and mode == "recurrent" and precision is None:
            u = self._short_conv(u)
            z = self.gate_b + u @ self.gate_w.T
            k, beta = self._reflections(z)
            return reflection_scan(
                k,
                beta,
                self._couple(u @ self.in_w.T + self.in_b, beta.mean(-1, keepdims=True) / 2),
                check_finite=False,
            )
        a, b = self.transitions(u)
        if self.variant == "dense":
            return _dense_scan(a, b, mode=mode, precision=precision)
        return _diagonal_scan(a, b, mode=mode, precision=precision)

    def __call__(
        self,
        u: jax.Array,
        *,
        mode: str = "parallel",
        precision: Precision | None = None,
        check_finite: bool = True,
    ) -> jax.Array:
        """``(T, d_model)`` outputs for inputs ``u`` ``(T, d_model)``. NaN/inf in ``u`` raise ``ValueError`` (a
        run-time error under ``jax.jit``); ``check_finite=False`` skips the check (:class:`SSMModel` does: its
        inputs are embeddings of checked tokens)."""
        if check_finite:
            u = finite_checked("u", u)
        h = self.states(u, mode=mode, precision=precision)
        feats = jnp.concatenate([h.real, h.imag], -1) if jnp.iscomplexobj(h) else h
        if self.state_norm:  # RMS norm of the state features: the readout sees directions, not magnitudes
            feats = quantize(feats * jax.lax.rsqrt(jnp.mean(feats**2, -1, keepdims=True) + 1e-6), precision)
        z = jnp.concatenate([feats, u], -1)
        hid = quantize(jax.nn.relu(z @ self.w1.T + self.b1), precision)
        return quantize(u + hid @ self.w2.T + self.b2, precision)


def check_tokens(name: str, tokens: Any, vocab: int) -> None:
    """Concrete integer tokens must lie in ``[0, vocab)`` (an embedding lookup clamps silently); no-op on tracers."""
    if is_tracer(tokens):
        return
    t = np.asarray(tokens)
    if not np.issubdtype(t.dtype, np.integer):
        raise TypeError(f"{name}: expected integer token ids, received dtype {t.dtype}")
    if t.size and (t.min() < 0 or t.max() >= vocab):
        raise ValueError(
            f"{name}: expected token ids in [0, {vocab - 1}], received range [{t.min()}, {t.max()}]"
        )


def _checked_ids(tokens: jax.Array, vocab: int) -> jax.Array:
    """``tokens`` unchanged, with a check that holds under ``jit`` too (the eager one is :func:`check_tokens`)."""
    tokens = jnp.asarray(tokens)
    if not is_tracer(tokens):
        return tokens
    bad = jnp.any((tokens < 0) | (tokens >= vocab))
    return traced_check(tokens, bad, f"tokens: expected token ids in [0, {vocab - 1}]")


class SSMModel(eqx.Module):
    """Token embedding, a residual stack of :class:`SSMLayer`, and a linear head: ``(T,)`` ints -> ``(T, C)``.

    Token ids outside ``[0, vocab)`` raise, eagerly (``ValueError``) and under ``jax.jit`` (an
    ``equinox.EquinoxRuntimeError`` through ``eqx.error_if``), instead of being clamped by the embedding lookup.
    """

    embed: jax.Array
    layers: tuple
    head_w: jax.Array
    head_b: jax.Array

    def __init__(
        self,
        variant: str,
        vocab: int,
        n_classes: int,
        *,
        key: PRNGKey,
        d_model: int = 32,
        d_state: int = 16,
        n_layers: int = 2,
        d_hidden: int | None = None,
        n_householder: int = 1,
        state_norm: bool = False,
        ring_init: bool = False,
        saturating: bool = False,
        coupled_input: bool = False,
        conv_width: int = 0,
        step_gate: bool = False,
    ):
        check_choice("variant", variant, VARIANTS)
        check_int("vocab", vocab, minimum=1)
        check_int("n_classes", n_classes, minimum=1)
        check_int("n_layers", n_layers, minimum=1)
        check_int("d_model", d_model, minimum=1)
        check_int("d_state", d_state, minimum=1)
        check_int("n_householder", n_householder, minimum=1)
        check_int("conv_width", conv_width, minimum=0)
        if d_hidden is not None:
            check_int("d_hidden", d_hidden, minimum=1)
        check_key("key", key)
        # the embedding and the readout (float32), allocated before the layers check their own sizes
        check_size("vocab, n_classes, d_model", 4 * (vocab + n_classes + 1) * d_model)
        # all the layers (each layer checks its own size too, but n_layers of them are allocated)
        layer = _layer_bytes(
            variant,
            d_model,
            d_state,
            2 * d_model if d_hidden is None else d_hidden,
            n_householder,
            conv_width,
            bool(step_gate),
        )
        check_size("n_layers, d_model, d_state, d_hidden, n_householder", n_layers * layer)
        ke, kh, *kl = jax.random.split(key, n_layers + 2)
        self.embed = jax.random.normal(ke, (vocab, d_model))
        self.layers = tuple(
            SSMLayer(
                variant,
                d_model,
                d_state,
                key=k,
                d_hidden=d_hidden,
                n_householder=n_householder,
                state_norm=state_norm,
                ring_init=ring_init,
                saturating=saturating,
                coupled_input=coupled_input,
                conv_width=conv_width,
                step_gate=step_gate,
            )
            for k in kl
        )
        self.head_w = jax.random.normal(kh, (n_classes, d_model)) / np.sqrt(d_model)
        self.head_b = jnp.zeros((n_classes,))

    @property
    def variant(self) -> str:
        return self.layers[0].variant

    def __call__(
        self, tokens: jax.Array, *, mode: str = "parallel", precision: Precision | None = None
    ) -> jax.Array:
        check_ndim("tokens", tokens, 1, what="one sequence (T,); vmap for batches")
        check_choice("mode", mode, MODES)
        check_tokens("tokens", tokens, self.embed.shape[0])
        if tokens.shape[0] == 0:
            raise ValueError("tokens: expected a sequence of at least one token, received shape (0,)")
        x = quantize(self.embed[_checked_ids(tokens, self.embed.shape[0])], precision)
        for layer in self.layers:
            x = layer(x, mode=mode, precision=precision, check_finite=False)
        return x @ self.head_w.T + self.head_b


__all__ = [
    "COMPLEX_VARIANTS",
    "MODES",
    "VARIANTS",
    "SSMLayer",
    "SSMModel",
    "dense_scan",
    "diagonal_scan",
    "householder_product",
    "reflection_scan",
]
