"""Spectral layers of FNO and RNO: functional cores plus thin Equinox containers (one sample; batch with vmap).

* :func:`spectral_conv` — FNO's Fourier layer (Li et al., ICLR 2021): ``y = F⁻¹[ P_K(W(k) û(k)) ]`` with complex
  per-mode weights ``W(k)`` on the lowest modes ``K`` (``|q_a| < m_a`` on every axis; ``q_last = 0..m-1`` on the
  ``rfft`` axis) and zero elsewhere.
* :func:`riesz_spectral_conv` — the Riesz layer of RNO (ICLR 2026). A *global* branch applies the directional
  mixer to the kept modes, ``W(k) (α₀ + Σ_j w_j m_j(k)) û(k)`` with ``m_j = -i k_j/|k|`` (first order) or the
  second-order multipliers ``-k_a k_b/|k|²``; ``α₀, w_j`` are learnable per input channel (or per mode and channel
  with ``per_mode``). A *local* branch carries the Riesz channels over the *full* band (all modes, no truncation)
  and mixes them pointwise, ``Σ_j L_j (R_j u)``: directional, derivative-like detail that the truncated global
  branch cannot represent. ``branch="mix"`` (default) sums both; ``"global"`` and ``"local"`` are the ablations.

Two paths, same maths (tested against each other in float64). **CPU**: the kept modes are computed by truncated
real DFTs (GEMMs, ``_spectral._rdft_kept``/``_irdft_kept``) and mixed, ``out[o,k] = Σ_i x[i,k] W[i,o,k]``, by real
batched GEMMs over the modes; pointwise maps are per-sample batched GEMMs (:func:`_per_sample`). Written so that
under ``jax.vmap`` XLA:CPU never copies or transposes the hidden field. **GPU/TPU**: ``rfftn``/``irfftn`` and
:func:`mode_mix`, i.e. ``jaxkit.kernels.spectral_mix`` (Pallas). RNO's full-band local branch uses ``rfftn`` on both.
Complex weights are stored as real/imaginary planes (``weight_re``, ``weight_im``) so that every parameter is real,
mode-major, ``(*kept, I, O)``: the layout in which the CPU path's per-mode GEMMs read the weights and produce their
gradients, so the optimizer reads them contiguously (stored ``(I, O, *kept)``, the gradient arrived transposed and
XLA re-read it with strides in each of Adam's fused updates: 26% of a 2-D RNO training step).
Both layers are resolution-consistent: the kept wavenumbers are fixed integers ``q``, independent of the grid size,
so a band-limited input sampled at ``n`` and ``2n`` gives the same output on the common points.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit.kernels.spectral_mix import (
    spectral_mix as _kernel_spectral_mix,  # Pallas on TPU, XLA einsum on CPU/GPU
)

from .._typing import Array, ArrayLike, Float, PRNGKey
from .._validate import (
    check_choice,
    check_finite,
    check_int,
    check_key,
    check_size,
    error_if_invalid,
    finite_checked,
    is_tracer,
)
from ._spectral import _irdft_kept, _lengths, _rdft_kept, riesz_multipliers, riesz_pairs

__all__ = [
    "InstanceNorm",
    "gelu",
    "Pointwise",
    "RieszSpectralConv",
    "SpectralConv",
    "instance_norm",
    "kept_riesz_multipliers",
    "mode_mix",
    "pointwise",
    "riesz_spectral_conv",
    "spectral_conv",
]


# ----------------------------------------------------------------------------------------------------------------
# functional cores
# ----------------------------------------------------------------------------------------------------------------
def mode_mix(x: Array, w: Array) -> Array:
    """``out[o, k] = Σ_i x[i, k] w[i, o, k]`` for complex ``x`` ``(I, *modes)`` and ``w`` ``(I, O, *modes)``.

    One sample (the batch axis of ``jaxkit.kernels.spectral_mix`` is 1 here; under ``jax.vmap`` it becomes the batch).
    """
    return _kernel_spectral_mix(x[None], w, check_finite=False)[0]


def _complex(re: Array, im: Array) -> Array:
    return jax.lax.complex(re, im)


def _io_major(w: Array) -> Array:
    """Stored mode-major weights ``(*kept, I, O)`` in the layout of ``jaxkit.kernels.spectral_mix``, ``(I, O, *kept)``."""
    return jnp.moveaxis(w, (-2, -1), (0, 1))


def _check_resolution(grid: Sequence[int], modes: Sequence[int], name: str = "u") -> None:
    if len(grid) != len(modes):
        raise ValueError(
            f"{name}: expected {len(modes)} spatial axes (one per entry of modes={tuple(modes)}), "
            f"received {len(grid)} (spatial shape {tuple(grid)})"
        )
    for a, (n, m) in enumerate(zip(grid, modes)):
        if n < 2 * m:
            raise ValueError(
                f"{name}: spatial axis {a} has {n} points, below twice the number of modes ({m}); a resolution "
                f">= {2 * m} is needed to hold the kept modes"
            )


def _gather_modes(uh: Array, modes: Sequence[int]) -> Array:
    """Kept block of an ``rfftn`` spectrum ``(C, *spec)``: ``q = 0..m-1, -m..-1`` on leading axes, ``0..m-1`` last."""
    d = len(modes)
    out = uh[..., : modes[-1]]
    for a in range(d - 1):
        ax = 1 + a
        m = modes[a]
        lo = jax.lax.slice_in_dim(out, 0, m, axis=ax)
        hi = jax.lax.slice_in_dim(out, out.shape[ax] - m, out.shape[ax], axis=ax)
        out = jnp.concatenate([lo, hi], axis=ax)
    return out


def _scatter_modes(kept: Array, grid: Sequence[int], modes: Sequence[int]) -> Array:
    """Inverse of :func:`_gather_modes`: zero-filled ``rfftn`` spectrum ``(C, *spec)`` holding ``kept``."""
    d = len(modes)
    out = kept
    for a in range(d - 1):
        ax = 1 + a
        m, n = modes[a], grid[a]
        lo = jax.lax.slice_in_dim(out, 0, m, axis=ax)
        hi = jax.lax.slice_in_dim(out, m, 2 * m, axis=ax)
        zshape = list(out.shape)
        zshape[ax] = n - 2 * m
        out = jnp.concatenate([lo, jnp.zeros(zshape, out.dtype), hi], axis=ax)
    pad = [(0, 0)] * out.ndim
    pad[-1] = (0, grid[-1] // 2 + 1 - modes[-1])
    return jnp.pad(out, pad)


def _kept_q(modes: Sequence[int]) -> list[np.ndarray]:
    qs = []
    for a, m in enumerate(modes):
        if a == len(modes) - 1:
            qs.append(np.arange(m))
        else:
            qs.append(np.concatenate([np.arange(m), np.arange(-m, 0)]))
    return qs


def kept_riesz_multipliers(
    modes: Sequence[int], order: int = 1, lengths: float | Sequence[float] | None = None
) -> np.ndarray:
    """Riesz multipliers evaluated on the kept modes of a layer (grid-independent): ``(n_dirs, *kept)`` complex.

    ``n_dirs = d`` for ``order=1`` (``-i k_j/|k|``) and ``d(d+1)/2`` for ``order=2`` (``-k_a k_b/|k|²``).
    """
    modes = _as_modes(modes)
    d = len(modes)
    ls = _lengths(lengths, d)  # one finite length > 0 per axis (ValueError naming lengths otherwise)
    qs = _kept_q(modes)
    ks = np.meshgrid(*[2 * np.pi * q / length for q, length in zip(qs, ls)], indexing="ij")
    knorm = np.sqrt(sum(k**2 for k in ks))
    safe = np.where(knorm == 0, 1.0, knorm)
    if order == 1:
        ms = [np.where(knorm == 0, 0.0, -1j * k / safe) for k in ks]
    elif order == 2:
        ms = [np.where(knorm == 0, 0.0, -ks[a] * ks[b] / safe**2) + 0j for a, b in riesz_pairs(d)]
    else:
        raise ValueError(f"order: expected 1 or 2, received {order}")
    return np.stack(ms).astype(np.complex128)


def _rfftn(u: Array) -> Array:
    axes = tuple(range(1, u.ndim))
    return jnp.fft.rfftn(u, axes=axes)


def _irfftn(uh: Array, grid: Sequence[int]) -> Array:
    axes = tuple(range(1, uh.ndim))
    return jnp.fft.irfftn(uh, s=tuple(grid), axes=axes)


def _use_dft() -> bool:
    """Spectral path: truncated DFT as GEMMs on CPU (no transposes of the field, see ``_rdft_kept``); ``rfftn`` +
    ``jaxkit.kernels.spectral_mix`` (Pallas on TPU, XLA ``einsum`` on GPU) elsewhere."""
    return jax.default_backend() == "cpu"


def _mix_kept(x: Array, w_re: Array, w_im: Array) -> Array:
    """``out[o, k] = Σ_i x[i, k] w[k, i, o]`` on planes: ``x`` ``(I, 2, *kept)``, ``w = w_re + i w_im``
    ``(*kept, I, O)`` -> ``(O, 2, *kept)``.

    Four real batched GEMMs over the kept modes (``Re = x_r w_r - x_i w_i``, ``Im = x_r w_i + x_i w_r``); the
    weights are read, and their gradients written, in their stored mode-major layout, and the batch of
    ``jax.vmap`` rides along as a free axis.
    """
    d = w_re.ndim - 2
    dims = (((0,), (d,)), (tuple(range(1, d + 1)), tuple(range(d))))

    def mm(xp: Array, wp: Array) -> Array:  # (I, *kept) x (*kept, I, O) -> (*kept, O)
        return jax.lax.dot_general(xp, wp.astype(x.dtype), dims, precision=jax.lax.Precision.HIGHEST)

    xr, xi = x[:, 0], x[:, 1]
    out = jnp.stack([mm(xr, w_re) - mm(xi, w_im), mm(xr, w_im) + mm(xi, w_re)], axis=-1)  # (*kept, O, 2)
    return jnp.moveaxis(out, (-2, -1), (0, 1))


def spectral_conv(
    u: Float[Array, "cin *grid"],
    weight_re: Float[Array, "*kept cin cout"],
    weight_im: Float[Array, "*kept cin cout"],
) -> Float[Array, "cout *grid"]:
    """FNO Fourier layer on one sample ``u`` ``(I, *grid)``; weights ``(2m_1, ..., 2m_{d-1}, m_d, I, O)``.

    ``y = irfftn(P_K(W û))``. On CPU the kept modes are computed by truncated real DFTs (GEMMs, ``_rdft_kept`` /
    ``_irdft_kept``) and mixed by one real batched GEMM over the modes; on GPU/TPU by ``rfftn`` and
    ``jaxkit.kernels.spectral_mix``. Same maths either way. ``u`` and the weights must be finite
    (``ValueError`` naming them; under ``jax.jit``/``vmap`` a run-time error through ``equinox.error_if``); the
    models' own layers skip this check (their inputs are checked once at the model's boundary).
    """
    if np.shape(weight_im) != np.shape(weight_re):
        raise ValueError(
            f"weight_im: expected the shape of weight_re {np.shape(weight_re)}, received {np.shape(weight_im)}"
        )
    if (
        np.ndim(weight_re) < 3
        or np.ndim(u) != np.ndim(weight_re) - 1
        or np.shape(weight_re)[-2] != np.shape(u)[0]
    ):
        raise ValueError(
            f"weight_re: expected shape (*kept, cin, cout) with one kept-mode axis per grid axis of u and cin = the "
            f"channels of u {np.shape(u)}, received {np.shape(weight_re)}"
        )
    u = finite_checked("u", u)
    weight_re, weight_im = finite_checked("weight_re", weight_re), finite_checked("weight_im", weight_im)
    return _spectral_conv(u, weight_re, weight_im)


def _spectral_conv(u: Array, weight_re: Array, weight_im: Array) -> Array:
    """:func:`spectral_conv` without the finite checks (inside the models)."""
    modes = _modes_from_kept(weight_re.shape[:-2])
    grid = u.shape[1:]
    _check_resolution(grid, modes)
    if _use_dft():
        return _irdft_kept(_mix_kept(_rdft_kept(u, modes), weight_re, weight_im), grid, modes).astype(u.dtype)
    return _spectral_conv_fft(u, _complex(weight_re, weight_im), modes)


def _spectral_conv_fft(u: Array, w: Array, modes: Sequence[int]) -> Array:
    grid = u.shape[1:]
    kept = _gather_modes(_rfftn(u), modes)
    mixed = mode_mix(kept, _io_major(w))
    return _irfftn(_scatter_modes(mixed, grid, modes), grid).astype(u.dtype)


def _modes_from_kept(kept: Sequence[int]) -> tuple[int, ...]:
    kept = tuple(int(k) for k in kept)
    return tuple(k // 2 for k in kept[:-1]) + (kept[-1],)


def _riesz_weight(
    w_re: Array, w_im: Array, alpha: Array, w_dir: Array, modes: Sequence[int], order: int, lengths: Any
) -> tuple[Array, Array]:
    """Fold the directional mixer into the per-mode weights, ``W'(k)_io = (α₀ + Σ_j w_j m_j(k))_i W(k)_io``;
    returns the real and imaginary planes of ``W'``."""
    d = len(modes)
    c_in = w_re.shape[-2]
    mk = kept_riesz_multipliers(modes, order, lengths)  # (J, *kept) complex, static
    mk = np.moveaxis(mk, 0, -1)[..., None, :]  # (*kept, 1, J)
    a = alpha[..., None] if alpha.ndim > 1 else alpha.reshape((1,) * d + (c_in, 1))  # (*kept | 1s, I, 1)
    wd = w_dir if w_dir.ndim > 2 else w_dir.T.reshape((1,) * d + (c_in, w_dir.shape[0]))  # (*kept | 1s, I, J)
    f_re = a + jnp.sum(wd * jnp.asarray(mk.real, wd.dtype), axis=-1, keepdims=True)  # (*kept, I, 1)
    f_im = jnp.sum(wd * jnp.asarray(mk.imag, wd.dtype), axis=-1, keepdims=True)
    return f_re * w_re - f_im * w_im, f_re * w_im + f_im * w_re


