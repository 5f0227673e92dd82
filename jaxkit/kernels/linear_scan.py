r"""Diagonal linear recurrence (the scan at the heart of S4D/LRU/Mamba-style SSM layers).

$$
h_t = a_t \odot h_{t-1} + b_t, \qquad h_{-1} = h_0
$$

(``reverse=True``: $h_t = a_t \odot h_{t+1} + b_t$, $h_T = h_0$), for real or complex diagonal ``a``;
Martin & Cundy, "Parallelizing Linear Recurrent Neural Nets Over Sequence Length", ICLR 2018; Orvieto et al.,
"Resurrecting Recurrent Neural Networks for Long Sequences" (LRU), ICML 2023.

The Pallas kernel gives each program one batch row and a tile of ``block_d`` channels and walks the whole sequence
in chunks of ``block_t`` steps: the loads of a chunk are issued together, the recurrence runs on the chunk with the
state carried in registers across chunks, then the chunk is stored. Memory traffic is the minimum (read ``a, b``,
write ``h``). Complex values are carried as real/imaginary planes.

Backward pass (itself a kernel, one launch): with cotangent ``g``, the adjoint state is the reverse scan
``λ_t = g_t + conj(a_{t+1}) λ_{t+1}``; then ``∂b_t = λ_t``, ``∂a_t = λ_t conj(h_{t-1})``, ``∂h_0 = conj(a_0) λ_0``
(plane form; JAX's complex convention is applied by the plane split/merge outside the kernel).

Dispatch (``interpret``): ``None`` → Pallas on GPU (Triton) / TPU (Mosaic), XLA reference on CPU; ``True`` → the
Pallas body through the interpreter on any backend; ``False`` → the compiled kernel (GPU/TPU only).
On TPU one program holds its ``(T, block_d)`` tiles in VMEM, which bounds ``T`` there.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.typing import ArrayLike

from ._common import (
    Planes,
    as_array,
    backend,
    cdiv,
    check_block,
    compiler_params,
    finite_checked,
    from_planes,
    next_pow2,
    pad_axis,
    pow2_block,
    to_planes,
    use_pallas,
)

__all__ = ["linear_scan", "linear_scan_reference"]

_FN = "linear_scan"


# ----------------------------------------------------------------------------------------------------------------
# Reference
# ----------------------------------------------------------------------------------------------------------------


def linear_scan_reference(
    a: ArrayLike,
    b: ArrayLike,
    h0: ArrayLike | None = None,
    *,
    reverse: bool = False,
    method: str = "associative",
    check_finite: bool = True,
) -> jax.Array:
    """XLA reference for :func:`linear_scan`: ``lax.associative_scan`` (default) or ``lax.scan`` over time.

    ``a`` and ``b`` have shape ``(T, D)`` or ``(B, T, D)`` (``a`` may also be any shape broadcastable to ``b``),
    ``h0`` has shape ``(D,)`` or ``(B, D)``; NumPy or JAX arrays. NaN/inf in ``a``, ``b`` or ``h0`` raise
    ``ValueError`` naming the argument (a run-time error under ``jax.jit``) unless ``check_finite=False``.
    """
    a, b, h0, dtype, squeeze = _prepare(a, b, h0, check_finite)
    out = _reference_3d(a, b, h0, reverse=reverse, method=method)
    return out[0] if squeeze else out


def _reference_3d(a, b, h0, *, reverse: bool, method: str) -> jax.Array:
    if h0 is not None:
        # Fold the initial state into the first (last, if reverse) input: h_first = a h0 + b.
        idx = -1 if reverse else 0
        b = b.at[:, idx].add(a[:, idx] * h0)
    if method == "associative":

        def combine(x, y):
            (ax, bx), (ay, by) = x, y
            return ay * ax, ay * bx + by

        _, h = jax.lax.associative_scan(combine, (a, b), axis=1, reverse=reverse)
        return h
    if method == "sequential":

        def step(h, ab):
            at, bt = ab
            h = at * h + bt
            return h, h

        init = jnp.zeros((b.shape[0], b.shape[2]), b.dtype)
        _, h = jax.lax.scan(step, init, (jnp.swapaxes(a, 0, 1), jnp.swapaxes(b, 0, 1)), reverse=reverse)
        return jnp.swapaxes(h, 0, 1)
    raise ValueError(
        f"linear_scan_reference: method must be 'associative' or 'sequential', received {method!r}"
    )


# ----------------------------------------------------------------------------------------------------------------
# Kernels (one program = one batch row x one tile of block_d channels; the whole sequence in chunks of block_t)
# ----------------------------------------------------------------------------------------------------------------


def _cmul(x: tuple, y: tuple, conj_x: bool = False) -> tuple:
    """Plane product ``x * y`` (or ``conj(x) * y``) for 1-plane (real) or 2-plane (complex) tuples."""
    if len(x) == 1:
        return (x[0] * y[0],)
    xr, xi = x
    yr, yi = y
    if conj_x:
        xi = -xi
    return (xr * yr - xi * yi, xr * yi + xi * yr)


def _cadd(x: tuple, y: tuple) -> tuple:
    return tuple(u + v for u, v in zip(x, y, strict=True))


def _time_loop(t_len: int, block_t: int, descending: bool, chunk_fn, carry):
    """Run ``chunk_fn(times, carry)`` over the sequence in chunks of ``block_t`` static-size steps (then a tail of
    single steps), walking ascending or descending time. ``times`` is a list of traced step indices."""
    n_full = t_len // block_t
    tail = t_len - n_full * block_t

    def index(s):  # s-th step in walking order -> time index
        return (t_len - 1 - s) if descending else s

    def full(c, carry):
        s0 = c * block_t
        return chunk_fn([index(s0 + j) for j in range(block_t)], carry)

    if n_full:
        carry = jax.lax.fori_loop(0, n_full, full, carry)
    if tail:

        def one(s, carry):
            return chunk_fn([index(s)], carry)

        carry = jax.lax.fori_loop(n_full * block_t, t_len, one, carry)
    return carry


def _scan_fwd_kernel(*refs, n: int, reverse: bool, block_t: int):
    a_refs, b_refs, h0_refs, o_refs = refs[:n], refs[n : 2 * n], refs[2 * n : 3 * n], refs[3 * n :]
    t_len = a_refs[0].shape[0]
    acc = o_refs[0].dtype

    def chunk(times, h):
        a = [tuple(r[t, :].astype(acc) for r in a_refs) for t in times]  # all loads of the chunk first
        b = [tuple(r[t, :].astype(acc) for r in b_refs) for t in times]
        hs = []
        for j in range(len(times)):
            h = _cadd(_cmul(a[j], h), b[j])
            hs.append(h)
        for t, hv in zip(times, hs, strict=True):
            for r, v in zip(o_refs, hv, strict=True):
                r[t, :] = v.astype(r.dtype)
        return h

    h = tuple(r[0, :].astype(acc) for r in h0_refs)
    _time_loop(t_len, block_t, reverse, chunk, h)


def _scan_bwd_kernel(*refs, n: int, reverse: bool, block_t: int):
    """Adjoint scan, walking opposite to the forward direction.

    For the forward scan (``reverse=False``): ``λ_t = g_t + conj(a_{t+1}) λ_{t+1}``, ``db_t = λ_t``,
    ``da_t = λ_t conj(h_{t-1})`` with ``h_{-1} = h0``. For ``reverse=True`` swap ``t+1`` and ``t-1``.
    """
    a_refs, h_refs, g_refs, h0_refs = refs[:n], refs[n : 2 * n], refs[2 * n : 3 * n], refs[3 * n : 4 * n]
    db_refs, da_refs = refs[4 * n : 5 * n], refs[5 * n :]
    t_len = a_refs[0].shape[0]
    acc = db_refs[0].dtype
    h0 = tuple(r[0, :].astype(acc) for r in h0_refs)
    step = 1 if reverse else -1  # time index of the *previous* forward state is t - (+1 fwd / -1 reverse)

    def chunk(times, carry):
        lam, a_next = carry
        a = [tuple(r[t, :].astype(acc) for r in a_refs) for t in times]
        g = [tuple(r[t, :].astype(acc) for r in g_refs) for t in times]
        hp = []
        for t in times:
            tp = t + step  # forward-previous state index
            valid = (tp >= 0) & (tp < t_len)
            tc = jnp.clip(tp, 0, t_len - 1)
            hp.append(
                tuple(jnp.where(valid, r[tc, :].astype(acc), h0v) for r, h0v in zip(h_refs, h0, strict=True))
            )
        lams, das = [], []
        for j in range(len(times)):
            lam = _cadd(g[j], _cmul(a_next, lam, conj_x=True))
            a_next = a[j]
            lams.append(lam)
            das.append(_cmul(hp[j], lam, conj_x=True))
        for t, lv, dv in zip(times, lams, das, strict=True):
            for r, v in zip(db_refs, lv, strict=True):
                r[t, :] = v.astype(r.dtype)
            for r, v in zip(da_refs, dv, strict=True):
                r[t, :] = v.astype(r.dtype)
        return (lam, a_next)

    zeros = tuple(jnp.zeros_like(v) for v in h0)
    _time_loop(t_len, block_t, not reverse, chunk, (zeros, zeros))


class _Cfg(NamedTuple):
    reverse: bool
    interpret: bool
    block_t: int | None
    block_d: int | None


def _blocks(t_len: int, d: int, n: int, cfg: _Cfg, bsz: int = 1, loads: int = 2) -> tuple[int, int]:
    plat = backend()
    if cfg.interpret or plat == "cpu":
        dt, dd = 8, min(next_pow2(d), 128)
    elif plat == "tpu":
        dt, dd = 8, (d if d % 128 else 128)
    else:
        # GPU: the scan is latency bound per program, so bandwidth comes from bytes in flight. One or two warps of
        # channels per program (many programs), and chunks long enough that all programs together have ~4 MiB
        # of loads outstanding: block_t ~ 4 MiB / (channels * bytes per step), clamped to [8, 64] and to <= 128
        # values held per thread (``loads`` arrays x n planes per step: 2n forward, 3n backward).
        dd = pow2_block(d, 64, 32)
        per_step = bsz * d * 4 * loads * n
        cap = max(8, 1 << ((128 // (loads * n)).bit_length() - 1))
        dt = min(64, cap, max(8, next_pow2(cdiv(4 << 20, per_step))))
    bt = cfg.block_t or dt
    bd = cfg.block_d or dd
    return min(bt, t_len), min(bd, next_pow2(d))


def _specs(bd: int, t_len: int, n_arrays: int, n_states: int):
    seq = pl.BlockSpec((None, t_len, bd), lambda i, j: (i, 0, j))
    st = pl.BlockSpec((None, 1, bd), lambda i, j: (i, 0, j))  # states travel as (B, 1, D) (TPU tiling rule)
    return seq, st


def _scan_fwd_call(a: Planes, b: Planes, h0: Planes, cfg: _Cfg) -> Planes:
    n = len(a)
    bsz, t_len, d = b[0].shape
    bt, bd = _blocks(t_len, d, n, cfg, bsz)
    a, b = (tuple(pad_axis(x, 2, bd) for x in p) for p in (a, b))
    h0 = tuple(pad_axis(x, 1, bd)[:, None, :] for x in h0)
    dp = cdiv(d, bd) * bd
    seq, st = _specs(bd, t_len, 2, 1)
    dtype = jnp.result_type(*a, *b, *h0)
    acc = jnp.float32 if jnp.finfo(dtype).bits < 32 else dtype
    out = pl.pallas_call(
        functools.partial(_scan_fwd_kernel, n=n, reverse=cfg.reverse, block_t=bt),
        out_shape=tuple(jax.ShapeDtypeStruct((bsz, t_len, dp), acc) for _ in range(n)),
        grid=(bsz, dp // bd),
        in_specs=[seq] * (2 * n) + [st] * n,
        out_specs=tuple(seq for _ in range(n)),
        interpret=cfg.interpret,
        compiler_params=compiler_params(cfg.interpret, num_warps=_warps(bd), num_stages=1, dims=2),
        name="linear_scan_fwd",
    )(*a, *b, *h0)
    return tuple(o[:, :, :d].astype(dtype) for o in out)


def _scan_bwd_call(a: Planes, h: Planes, g: Planes, h0: Planes, cfg: _Cfg) -> tuple[Planes, Planes]:
    n = len(a)
    bsz, t_len, d = a[0].shape
    bt, bd = _blocks(t_len, d, n, cfg, bsz, loads=3)
    a, h, g = (tuple(pad_axis(x, 2, bd) for x in p) for p in (a, h, g))
    h0 = tuple(pad_axis(x, 1, bd)[:, None, :] for x in h0)
    dp = cdiv(d, bd) * bd
    seq, st = _specs(bd, t_len, 3, 1)
    dtype = jnp.result_type(*a, *h, *g, *h0)
    acc = jnp.float32 if jnp.finfo(dtype).bits < 32 else dtype
    out = pl.pallas_call(
        functools.partial(_scan_bwd_kernel, n=n, reverse=cfg.reverse, block_t=bt),
        out_shape=tuple(jax.ShapeDtypeStruct((bsz, t_len, dp), acc) for _ in range(2 * n)),
        grid=(bsz, dp // bd),
        in_specs=[seq] * (3 * n) + [st] * n,
        out_specs=tuple(seq for _ in range(2 * n)),
        interpret=cfg.interpret,
        compiler_params=compiler_params(cfg.interpret, num_warps=_warps(bd), num_stages=1, dims=2),
        name="linear_scan_bwd",
    )(*a, *h, *g, *h0)
    out = tuple(o[:, :, :d].astype(dtype) for o in out)
    return out[:n], out[n:]


def _warps(bd: int) -> int:
    return max(1, min(8, bd // 32))


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _scan_core(a: Planes, b: Planes, h0: Planes, cfg: _Cfg) -> Planes:
    return _scan_fwd_call(a, b, h0, cfg)


def _scan_core_fwd(a, b, h0, cfg):
    h = _scan_fwd_call(a, b, h0, cfg)
    return h, (a, h, h0)


def _scan_core_bwd(cfg, res, g):
    a, h, h0 = res
    db, da = _scan_bwd_call(a, h, tuple(g), h0, cfg)
    idx = -1 if cfg.reverse else 0
    # ∂h0 = conj(a_first) λ_first
    dh0 = _cmul(tuple(x[:, idx] for x in a), tuple(x[:, idx] for x in db), conj_x=True)
    return da, db, tuple(v.astype(x.dtype) for v, x in zip(dh0, h0, strict=True))


_scan_core.defvjp(_scan_core_fwd, _scan_core_bwd)


# ----------------------------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------------------------


def _jax_array(x):
    """A numeric NumPy array (or scalar) as a JAX array (the scan indexes with ``.at``); anything else unchanged,
    for :func:`as_array` to accept or refuse."""
    if isinstance(x, np.ndarray | np.generic) and x.dtype.kind in "biufc":
        return jnp.asarray(x)
    return x


def _prepare(a, b, h0, check_finite: bool = True):
    """Validate and bring ``a, b, h0`` to ``(B, T, D)``, ``(B, T, D)``, ``(B, D)`` (h0 may stay None)."""
    if not isinstance(check_finite, bool):
        raise TypeError(f"{_FN}: check_finite must be a bool, received {check_finite!r}")
    b = as_array(_jax_array(b), "b", _FN)
    a = as_array(_jax_array(a), "a", _FN)
    if b.ndim not in (2, 3):
        raise ValueError(f"{_FN}: b must have shape (T, D) or (B, T, D), received shape {tuple(b.shape)}")
    if 0 in b.shape:
        raise ValueError(f"{_FN}: empty axes are not supported, received b.shape={tuple(b.shape)}")
    try:
        jnp.broadcast_shapes(a.shape, b.shape)
        ok = jnp.broadcast_shapes(a.shape, b.shape) == tuple(b.shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{_FN}: a must have the shape of b {tuple(b.shape)} (or broadcast to it), received {tuple(a.shape)}"
        )
    squeeze = b.ndim == 2
    d = b.shape[-1]
    bsz = 1 if squeeze else b.shape[0]
    dtypes = [a.dtype, b.dtype]
    if h0 is not None:
        h0 = as_array(_jax_array(h0), "h0", _FN)
        want = (d,) if squeeze else (bsz, d)
        if tuple(h0.shape) not in {want, (d,)}:
            shapes = f"{want}" if want == (d,) else f"{want} (or ({d},))"
            raise ValueError(f"{_FN}: h0 must have shape {shapes}, received {tuple(h0.shape)}")
        dtypes.append(h0.dtype)
    if check_finite:
        a, b = finite_checked(a, "a", _FN), finite_checked(b, "b", _FN)
        if h0 is not None:
            h0 = finite_checked(h0, "h0", _FN)
    dtype = jnp.result_type(*dtypes)
    a = jnp.broadcast_to(a.astype(dtype), b.shape)
    b = b.astype(dtype)
    if squeeze:
        a, b = a[None], b[None]
    if h0 is not None:
        h0 = jnp.broadcast_to(h0.astype(dtype), (bsz, d))
    return a, b, h0, dtype, squeeze


def linear_scan(
    a: ArrayLike,
    b: ArrayLike,
    h0: ArrayLike | None = None,
    *,
    reverse: bool = False,
    interpret: bool | None = None,
    block_t: int | None = None,
    block_d: int | None = None,
    check_finite: bool = True,
) -> jax.Array:
    """All states of the diagonal linear recurrence ``h_t = a_t ⊙ h_{t-1} + b_t`` (``h_{-1} = h0``).

    Args:
        a: decay/transition, real floating or complex; shape of ``b`` (or broadcastable to it, e.g. ``(D,)``).
        b: input, shape ``(T, D)`` or ``(B, T, D)`` (NumPy or JAX arrays, as ``a`` and ``h0``).
        h0: optional initial state, ``(D,)`` or ``(B, D)``; zero if omitted.
        reverse: scan from the end (``h_t = a_t ⊙ h_{t+1} + b_t``, ``h_T = h0``).
        interpret: ``None`` dispatches (Pallas on GPU/TPU, XLA ``lax.scan`` on CPU); ``True`` runs the
            Pallas body in the interpreter; ``False`` forces the compiled kernel (GPU/TPU).
        block_t: time steps per chunk (loads issued together); block_d: channels per program.
        check_finite: NaN/inf in ``a``, ``b`` or ``h0`` raise ``ValueError`` naming the argument (a run-time
            error under ``jax.jit``) instead of spreading into every later state; ``False`` skips the check (for
            callers whose inputs are already checked, such as the SSM layers).

    Returns:
        ``h`` with the shape of ``b`` and dtype ``result_type(a, b, h0)``. Differentiable (``jax.custom_vjp``;
        the backward pass is the reverse-direction adjoint scan kernel).
    """
    if not isinstance(reverse, bool):
        raise TypeError(f"{_FN}: reverse must be a bool, received {reverse!r}")
    a, b, h0, dtype, squeeze = _prepare(a, b, h0, check_finite)
    pallas, interp = use_pallas(interpret, _FN)
    cfg = _Cfg(
        reverse,
        interp,
        check_block(block_t, "block_t", _FN, True),  # block_t is a loop-chunk length: any positive int
        check_block(block_d, "block_d", _FN, interp),
    )
    if not pallas:
        # lax.scan: on CPU it is 3-8x faster than lax.associative_scan (forward and backward) at SSM sizes.
        out = _reference_3d(a, b, h0, reverse=reverse, method="sequential")
    else:
        is_complex = jnp.issubdtype(dtype, jnp.complexfloating)
        if h0 is None:
            h0 = jnp.zeros((b.shape[0], b.shape[2]), dtype)
        out = from_planes(
            _scan_core(to_planes(a, is_complex), to_planes(b, is_complex), to_planes(h0, is_complex), cfg)
        )
    return out[0] if squeeze else out
