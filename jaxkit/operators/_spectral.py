"""Fourier-side building blocks: wavenumber grids, Riesz multipliers, Riesz transforms, spectral derivatives.

Conventions (periodic grids ``x_j = j L / n``; angular wavenumbers ``k = 2π q / L`` with integer ``q``):

* First-order Riesz transform: ``(R_j u)^(k) = m_j(k) û(k)`` with ``m_j(k) = -i k_j / |k|`` and ``m_j(0) = 0``
  (Stein 1970; the sign convention of the RNO paper, ICLR 2026). Then ``Σ_j R_j² = -I`` on zero-mean fields and,
  because ``-i k_j/|k| · |k| = -(i k_j)``, the derivative identity carries a minus sign:
  ``∂_j u = -R_j (-Δ)^{1/2} u``. (The RNO issue text writes ``∂_j = R_j(-Δ)^{1/2}``; that drops the sign.)
  A plane wave maps as ``R_j cos(k·x) = (k_j/|k|) sin(k·x)``.
* Second-order Riesz transforms: ``R_a R_b`` with multiplier ``-k_a k_b / |k|²`` for the pairs ``a <= b`` in
  row-major order (``riesz_pairs``), so ``d(d+1)/2`` components.
* Nyquist: on an even-length axis the mode ``q = -n/2`` is its own Hermitian partner, so an odd multiplier in
  ``k_j`` (``m_j``, ``m_a m_b`` with ``a != b``, odd-order derivatives) cannot keep a real field real there; those
  entries are set to zero.
  Identities such as ``Σ_j R_j² = -I`` therefore hold exactly for fields without Nyquist content.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Array, ArrayLike, Float
from .._validate import check_float, check_int, check_positive, check_real, check_size, finite_checked

__all__ = [
    "fractional_laplacian",
    "riesz_multipliers",
    "riesz_pairs",
    "riesz_transform",
    "spectral_derivative",
    "wavenumber_grid",
    "wavenumbers",
]


def wavenumbers(n: int, length: float = 1.0, *, real: bool = False, nyquist_zero: bool = False) -> np.ndarray:
    """Angular wavenumbers ``2π q / L`` of an ``n``-point periodic grid, in FFT order.

    ``real=True`` gives the ``rfft`` half (``q = 0..n//2``). ``nyquist_zero=True`` zeroes the unpaired Nyquist
    entry of an even ``n`` (what an odd multiplier must do to keep real fields real).
    """
    check_int("n", n, minimum=1)
    check_positive("length", length)
    check_size("n", 24 * int(n), hint=f"{n} wavenumbers")  # int64 frequencies + float64 result + mask
    q = np.fft.rfftfreq(n, 1.0 / n) if real else np.fft.fftfreq(n, 1.0 / n)
    k = 2.0 * np.pi * q / float(length)
    if nyquist_zero and n % 2 == 0:
        k = np.where(np.abs(q) == n // 2, 0.0, k)
    return k


def _lengths(lengths: float | Sequence[float] | None, d: int) -> tuple[float, ...]:
    if lengths is None:
        return (1.0,) * d
    if np.isscalar(lengths):
        check_positive("lengths", lengths)
        return (float(lengths),) * d
    out = tuple(float(v) for v in lengths)  # type: ignore[union-attr]
    if len(out) != d:
        raise ValueError(
            f"lengths: expected {d} domain lengths (one per transformed axis), received {len(out)}"
        )
    for v in out:
        check_positive("lengths", v)
    return out


def wavenumber_grid(
    shape: Sequence[int], lengths: float | Sequence[float] | None = None, *, real: bool = True
) -> tuple[np.ndarray, ...]:
    """Broadcastable angular wavenumber arrays ``(k_1, ..., k_d)`` for an ``rfftn`` (``real=True``) or ``fftn``.

    With ``real=True`` the last axis holds the ``n_d//2 + 1`` non-negative modes, as ``jnp.fft.rfftn`` returns them.
    """
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise ValueError("shape: expected at least one axis, received ()")
    for s in shape:
        check_int("shape", s, minimum=1)
    ls = _lengths(lengths, len(shape))
    ks = []
    for a, (n, length) in enumerate(zip(shape, ls)):
        last = a == len(shape) - 1
        k = wavenumbers(n, length, real=real and last)
        view = [1] * len(shape)
        view[a] = k.size
        ks.append(k.reshape(view))
    return tuple(ks)


def _nyquist_mask(shape: Sequence[int], axis: int, real: bool) -> np.ndarray:
    """Boolean array (broadcastable to the spectrum) that is True on the unpaired Nyquist plane of ``axis``."""
    n = shape[axis]
    last = axis == len(shape) - 1
    q = np.fft.rfftfreq(n, 1.0 / n) if (real and last) else np.fft.fftfreq(n, 1.0 / n)
    mask = (np.abs(q) == n // 2) & (n % 2 == 0)
    view = [1] * len(shape)
    view[axis] = q.size
    return mask.reshape(view)


def riesz_pairs(d: int) -> list[tuple[int, int]]:
    """Index pairs ``(a, b)``, ``a <= b``, of the second-order Riesz components, in the order they are stacked."""
    check_int("d", d, minimum=1)
    check_size("d", 64.0 * d * (d + 1) / 2, hint=f"{d} spatial dimensions give d(d+1)/2 index pairs")
    return [(a, b) for a in range(d) for b in range(a, d)]


def riesz_multipliers(
    shape: Sequence[int],
    order: int = 1,
    lengths: float | Sequence[float] | None = None,
    *,
    real: bool = True,
) -> np.ndarray:
    """Fourier multipliers of the Riesz transforms on a periodic grid of ``shape``.

    ``order=1``: complex array ``(d, *spectrum)`` with ``m_j = -i k_j/|k|``, zero at ``k = 0`` and on the
    Nyquist plane of axis ``j`` (see module docstring). ``order=2``: ``(d(d+1)/2, *spectrum)`` with
    ``m_a m_b = -k_a k_b / |k|²`` for the pairs of :func:`riesz_pairs` (the mixed ``a != b`` entries are odd in
    ``k_a`` and ``k_b`` and are zeroed on both Nyquist planes; the diagonal ones are even and kept).
    ``spectrum`` is the ``rfftn`` shape when ``real=True`` else the ``fftn`` shape. Returned as NumPy (static).
    """
    check_int("order", order, minimum=1)
    if order not in (1, 2):
        raise ValueError(f"order: expected 1 or 2, received {order}")
    shape = tuple(int(s) for s in shape)
    d = len(shape)
    if d and all(isinstance(n, int) and n >= 1 for n in shape):  # (bad sizes are named by wavenumber_grid)
        n_spec = int(np.prod(shape[:-1], dtype=object)) * (shape[-1] // 2 + 1 if real else shape[-1])
        n_out = d if order == 1 else d * (d + 1) // 2
        check_size("shape", 16 * n_spec * (n_out + d + 2), hint=f"the multipliers of a {shape} grid")
    ks = np.broadcast_arrays(*wavenumber_grid(shape, lengths, real=real))
    knorm = np.sqrt(sum(k**2 for k in ks))
    safe = np.where(knorm == 0, 1.0, knorm)
    d = len(shape)
    if order == 1:
        ms = []
        for j in range(d):
            m = np.where(knorm == 0, 0.0, -1j * ks[j] / safe)
            m = np.where(_nyquist_mask(shape, j, real), 0.0, m)
            ms.append(m.astype(np.complex128))
        return np.stack(ms)
    out = []
    for a, b in riesz_pairs(d):
        m = np.where(knorm == 0, 0.0, -ks[a] * ks[b] / safe**2)
        if a != b:  # odd in k_a and in k_b: zero on both Nyquist planes
            m = np.where(_nyquist_mask(shape, a, real) | _nyquist_mask(shape, b, real), 0.0, m)
        out.append(m.astype(np.complex128))
    return np.stack(out)


def _resolve_axes(ndim: int, axes: int | Sequence[int] | None) -> tuple[int, ...]:
    if axes is None:
        axes = tuple(range(ndim))
    axs = (axes,) if isinstance(axes, int | np.integer) else tuple(axes)
    out = []
    for a in axs:
        if isinstance(a, bool) or not isinstance(a, int | np.integer):
            raise TypeError(f"axes: expected integers, received {a!r}")
        if not -ndim <= a < ndim:
            raise ValueError(f"axes: axis {a} is out of range for an array with {ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"axes: expected distinct axes, received {axs}")
    if not 1 <= len(out) <= 3:
        raise ValueError(f"axes: expected 1 to 3 spatial axes, received {len(out)}")
    return tuple(sorted(out))


def _complex_dtype(x: Array):
    return jnp.complex128 if x.dtype == jnp.float64 else jnp.complex64


def _apply_multiplier(u: Array, mult: np.ndarray, axes: tuple[int, ...]) -> Array:
    """``irfftn(mult * rfftn(u))`` over ``axes``; ``mult`` has shape ``(c, *spectrum)``; returns ``(c, *u.shape)``."""
    return _apply_multiplier_jit(u, jnp.asarray(mult, dtype=_complex_dtype(u)), axes)


@functools.partial(jax.jit, static_argnums=2)
def _apply_multiplier_jit(u: Array, mult: Array, axes: tuple[int, ...]) -> Array:
    shape = [u.shape[a] for a in axes]
    uh = jnp.fft.rfftn(u, axes=axes)
    # place the multiplier's spectral axes at `axes` of u (other axes broadcast)
    view = [1] * u.ndim
    for a, s in zip(axes, mult.shape[1:]):
        view[a] = s
    m = mult.reshape((mult.shape[0], *view))
    out = jnp.fft.irfftn(m * uh[None], s=shape, axes=tuple(a + 1 for a in axes))
    return out.astype(u.dtype)


def _check_field(u: Array) -> Array:
    """``u`` checked: real floating, non-empty and finite (one NaN spreads over the whole field through the FFT);
    a traced ``u`` carries the finiteness check to run time (``equinox.error_if``, same message)."""
    check_real("u", u)
    check_float("u", u)
    if u.size == 0:
        raise ValueError(f"u: expected a non-empty field, received shape {u.shape}")
    return finite_checked("u", u)


def riesz_transform(
    u: ArrayLike,
    axes: int | Sequence[int] | None = None,
    order: int = 1,
    lengths: float | Sequence[float] | None = None,
) -> Float[Array, "components ..."]:
    """Riesz transforms of a real periodic field over ``axes`` (default: all axes; 1 to 3 of them).

    Returns the components stacked on a new leading axis: ``d`` of them for ``order=1`` (``R_1 u, ..., R_d u``),
    ``d(d+1)/2`` for ``order=2`` (``R_a R_b u`` for :func:`riesz_pairs`). Axes not in ``axes`` are batch axes.
    """
    u = jnp.asarray(u)
    u = _check_field(u)
    if u.ndim == 0:
        raise ValueError("u: expected a field with at least one axis, received a scalar")
    axs = _resolve_axes(u.ndim, axes)
    shape = [u.shape[a] for a in axs]
    mult = riesz_multipliers(shape, order, lengths, real=True)
    return _apply_multiplier(u, mult, axs)


def spectral_derivative(
    u: ArrayLike, axis: int = -1, order: int = 1, length: float = 1.0
) -> Float[Array, "..."]:
    """``∂^order u / ∂x_axis^order`` of a periodic real field by the multiplier ``(i k)^order`` (Nyquist zeroed
    for odd orders)."""
    u = jnp.asarray(u)
    u = _check_field(u)
    check_int("order", order, minimum=0)
    check_positive("length", length)
    (ax,) = _resolve_axes(u.ndim, axis)
    n = u.shape[ax]
    k = wavenumbers(n, length, real=True, nyquist_zero=order % 2 == 1)
    mult = ((1j * k) ** order)[None]
    return _apply_multiplier(u, mult, (ax,))[0]


def fractional_laplacian(
    u: ArrayLike,
    s: float = 0.5,
    axes: int | Sequence[int] | None = None,
    lengths: float | Sequence[float] | None = None,
) -> Float[Array, "..."]:
    """``(-Δ)^s u`` on a periodic grid: multiplier ``|k|^{2s}`` (zero at ``k = 0``)."""
    u = jnp.asarray(u)
    u = _check_field(u)
    if not np.isfinite(float(s)):
        raise ValueError(f"s: expected a finite exponent, received {s!r}")
    axs = _resolve_axes(u.ndim, axes)
    shape = [u.shape[a] for a in axs]
    ks = np.broadcast_arrays(*wavenumber_grid(shape, lengths, real=True))
    knorm = np.sqrt(sum(k**2 for k in ks))
    with np.errstate(divide="ignore"):  # s < 0: |0|^(2s) = inf, replaced by 0 (the mean mode) just below
        mult = np.where(knorm == 0, 0.0, np.abs(knorm) ** (2 * float(s)))[None].astype(np.complex128)
    return _apply_multiplier(u, mult, axs)[0]


# ----------------------------------------------------------------------------------------------------------------
# Truncated real DFT as matrix products (the CPU path of the spectral layers)
# ----------------------------------------------------------------------------------------------------------------
# The spectral layers only need the kept modes ``q_a = 0..m_a-1, -m_a..-1`` (leading axes) and ``q_d = 0..m_d-1``
# (last axis) of ``rfftn(u)``, and only those modes are non-zero before ``irfftn``. Both are then separable products
# with small dense matrices, one axis at a time, carried in real arithmetic on real/imaginary planes. Every product
# contracts the *last* axis of the data (forward) or its *first* axis (inverse), so the large field ``(C, *grid)``
# (``(C, batch, *grid)`` under ``jax.vmap``) is read and written by plain GEMMs without a transpose, whatever axis
# vmap puts the batch on. Same maths as ``rfftn``/``irfftn`` (Hermitian weights ``c_0 = 1``, ``c_q = 2``; the
# imaginary part of the ``q_d = 0`` column is ignored, as ``irfft`` does; the Nyquist mode of the last axis is never
# kept because ``n_d >= 2 m_d``).
_HI = jax.lax.Precision.HIGHEST


def _kept_q(modes: Sequence[int]) -> list[np.ndarray]:
    """Kept integer wavenumbers per axis: ``0..m-1, -m..-1`` on leading axes, ``0..m-1`` on the last axis."""
    qs = []
    for a, m in enumerate(modes):
        if a == len(modes) - 1:
            qs.append(np.arange(m))
        else:
            qs.append(np.concatenate([np.arange(m), np.arange(-m, 0)]))
    return qs


@functools.lru_cache(maxsize=128)
def _dft_factor(n: int, m: int, last: bool, inverse: bool, scale: float, dtype: str) -> np.ndarray:
    """Real DFT factor of one axis, ``θ = 2π q j / n`` over the kept ``q`` (float64 maths, cast to ``dtype``).

    * forward, last axis ``(n, 2, m)``: ``F[j, r', q] = [cos θ, -sin θ]`` (real input -> real/imaginary planes);
    * forward, leading axis ``(n, 2, 2, 2m)``: ``F[j, r, r', q]``, the factor ``e^{-iθ}`` acting on planes;
    * inverse, leading axis ``(2, 2m, n, 2)``: ``F[r, q, j, r']``, the factor ``e^{+iθ}`` acting on planes;
    * inverse, last axis ``(2, m, n)``: ``scale · c_q [cos θ, -sin θ]`` with ``c_0 = 1``, ``c_q = 2`` (``irfft``).
    """
    q = np.arange(m) if last else np.concatenate([np.arange(m), np.arange(-m, 0)])
    theta = 2.0 * np.pi * np.outer(q, np.arange(n)) / n  # (q, j)
    c, s = np.cos(theta), np.sin(theta)
    if last and not inverse:
        out = np.stack([c, -s]).transpose(2, 0, 1)
    elif last:
        w = np.where(q == 0, 1.0, 2.0)[:, None] * scale
        out = np.stack([w * c, -w * s])
    else:
        sn = s if inverse else -s  # (a + ib)(c + i sn) = (ac - b sn) + i(a sn + bc)
        blocks = np.array([[c, -sn], [sn, c]])  # blocks[r', r, q, j]: input plane r -> output plane r'
        out = blocks.transpose(1, 2, 3, 0) if inverse else blocks.transpose(3, 1, 0, 2)
    return out.astype(dtype)


def _dot(x: Array, f: np.ndarray, x_axes: tuple[int, ...], f_axes: tuple[int, ...]) -> Array:
    return jax.lax.dot_general(x, jnp.asarray(f), ((x_axes, f_axes), ((), ())), precision=_HI)


def _rdft_kept(u: Array, modes: Sequence[int]) -> Array:
    """Kept modes of ``rfftn(u)`` over the trailing ``d = len(modes)`` axes of ``u`` ``(C, *grid)``, as planes.

    Returns ``(C, 2, *kept)`` (real, imaginary) with ``kept = (2m_1, ..., 2m_{d-1}, m_d)`` ordered
    ``0..m-1, -m..-1`` on leading axes; equals ``rfftn`` restricted to those modes, to rounding. The field is the
    left operand of every product and is contracted on its trailing axes (XLA:CPU's GEMM layout, no copy); under
    ``jax.vmap`` the batch axis stays where vmap put it.
    """
    d = len(modes)
    grid = u.shape[u.ndim - d :]
    dt = np.dtype(u.dtype).name
    t = _dot(
        u, _dft_factor(grid[-1], modes[-1], True, False, 1.0, dt), (u.ndim - 1,), (0,)
    )  # (C, N.., 2, m_d)
    for a in range(d - 2, -1, -1):  # t: (C, N_0..N_a, 2, K_{a+1}..)
        ax = t.ndim - (d - a) - 1  # position of N_a
        t = _dot(t, _dft_factor(grid[a], modes[a], False, False, 1.0, dt), (ax, ax + 1), (0, 1))
        t = jnp.moveaxis(t, (-2, -1), (ax, ax + 1))  # (C, N_0..N_{a-1}, 2, M_a, K_{a+1}..)
    return t


def _irdft_kept(y: Array, grid: Sequence[int], modes: Sequence[int]) -> Array:
    """``irfftn`` (over ``grid``) of a spectrum that is zero outside the kept modes, given as planes ``(C, 2, *kept)``.

    Returns ``(C, *grid)``; equals ``irfftn`` of the zero-filled spectrum to rounding (the imaginary part of the
    ``q_d = 0`` column is ignored, as ``irfft`` does).
    """
    d = len(modes)
    dt = np.dtype(y.dtype).name
    for a in range(d - 1):  # y: (C, N_0..N_{a-1}, 2, M_a, K_{a+1}..)
        ax = y.ndim - (d - a) - 1  # position of the plane axis
        y = _dot(y, _dft_factor(grid[a], modes[a], False, True, 1.0, dt), (ax, ax + 1), (0, 1))
        y = jnp.moveaxis(y, (-2, -1), (ax, ax + 1))  # (C, N_0..N_a, 2, K_{a+1}..)
    f = _dft_factor(grid[-1], modes[-1], True, True, 1.0 / float(np.prod(grid)), dt)  # (2, m_d, n_d)
    return _dot(y, f, (y.ndim - 2, y.ndim - 1), (0, 1))