def _mix_modes(kept: Array, w_re: Array, w_im: Array) -> Array:
    """Complex ``Σ_i kept_i w_io`` per mode: real planes and batched GEMMs on CPU, ``jaxkit.kernels.spectral_mix`` else."""
    if not _use_dft():
        return mode_mix(kept, _io_major(_complex(w_re, w_im)))
    planes = jnp.stack([jnp.real(kept), jnp.imag(kept)], axis=1)  # (I, 2, *kept)
    out = _mix_kept(planes, w_re, w_im)
    return jax.lax.complex(out[:, 0], out[:, 1])


def _check_riesz_params(
    u: Any, w_re: Any, w_im: Any, alpha: Any, w_dir: Any, local: Any, modes: tuple[int, ...], order: int
) -> None:
    """Shapes of the Riesz layer's parameters (static, free under ``jit``) and, on concrete arrays only (eager
    calls; a no-op on tracers, so training steps are unchanged), finite values."""
    d, c_in = len(modes), u.shape[0]
    n_dirs = d if order == 1 else d * (d + 1) // 2
    kept = tuple(2 * m for m in modes[:-1]) + (modes[-1],)
    if w_re is not None:
        if w_im is None or alpha is None or w_dir is None:
            raise ValueError(
                "weight_im, alpha, w_dir: expected arrays with weight_re (the global branch), received None"
            )
        sh = tuple(w_re.shape)
        if len(sh) != d + 2 or sh[:d] != kept or sh[d] != c_in:
            raise ValueError(f"weight_re: expected shape {(*kept, c_in, 'cout')}, received {sh}")
        if tuple(w_im.shape) != sh:
            raise ValueError(f"weight_im: expected shape {sh} (as weight_re), received {tuple(w_im.shape)}")
        if tuple(alpha.shape) not in ((c_in,), (*kept, c_in)):
            raise ValueError(
                f"alpha: expected shape {(c_in,)} or {(*kept, c_in)}, received {tuple(alpha.shape)}"
            )
        if tuple(w_dir.shape) not in ((n_dirs, c_in), (*kept, c_in, n_dirs)):
            raise ValueError(
                f"w_dir: expected shape {(n_dirs, c_in)} or {(*kept, c_in, n_dirs)}, received {tuple(w_dir.shape)}"
            )
    if local is not None:
        sh = tuple(local.shape)
        if len(sh) != 3 or sh[0] != n_dirs or sh[2] != c_in:
            raise ValueError(f"local_weight: expected shape {(n_dirs, 'cout', c_in)}, received {sh}")
    for name, x in (
        ("weight_re", w_re),
        ("weight_im", w_im),
        ("alpha", alpha),
        ("w_dir", w_dir),
        ("local_weight", local),
    ):
        if x is not None:
            check_finite(name, x)


