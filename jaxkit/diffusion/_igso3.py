"""The isotropic Gaussian on SO(3), IGSO(3)(sigma): density, CDF, sampling and score, for sigma in [1e-3, 5].

IGSO(3)(sigma) is the law of Brownian motion on SO(3) at time ``sigma^2`` (generator ``Delta/2`` for the metric
with ``|hat v| = |v|``; for small ``sigma`` the rotation vector is ~ ``N(0, sigma^2 I_3)``). Its density with respect
to the normalized Haar measure depends on the rotation angle ``omega`` only (Nikolayev & Savyolova 1997;
Leach et al. 2022; Yim et al. 2023, FrameDiff):

    f(omega, sigma) = sum_l (2l+1) exp(-l(l+1) sigma^2/2) sin((l+1/2) omega) / sin(omega/2)
                  = b_0 + sum_{m>=1} b_m cos(m omega),   b_m = 2 sum_{l>=m} (2l+1) exp(-l(l+1) sigma^2/2)

and the angle has density ``p(omega) = (1 - cos omega)/pi * f(omega)`` on ``[0, pi]``. Two evaluations:

- **series** (``sigma >= SIGMA_SWITCH = 1``): the cosine series above with ``L_SERIES = 16`` terms (the first
  neglected term is below ``1e-55`` at ``sigma = 1``). The derivative ``-sum m b_m sin(m omega)`` has no
  ``0/0``; ``d log f/d omega / omega`` uses ``sin(m omega)/omega = m sinc``.
- **closed form** (``sigma < 1``): Poisson summation turns the series into a sum of images (exact as
  ``K -> inf``; ``|k| <= 1`` reaches float64 precision for ``sigma <= 1``: the next image is ``exp(-2 pi^2/tau)``
  relative), with ``tau = sigma^2/2``:
  ``f = sqrt(pi) tau^{-3/2} e^{tau/4} / (2 sin(omega/2)) sum_k (-1)^k (omega + 2 pi k) e^{-(omega+2 pi k)^2/(4 tau)}``.
  It is evaluated in log form, stable for ``sigma -> 0`` (no overflow, no ``0/0`` at ``omega = 0``).

The CDF has closed forms too (series: ``(1/pi) sum_l c_l [sin(l w)/l - sin((l+1) w)/(l+1)]``; images: complex
``erf``), evaluated in NumPy float64 by :func:`cdf_reference`. Sampling inverts float64 CDF tables on an
``(sigma, omega)`` grid (``N_SIGMA = 256`` log-spaced ``sigma`` in ``[1e-3, 5]``; per row ``N_OMEGA = 1024`` angles on
``[0, min(pi, 9 sigma)]``), computed once and cached in ``$JAXKIT_CACHE_DIR`` (default ``~/.cache/jaxkit``):
jit-able binary search in the two neighboring rows, linear inside a cell, geometric interpolation in ``sigma``.
A concrete scalar ``sigma`` (the common case) instead gets its own float64 two-sided quantile table
(``omega = F^{-1}(s^3/2)`` and ``F^{-1}(1 - s^3/2)`` on a uniform ``s`` grid, Newton-refined against
:func:`cdf_reference`; built in ~0.3 s and kept in memory for 64 values): sampling is then one cell lookup, and
a rotation costs three uniforms (angle, and the axis by Archimedes' projection) and one fused Rodrigues pass.

Score. For ``R = R_0 exp(hat v)`` with ``omega = |v|``, the Riemannian gradient of ``log f`` expressed in the body
frame (``grad = R hat(s)``) is ``s = v / omega * d log f / d omega`` (:func:`score_vector`). The DiffDock
normalization divides by ``score_norm(sigma) = sqrt(E[(d log f / d omega)^2])`` (a 1-D table).
"""

from __future__ import annotations

import hashlib
import math
import os
import zipfile
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, PRNGKeyArray

from jaxkit._typing import ArrayInput, DTypeLike
from jaxkit._validate import (
    check_broadcast,
    check_key,
    check_shape_tuple,
    check_size,
    check_trailing_shape,
    finite_checked,
    range_checked,
    size_cap,
)
from jaxkit.geometry import so3 as _so3

