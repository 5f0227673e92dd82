r"""2-D incompressible Navier–Stokes in vorticity form on the unit torus.

$$
\partial_t w + u\cdot\nabla w = \nu\Delta w + f,\qquad u = (\partial_y\psi, -\partial_x\psi),\qquad
-\Delta\psi = w,
$$

on the periodic grid ``x_j = j/n`` (``j = 0..n-1``), axis 0 = x, axis 1 = y. Pseudo-spectral scheme of the FNO
generator (Li et al. 2021, ``ns_2d.py``): velocity from the stream function in Fourier space, the advection term
``u·∇w`` formed in physical space and dealiased with the 2/3 rule (``|k_x|, |k_y| ≤ ⅔ k_max``), then a
Crank–Nicolson step for the viscous term with the advection and forcing treated explicitly (forward Euler):

$$
\hat w^{n+1} = \frac{(1 - \tfrac12\Delta t\,\nu|2\pi k|^2)\hat w^n - \Delta t\,\widehat{u\cdot\nabla w}^n
+ \Delta t\hat f}{1 + \tfrac12\Delta t\,\nu|2\pi k|^2}.
$$

``lax.scan`` over the steps (nested: records × steps per record).

FNO datasets: 64×64 (generated at 256×256, ``dt = 1e-4``, subsampled), forcing
``0.1(sin 2π(x+y) + cos 2π(x+y))``, ``w0 ~ GRF(α=2.5, τ=7)``; ν = 1e-3 (T = 50), 1e-4 (T = 30), 1e-5 (T = 20).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Array, Float
from .._validate import (
    check_finite,
    check_float,
    check_int,
    check_ndim,
    check_positive,
    check_size,
    error_if_invalid,
    finite_checked,
    warn_if_downcast,
)

_In = Array | np.ndarray


def fno_forcing(n: int, dtype=jnp.float32) -> Float[Array, "n n"]:
    """FNO forcing ``0.1(sin 2π(x+y) + cos 2π(x+y))`` on the ``n×n`` periodic grid ``x_j = j/n``."""
    check_int("n", n, minimum=2)
    check_size("n", float(n) * n * 4 * np.dtype(dtype).itemsize, hint=f"a few {n} x {n} arrays")
    x = jnp.arange(n, dtype=dtype) / n
    s = 2 * jnp.pi * (x[:, None] + x[None, :])
    return (0.1 * (jnp.sin(s) + jnp.cos(s))).astype(dtype)


def _spectral_operators(n: int, dtype, length: float = 1.0):
    kx = np.fft.fftfreq(n, d=1.0 / n)[:, None] * np.ones((1, n // 2 + 1))
    ky = np.fft.rfftfreq(n, d=1.0 / n)[None, :] * np.ones((n, 1))
    lap = (2 * np.pi / length) ** 2 * (kx**2 + ky**2)  # symbol of -Δ
    inv_lap = np.where(lap > 0, 1.0 / np.where(lap > 0, lap, 1.0), 0.0)
    k_max = n // 2
    dealias = ((np.abs(kx) <= 2.0 / 3.0 * k_max) & (np.abs(ky) <= 2.0 / 3.0 * k_max)).astype(float)
    cd = jnp.complex128 if dtype == jnp.float64 else jnp.complex64
    return (
        jnp.asarray(2j * np.pi / length * kx, cd),
        jnp.asarray(2j * np.pi / length * ky, cd),
        jnp.asarray(lap, dtype),
        jnp.asarray(inv_lap, dtype),
        jnp.asarray(dealias, dtype),
    )


def velocity(w: Float[_In, "n n"], *, length: float = 1.0) -> Float[Array, "2 n n"]:
    """Velocity ``(u, v) = (∂_yψ, -∂_xψ)`` with ``-Δψ = w`` (spectral, zero-mean stream function)."""
    check_ndim("w", w, 2)
    n0, n1 = np.shape(w)
    if n0 != n1 or n0 % 2 or n0 < 4:
        raise ValueError(f"w: expected a square grid with an even size >= 4, received shape {(n0, n1)}")
    check_finite("w", w)
    check_positive("length", length)
    w = jnp.asarray(w)
    n = w.shape[0]
    ikx, iky, _, inv_lap, _ = _spectral_operators(n, w.dtype, length)
    psi_h = jnp.fft.rfft2(w) * inv_lap
    u = jnp.fft.irfft2(iky * psi_h, s=(n, n))
    v = jnp.fft.irfft2(-ikx * psi_h, s=(n, n))
    return jnp.stack([u, v]).astype(w.dtype)


def solve(
    w0: Float[_In, "n1 n2"] | list,
    *,
    nu: float,
    t_final: float,
    dt: float,
    forcing: Float[_In, "n3 n4"] | None = None,
    record_steps: int = 1,
    length: float = 1.0,
    scheme: str = "cn",
    max_steps: int = 1_000_000,
) -> Float[Array, "record n1 n2"]:
    """Integrate the vorticity equation from ``w0`` (one sample) and record ``record_steps`` snapshots.

    Args:
        w0: initial vorticity on the ``n×n`` periodic grid (``n`` even; array or nested list).
        nu: viscosity ν > 0.
        t_final: final time; ``ceil(t_final/dt)`` steps are taken, rounded up to a multiple of ``record_steps``.
        dt: time step (FNO: 1e-4).
        forcing: time-independent forcing ``f`` on the grid (``None``: no forcing).
        record_steps: number of equally spaced snapshots, at ``t_i = i·t_final/record_steps``, ``i = 1..``.
        length: side L of the periodic box (grid ``x_j = jL/n``); 1 for FNO, 2π for Kolmogorov flow.
        scheme: ``"cn"`` (FNO: Crank–Nicolson viscosity, forward-Euler advection; 1 advection evaluation per
            step, only conditionally stable at low viscosity) or ``"ifrk4"`` (integrating factor for the
            viscous term, classical RK4 for advection + forcing; 4 evaluations per step, stable for advection up
            to ``dt·max|k·u| ≈ 2.8``).
        max_steps: guard against a mistyped ``dt``: more time steps than this raise ``ValueError`` before anything
            runs (default 10⁶; raise it for genuinely long integrations).

    Returns:
        ``(record_steps, n, n)`` vorticity snapshots in the dtype of ``w0`` as JAX holds it (float64 ``w0`` is
        computed in float32 unless ``jax_enable_x64`` is on, with a ``UserWarning``). Batch with ``jax.vmap``.

    Raises ``ValueError`` naming ``dt`` when the vorticity becomes NaN/inf or exceeds twice the maximum-principle
    bound ``max|w0| + t_final·max|forcing|`` (a step beyond the explicit advection's stability limit; a run-time
    check under ``jax.jit``/``vmap``).
    """
    if isinstance(w0, list | tuple):
        w0 = np.asarray(w0, dtype=jnp.result_type(float))
    check_ndim("w0", w0, 2)
    check_float("w0", w0)
    n0, n1 = np.shape(w0)
    if n0 != n1 or n0 % 2 or n0 < 4:
        raise ValueError(f"w0: expected a square grid with an even size >= 4, received shape {(n0, n1)}")
    check_positive("nu", nu)
    check_positive("t_final", t_final)
    check_positive("dt", dt)
    check_int("record_steps", record_steps, minimum=1)
    check_positive("length", length)
    if scheme not in ("cn", "ifrk4"):
        raise ValueError(f"scheme: expected 'cn' or 'ifrk4', received {scheme!r}")
    if forcing is not None and np.shape(forcing) != (n0, n0):
        raise ValueError(f"forcing: expected shape {(n0, n0)} or None, received shape {np.shape(forcing)}")
    w0 = finite_checked("w0", w0)  # also at run time under jax.jit/vmap
    warn_if_downcast("w0", w0)
    if forcing is not None:
        forcing = finite_checked("forcing", forcing)
    n = n0
    w0 = jnp.asarray(w0)
    dtype = w0.dtype
    check_int("max_steps", max_steps, minimum=1)
    total = int(np.ceil(float(t_final) / float(dt) - 1e-9))
    per_record = max(1, int(np.ceil(total / record_steps)))
    if record_steps > max_steps:
        raise ValueError(
            f"record_steps: expected at most max_steps={max_steps} snapshots (one time step each at least), "
            f"received {record_steps}"
        )
    check_size(
        "record_steps", float(record_steps) * n * n * np.dtype(dtype).itemsize, hint=f"{n} x {n} per snapshot"
    )
    if per_record * record_steps > max_steps:
        raise ValueError(
            f"dt: t_final/dt = {float(t_final):g}/{float(dt):g} needs {per_record * record_steps} time steps, more "
            f"than max_steps={max_steps}; check dt, or pass a larger max_steps if this is intended"
        )
    h = float(t_final) / (per_record * record_steps)
    ops = _spectral_operators(n, dtype, float(length))
    f_h = (
        jnp.zeros_like(ops[2], dtype=ops[0].dtype)
        if forcing is None
        else jnp.fft.rfft2(jnp.asarray(forcing, dtype))
    )
    snaps = _solve_core(
        w0, f_h, ops, jnp.asarray(nu, dtype), jnp.asarray(h, dtype), per_record, int(record_steps), scheme
    )
    # both schemes treat advection explicitly: a step too long for the flow blows up, to NaN/inf or to finite
    # values beyond the maximum principle of the vorticity equation, max|w(t)| <= max|w0| + t·max|f| (twice that
    # leaves ample room for a resolved spectral solution's overshoot)
    limit = "dt·max|k·u| < 2.8" if scheme == "ifrk4" else "forward-Euler advection: dt·max|k·u| well below 1"
    f_max = 0.0 if forcing is None else jnp.max(jnp.abs(jnp.asarray(forcing, dtype)))
    bound = 2.0 * (jnp.max(jnp.abs(w0)) + float(t_final) * f_max) + jnp.finfo(dtype).tiny
    return error_if_invalid(
        snaps,
        ~jnp.isfinite(snaps) | (jnp.max(jnp.abs(snaps)) > bound),
        f"dt: the vorticity became non-finite (NaN/inf) or exceeded twice the maximum-principle bound "
        f"max|w0| + t_final·max|forcing| before t_final={float(t_final):g} with scheme={scheme!r} "
        f"and time step {h:.3g}: the step is beyond the explicit advection's stability limit ({limit}) for this "
        "flow; pass a smaller dt" + (" or scheme='ifrk4'" if scheme == "cn" else ""),
    )


@jax.jit(static_argnums=(5, 6, 7))
def _solve_core(w0, f_h, ops, nu, h, per_record, record_steps, scheme):
    ikx, iky, lap, inv_lap, dealias = ops
    n = w0.shape[0]

    def advection_h(w_h):
        psi_h = w_h * inv_lap
        u = jnp.fft.irfft2(iky * psi_h, s=(n, n))
        v = jnp.fft.irfft2(-ikx * psi_h, s=(n, n))
        wx = jnp.fft.irfft2(ikx * w_h, s=(n, n))
        wy = jnp.fft.irfft2(iky * w_h, s=(n, n))
        return jnp.fft.rfft2(u * wx + v * wy) * dealias

    if scheme == "cn":
        num = 1.0 - 0.5 * h * nu * lap
        den = 1.0 + 0.5 * h * nu * lap

        def step(w_h, _):
            return (num * w_h - h * advection_h(w_h) + h * f_h) / den, None
    else:  # integrating-factor RK4
        e = jnp.exp(-0.5 * h * nu * lap)

        def rhs(w_h):
            return f_h - advection_h(w_h)

        def step(w_h, _):
            k1 = rhs(w_h)
            k2 = rhs(e * (w_h + 0.5 * h * k1))
            k3 = rhs(e * w_h + 0.5 * h * k2)
            k4 = rhs(e * e * w_h + h * e * k3)
            return e * e * w_h + h / 6 * (e * e * k1 + 2 * e * (k2 + k3) + k4), None

    def record(w_h, _):
        w_h, _ = jax.lax.scan(step, w_h, None, length=per_record)
        return w_h, jnp.fft.irfft2(w_h, s=(n, n)).astype(w0.dtype)

    _, snaps = jax.lax.scan(record, jnp.fft.rfft2(w0), None, length=record_steps)
    return snaps


def _check_amplitude(amplitude: float) -> None:
    if not np.isfinite(amplitude):
        raise ValueError(f"amplitude: expected a finite value, received {amplitude!r}")


def kolmogorov_forcing(
    n: int, *, amplitude: float = 4.0, k: int = 4, dtype=jnp.float32
) -> Float[Array, "n n"]:
    """Kolmogorov forcing ``-A cos(k y)`` on the ``n×n`` grid of the ``[0, 2π)²`` torus (PINO/MNO: A = k = 4).

    ``k`` is a wavenumber the grid resolves, ``1 <= k <= n // 2`` (above the Nyquist wavenumber ``n/2`` the
    sampled forcing is that of a lower wavenumber): ``ValueError`` naming ``k`` otherwise."""
    check_int("n", n, minimum=2)
    check_int("k", k, minimum=1)
    if k > n // 2:
        raise ValueError(
            f"k: expected a wavenumber the {n} x {n} grid resolves, 1 <= k <= n // 2 = {n // 2} (above it the "
            f"sampled forcing aliases to a lower wavenumber), received {k}"
        )
    check_size("n", 4.0 * n * n, hint=f"an {n} x {n} forcing field")
    _check_amplitude(amplitude)
    y = 2 * jnp.pi * jnp.arange(n, dtype=dtype) / n
    return jnp.broadcast_to(-amplitude * jnp.cos(k * y)[None, :], (n, n)).astype(dtype)


def taylor_green(n: int, t: float, *, nu: float, amplitude: float = 1.0, k: int = 1, dtype=jnp.float64):
    r"""Exact Taylor–Green vorticity ``A cos(2πkx) cos(2πky) e^{-8π²k²νt}`` (advection vanishes identically)."""
    check_int("n", n, minimum=1)
    check_int("k", k, minimum=1)
    check_positive("nu", nu, strict=False)
    check_positive("t", t, strict=False)  # nu < 0 or t < 0 grew the field as e^{+8 pi^2 k^2 |nu t|}
    check_size("n", 8.0 * n * n, hint=f"an {n} x {n} vorticity field")
    _check_amplitude(amplitude)
    x = jnp.arange(n, dtype=dtype) / n
    decay = np.exp(-8 * np.pi**2 * k**2 * nu * t)
    return (
        amplitude * decay * jnp.cos(2 * jnp.pi * k * x)[:, None] * jnp.cos(2 * jnp.pi * k * x)[None, :]
    ).astype(dtype)


__all__ = ["fno_forcing", "kolmogorov_forcing", "solve", "taylor_green", "velocity"]