def riesz_spectral_conv(
    u: Float[Array, "cin *grid"],
    weight_re: Float[Array, "*kept cin cout"] | None,
    weight_im: Float[Array, "*kept cin cout"] | None,
    alpha: Float[Array, "..."] | None,
    w_dir: Float[Array, "..."] | None,
    local_weight: Float[Array, "dirs cout cin"] | None,
    *,
    modes: Sequence[int],
    order: int = 1,
    lengths: float | Sequence[float] | None = None,
) -> Float[Array, "cout *grid"]:
    """RNO Riesz layer on one sample ``u`` ``(I, *grid)``.

    Global branch (if ``weight_re`` is given): ``W(k) (α₀ + Σ_j w_j m_j(k)) û(k)`` on the kept modes, with
    ``alpha`` of shape ``(I,)`` or ``(*kept, I)`` and ``w_dir`` of shape ``(n_dirs, I)`` or ``(*kept, I, n_dirs)``
    (per mode).
    Local branch (if ``local_weight`` ``(n_dirs, O, I)`` is given): ``Σ_j L_j R_j u`` over the full band.

    The mixer is folded into the weights (``W'_io = (α₀ + Σ_j w_j m_j)_i W_io``, same product). Global only: the
    path of :func:`spectral_conv`. With the local branch both share one ``rfftn``/``irfftn``; the local channel
    mixing ``L_j û`` is a real GEMM on the real and imaginary planes.
    """
    modes = tuple(int(m) for m in modes)
    grid = u.shape[1:]
    _check_resolution(grid, modes)
    _check_riesz_params(u, weight_re, weight_im, alpha, w_dir, local_weight, modes, order)
    w = None
    if weight_re is not None:
        w = _riesz_weight(weight_re, weight_im, alpha, w_dir, modes, order, lengths)
    if local_weight is None:
        if w is None:
            raise ValueError(
                "riesz_spectral_conv: at least one of the global or local branches must be given"
            )
        if _use_dft():
            return _irdft_kept(_mix_kept(_rdft_kept(u, modes), *w), grid, modes).astype(u.dtype)
        return _spectral_conv_fft(u, _complex(*w), modes)
    uh = _rfftn(u)  # (I, *spec)
    out_h = _riesz_local(uh, local_weight, riesz_multipliers(grid, order, lengths, real=True))
    if w is not None:
        out_h = out_h + _scatter_modes(_mix_modes(_gather_modes(uh, modes), *w), grid, modes)
    return _irfftn(out_h, grid).astype(u.dtype)