__all__ = [
    "SIGMA_MAX",
    "SIGMA_MIN",
    "SIGMA_SWITCH",
    "angle_density",
    "angle_log_density",
    "cdf",
    "cdf_reference",
    "check_sigma",
    "dlog_density",
    "log_density",
    "sample",
    "sample_angle",
    "sample_vector",
    "score",
    "score_coef",
    "score_norm",
    "score_vector",
    "tables",
]

SIGMA_MIN = 1e-3
SIGMA_MAX = 5.0
SIGMA_SWITCH = 1.0
L_SERIES = 16
K_IMAGES = 1  # jnp closed form; relative size of the next image at sigma <= 1 is exp(-2 pi^2/tau) < 1e-17
K_IMAGES_CDF = 3  # NumPy reference CDF (cheap; kept generous)
N_SIGMA = 256
N_OMEGA = 1024
OMEGA_SPAN = 9.0  # row range: omega in [0, min(pi, OMEGA_SPAN * sigma)]
_TABLE_VERSION = 2


def check_sigma(name: str, sigma: ArrayInput) -> ArrayInput:
    """Raise ``ValueError`` unless ``sigma`` lies in ``[SIGMA_MIN, SIGMA_MAX]``; returns ``sigma`` (on a tracer
    with the check at run time, ``eqx.error_if``, so it also holds under ``jax.jit``)."""
    if isinstance(sigma, jax.core.Tracer):
        return range_checked(name, sigma, SIGMA_MIN, SIGMA_MAX, rtol=1e-6)
    range_checked(name, np.asarray(sigma, dtype=np.float64), SIGMA_MIN, SIGMA_MAX, rtol=1e-6)
    return sigma


# ------------------------------------------------------------------------------------------------------------
# Evaluations generic in the array namespace (NumPy float64 for tables, jax.numpy for traced code)
# ------------------------------------------------------------------------------------------------------------


def _series_coefs(xp: Any, sigma: Any) -> Any:
    """``b_m``, m = 0..L, shape ``sigma.shape + (L+1,)``."""
    l = xp.arange(L_SERIES + 1, dtype=sigma.dtype)
    c = (2 * l + 1) * xp.exp(-l * (l + 1) * (sigma[..., None] ** 2) / 2)
    tail = xp.flip(xp.cumsum(xp.flip(c, -1), -1), -1)  # sum_{l>=m} c_l
    b = 2 * tail
    if xp is np:
        b[..., 0] = tail[..., 0]
        return b
    return b.at[..., 0].set(tail[..., 0])


def _series(xp: Any, omega: Any, sigma: Any) -> tuple[Any, Any, Any]:
    """Series branch: ``(log f, d log f/d omega, (d log f/d omega)/omega)``."""
    b = _series_coefs(xp, sigma)
    m = xp.arange(L_SERIES + 1, dtype=omega.dtype)
    mw = m * omega[..., None]
    f = xp.sum(b * xp.cos(mw), -1)
    df = -xp.sum(m * b * xp.sin(mw), -1)
    df_over_w = -xp.sum(m * m * b * xp.sinc(mw / np.pi), -1)
    return xp.log(f), df / f, df_over_w / f


