r"""Spectral mode mixing: the per-mode complex channel mixing of Fourier/Riesz neural operator layers.

$$
\mathrm{out}[b, o, k] = \sum_i x[b, i, k]\, W[i, o, k]
$$

for every retained Fourier mode ``k`` (a 1-D mode set, or an n-D mode set flattened to one axis); Li et al.,
"Fourier Neural Operator for Parametric PDEs", ICLR 2021, eq. (5).

Pallas has no complex dtype, so complex operands are carried as real/imaginary planes; the kernel accumulates
``re += xr wr - xi wi``, ``im += xr wi + xi wr`` over ``i`` for an output tile ``(block_b, block_o, block_k)``.
The mode axis ``k`` is the contiguous axis, so every load in the contraction loop is a coalesced row and no
transpose is needed (XLA's einsum lowers this to a batched matmul over ``k`` with transposes around it).

The backward pass is two more launches of the same tiled kernel:
``dx[b,i,k] = Σ_o g[b,o,k] conj(W[i,o,k])`` and ``dW[i,o,k] = Σ_b conj(x[b,i,k]) g[b,o,k]``
(in plane form; JAX's complex-gradient convention is then applied by the plane split/merge outside the kernel).

Dispatch (``interpret``): ``None`` → Pallas (Mosaic) on TPU, the XLA reference (``einsum``, precision ``HIGHEST``) on
CPU and GPU (on an H200 the Triton kernel took 2.7x XLA's time, forward and backward: docs/benchmarks.md);
``True`` → the Pallas body through the interpreter on any backend; ``False`` → the compiled kernel (GPU/TPU only).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
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

__all__ = ["spectral_mix", "spectral_mix_planes", "spectral_mix_reference"]

_FN = "spectral_mix"
# where interpret=None runs Pallas: on GPU XLA's einsum measured faster (docs/benchmarks.md)
_DEFAULT_BACKENDS = ("tpu",)


def spectral_mix_reference(
    x: jax.Array, w: jax.Array, *, precision=jax.lax.Precision.HIGHEST, check_finite: bool = True
) -> jax.Array:
    """XLA reference: ``einsum('bi...,io...->bo...', x, w)`` (mode axes trailing, any number of them).

    ``x`` is ``(B, I, *modes)`` and ``w`` ``(I, O, *modes)`` (``ValueError`` naming them otherwise); NaN/inf in
    either raise ``ValueError`` naming it (a run-time error under ``jax.jit``) unless ``check_finite=False``."""
    x = as_array(x, "x", _FN)
    w = as_array(w, "w", _FN)
    if x.ndim < 2 or w.ndim != x.ndim or w.shape[0] != x.shape[1] or w.shape[2:] != x.shape[2:]:
        raise ValueError(
            f"{_FN}: w: expected shape (I, O, *modes) matching x (B, I, *modes), received w.shape={w.shape}, "
            f"x.shape={x.shape}"
        )
    x, w = _finite(x, w, "x", "w", check_finite)
    return jnp.einsum("bi...,io...->bo...", x, w, precision=precision)


def _finite(
    a: jax.Array, b: jax.Array, aname: str, bname: str, check_finite: bool
) -> tuple[jax.Array, jax.Array]:
    if not isinstance(check_finite, bool):
        raise TypeError(f"{_FN}: check_finite must be a bool, received {check_finite!r}")
    if check_finite:
        a, b = finite_checked(a, aname, _FN), finite_checked(b, bname, _FN)
    return a, b


# ----------------------------------------------------------------------------------------------------------------
# Kernel: out[p, q, k] = Σ_c A(p, c, k) B(c, q, k) over planes.
#   A is stored as [p, c, k] ("pck") or [c, p, k] (a_cp=True); B as [c, q, k] ("cqk") or [q, c, k] (b_qc=True).
#   forward: A = x (p=b, c=i, pck), B = W (c=i, q=o, cqk)
#   dx:      A = g (p=b, c=o, pck), B = conj W (q=i, c=o, qck)
#   dW:      A = conj x (p=i, c=b, cpk), B = g (c=b, q=o, cqk)
# ----------------------------------------------------------------------------------------------------------------


def _mix_kernel(*refs, n: int, a_cp: bool, b_qc: bool, conj_a: bool, conj_b: bool, contract: int):
    a_refs, b_refs, o_refs = refs[:n], refs[n : 2 * n], refs[2 * n :]
    acc_dtype = o_refs[0].dtype

    def load_a(ref, c):
        v = ref[c, :, :] if a_cp else ref[:, c, :]  # (bp, bk)
        return v.astype(acc_dtype)[:, None, :]

    def load_b(ref, c):
        v = ref[:, c, :] if b_qc else ref[c, :, :]  # (bq, bk)
        return v.astype(acc_dtype)[None, :, :]

    def body(c, acc):
        av = [load_a(r, c) for r in a_refs]
        bv = [load_b(r, c) for r in b_refs]
        if n == 1:
            return (acc[0] + av[0] * bv[0],)
        ar, ai = av
        br, bi = bv
        if conj_a:
            ai = -ai
        if conj_b:
            bi = -bi
        return (acc[0] + (ar * br - ai * bi), acc[1] + (ar * bi + ai * br))

    shape = o_refs[0].shape
    init = tuple(jnp.zeros(shape, acc_dtype) for _ in range(n))
    acc = jax.lax.fori_loop(0, contract, body, init)
    for o, v in zip(o_refs, acc, strict=True):
        o[...] = v.astype(o.dtype)


def _default_blocks(p: int, q: int, k: int, n: int, interpret: bool) -> tuple[int, int, int]:
    plat = backend()
    if interpret or plat == "cpu":
        # The interpreter runs grid steps one after another: large tiles mean few steps.
        return (min(next_pow2(p), 16), min(next_pow2(q), 16), min(next_pow2(k), 64))
    if plat == "tpu":
        bk = k if k % 128 else 128
        bq = q if q <= 256 else pow2_block(q, 256, 8)
        return (pow2_block(p, 8, 8), bq, bk)
    # GPU (Triton): accumulator tile of <= 4096 (complex) / 8192 (real) elements per program.
    bk = pow2_block(k, 32, 8)
    budget = 8192 // n
    bq = pow2_block(q, 16, 4)
    bp = max(1, min(pow2_block(p, 16, 2), budget // (bq * bk)))
    bp = 1 << (bp.bit_length() - 1)
    return (bp, bq, bk)


def _mix_call(
    a: Planes,
    b: Planes,
    *,
    a_cp: bool,
    b_qc: bool,
    conj_a: bool,
    conj_b: bool,
    blocks: tuple[int | None, int | None, int | None],
    interpret: bool,
) -> Planes:
    n = len(a)
    if a_cp:
        contract, p, k = a[0].shape
    else:
        p, contract, k = a[0].shape
    q = b[0].shape[0] if b_qc else b[0].shape[1]
    dp, dq, dk = _default_blocks(p, q, k, n, interpret)
    bp = blocks[0] or dp
    bq = blocks[1] or dq
    bk = blocks[2] or dk
    bp, bq, bk = min(bp, next_pow2(p)), min(bq, next_pow2(q)), min(bk, next_pow2(k))
    a = tuple(pad_axis(pad_axis(x, 1 if a_cp else 0, bp), 2, bk) for x in a)
    b = tuple(pad_axis(pad_axis(x, 0 if b_qc else 1, bq), 2, bk) for x in b)
    pp, qq, kk = cdiv(p, bp) * bp, cdiv(q, bq) * bq, cdiv(k, bk) * bk
    grid = (pp // bp, qq // bq, kk // bk)
    if a_cp:
        a_spec = pl.BlockSpec((contract, bp, bk), lambda i, j, l: (0, i, l))
    else:
        a_spec = pl.BlockSpec((bp, contract, bk), lambda i, j, l: (i, 0, l))
    if b_qc:
        b_spec = pl.BlockSpec((bq, contract, bk), lambda i, j, l: (j, 0, l))
    else:
        b_spec = pl.BlockSpec((contract, bq, bk), lambda i, j, l: (0, j, l))
    o_spec = pl.BlockSpec((bp, bq, bk), lambda i, j, l: (i, j, l))
    dtype = jnp.result_type(*a, *b)
    acc_dtype = jnp.float32 if jnp.finfo(dtype).bits < 32 else dtype
    kernel = functools.partial(
        _mix_kernel, n=n, a_cp=a_cp, b_qc=b_qc, conj_a=conj_a, conj_b=conj_b, contract=contract
    )
    out = pl.pallas_call(
        kernel,
        out_shape=tuple(jax.ShapeDtypeStruct((pp, qq, kk), acc_dtype) for _ in range(n)),
        grid=grid,
        in_specs=[a_spec] * n + [b_spec] * n,
        out_specs=tuple(o_spec for _ in range(n)),
        interpret=interpret,
        compiler_params=compiler_params(interpret, num_warps=4, num_stages=2, dims=3),
        name="spectral_mix",
    )(*a, *b)
    return tuple(o[:p, :q, :k].astype(dtype) for o in out)


class _Cfg(NamedTuple):
    interpret: bool
    block_b: int | None
    block_o: int | None
    block_k: int | None


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _mix_core(xp: Planes, wp: Planes, cfg: _Cfg) -> Planes:
    return _mix_call(
        xp,
        wp,
        a_cp=False,
        b_qc=False,
        conj_a=False,
        conj_b=False,
        blocks=(cfg.block_b, cfg.block_o, cfg.block_k),
        interpret=cfg.interpret,
    )


def _mix_fwd(xp, wp, cfg):
    return _mix_core(xp, wp, cfg), (xp, wp)


def _mix_bwd(cfg, res, g):
    xp, wp = res
    g = tuple(g)
    # dx[b,i,k] = Σ_o g[b,o,k] conj(W[i,o,k])   (A = g as [p=b, c=o, k], B = W as [q=i, c=o, k])
    dx = _mix_call(
        g,
        wp,
        a_cp=False,
        b_qc=True,
        conj_a=False,
        conj_b=True,
        blocks=(cfg.block_b, None, cfg.block_k),
        interpret=cfg.interpret,
    )
    # dW[i,o,k] = Σ_b conj(x[b,i,k]) g[b,o,k]   (A = x as [c=b, p=i, k], B = g as [c=b, q=o, k])
    dw = _mix_call(
        xp,
        g,
        a_cp=True,
        b_qc=False,
        conj_a=True,
        conj_b=False,
        blocks=(None, cfg.block_o, cfg.block_k),
        interpret=cfg.interpret,
    )
    dx = tuple(d.astype(x.dtype) for d, x in zip(dx, xp, strict=True))
    dw = tuple(d.astype(x.dtype) for d, x in zip(dw, wp, strict=True))
    return dx, dw


_mix_core.defvjp(_mix_fwd, _mix_bwd)


def _check_shapes(xs: tuple[int, ...], ws: tuple[int, ...], xname: str = "x", wname: str = "w") -> None:
    if len(xs) < 3:
        raise ValueError(
            f"{_FN}: {xname} must have shape (B, I, *modes) with at least one mode axis, received {xs}"
        )
    if len(ws) != len(xs):
        raise ValueError(
            f"{_FN}: {wname} must have shape (I, O, *modes) with the same number of mode axes as {xname} "
            f"(expected {len(xs)} dims), received {wname}.shape={ws}, {xname}.shape={xs}"
        )
    if ws[0] != xs[1]:
        raise ValueError(f"{_FN}: {wname}.shape[0] (I={ws[0]}) must equal {xname}.shape[1] (I={xs[1]})")
    if ws[2:] != xs[2:]:
        raise ValueError(f"{_FN}: mode axes differ: {xname} has {xs[2:]}, {wname} has {ws[2:]}")
    if 0 in xs or 0 in ws:
        raise ValueError(
            f"{_FN}: empty axes are not supported, received {xname}.shape={xs}, {wname}.shape={ws}"
        )


def _check_blocks(block_b, block_o, block_k, interpret: bool) -> _Cfg:
    return _Cfg(
        interpret,
        check_block(block_b, "block_b", _FN, interpret),
        check_block(block_o, "block_o", _FN, interpret),
        check_block(block_k, "block_k", _FN, interpret),
    )


def spectral_mix(
    x: ArrayLike,
    w: ArrayLike,
    *,
    interpret: bool | None = None,
    block_b: int | None = None,
    block_o: int | None = None,
    block_k: int | None = None,
    check_finite: bool = True,
) -> jax.Array:
    """Per-mode channel mixing ``out[b,o,k] = Σ_i x[b,i,k] w[i,o,k]``.

    Args:
        x: ``(B, I, *modes)`` (or one sample ``(I, *modes)``), real floating or complex.
        w: ``(I, O, *modes)``, real floating or complex (same mode axes as ``x``).
        interpret: ``None`` dispatches (Pallas on TPU, XLA einsum on CPU and GPU); ``True`` runs the Pallas body in the
            interpreter; ``False`` forces the compiled kernel (GPU/TPU).
        block_b, block_o, block_k: tile sizes over batch, output channels and (flattened) modes; defaults per backend.
        check_finite: NaN/inf in ``x`` or ``w`` raise ``ValueError`` naming the argument (a run-time error under
            ``jax.jit``); ``False`` skips the check (callers that checked their inputs already).

    Returns:
        ``(B, O, *modes)`` (``(O, *modes)`` for one sample) with dtype ``result_type(x, w)``. Differentiable (``jax.custom_vjp`` with Pallas
        backward kernels for ``dx`` and ``dw``); composes with ``jit``/``vmap``/``grad`` and ``shard_map``.
    """
    x = as_array(x, "x", _FN)
    w = as_array(w, "w", _FN)
    if (
        x.ndim >= 2 and x.ndim == w.ndim - 1 and x.shape[0] == w.shape[0]
    ):  # one sample (I, *modes): add and drop a batch axis
        out = spectral_mix(
            x[None],
            w,
            interpret=interpret,
            block_b=block_b,
            block_o=block_o,
            block_k=block_k,
            check_finite=check_finite,
        )
        return out[0]
    _check_shapes(tuple(x.shape), tuple(w.shape))
    x, w = _finite(x, w, "x", "w", check_finite)
    pallas, interp = use_pallas(interpret, _FN, _DEFAULT_BACKENDS)
    cfg = _check_blocks(block_b, block_o, block_k, interp)
    dtype = jnp.result_type(x, w)
    if not pallas:
        return spectral_mix_reference(x.astype(dtype), w.astype(dtype), check_finite=False)
    is_complex = jnp.issubdtype(dtype, jnp.complexfloating)
    bsz, ci = x.shape[:2]
    co = w.shape[1]
    modes = x.shape[2:]
    k = 1
    for m in modes:
        k *= m
    xp = to_planes(x.astype(dtype).reshape(bsz, ci, k), is_complex)
    wp = to_planes(w.astype(dtype).reshape(ci, co, k), is_complex)
    out = from_planes(_mix_core(xp, wp, cfg))
    return out.reshape(bsz, co, *modes)


def spectral_mix_planes(
    xr: jax.Array,
    xi: jax.Array,
    wr: jax.Array,
    wi: jax.Array,
    *,
    interpret: bool | None = None,
    block_b: int | None = None,
    block_o: int | None = None,
    block_k: int | None = None,
    check_finite: bool = True,
) -> tuple[jax.Array, jax.Array]:
    """:func:`spectral_mix` on real/imaginary planes: returns ``(out_re, out_im)`` for ``x = xr + i xi``,
    ``w = wr + i wi`` (all real floating; ``xr, xi`` shaped ``(B, I, *modes)``, ``wr, wi`` ``(I, O, *modes)``).
    NaN/inf in a plane raise ``ValueError`` naming it (a run-time error under ``jax.jit``) unless
    ``check_finite=False``."""
    planes = {"xr": xr, "xi": xi, "wr": wr, "wi": wi}
    for name, v in planes.items():
        v = as_array(v, name, _FN)
        if not jnp.issubdtype(v.dtype, jnp.floating):
            raise TypeError(f"{_FN}: plane {name} must be real floating, received {v.dtype}")
    if xr.shape != xi.shape:
        raise ValueError(f"{_FN}: xr and xi must have the same shape, received {xr.shape} and {xi.shape}")
    if wr.shape != wi.shape:
        raise ValueError(f"{_FN}: wr and wi must have the same shape, received {wr.shape} and {wi.shape}")
    _check_shapes(tuple(xr.shape), tuple(wr.shape), "xr", "wr")
    xr, xi = _finite(xr, xi, "xr", "xi", check_finite)
    wr, wi = _finite(wr, wi, "wr", "wi", check_finite)
    pallas, interp = use_pallas(interpret, _FN, _DEFAULT_BACKENDS)
    cfg = _check_blocks(block_b, block_o, block_k, interp)
    dtype = jnp.result_type(xr, xi, wr, wi)
    xr, xi, wr, wi = (v.astype(dtype) for v in (xr, xi, wr, wi))
    if not pallas:
        hp = jax.lax.Precision.HIGHEST
        ein = functools.partial(jnp.einsum, "bi...,io...->bo...", precision=hp)
        return ein(xr, wr) - ein(xi, wi), ein(xr, wi) + ein(xi, wr)
    bsz, ci = xr.shape[:2]
    co = wr.shape[1]
    modes = xr.shape[2:]
    k = 1
    for m in modes:
        k *= m
    xp = (xr.reshape(bsz, ci, k), xi.reshape(bsz, ci, k))
    wp = (wr.reshape(ci, co, k), wi.reshape(ci, co, k))
    outr, outi = _mix_core(xp, wp, cfg)
    return outr.reshape(bsz, co, *modes), outi.reshape(bsz, co, *modes)