def _riesz_local(uh: Array, local_weight: Array, mult: np.ndarray) -> Array:
    """Local branch on the spectrum ``uh`` ``(I, *spec)``: ``Σ_j m_j (L_j û)`` in real arithmetic. One GEMM
    ``(J·O, I) × (I, 2·spec)`` on the stacked real/imaginary planes, then ``Re = Σ_j a_j P^re_j - b_j P^im_j``,
    ``Im = Σ_j a_j P^im_j + b_j P^re_j`` for ``m_j = a_j + i b_j`` (static; first-order Riesz multipliers are
    purely imaginary, second-order ones real, so half of the terms vanish and are skipped)."""
    n_dirs, c_out, c_in = local_weight.shape
    spec = uh.shape[1:]
    planes = jnp.stack([jnp.real(uh), jnp.imag(uh)], axis=1)  # (I, 2, *spec)
    lw = local_weight.astype(planes.dtype).reshape(n_dirs * c_out, c_in)
    p = pointwise(planes, lw, None).reshape(n_dirs, c_out, 2, *spec)  # (J, O, 2, *spec)
    a, b = np.real(mult), np.imag(mult)  # (J, *spec)
    re, im = 0.0, 0.0
    for j in range(n_dirs):
        if np.any(a[j]):
            aj = jnp.asarray(a[j], planes.dtype)
            re, im = re + aj * p[j, :, 0], im + aj * p[j, :, 1]
        if np.any(b[j]):
            bj = jnp.asarray(b[j], planes.dtype)
            re, im = re - bj * p[j, :, 1], im + bj * p[j, :, 0]
    zero = jnp.zeros((c_out, *spec), planes.dtype)
    return jax.lax.complex(re + zero, im + zero)


