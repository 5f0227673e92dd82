r"""The Laplace-neural-operator benchmark problems (Cao, Goswami & Karniadakis 2023, arXiv:2303.10528).

Each solver is a pure, jit-able function of one sample (batch with ``jax.vmap``); time integration goes through
diffrax (Tsit5, adaptive PID step control), PDEs by the method of lines (second-order finite differences).

What the public repository (github.com/qianyingcao/Laplace-Neural-Operator) fixes, and what we chose:

* **Splits**: 200 train / 50 validation / 130 test in every folder (``ntrain, nvali, ntest``); the dataset layer
  draws train and test with independent keys (merge validation into test or split it off yourself).
* **Reaction–diffusion** (``2D_Reac_diffusion``, the only data file stored in the repository, which we read):
  $u_t = D u_{xx} + k u^2 - f(x, t)$ on ``x ∈ [0, 2]`` (40 nodes), ``t ∈ [0, 1]`` (20 points),
  ``u(0, t) = u(2, t) = 0``, ``D = 1 - 0.95/π²``, ``k = 1`` (the repository's ``note.txt`` corrects the paper).
  The stored samples are the manufactured family ``u = A sin(πx) e^{-0.05 t}`` with ``f`` computed from it and
  amplitudes ``A = 0.05, 0.10, …, 10`` (train) and ``0.04 + 0.05 j`` (validation/test). The dataset stores that
  closed form with ``A ~ U[0.05, 10]``; :func:`reaction_diffusion` (method of lines) reproduces it from
  ``u(x, 0) = A sin(πx)`` (tested), but the trajectory is linearly unstable for large ``A`` (growth rate
  ``≈ 2kA - Dπ²``), so discretization error is amplified there — hence the closed form for the data.
* **Duffing** (``1D_Duffing_c0`` / ``_c05``, 2048 time points): data files are not in the repository. We use
  $m\ddot x + c\dot x + kx + k_3x^3 = f(t)$, ``m = k = k_3 = 1``, ``c = 0.5`` (option ``c=0``),
  ``f(t) = A sin(5t)``, ``A ~ U[0.05, 10]``, zero initial state, ``t_j = 0.01 j`` (``j < 2048``).
  (The sinusoid/amplitude family and grid follow the same authors' setup as reused in public derivatives.)
* **Euler–Bernoulli beam** (``2D_Beam``, data not stored): our choice
  $\rho A u_{tt} + EI u_{xxxx} = f(x, t)$, simply supported on ``[0, 1]`` (``u = u_xx = 0``),
  ``EI = ρA = 1``, zero initial state, ``f = A sin(πx) sin(5t)``, ``A ~ U[0.05, 10]``, 41 nodes, ``t ∈ [0, 2]``
  at 41 points. Closed form by modal superposition (:func:`beam_exact`).
* **Diffusion** (``2D_Diffusion``, data not stored): our choice $u_t = D u_{xx} + f(x, t)$ on ``[0, 1]``,
  ``u = 0`` at both ends, ``D = 1``, zero initial state, ``f = A sin(πx) sin(5t)``, 41 nodes, ``t ∈ [0, 1]`` at 21
  points. Closed form in :func:`diffusion_exact`.
* **Brusselator** (``3D_Brusselator``: a time signal of 39 values on ``t ∈ [0, 19]`` → one species on a 28×28 grid
  of the unit square; data not stored). Our choice:
  $u_t = D_u\Delta u + a - (b+1)u + u^2 v + f(t)$, $v_t = D_v\Delta v + bu - u^2 v$, zero-flux
  boundaries, ``a = 1``, ``b = 3``, ``D_u = D_v = 0.01``, ``u(0) = a + 0.1 cos(πx) cos(πy)``, ``v(0) = b/a``,
  forcing ``f(t) = A sin(ω t)``, ``A ~ U[0, 1]``, ``ω ~ U[0.5, 2]``; the target is ``u``.

Grids here are node grids ``linspace(a, b, n)`` in space and time (non-periodic).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import DTypeLike

from .._typing import Array, ArrayInput, Float
from .._validate import (
    as_float_array,
    check_choice,
    check_finite,
    check_int,
    check_ndim,
    check_positive,
    check_size,
    error_if_invalid,
    finite_checked,
    is_tracer,
)

_In = ArrayInput  # 1-D grids and times: arrays, NumPy arrays or lists, validated at run time


def _integrate(rhs: Callable, y0, ts, *, rtol: float, atol: float, max_steps: int = 200_000):
    ts = jnp.asarray(ts)
    term = diffrax.ODETerm(lambda t, y, args: rhs(t, y))
    sol = diffrax.diffeqsolve(
        term,
        diffrax.Tsit5(),
        t0=ts[0],
        t1=ts[-1],
        dt0=None,
        y0=y0,
        saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps,
        throw=False,
    )
    # a failed solve (NaN/inf from the user's forcing, or more than max_steps adaptive steps) names the forcing,
    # not diffrax's internals; eagerly a ValueError, under jax.jit/vmap a run-time check with the same message
    bad = sol.result != diffrax.RESULTS.successful
    for leaf in jax.tree.leaves(sol.ys):
        bad = bad | ~jnp.all(jnp.isfinite(leaf))
    return error_if_invalid(
        sol.ys,
        bad,
        "forcing: the time integration did not reach ts[-1] with finite values (adaptive Tsit5 stopped: the "
        f"right-hand side was NaN/inf, or more than {max_steps} steps were needed); check that forcing returns "
        "finite values at every time in [ts[0], ts[-1]]",
    )


def _tols(dtype, rtol, atol):
    if rtol is None:
        rtol = 1e-10 if dtype == jnp.float64 else 1e-5
    if atol is None:
        atol = 1e-12 if dtype == jnp.float64 else 1e-6
    return rtol, atol


def _check_ts(ts) -> None:
    if np.ndim(ts) != 1 or np.shape(ts)[0] < 2:
        raise ValueError(
            f"ts: expected a 1-D array of at least 2 increasing times, received shape {np.shape(ts)}"
        )
    if not isinstance(ts, jax.core.Tracer):
        a = np.asarray(ts, dtype=np.float64)
        if not np.all(np.isfinite(a)) or np.any(np.diff(a) <= 0):
            raise ValueError(f"ts: expected finite, strictly increasing times, received {a.tolist()[:8]}")


def _check_node_grid(x, minimum: int) -> None:
    """``x``: a 1-D grid of at least ``minimum`` finite, strictly increasing, equispaced nodes (the finite
    differences use ``h = x[1] - x[0]``); ``ValueError`` naming ``x`` otherwise. Traced grids are not checked."""
    if np.ndim(x) != 1 or np.shape(x)[0] < minimum:
        raise ValueError(
            f"x: expected a 1-D node grid of at least {minimum} points, received shape {np.shape(x)}"
        )
    if is_tracer(x):
        return
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"x: expected finite node positions, received {a.tolist()[:8]}")
    h = np.diff(a)
    if not np.all(h > 0):
        raise ValueError(f"x: expected strictly increasing nodes, received {a.tolist()[:8]}")
    h_mean = (a[-1] - a[0]) / (a.size - 1)  # float32 linspace rounds each node by up to an ulp of max |x|
    tol = 1e-3 * h_mean + 8 * float(np.finfo(np.float32).eps) * float(np.max(np.abs(a)))
    if np.max(np.abs(h - h_mean)) > tol:
        raise ValueError(
            f"x: expected equispaced nodes (spacings equal to 1e-3 relative), received spacings from "
            f"{float(h.min()):.6g} to {float(h.max()):.6g}"
        )


def _check_initial(u0, n: int) -> None:
    if u0 is None:
        return
    if np.shape(u0) != (n,):
        raise ValueError(f"u0: expected the grid's shape ({n},), received shape {np.shape(u0)}")
    if not is_tracer(u0):
        check_finite("u0", u0)


# ----------------------------------------------------------------------------------------------------------------
# Duffing oscillator
# ----------------------------------------------------------------------------------------------------------------


def duffing(
    forcing: Callable[[Array], Array],
    ts: _In,
    *,
    m: float = 1.0,
    c: float = 0.5,
    k: float = 1.0,
    k3: float = 1.0,
    x0: float = 0.0,
    v0: float = 0.0,
    rtol: float | None = None,
    atol: float | None = None,
) -> Float[Array, " t"]:
    r"""Displacement of $m\ddot x + c\dot x + kx + k_3x^3 = f(t)$ at the times ``ts``."""
    _check_ts(ts)
    check_positive("m", m)
    check_positive("c", c, strict=False)
    for name, v in (("k", k), ("k3", k3), ("x0", x0), ("v0", v0)):
        if not np.isfinite(v):
            raise ValueError(f"{name}: expected a finite value, received {v!r}")
    ts = jnp.asarray(ts)
    rtol, atol = _tols(ts.dtype, rtol, atol)

    def rhs(t, y):
        x, v = y[0], y[1]
        return jnp.stack([v, (forcing(t) - c * v - k * x - k3 * x**3) / m])

    ys = _integrate(rhs, jnp.asarray([x0, v0], ts.dtype), ts, rtol=rtol, atol=atol)
    return ys[:, 0]


# ----------------------------------------------------------------------------------------------------------------
# Euler–Bernoulli beam (simply supported) and diffusion (Dirichlet), method of lines
# ----------------------------------------------------------------------------------------------------------------


def _second_difference_dirichlet(u, h):
    up = jnp.pad(u, 1)
    return (up[2:] - 2 * up[1:-1] + up[:-2]) / h**2


def beam(
    forcing: Callable[[Array, Array], Array],
    x: _In,
    ts: _In,
    *,
    ei: float = 1.0,
    rho_a: float = 1.0,
    rtol: float | None = None,
    atol: float | None = None,
) -> Float[Array, "n t"]:
    r"""Simply supported Euler–Bernoulli beam $\rho A u_{tt} + EI u_{xxxx} = f(x,t)$, zero initial state.

    ``x`` are equispaced nodes including both ends (``u = u_xx = 0`` there, imposed by odd reflection);
    ``forcing(x, t)`` returns the load at the nodes. Returns ``u`` at the nodes × times.
    """
    _check_ts(ts)
    _check_node_grid(x, 5)
    check_positive("ei", ei)
    check_positive("rho_a", rho_a)
    x = jnp.asarray(x)
    ts = jnp.asarray(ts, x.dtype)
    h = x[1] - x[0]
    xi = x[1:-1]
    rtol, atol = _tols(x.dtype, rtol, atol)

    def d4(u):  # interior values; u_0 = u_n = 0 and odd reflection u_{-1} = -u_1
        ext = jnp.concatenate([-u[:1], jnp.zeros(1, u.dtype), u, jnp.zeros(1, u.dtype), -u[-1:]])
        return (ext[:-4] - 4 * ext[1:-3] + 6 * ext[2:-2] - 4 * ext[3:-1] + ext[4:]) / h**4

    def rhs(t, y):
        u, v = y
        return (v, (forcing(xi, t) - ei * d4(u)) / rho_a)

    z = jnp.zeros_like(xi)
    u, _ = _integrate(rhs, (z, z), ts, rtol=rtol, atol=atol)
    return jnp.pad(u, ((0, 0), (1, 1))).T


def _scalar_checked(name: str, v, *, positive: bool = False):
    """A scalar coefficient of a closed form: finite (and ``> 0`` with ``positive``); ``ValueError`` naming it, or
    on a traced value an ``equinox.error_if`` run-time check with the same message."""
    if is_tracer(v):
        bad = ~jnp.isfinite(v) | (v <= 0) if positive else ~jnp.isfinite(v)
        rel = " > 0" if positive else ""
        return error_if_invalid(v, bad, f"{name}: expected a finite value{rel}, received a value outside")
    if positive:
        check_positive(name, v)
    else:
        check_finite(name, v)
    return v


def _exact_grid(amplitude, x, ts):
    """The arguments of the closed forms, checked: a finite ``amplitude``, a finite 1-D grid ``x`` and finite
    times ``ts >= 0`` (the zero initial state is imposed at ``t = 0``)."""
    as_float_array("amplitude", amplitude)  # dtype checks; a Python number stays weakly typed
    amplitude = finite_checked("amplitude", amplitude)
    x = as_float_array("x", x)
    check_ndim("x", x, 1, what="a 1-D grid")
    x = finite_checked("x", x)
    ts = as_float_array("ts", ts)
    check_ndim("ts", ts, 1, what="a 1-D array of times")
    ts = finite_checked("ts", ts)
    message = "ts: expected times >= 0 (the zero initial state is imposed at t = 0)"
    if not is_tracer(ts) and ts.size and float(ts.min()) < 0:
        raise ValueError(f"{message}, received a minimum of {float(ts.min())}")
    ts = error_if_invalid(ts, ts < 0, message)
    return amplitude, x, ts


def _eigenvalue(length, eigenvalue, power: int):
    length = _scalar_checked("length", length, positive=True)
    if eigenvalue is None:
        return length, (np.pi / length) ** power
    return length, _scalar_checked("eigenvalue", eigenvalue, positive=True)


def beam_exact(
    amplitude,
    x,
    ts,
    *,
    omega: float = 5.0,
    ei: float = 1.0,
    rho_a: float = 1.0,
    length: float = 1.0,
    eigenvalue=None,
):
    r"""Closed form for ``f = A sin(πx/L) sin(ωt)``, zero initial state: ``u = sin(πx/L) q(t)`` with
    $q = \frac{A/\rho A}{\omega_0^2 - \omega^2}(\sin\omega t - \frac{\omega}{\omega_0}\sin\omega_0 t)$,
    $\omega_0^2 = (EI/\rho A)\lambda$, ``λ = (π/L)^4`` (or the given ``eigenvalue``, e.g. the discrete one).

    ``amplitude``, ``x`` (1-D) and ``ts`` (1-D, ``>= 0``) finite; ``ei``, ``rho_a``, ``length`` and ``eigenvalue``
    finite and ``> 0``; ``omega`` finite and not the natural frequency ``ω0`` (at resonance the solution grows
    like ``t`` and this form does not hold). Otherwise ``ValueError`` naming the argument."""
    amplitude, x, ts = _exact_grid(amplitude, x, ts)
    omega = _scalar_checked("omega", omega)
    ei = _scalar_checked("ei", ei, positive=True)
    rho_a = _scalar_checked("rho_a", rho_a, positive=True)
    length, lam = _eigenvalue(length, eigenvalue, 4)
    w0 = jnp.sqrt(ei / rho_a * lam) if is_tracer(ei / rho_a * lam) else np.sqrt(ei / rho_a * lam)
    den = w0**2 - omega**2
    message = "omega: expected a forcing frequency other than the natural frequency ω0 (resonance)"
    if is_tracer(den):
        ts = error_if_invalid(ts, jnp.abs(den) <= 1e-9 * jnp.maximum(w0**2, omega**2), message)
    elif abs(float(den)) <= 1e-9 * max(float(w0**2), float(omega**2)):
        raise ValueError(f"{message}, received omega={omega} with ω0 = {float(w0):.6g}")
    q = amplitude / rho_a / (w0**2 - omega**2) * (jnp.sin(omega * ts) - omega / w0 * jnp.sin(w0 * ts))
    return jnp.sin(np.pi * x / length)[:, None] * q[None, :]


def diffusion(
    forcing: Callable[[Array, Array], Array],
    x: _In,
    ts: _In,
    *,
    d: float = 1.0,
    u0: _In | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> Float[Array, "n t"]:
    r"""$u_t = D u_{xx} + f(x, t)$ with ``u = 0`` at both end nodes, from ``u0`` (default 0)."""
    return _reaction_diffusion(forcing, x, ts, d=d, k=0.0, u0=u0, rtol=rtol, atol=atol, sign=1.0)


def diffusion_exact(
    amplitude, x, ts, *, omega: float = 5.0, d: float = 1.0, length: float = 1.0, eigenvalue=None
):
    r"""Closed form for ``f = A sin(πx/L) sin(ωt)``, ``u(·,0) = 0``: ``u = sin(πx/L) q(t)``,
    $q = \frac{A}{\mu^2+\omega^2}(\mu\sin\omega t - \omega\cos\omega t + \omega e^{-\mu t})$, ``μ = Dλ``.

    ``amplitude``, ``x`` (1-D) and ``ts`` (1-D, ``>= 0``: before ``t = 0`` the term ``e^{-μt}`` grows without
    bound) finite; ``omega`` finite; ``d``, ``length`` and ``eigenvalue`` finite and ``> 0``. Otherwise
    ``ValueError`` naming the argument."""
    amplitude, x, ts = _exact_grid(amplitude, x, ts)
    omega = _scalar_checked("omega", omega)
    d = _scalar_checked("d", d, positive=True)
    length, lam = _eigenvalue(length, eigenvalue, 2)
    mu = d * lam
    q = (
        amplitude
        / (mu**2 + omega**2)
        * (mu * jnp.sin(omega * ts) - omega * jnp.cos(omega * ts) + omega * jnp.exp(-mu * ts))
    )
    return jnp.sin(np.pi * x / length)[:, None] * q[None, :]


def _reaction_diffusion(forcing, x, ts, *, d, k, u0, rtol, atol, sign):
    _check_ts(ts)
    _check_node_grid(x, 3)
    check_positive("d", d)
    if not is_tracer(k):
        check_finite("k", k)
    _check_initial(u0, np.shape(x)[0])
    x = jnp.asarray(x)
    ts = jnp.asarray(ts, x.dtype)
    h = x[1] - x[0]
    xi = x[1:-1]
    rtol, atol = _tols(x.dtype, rtol, atol)
    y0 = jnp.zeros_like(xi) if u0 is None else jnp.asarray(u0, x.dtype)[1:-1]

    def rhs(t, u):
        return d * _second_difference_dirichlet(u, h) + k * u**2 + sign * forcing(xi, t)

    u = _integrate(rhs, y0, ts, rtol=rtol, atol=atol)
    return jnp.pad(u, ((0, 0), (1, 1))).T


def reaction_diffusion(
    forcing: Callable[[Array, Array], Array],
    x: _In,
    ts: _In,
    *,
    d: float = 1.0 - 0.95 / np.pi**2,
    k: float = 1.0,
    u0: _In | None = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> Float[Array, "n t"]:
    r"""LNO reaction–diffusion $u_t = D u_{xx} + k u^2 - f(x, t)$, ``u = 0`` at the end nodes."""
    return _reaction_diffusion(forcing, x, ts, d=d, k=k, u0=u0, rtol=rtol, atol=atol, sign=-1.0)


def reaction_diffusion_manufactured(
    amplitude, x, ts, *, d: float = 1.0 - 0.95 / np.pi**2, k: float = 1.0, decay: float = 0.05
):
    """The published family ``u = A sin(πx) e^{-0.05t}`` and its forcing ``f = D u_xx + k u² - u_t``.

    Returns ``(f, u)`` evaluated on ``x × ts`` and a callable ``f(x, t)`` for the solver. ``amplitude``, ``x``,
    ``ts``, ``d``, ``k`` and ``decay`` finite (``ValueError`` naming the argument; a run-time check under ``jit``).
    """
    as_float_array("amplitude", amplitude)  # dtype checks; a Python number stays weakly typed
    amplitude = finite_checked("amplitude", amplitude)
    x = finite_checked("x", as_float_array("x", x))
    ts = finite_checked("ts", as_float_array("ts", ts))
    d = _scalar_checked("d", d)
    k = _scalar_checked("k", k)
    decay = _scalar_checked("decay", decay)

    def u_fn(xx, t):
        return amplitude * jnp.sin(jnp.pi * xx) * jnp.exp(-decay * t)

    def f_fn(xx, t):
        u = u_fn(xx, t)
        return -d * jnp.pi**2 * u + k * u**2 + decay * u

    xx, tt = jnp.asarray(x)[:, None], jnp.asarray(ts)[None, :]
    return f_fn(xx, tt), u_fn(xx, tt), f_fn


# ----------------------------------------------------------------------------------------------------------------
# Brusselator
# ----------------------------------------------------------------------------------------------------------------


def _laplacian_neumann(u, h):
    up = jnp.pad(u, 1, mode="edge")  # zero-flux: ghost = boundary value (second order at the face)
    up = up.at[0, 1:-1].set(u[1]).at[-1, 1:-1].set(u[-2]).at[1:-1, 0].set(u[:, 1]).at[1:-1, -1].set(u[:, -2])
    return (up[2:, 1:-1] + up[:-2, 1:-1] + up[1:-1, 2:] + up[1:-1, :-2] - 4 * u) / h**2


def brusselator(
    forcing: Callable[[Array], Array],
    n: int,
    ts: _In,
    *,
    a: float = 1.0,
    b: float = 3.0,
    du: float = 0.01,
    dv: float = 0.01,
    perturbation: float = 0.1,
    rtol: float | None = None,
    atol: float | None = None,
    dtype=jnp.float32,
) -> Float[Array, "2 t n n"]:
    r"""Forced Brusselator on the unit square (``n×n`` nodes, zero-flux boundaries, reflected ghost nodes):
    $u_t = D_u\Delta u + a - (b+1)u + u^2v + f(t)$, $v_t = D_v\Delta v + bu - u^2v$,
    ``u(0) = a + ε cos(πx) cos(πy)``, ``v(0) = b/a``. Returns ``(u, v)`` at ``ts``. ``a > 0``, ``b`` and ``ε``
    (``perturbation``) finite, ``du, dv > 0``: otherwise ``ValueError`` naming the argument."""
    _check_ts(ts)
    check_int("n", n, minimum=3)
    check_size("n", 4.0 * 2 * n * n * max(int(np.size(ts)), 1), hint=f"u and v on an {n} x {n} grid per time")
    check_positive("du", du)
    check_positive("dv", dv)
    if not is_tracer(a):
        check_positive("a", a)  # v(0) = b / a
    for name, v in (("b", b), ("perturbation", perturbation)):
        if not is_tracer(v):
            check_finite(name, v)
    ts = jnp.asarray(ts, dtype)
    h = 1.0 / (n - 1)
    g = jnp.linspace(0.0, 1.0, n, dtype=dtype)
    u0 = a + perturbation * jnp.cos(jnp.pi * g)[:, None] * jnp.cos(jnp.pi * g)[None, :]
    v0 = jnp.full((n, n), b / a, dtype)
    rtol, atol = _tols(dtype, rtol, atol)

    def rhs(t, y):
        u, v = y
        uuv = u * u * v
        return (
            du * _laplacian_neumann(u, h) + a - (b + 1) * u + uuv + forcing(t),
            dv * _laplacian_neumann(v, h) + b * u - uuv,
        )

    u, v = _integrate(rhs, (u0.astype(dtype), v0), ts, rtol=rtol, atol=atol)
    return jnp.stack([u, v])


# ----------------------------------------------------------------------------------------------------------------
# The published reaction-diffusion data set (repository folder 2D_Reac_diffusion, data.mat), regenerated exactly
# ----------------------------------------------------------------------------------------------------------------
# Amplitude indices j (A = 0.04 + 0.05 j) of the validation and test samples in the file's order, read from the
# repository's data.mat (a random split of j = 2..181; train is A = 0.05 j, j = 1..200, in order).
_RD_VAL_INDEX = (
    80,
    136,
    116,
    62,
    118,
    171,
    131,
    73,
    8,
    132,
    99,
    165,
    35,
    60,
    14,
    11,
    128,
    164,
    143,
    2,
    78,
    176,
    84,
    107,
    113,
    86,
    44,
    97,
    65,
    112,
    145,
    148,
    158,
    129,
    64,
    95,
    66,
    111,
    124,
    114,
    34,
    181,
    68,
    15,
    168,
    58,
    17,
    105,
    110,
    159,
)
_RD_TEST_INDEX = (
    16,
    180,
    152,
    36,
    120,
    69,
    79,
    28,
    100,
    49,
    85,
    166,
    47,
    151,
    51,
    150,
    13,
    163,
    6,
    40,
    45,
    74,
    30,
    155,
    39,
    61,
    102,
    48,
    53,
    133,
    174,
    87,
    71,
    46,
    144,
    56,
    121,
    104,
    137,
    20,
    21,
    38,
    76,
    27,
    75,
    96,
    101,
    4,
    25,
    31,
    7,
    94,
    22,
    89,
    109,
    24,
    91,
    160,
    10,
    42,
    170,
    43,
    108,
    125,
    33,
    90,
    67,
    12,
    18,
    106,
    156,
    52,
    32,
    54,
    92,
    154,
    142,
    130,
    83,
    19,
    177,
    82,
    70,
    41,
    50,
    172,
    169,
    103,
    63,
    161,
    88,
    77,
    167,
    146,
    179,
    175,
    140,
    134,
    162,
    93,
    138,
    122,
    37,
    153,
    59,
    141,
    5,
    149,
    123,
    57,
    98,
    139,
    26,
    72,
    173,
    9,
    178,
    3,
    147,
    55,
    126,
    157,
    81,
    115,
    29,
    117,
    119,
    127,
    23,
    135,
)


def reaction_diffusion_published(
    split: Literal["train", "val", "test"], *, dtype: DTypeLike = np.float64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The LNO repository's reaction–diffusion split ``(f, u, x, t)``: ``f, u`` of shape ``(n, 40, 20)`` on
    ``x = linspace(0, 2, 40)`` × ``t = linspace(0, 1, 20)`` (200 train / 50 val / 130 test), identical to the
    published ``data.mat`` up to float rounding (checked once against the file; the file is not shipped here).

    Every split has $u = A\sin(\pi x)e^{-r t}$ and the forcing $f = (1-\pi^2)u + u^2$. Train: $A = 0.05j$,
    $j = 1..200$, decay $r = 0.05$, so $u_t = Du_{xx} + ku^2 - f$ with $D = 1 - 0.95/\pi^2$, $k = 1$ (the
    repository's ``note.txt``). Validation/test: $A = 0.04 + 0.05j$ ($j = 2..181$, the published random split)
    and decay $r = 1$: these pairs satisfy the same equation only with $D = 1$, i.e. the test measures
    extrapolation to another decay (and operator), as in the LNO paper; $u \mapsto f$ is the same pointwise map
    in all splits.
    """
    check_choice("split", split, ("train", "val", "test"))
    x = np.linspace(0.0, 2.0, 40)
    t = np.linspace(0.0, 1.0, 20)
    if split == "train":
        amp, decay = 0.05 * np.arange(1, 201), 0.05
    else:
        idx = np.asarray(_RD_VAL_INDEX if split == "val" else _RD_TEST_INDEX)
        amp, decay = 0.04 + 0.05 * idx, 1.0
    u = amp[:, None, None] * np.sin(np.pi * x)[None, :, None] * np.exp(-decay * t)[None, None, :]
    f = (1.0 - np.pi**2) * u + u**2
    return f.astype(dtype), u.astype(dtype), x, t


__all__ = [
    "beam",
    "beam_exact",
    "brusselator",
    "diffusion",
    "diffusion_exact",
    "duffing",
    "reaction_diffusion",
    "reaction_diffusion_manufactured",
    "reaction_diffusion_published",
]
