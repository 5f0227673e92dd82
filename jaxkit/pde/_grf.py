r"""Gaussian random fields with covariance operator $C = \sigma^2(-\Delta + \tau^2 I)^{-\alpha}$.

A field is drawn through its Karhunen–Loève expansion
$u = \sum_k \sqrt{\lambda_k}\,\xi_k\,\phi_k$, $\xi_k \sim N(0, 1)$, where $(\lambda_k, \phi_k)$
are the eigenpairs of $C$ with $\phi_k$ orthonormal in $L^2([0, L]^d)$ (the convention of the
FNO MATLAB generators, Li et al. 2021).

* **Periodic** (FFT): $\lambda_k = \sigma^2 ((2\pi|k|/L)^2 + \tau^2)^{-\alpha}$ on the grid
  $x_j = jL/n$; the pointwise covariance is $\sum_k \lambda_k \cos(2\pi k\cdot(x-y)/L)$ over all
  FFT wavenumbers $k$. The mean (``k = 0``) mode is dropped by default, as in FNO.
* **Neumann** (DCT): cosine eigenfunctions $\prod_i \sqrt{2 - \delta_{k_i 0}}\cos(\pi k_i x_i / L)$ at the
  cell centers $x_j = (j + 1/2)L/n$, $\lambda_k = \sigma^2((\pi|k|/L)^2 + \tau^2)^{-\alpha}$.

The discrete spectrum is exact: for periodic fields ``E|fft(u)_k|^2 / n^{2d} = λ_k``; for Neumann fields
``E[dctn(u, norm="ortho")_k^2] / n^d = λ_k`` (tested).

FNO parameterizations (see :data:`FNO_BURGERS`, :data:`FNO_DARCY`, :data:`FNO_NAVIER_STOKES`):

* Burgers ``u0 ~ N(0, 625(-Δ + 25 I)^-2)``: periodic, α=2, τ=5, σ=25.
* Darcy ``ψ#N(0, (-Δ + 9 I)^-2)``: Neumann, α=2, τ=3, σ = τ^(α-1) (MATLAB ``GRF.m``); only the sign is used.
* Navier–Stokes ``w0``: periodic, α=2.5, τ=7, σ = √2·7^1.5 — the published generator (``GaussianRF`` in FNO's
  ``ns_2d.py``) uses σ = τ^(α - d/2) with a real-part-of-complex-noise draw, which doubles the covariance.

Sizes: a grid whose working memory (about ``8 (d + 4)`` bytes per grid point) exceeds the size cap (4 GiB;
``max_bytes=`` per call or the ``JAXKIT_MAX_BYTES`` environment variable) is refused up front with the memory
it would need.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._typing import Array, Float, PRNGKey
from .._validate import check_int, check_key, check_positive, check_size

FNO_BURGERS = {"alpha": 2.0, "tau": 5.0, "sigma": 25.0}
FNO_DARCY = {"alpha": 2.0, "tau": 3.0, "sigma": 3.0}
FNO_NAVIER_STOKES = {"alpha": 2.5, "tau": 7.0, "sigma": math.sqrt(2.0) * 7.0**1.5}


def _check(
    shape: Sequence[int],
    alpha: float,
    tau: float,
    sigma: float | None,
    length: float,
    max_bytes: int | float | None = None,
) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) not in (1, 2, 3):
        raise ValueError(f"shape: expected 1, 2 or 3 grid sizes, received {shape}")
    for i, s in enumerate(shape):
        check_int(f"shape[{i}]", s, minimum=2)
    check_positive("alpha", alpha)
    check_positive("tau", tau, strict=False)
    if sigma is not None:
        check_positive("sigma", sigma)
    check_positive("length", length)
    # peak working memory: the float64 spectrum with its d wavenumber grids, plus the complex coefficients
    check_size(
        "shape", math.prod(shape) * 8 * (len(shape) + 4), max_bytes=max_bytes, hint=f"a grid of {shape}"
    )
    return shape


def _default_sigma(alpha: float, tau: float, d: int) -> float:
    return float(tau) ** (alpha - d / 2.0) if tau > 0 else 1.0


def _mean_mode(lam: np.ndarray, tau: float, zero_mean: bool) -> np.ndarray:
    """``lam`` with its ``k = 0`` entry set to 0 (``zero_mean``); at ``τ = 0`` that entry is infinite, so keeping
    it is refused."""
    if tau == 0 and not zero_mean:
        raise ValueError(
            "zero_mean: False keeps the k = 0 eigenvalue sigma^2 tau^(-2 alpha), which is infinite at tau = 0; "
            "use zero_mean=True or tau > 0"
        )
    if zero_mean:
        lam[(0,) * lam.ndim] = 0.0
    return lam


def periodic_spectrum(
    shape: Sequence[int],
    *,
    alpha: float,
    tau: float,
    sigma: float | None = None,
    length: float = 1.0,
    zero_mean: bool = True,
    max_bytes: int | None = None,
) -> np.ndarray:
    """Eigenvalues ``λ_k`` of ``σ²(-Δ+τ²)^-α`` on the periodic box, laid out like ``numpy.fft.fftn`` output.

    ``sigma=None`` uses ``τ^(α - d/2)`` (FNO's default), and 1 at ``τ = 0`` (where that power is 0 or ∞). With
    ``zero_mean`` the ``k = 0`` entry is 0; at ``τ = 0`` that entry is infinite, so ``zero_mean=False`` is refused.
    """
    shape = _check(shape, alpha, tau, sigma, length, max_bytes)
    d = len(shape)
    sigma = _default_sigma(alpha, tau, d) if sigma is None else sigma
    ks = np.meshgrid(*[np.fft.fftfreq(n, d=1.0 / n) for n in shape], indexing="ij")
    k2 = sum((2 * np.pi * k / length) ** 2 for k in ks)
    with np.errstate(divide="ignore"):
        lam = sigma**2 * (k2 + tau**2) ** (-float(alpha))
    return _mean_mode(lam, tau, zero_mean)


def neumann_spectrum(
    shape: Sequence[int],
    *,
    alpha: float,
    tau: float,
    sigma: float | None = None,
    length: float = 1.0,
    zero_mean: bool = True,
    max_bytes: int | None = None,
) -> np.ndarray:
    """Eigenvalues ``λ_k`` (``k_i = 0..n_i-1``) of ``σ²(-Δ+τ²)^-α`` with zero-Neumann boundaries; ``sigma``,
    ``zero_mean`` and ``τ = 0`` as in :func:`periodic_spectrum`."""
    shape = _check(shape, alpha, tau, sigma, length, max_bytes)
    d = len(shape)
    sigma = _default_sigma(alpha, tau, d) if sigma is None else sigma
    ks = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    k2 = sum((np.pi * k / length) ** 2 for k in ks)
    with np.errstate(divide="ignore"):
        lam = sigma**2 * (k2 + tau**2) ** (-float(alpha))
    return _mean_mode(lam, tau, zero_mean)


def grf_periodic(
    key: PRNGKey,
    shape: Sequence[int],
    *,
    alpha: float,
    tau: float,
    sigma: float | None = None,
    length: float = 1.0,
    zero_mean: bool = True,
    dtype=jnp.float32,
    max_bytes: int | None = None,
) -> Float[Array, "*grid"]:
    r"""One periodic GRF sample on the grid ``x_j = j·L/n`` (FFT synthesis).

    ``u = Re ifftn(n^d √λ_k (a_k + i b_k))`` with ``a, b ~ N(0, 1)``: covariance
    $\sum_k \lambda_k\cos(2\pi k\cdot(x-y)/L)$, i.e. exactly ``σ²(-Δ+τ²)^-α`` truncated to the grid.
    """
    check_key("key", key)
    lam = periodic_spectrum(
        shape, alpha=alpha, tau=tau, sigma=sigma, length=length, zero_mean=zero_mean, max_bytes=max_bytes
    )
    n_total = int(np.prod(lam.shape))
    ka, kb = jax.random.split(key)
    a = jax.random.normal(ka, lam.shape, dtype)
    b = jax.random.normal(kb, lam.shape, dtype)
    coef = jnp.asarray(n_total * np.sqrt(lam), dtype) * jax.lax.complex(a, b)
    return jnp.fft.ifftn(coef).real.astype(dtype)


def grf_neumann(
    key: PRNGKey,
    shape: Sequence[int],
    *,
    alpha: float,
    tau: float,
    sigma: float | None = None,
    length: float = 1.0,
    zero_mean: bool = True,
    dtype=jnp.float32,
    max_bytes: int | None = None,
) -> Float[Array, "*grid"]:
    """One zero-Neumann GRF sample at the cell centers ``x_j = (j+½)L/n`` (DCT synthesis, as FNO's ``GRF.m``)."""
    check_key("key", key)
    lam = neumann_spectrum(
        shape, alpha=alpha, tau=tau, sigma=sigma, length=length, zero_mean=zero_mean, max_bytes=max_bytes
    )
    xi = jax.random.normal(key, lam.shape, dtype)
    scale = float(np.prod(lam.shape)) ** 0.5
    coef = jnp.asarray(scale * np.sqrt(lam), dtype) * xi
    return jax.scipy.fft.idctn(coef, norm="ortho").astype(dtype)


__all__ = [
    "FNO_BURGERS",
    "FNO_DARCY",
    "FNO_NAVIER_STOKES",
    "grf_neumann",
    "grf_periodic",
    "neumann_spectrum",
    "periodic_spectrum",
]