def _per_sample(w: Array, u: Array) -> Array:
    """``w`` itself, tied to the sample ``u``: under ``jax.vmap`` it becomes one copy per sample (a tiny broadcast),
    so a contraction ``w · u`` is a *batched* GEMM ``(B, O, I) × (B, I, N)``. XLA:CPU runs that, and both its
    gradients, without transposing the field; the unbatched form ``(O, I) × (B, I, N)`` costs a transpose of the
    field in the forward pass and in the weight gradient. Value and gradients are exactly those of ``w``."""
    p = u[(0,) * u.ndim]
    return jnp.where(p == p, w, w)


def pointwise(
    u: Float[Array, "cin *grid"], weight: Float[Array, "cout cin"], bias: Float[Array, "cout"] | None
) -> Float[Array, "cout *grid"]:
    """1×1 convolution (pointwise channel map) ``W u + b``. NaN/inf in a concrete input raises ``ValueError``
    (under ``jit`` the values are not known and are not checked)."""
    for name, v in (("u", u), ("weight", weight), ("bias", bias)):
        if v is not None:
            check_finite(name, v)
    if np.ndim(u) < 1 or np.ndim(weight) != 2 or np.shape(weight)[1] != np.shape(u)[0]:
        raise ValueError(
            f"weight: expected shape (cout, cin) with cin = {np.shape(u)[0] if np.ndim(u) else '?'} (the channels of "
            f"u {np.shape(u)}), received {np.shape(weight)}"
        )
    if bias is not None and np.shape(bias) != (np.shape(weight)[0],):
        raise ValueError(f"bias: expected shape ({np.shape(weight)[0]},) (cout), received {np.shape(bias)}")
    flat = u.reshape(u.shape[0], -1)  # one contraction axis: XLA:CPU's GEMMs need no copy for the gradients
    y = jax.lax.dot_general(_per_sample(weight, u), flat, (((1,), (0,)), ((), ())))
    if bias is not None:
        y = y + bias[:, None]
    return y.reshape(weight.shape[0], *u.shape[1:])