def _images(xp: Any, omega: Any, sigma: Any) -> tuple[Any, Any, Any]:
    """Closed-form (image sum) branch: ``(log f, d log f/d omega, (d log f/d omega)/omega)``."""
    tau = sigma**2 / 2
    w = omega
    small_w = w < 0.1
    w_safe = xp.where(small_w, 0.1, w)
    # g(w) = 1/w - cot(w/2)/2 = d/dw log(w / sin(w/2)); h(w) = log(w / sin(w/2))
    w2 = w * w
    g_over_w = xp.where(
        small_w,
        1 / 12 + w2 / 720 + w2 * w2 / 30240 + w2**3 / 1209600,
        (1 / w_safe - 0.5 / xp.tan(w_safe / 2)) / w_safe,
    )
    g = g_over_w * w
    h = xp.where(
        small_w,
        math.log(2.0) + w2 / 24 + w2 * w2 / 2880 + w2**3 / 181440,
        xp.log(w_safe / xp.sin(w_safe / 2)),
    )
    # P = S / w = 1 + sum_k>=1 (-1)^k [A_k + 2 pi k B_k]
    P = xp.ones_like(w)
    dP = xp.zeros_like(w)
    dP_over_w = xp.zeros_like(w)
    for k in range(1, K_IMAGES + 1):
        sgn = (-1.0) ** k
        ck = np.pi * k / tau
        E = xp.exp(-(np.pi**2) * k * k / tau)
        e_p = xp.exp(-ck * (w + np.pi * k))  # e_k
        e_m = xp.exp(ck * (w - np.pi * k))  # e_{-k}
        A = e_p + e_m
        a = ck * w
        small_a = a < 0.1
        a2 = a * a
        Bs = -2 * E * ck * (1 + a2 / 6 + a2 * a2 / 120)
        Bd = (e_p - e_m) / xp.where(small_a, 1.0, w)
        B = xp.where(small_a, Bs, Bd)
        # B' / w
        q_s = -2 * E * ck**3 * (1 / 3 + a2 / 30 + a2 * a2 / 840)
        w2s = xp.where(small_a, 1.0, w * w)
        q_d = -(ck * A + B) / w2s
        q = xp.where(small_a, q_s, q_d)
        dA_over_w = -ck * B
        P = P + sgn * (A + 2 * np.pi * k * B)
        dP_over_w = dP_over_w + sgn * (dA_over_w + 2 * np.pi * k * q)
        dP = dP + sgn * (dA_over_w + 2 * np.pi * k * q) * w
    const = 0.5 * math.log(math.pi) - 1.5 * xp.log(tau) + tau / 4 - math.log(2.0)
    logf = const - w2 / (4 * tau) + xp.log(P) + h
    dlogf_over_w = -1 / (2 * tau) + dP_over_w / P + g_over_w
    dlogf = -w / (2 * tau) + dP / P + g
    return logf, dlogf, dlogf_over_w


def _eval(xp: Any, omega: Any, sigma: Any) -> tuple[Any, Any, Any]:
    omega, sigma = xp.broadcast_arrays(omega, sigma)
    omega = xp.clip(omega, 0.0, np.pi)
    if xp is np:  # NumPy (tables): evaluate each branch only where it is used
        out = tuple(np.empty(omega.shape) for _ in range(3))
        ser = sigma >= SIGMA_SWITCH
        with np.errstate(all="ignore"):
            for mask, fn in ((ser, _series), (~ser, _images)):
                if np.any(mask):
                    for o, r in zip(out, fn(np, omega[mask], sigma[mask])):
                        o[mask] = r
        return out
    use_series = sigma >= SIGMA_SWITCH
    sigma_s = xp.where(use_series, sigma, SIGMA_SWITCH)
    sigma_i = xp.where(use_series, SIGMA_SWITCH, sigma)
    a = _series(xp, omega, sigma_s)
    b = _images(xp, omega, sigma_i)
    return tuple(xp.where(use_series, x, y) for x, y in zip(a, b))


_EVAL_WORDS = 8 * (L_SERIES + 1) + 40  # temporaries per element of the jnp evaluation (series + images)