def gelu(x: Float[Array, "..."]) -> Float[Array, "..."]:
    """Exact GELU ``x Φ(x) = x (1 + erf(x/√2)) / 2`` (Hendrycks & Gimpel 2016), written with ``erf`` as PyTorch's
    ``F.gelu`` computes it. Same function as ``jax.nn.gelu(x, approximate=False)``, which uses ``erfc``: on XLA:CPU
    that costs about 3x more per element (and its gradient too), about 15% of an FNO training step."""
    return x * (0.5 + 0.5 * jax.lax.erf(x * np.asarray(np.sqrt(0.5), dtype=jnp.result_type(x))))


def instance_norm(
    u: Float[Array, "c *grid"], scale: Float[Array, "c"], shift: Float[Array, "c"], eps: float = 1e-5
) -> Float[Array, "c *grid"]:
    """Per-channel normalization over the spatial axes (a grid mean, hence resolution-consistent), then affine.
    ``eps > 0`` keeps a constant channel finite; NaN/inf in ``u``, ``scale`` or ``shift`` raise ``ValueError``
    naming the argument, under ``jax.jit``/``vmap`` a run-time error (``equinox.error_if``) with the same message.
    (The models' forward passes call the unchecked core: they check their own input.)"""
    if not (isinstance(eps, int | float) and np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps: expected a finite value > 0, received {eps!r}")
    for name, v in (("scale", scale), ("shift", shift)):
        if tuple(np.shape(v)) != tuple(np.shape(u))[:1]:
            raise ValueError(
                f"{name}: expected shape ({np.shape(u)[0] if np.ndim(u) else '?'},), one value per channel of u "
                f"{tuple(np.shape(u))}, received {tuple(np.shape(v))}"
            )
    u, scale, shift = finite_checked("u", u), finite_checked("scale", scale), finite_checked("shift", shift)
    return _instance_norm(u, scale, shift, eps)


def _instance_norm(u: Array, scale: Array, shift: Array, eps: float = 1e-5) -> Array:
    """:func:`instance_norm` without argument checks (the models' hot path; their input is checked on entry)."""
    axes = tuple(range(1, u.ndim))
    mean = jnp.mean(u, axis=axes, keepdims=True)
    var = jnp.mean((u - mean) ** 2, axis=axes, keepdims=True)
    shp = (-1,) + (1,) * (u.ndim - 1)
    return (u - mean) * jax.lax.rsqrt(var + eps) * scale.reshape(shp) + shift.reshape(shp)


# ----------------------------------------------------------------------------------------------------------------
# validation helpers for the Equinox containers
# ----------------------------------------------------------------------------------------------------------------
def _as_modes(modes: int | Sequence[int], n_dims: int | None = None) -> tuple[int, ...]:
    if isinstance(modes, int | np.integer) and not isinstance(modes, bool):
        if n_dims is None:
            n_dims = 1
        out = (int(modes),) * n_dims
    else:
        out = tuple(modes)  # type: ignore[arg-type]
        if n_dims is not None and len(out) != n_dims:
            raise ValueError(f"modes: expected {n_dims} entries (one per spatial axis), received {out}")
    if not 1 <= len(out) <= 3:
        raise ValueError(f"modes: expected 1 to 3 spatial axes, received {out}")
    for m in out:
        check_int("modes", m, minimum=1)
    return tuple(int(m) for m in out)


def check_weight_size(name: str, n_values: int) -> None:
    """Refuse up front (``ValueError`` naming ``name`` and the memory) a
    layer whose ``n_values`` parameters (in the default float dtype) would not fit under the size cap."""
    itemsize = np.dtype(jax.dtypes.canonicalize_dtype(np.float64)).itemsize
    check_size(name, int(n_values) * itemsize, hint="fewer modes or channels")


def _kept_modes(modes: Sequence[int]) -> int:
    """Number of kept Fourier modes: ``2 m`` on every axis but the last (negative frequencies), ``m`` on it."""
    return int(np.prod([2 * m for m in modes[:-1]], dtype=object) * modes[-1])


def _check_input(name: str, u: Any, channels: int, n_dims: int, modes: Sequence[int]) -> Array:
    dtype = jnp.result_type(u)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError(f"{name}: expected a real array, received dtype {dtype}")
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"{name}: expected a real floating-point array, received dtype {dtype}")
    shape = tuple(np.shape(u))
    if len(shape) != n_dims + 1:
        raise ValueError(
            f"{name}: expected shape (channels, *grid) with {n_dims} spatial axes ({n_dims + 1} dimensions; one "
            f"sample — batch with jax.vmap), received shape {shape}"
        )
    if shape[0] != channels:
        raise ValueError(
            f"{name}: expected {channels} input channels (axis 0), received {shape[0]} (shape {shape})"
        )
    _check_resolution(shape[1:], modes, name)
    return jnp.asarray(u)


def finite_input(name: str, x: Array) -> Array:
    """The boundary NaN/inf policy of the operator models: a concrete ``x`` with NaN/inf raises ``ValueError``;
    a traced one (under ``jax.jit``/``vmap``/``grad``) raises through ``equinox.error_if`` when the compiled call
    runs. Models skip it with ``check_finite=False``."""
    if not is_tracer(x):
        check_finite(name, x)
        return x
    return error_if_invalid(
        x,
        ~jnp.isfinite(x),
        f"{name}: expected finite values, received NaN/inf (pass check_finite=False to skip)",
    )


def _init_spectral(key: PRNGKey, c_in: int, c_out: int, modes: tuple[int, ...]) -> tuple[Array, Array]:
    """FNO initialization: ``scale · U[0, 1)`` on real and imaginary parts, ``scale = 1/(c_in c_out)``."""
    kept = tuple(2 * m for m in modes[:-1]) + (modes[-1],)
    k1, k2 = jax.random.split(key)
    scale = 1.0 / (c_in * c_out)
    shape = (*kept, c_in, c_out)
    return scale * jax.random.uniform(k1, shape), scale * jax.random.uniform(k2, shape)


# ----------------------------------------------------------------------------------------------------------------
# Equinox containers
# ----------------------------------------------------------------------------------------------------------------
class SpectralConv(eqx.Module):
    """FNO Fourier layer (Li et al. 2021): complex weights on the lowest ``modes`` of each axis, n-D."""

    weight_re: Array
    weight_im: Array
    in_channels: int = eqx.field(static=True)
    out_channels: int = eqx.field(static=True)
    modes: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, in_channels: int, out_channels: int, modes: int | Sequence[int], *, key: PRNGKey):
        check_key("key", key)
        check_int("in_channels", in_channels, minimum=1)
        check_int("out_channels", out_channels, minimum=1)
        self.modes = _as_modes(modes)
        check_weight_size("modes", 2 * _kept_modes(self.modes) * in_channels * out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.weight_re, self.weight_im = _init_spectral(key, in_channels, out_channels, self.modes)

    def __call__(self, u: ArrayLike) -> Float[Array, "cout *grid"]:
        u = _check_input("u", u, self.in_channels, len(self.modes), self.modes)
        return _spectral_conv(u, self.weight_re, self.weight_im)


class RieszSpectralConv(eqx.Module):
    """RNO Riesz layer: directional mixer ``W(k)(α₀ + Σ_j w_j m_j(k))`` on kept modes + full-band Riesz channels.

    Options: ``order`` 1 or 2 (multipliers ``-i k_j/|k|`` or ``-k_a k_b/|k|²``), ``per_mode`` directional weights,
    ``branch`` ``"mix"`` | ``"global"`` | ``"local"`` (the paper's ablations), ``lengths`` of the periodic domain.
    Initialization: ``α₀ = 1``, ``w_j = 0`` (the global branch starts as an FNO layer), ``L_j ~ U(±1/√(I·J))``.
    """

    weight_re: Array | None
    weight_im: Array | None
    alpha: Array | None
    w_dir: Array | None
    local_weight: Array | None
    in_channels: int = eqx.field(static=True)
    out_channels: int = eqx.field(static=True)
    modes: tuple[int, ...] = eqx.field(static=True)
    order: int = eqx.field(static=True)
    per_mode: bool = eqx.field(static=True)
    branch: str = eqx.field(static=True)
    lengths: tuple[float, ...] | None = eqx.field(static=True)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        modes: int | Sequence[int],
        *,
        order: int = 1,
        per_mode: bool = False,
        branch: str = "mix",
        lengths: float | Sequence[float] | None = None,
        key: PRNGKey,
    ):
        check_int("in_channels", in_channels, minimum=1)
        check_int("out_channels", out_channels, minimum=1)
        check_choice("order", order, (1, 2))
        check_choice("branch", branch, ("mix", "global", "local"))
        self.modes = _as_modes(modes)
        d = len(self.modes)
        if branch in ("mix", "global"):  # the spectral weights (and per-mode mixers) grow with the modes
            dirs = d if order == 1 else d * (d + 1) // 2
            per_mode_values = in_channels * (2 * out_channels + (1 + dirs if per_mode else 0))
            check_weight_size("modes", _kept_modes(self.modes) * per_mode_values)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.order, self.per_mode, self.branch = order, bool(per_mode), branch
        if lengths is None or np.isscalar(lengths):
            self.lengths = None if lengths is None else (float(lengths),) * d  # type: ignore[arg-type]
        else:
            self.lengths = tuple(float(v) for v in lengths)  # type: ignore[union-attr]
            if len(self.lengths) != d:
                raise ValueError(f"lengths: expected {d} entries, received {self.lengths}")
        n_dirs = d if order == 1 else d * (d + 1) // 2
        check_key("key", key)
        k_spec, k_loc = jax.random.split(key)
        kept = tuple(2 * m for m in self.modes[:-1]) + (self.modes[-1],)
        if branch in ("mix", "global"):
            self.weight_re, self.weight_im = _init_spectral(k_spec, in_channels, out_channels, self.modes)
            self.alpha = jnp.ones((*kept, in_channels) if per_mode else (in_channels,))
            self.w_dir = jnp.zeros((*kept, in_channels, n_dirs) if per_mode else (n_dirs, in_channels))
        else:
            self.weight_re = self.weight_im = self.alpha = self.w_dir = None
        if branch in ("mix", "local"):
            bound = 1.0 / np.sqrt(in_channels * n_dirs)
            self.local_weight = jax.random.uniform(
                k_loc, (n_dirs, out_channels, in_channels), minval=-bound, maxval=bound
            )
        else:
            self.local_weight = None

    def __call__(self, u: ArrayLike) -> Float[Array, "cout *grid"]:
        u = _check_input("u", u, self.in_channels, len(self.modes), self.modes)
        return riesz_spectral_conv(
            u,
            self.weight_re,
            self.weight_im,
            self.alpha,
            self.w_dir,
            self.local_weight,
            modes=self.modes,
            order=self.order,
            lengths=self.lengths,
        )