def _eval_jnp(omega: Array, sigma: Array) -> tuple[Array, Array, Array]:
    """``_eval`` in jax.numpy; chunked (``lax.map``) when its temporaries would exceed the size cap."""
    omega, sigma = jnp.broadcast_arrays(omega, sigma)
    n, itemsize = int(np.prod(omega.shape, dtype=np.int64)), jnp.dtype(omega.dtype).itemsize
    chunk = max(1, size_cap() // (_EVAL_WORDS * itemsize))
    if n <= chunk:
        return _eval_jit(omega, sigma)
    return _eval_chunked(omega, sigma, chunk)


@jax.jit
def _eval_jit(omega: Array, sigma: Array) -> tuple[Array, Array, Array]:
    return _eval(jnp, omega, sigma)


@partial(jax.jit, static_argnums=2)
def _eval_chunked(omega: Array, sigma: Array, chunk: int) -> tuple[Array, Array, Array]:
    shape = omega.shape
    out = jax.lax.map(
        lambda a: _eval(jnp, a[0], a[1]), (omega.reshape(-1), sigma.reshape(-1)), batch_size=chunk
    )
    return tuple(o.reshape(shape) for o in out)


def _as_float(x: ArrayLike) -> Array:
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(jnp.result_type(float))


def _check_omega(omega: Any) -> Any:
    """Rotation angles lie in ``[0, pi]`` (the series are not periodic in omega); at run time on a tracer."""
    if isinstance(omega, jax.core.Tracer):
        return range_checked(
            "omega", omega, 0.0, float(np.pi), what="rotation angles", rtol=1e-6, interval="[0, pi]"
        )
    range_checked(
        "omega",
        np.asarray(omega, dtype=np.float64),
        0.0,
        float(np.pi),
        what="rotation angles",
        rtol=1e-6,
        interval="[0, pi]",
    )
    return omega


def log_density(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """``log f(omega, sigma)``: log-density of IGSO(3) w.r.t. the normalized Haar measure, at rotation angle omega."""
    sigma, omega = check_sigma("sigma", sigma), _check_omega(omega)
    check_broadcast(sigma=sigma, omega=omega)
    omega, sigma = _as_float(omega), _as_float(sigma)
    return _eval_jnp(omega, sigma)[0]


def angle_log_density(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """Log-density of the rotation angle on ``[0, pi]``: ``log((1 - cos omega)/pi) + log f``."""
    omega = _as_float(omega)
    return jnp.log((1 - jnp.cos(omega)) / jnp.pi) + log_density(omega, sigma)


def angle_density(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """Density of the rotation angle on ``[0, pi]``; integrates to 1."""
    return jnp.exp(angle_log_density(omega, sigma))


def dlog_density(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """``d log f / d omega`` (analytic)."""
    sigma, omega = check_sigma("sigma", sigma), _check_omega(omega)
    check_broadcast(sigma=sigma, omega=omega)
    return _eval_jnp(_as_float(omega), _as_float(sigma))[1]


def score_coef(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """``(d log f / d omega) / omega``, finite at ``omega = 0`` (the score is ``v * score_coef(|v|)``)."""
    sigma, omega = check_sigma("sigma", sigma), _check_omega(omega)
    check_broadcast(sigma=sigma, omega=omega)
    return _eval_jnp(_as_float(omega), _as_float(sigma))[2]


def score_vector(v: ArrayLike, sigma: ArrayLike) -> Array:
    """Body-frame score at ``R = R_0 exp(hat v)`` of IGSO(3)(sigma) centered at ``R_0``: ``v * score_coef(|v|)``.

    ``v (..., 3)`` are rotation vectors with ``|v| <= pi``; ``sigma`` broadcasts against ``v.shape[:-1]``.
    """
    v = finite_checked("v", _as_float(v))
    check_trailing_shape("v", v, (3,))
    w = jnp.sqrt(jnp.sum(v * v, -1))
    w = range_checked(
        "v", w, 0.0, float(np.pi), what="rotation-vector norms |v|", rtol=1e-6, interval="[0, pi]"
    )
    return v * score_coef(w, sigma)[..., None]


def score(R: ArrayLike, sigma: ArrayLike, mean: ArrayLike | None = None) -> Array:
    """Body-frame score ``s`` (``grad_R log p = R hat(s)``) of IGSO(3)(sigma) around ``mean`` (default I) at ``R``."""
    R = _as_float(_so3.check_rotation("R", R))
    if mean is not None:
        mean = _so3.check_rotation("mean", mean)
        R = jnp.matmul(jnp.swapaxes(jnp.asarray(mean, R.dtype), -1, -2), R)
    return score_vector(_so3.log(R), sigma)


# ------------------------------------------------------------------------------------------------------------
# Float64 reference CDF and tables
# ------------------------------------------------------------------------------------------------------------


def cdf_reference(omega: ArrayLike, sigma: ArrayLike) -> np.ndarray:
    """Exact CDF of the angle in NumPy float64 (series for ``sigma >= 1``, complex-erf images below)."""
    from scipy.special import erf

    sigma = check_sigma("sigma", sigma)
    _check_omega(omega)
    w, e = np.broadcast_arrays(
        np.clip(np.asarray(omega, np.float64), 0, np.pi), np.asarray(sigma, np.float64)
    )
    out = np.empty(w.shape)
    ser = e >= SIGMA_SWITCH
    if np.any(ser):
        ws, es = w[ser], e[ser]
        l = np.arange(L_SERIES + 1, dtype=np.float64)
        c = (2 * l + 1) * np.exp(-l * (l + 1) * es[:, None] ** 2 / 2)
        lw = l * ws[:, None]
        term1 = np.where(l == 0, ws[:, None], np.sin(lw) / np.where(l == 0, 1, l))
        term2 = np.sin((l + 1) * ws[:, None]) / (l + 1)
        out[ser] = np.sum(c * (term1 - term2), -1) / np.pi
    if np.any(~ser):
        wi, ei = w[~ser], e[~ser]

        def CG(u: np.ndarray, e: np.ndarray) -> np.ndarray:
            tau = e**2 / 2
            gauss = np.sin(u / 2) * np.exp(-(u**2) / (4 * tau))
            return -(2 / np.sqrt(np.pi * tau)) * np.exp(tau / 4) * gauss + np.real(
                erf((u - 1j * tau) / np.sqrt(2 * e**2))
            )

        ue, inv = np.unique(ei, return_inverse=True)
        acc = np.zeros_like(wi)
        for k in range(-K_IMAGES_CDF, K_IMAGES_CDF + 1):
            acc += CG(wi + 2 * np.pi * k, ei)
            if k != 0:  # CG(2 pi k) depends on sigma only: once per distinct sigma
                acc -= CG(np.full_like(ue, 2 * np.pi * k), ue)[inv]
        out[~ser] = acc
    return np.asarray(np.clip(out, 0.0, 1.0))


def _sigma_grid() -> np.ndarray:
    return np.exp(np.linspace(np.log(SIGMA_MIN), np.log(SIGMA_MAX), N_SIGMA))


def _build_tables() -> dict[str, np.ndarray]:
    sigma = _sigma_grid()
    wmax = np.minimum(np.pi, OMEGA_SPAN * sigma)
    j = np.linspace(0.0, 1.0, N_OMEGA)
    W = wmax[:, None] * j[None, :]
    E = np.broadcast_to(sigma[:, None], W.shape)
    F = cdf_reference(W, E)
    F = np.maximum.accumulate(F, axis=1)
    F[:, 0] = 0.0
    # score norm: E[(d log f/d omega)^2] by Simpson on each row
    from scipy.integrate import simpson

    logf, dlogf, _ = _eval(np, W, E)
    with np.errstate(divide="ignore"):
        p = np.exp(np.log((1 - np.cos(W)) / np.pi) + logf)
    norm2 = simpson(p * dlogf**2, x=W, axis=1)
    mass = simpson(p, x=W, axis=1)
    return {"sigma": sigma, "omega_max": wmax, "cdf": F, "score_norm": np.sqrt(norm2 / mass), "mass": mass}


def _cache_path() -> Path:
    root = Path(os.environ.get("JAXKIT_CACHE_DIR", Path.home() / ".cache" / "jaxkit"))
    key = f"{_TABLE_VERSION}-{SIGMA_MIN}-{SIGMA_MAX}-{SIGMA_SWITCH}-{L_SERIES}-{K_IMAGES}-{K_IMAGES_CDF}-{N_SIGMA}-{N_OMEGA}-{OMEGA_SPAN}"
    return root / f"igso3_tables_{hashlib.sha1(key.encode()).hexdigest()[:12]}.npz"


@lru_cache(maxsize=1)
def tables() -> dict[str, np.ndarray]:
    """The float64 tables (computed once, cached on disk; a damaged cache file is rebuilt)."""
    path = _cache_path()
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as z:
                t = {k: z[k] for k in z.files}
            if t["cdf"].shape == (N_SIGMA, N_OMEGA) and all(  # a damaged cache (NaN, missing table): rebuilt
                np.all(np.isfinite(t[k])) for k in ("sigma", "omega_max", "cdf", "score_norm", "mass")
            ):
                return t
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # damaged cache: rebuild below
            pass
    t = _build_tables()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
        np.savez(tmp, **t)
        os.replace(tmp, path)
    except OSError:
        pass
    return t


@lru_cache(maxsize=4)
def _cast_tables(dtype_name: str) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=dtype_name) for k, v in tables().items()}


def _device_tables(dtype_name: str) -> dict[str, Array]:
    # converted at each call (inside a trace they become constants of that trace)
    return {k: jnp.asarray(v) for k, v in _cast_tables(dtype_name).items()}


def _sigma_index(e: Array) -> tuple[Array, Array]:
    x = (jnp.log(e) - math.log(SIGMA_MIN)) / ((math.log(SIGMA_MAX) - math.log(SIGMA_MIN)) / (N_SIGMA - 1))
    x = jnp.clip(x, 0.0, N_SIGMA - 1.0)
    i0 = jnp.clip(jnp.floor(x).astype(jnp.int32), 0, N_SIGMA - 2)
    return i0, x - i0


def _search(F: Array, base: Array, n: int, u: Array) -> tuple[Array, Array, Array]:
    """Binary search in the flat table ``F`` over rows starting at ``base``: ``F[base+lo] <= u < F[base+hi]``."""
    lo = jnp.zeros(u.shape, jnp.int32)
    hi = jnp.full(u.shape, n - 1, jnp.int32)

    def body(_: Any, c: tuple[Array, Array]) -> tuple[Array, Array]:
        lo, hi = c
        mid = (lo + hi) // 2
        go_right = F[base + mid] <= u
        return jnp.where(go_right, mid, lo), jnp.where(go_right, hi, mid)

    lo, hi = jax.lax.fori_loop(0, int(math.ceil(math.log2(n))), body, (lo, hi))
    f0, f1 = F[base + lo], F[base + hi]
    frac = jnp.clip((u - f0) / jnp.where(f1 > f0, f1 - f0, 1.0), 0.0, 1.0)
    return lo, frac, hi


def _row_quantile(F: Array, wmax: Array, i: Array, u: Array) -> Array:
    """Invert CDF row ``i`` (per element) at ``u`` by binary search + linear interpolation."""
    lo, frac, _ = _search(F.reshape(-1), i * N_OMEGA, N_OMEGA, u)
    return (lo + frac) * wmax[i] / (N_OMEGA - 1)


N_QUANTILE = 8193  # points per half of the two-sided quantile table for a concrete sigma


def _invert_cdf(targets: np.ndarray, sigma: float, wmax: float) -> np.ndarray:
    """Solve ``cdf_reference(omega, sigma) = targets`` in float64: a fine-grid bracket, then safeguarded Newton
    steps with the density (bisection whenever Newton would leave the bracket)."""
    w = np.linspace(0.0, wmax, 2 * N_QUANTILE)
    F = np.maximum.accumulate(cdf_reference(w, np.full_like(w, sigma)))
    i = np.clip(np.searchsorted(F, targets, side="right") - 1, 0, w.size - 2)
    lo, hi = w[i], w[i + 1]
    x = np.clip(np.interp(targets, F, w), lo, hi)
    e = np.full_like(x, sigma)
    for _ in range(8):
        Fx = cdf_reference(x, e)
        below = Fx < targets
        lo, hi = np.where(below, x, lo), np.where(below, hi, x)
        with np.errstate(all="ignore"):
            p = (1.0 - np.cos(x)) / np.pi * np.exp(_eval(np, x, e)[0])
            xn = x - (Fx - targets) / p
        x = np.where(np.isfinite(xn) & (xn >= lo) & (xn <= hi), xn, 0.5 * (lo + hi))
    return x


@lru_cache(maxsize=64)
def _quantile_table(sigma: float, dtype_name: str) -> np.ndarray:
    return _quantile_table64(sigma).astype(dtype_name)


@lru_cache(maxsize=64)
def _quantile_table64(sigma: float) -> np.ndarray:
    """Two-sided quantile table at one concrete ``sigma``: ``(2, M)`` angles with ``s_j = j/(M-1)``,
    ``[0, j] = F^{-1}(s_j^3 / 2)`` (lower half) and ``[1, j] = F^{-1}(1 - s_j^3 / 2)`` (upper half).

    ``F`` is :func:`cdf_reference` (float64, renormalized to the row's range ``[0, min(pi, 9 sigma)]``). The cube
    undoes ``F ~ c omega^3`` at 0, so the lower half is smooth in ``s``; on the upper half it compresses the
    tail, so the last cell holds ``1/(2 (M-1)^3)`` of the mass. Sampling is ``u -> (half, s = (2u)^(1/3) or
    (2(1-u))^(1/3))``, one cell lookup and linear interpolation: no search."""
    wmax = min(np.pi, OMEGA_SPAN * sigma)
    f_max = float(cdf_reference(np.array([wmax]), np.array([sigma]))[0])
    half = np.linspace(0.0, 1.0, N_QUANTILE) ** 3 / 2
    q = np.stack([_invert_cdf(half * f_max, sigma, wmax), _invert_cdf((1.0 - half) * f_max, sigma, wmax)])
    q[0, 0], q[1, 0] = 0.0, wmax
    return np.clip(q, 0.0, wmax)


def _quantile_concrete(u: Array, sigma: float) -> Array:
    Q = jnp.asarray(_quantile_table(float(sigma), jnp.dtype(u.dtype).name)).reshape(-1)
    upper = u >= 0.5
    x = jnp.cbrt(2.0 * jnp.where(upper, 1.0 - u, u)) * (N_QUANTILE - 1)
    j = jnp.clip(x.astype(jnp.int32), 0, N_QUANTILE - 2) + jnp.where(upper, N_QUANTILE, 0)
    fr = x - (j % N_QUANTILE)
    q0, q1 = Q[j], Q[j + 1]
    return q0 + fr * (q1 - q0)


@jax.jit
def _quantile(u: Array, sigma: Array) -> Array:
    t = _device_tables(jnp.dtype(u.dtype).name)
    i0, w = _sigma_index(sigma)
    q0 = _row_quantile(t["cdf"], t["omega_max"], i0, u)
    q1 = _row_quantile(t["cdf"], t["omega_max"], i0 + 1, u)
    tiny = jnp.finfo(u.dtype).tiny
    return jnp.exp((1 - w) * jnp.log(jnp.maximum(q0, tiny)) + w * jnp.log(jnp.maximum(q1, tiny))) * (q0 > 0)


def cdf(omega: ArrayLike, sigma: ArrayLike) -> Array:
    """CDF of the rotation angle from the tables (jit-able; linear in omega, geometric-in-sigma blend)."""
    sigma, omega = check_sigma("sigma", sigma), _check_omega(omega)
    check_broadcast(sigma=sigma, omega=omega)
    omega, sigma = jnp.broadcast_arrays(_as_float(omega), _as_float(sigma))
    return _cdf_impl(omega, sigma.astype(omega.dtype))


@jax.jit
def _cdf_impl(omega: Array, sigma: Array) -> Array:
    t = _device_tables(jnp.dtype(omega.dtype).name)
    i0, w = _sigma_index(sigma)

    def row(i: Array) -> Array:
        x = jnp.clip(omega / t["omega_max"][i] * (N_OMEGA - 1), 0.0, N_OMEGA - 1.0)
        j0 = jnp.clip(jnp.floor(x).astype(jnp.int32), 0, N_OMEGA - 2)
        fr = x - j0
        return (1 - fr) * t["cdf"][i, j0] + fr * t["cdf"][i, j0 + 1]

    return (1 - w) * row(i0) + w * row(i0 + 1)


def score_norm(sigma: ArrayLike) -> Array:
    """``sqrt(E[(d log f/d omega)^2])`` under IGSO(3)(sigma) (interpolated in log-log from the table)."""
    sigma = check_sigma("sigma", sigma)
    return _score_norm_impl(_as_float(sigma))


@jax.jit
def _score_norm_impl(sigma: Array) -> Array:
    t = _device_tables(jnp.dtype(sigma.dtype).name)
    i0, w = _sigma_index(sigma)
    ln = jnp.log(t["score_norm"])
    return jnp.exp((1 - w) * ln[i0] + w * ln[i0 + 1])


# ------------------------------------------------------------------------------------------------------------
# Sampling
# ------------------------------------------------------------------------------------------------------------


def sample_angle(
    key: PRNGKeyArray, sigma: ArrayLike, shape: tuple[int, ...] = (), dtype: DTypeLike | None = None
) -> Array:
    """Rotation angles ``omega ~ p(. ; sigma)`` of shape ``shape`` (``sigma`` broadcasts to ``shape``)."""
    sigma = check_sigma("sigma", sigma)
    dtype = _check_draw(key, shape, dtype, 4)
    _check_sigma_fits(sigma, shape)
    u = jax.random.uniform(key, tuple(shape), dtype)
    return _angle_from_uniform(u, sigma)


def _angle_from_uniform(u: Array, sigma: Any) -> Array:
    """Inverse-CDF transform: a quantile table for a concrete scalar ``sigma``, else the (sigma, omega) tables."""
    if _is_concrete_scalar(sigma):
        return _quantile_concrete(u, float(np.asarray(sigma).reshape(())))
    return _quantile(u, jnp.broadcast_to(jnp.asarray(sigma, u.dtype), u.shape))


def _is_concrete_scalar(sigma: Any) -> bool:
    return not isinstance(sigma, jax.core.Tracer) and np.size(sigma) == 1


def _check_sigma_fits(sigma: Any, shape: Any) -> None:
    """``sigma`` broadcasts to the draw's ``shape`` (one scale per draw, or one shared)."""
    target = tuple(int(n) for n in shape)
    try:
        fits = np.broadcast_shapes(np.shape(sigma), target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"sigma: expected a scalar or a shape that broadcasts to shape={target}, received shape "
                         f"{np.shape(sigma)}")  # fmt: skip


def _check_draw(key: Any, shape: Any, dtype: Any, words: int) -> Any:
    """Check the key and the batch shape of a draw (refused above the size cap: ``words`` per draw); the dtype."""
    check_key("key", key)
    shape = check_shape_tuple("shape", shape)
    dtype = jnp.dtype(dtype or jnp.result_type(float))
    n = int(np.prod(shape, dtype=object))
    check_size("shape", words * n * dtype.itemsize, hint=f"{n} draws; draw them in batches")
    return dtype


def _uniforms(key: PRNGKeyArray, shape: tuple[int, ...], dtype: Any) -> Array:
    """``(3, *shape)`` U(0, 1) variates: the angle's, then the axis' two (see ``so3.uniform_axis``)."""
    return jax.random.uniform(key, (3,) + tuple(shape), dtype)


def sample_vector(
    key: PRNGKeyArray, sigma: ArrayLike, shape: tuple[int, ...] = (), dtype: DTypeLike | None = None
) -> Array:
    """IGSO(3)(sigma) rotation vectors ``(*shape, 3)``: inverse-CDF angle times a uniform axis."""
    sigma = check_sigma("sigma", sigma)
    dtype = _check_draw(key, shape, dtype, 12)
    _check_sigma_fits(sigma, shape)
    u = _uniforms(key, shape, dtype)
    om = _angle_from_uniform(u[0], sigma)
    x, y, z = _so3.uniform_axis(u[1], u[2])
    return jnp.stack([x, y, z], -1) * om[..., None]


def sample(
    key: PRNGKeyArray,
    sigma: ArrayLike,
    shape: tuple[int, ...] = (),
    mean: ArrayLike | None = None,
    dtype: DTypeLike | None = None,
) -> Array:
    """IGSO(3)(sigma) rotation matrices ``(*shape, 3, 3)`` around ``mean`` (default identity): ``mean exp(hat v)``.

    One fused pass: three uniforms per rotation (angle by inverse CDF, axis by Archimedes' projection), then
    Rodrigues with ``sin omega`` and ``cos omega`` directly (no rotation vector, no norm)."""
    sigma = check_sigma("sigma", sigma)
    dtype = _check_draw(key, shape, dtype, 20)
    _check_sigma_fits(sigma, shape)
    u = _uniforms(key, shape, dtype)
    R = _so3.rotation_from_uniforms(u[1], u[2], _angle_from_uniform(u[0], sigma))
    if mean is not None:
        mean = _so3.check_rotation("mean", mean)
        R = jnp.matmul(jnp.asarray(mean, R.dtype), R)
    return R