class Pointwise(eqx.Module):
    """1×1 convolution with PyTorch's default initialization ``U(±1/√c_in)``."""

    weight: Array
    bias: Array

    def __init__(self, in_channels: int, out_channels: int, *, key: PRNGKey):
        check_key("key", key)
        check_int("in_channels", in_channels, minimum=1)
        check_int("out_channels", out_channels, minimum=1)
        k1, k2 = jax.random.split(key)
        bound = 1.0 / np.sqrt(in_channels)
        self.weight = jax.random.uniform(k1, (out_channels, in_channels), minval=-bound, maxval=bound)
        self.bias = jax.random.uniform(k2, (out_channels,), minval=-bound, maxval=bound)

    def __call__(self, u: Float[Array, "cin *grid"]) -> Float[Array, "cout *grid"]:
        return pointwise(u, self.weight, self.bias)


class InstanceNorm(eqx.Module):
    """Per-channel normalization over the grid with a learnable affine map."""

    scale: Array
    shift: Array

    def __init__(self, channels: int):
        check_int("channels", channels, minimum=1)
        check_weight_size("channels", 2 * channels)
        self.scale = jnp.ones((channels,))
        self.shift = jnp.zeros((channels,))

    def __call__(self, u: Float[Array, "c *grid"]) -> Float[Array, "c *grid"]:
        return instance_norm(u, self.scale, self.shift)
