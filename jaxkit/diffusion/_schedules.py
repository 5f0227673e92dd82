"""Noise schedules: discrete VP tables (DDPM/DDIM), continuous VP and VE processes, EDM time grids.

Discrete variance-preserving (VP) schedules (Ho et al. 2020, "Denoising Diffusion Probabilistic Models"):
``x_t = sqrt(alpha_bar_t) x_0 + sqrt(1 - alpha_bar_t) eps`` with ``alpha_bar_t = prod_{s<=t} (1 - beta_s)``,
``t = 0 .. T-1`` (index 0 is the first, least noisy step). Beta tables:

- linear (Ho et al. 2020): ``beta`` evenly spaced from 1e-4 to 0.02;
- quadratic (CSDI, Tashiro et al. 2021): ``beta = linspace(sqrt(b0), sqrt(b1), T)**2`` with 1e-4 -> 0.5, T = 50;
- cosine (Nichol & Dhariwal 2021): ``alpha_bar(t) = cos^2(((t/T + s)/(1 + s)) pi/2) / cos^2(s/(1+s) pi/2)``.

Continuous schedules (Song et al. 2021, "Score-Based Generative Modeling through SDEs") describe the linear SDE
``dx = f(t) x dt + g(t) dW`` on ``t in [0, 1]`` through its marginal ``x_t | x_0 ~ N(alpha(t) x_0, sigma(t)^2 I)``:

- :class:`VPSchedule`: ``beta(t) = beta_min + t (beta_max - beta_min)``, ``f = -beta/2``, ``g = sqrt(beta)``,
  ``alpha = exp(-1/2 int_0^t beta)``, ``sigma^2 = 1 - alpha^2`` (defaults 0.1 -> 20 as in Song et al.);
- :class:`CosineVPSchedule`: the continuous cosine ``alpha_bar``;
- :class:`VESchedule`: ``sigma(t) = sigma_min (sigma_max/sigma_min)^t`` (logarithmic / geometric; used for
  rotations with 0.1 -> 1.5 as in DiffDock/SigmaDock), ``f = 0``, ``g^2 = d sigma^2/dt``.

EDM grids (Karras et al. 2022): ``s_i = (s_max^(1/rho) + i/(N-1) (s_min^(1/rho) - s_max^(1/rho)))^rho``.
"""

from __future__ import annotations

import abc
import math
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import (
    check_choice,
    check_finite,
    check_int,
    check_positive,
    check_range,
    check_size,
    is_tracer,
)

__all__ = [
    "AbstractSchedule",
    "CosineVPSchedule",
    "DiscreteSchedule",
    "VESchedule",
    "VPSchedule",
    "alpha_bars_from_betas",
    "cosine_beta_schedule",
    "discrete_schedule",
    "edm_grid",
    "edm_sigma_grid",
    "linear_beta_schedule",
    "quadratic_beta_schedule",
]


# --------------------------------------------------------------------------------------------------------------
# Discrete VP tables
# --------------------------------------------------------------------------------------------------------------


def _check_steps(n_steps: int, words: int = 12) -> None:
    """An integer ``n_steps >= 1`` whose float64 tables (about ``words`` arrays of that length) fit the size cap."""
    check_int("n_steps", n_steps, minimum=1)
    check_size("n_steps", 8 * words * int(n_steps), hint=f"{n_steps} steps")


def _check_betas(betas: np.ndarray) -> None:
    if betas.ndim != 1 or betas.size == 0:
        raise ValueError(f"betas: expected a non-empty 1-D array, received shape {betas.shape}")
    if not np.all(np.isfinite(betas)) or np.any(betas <= 0) or np.any(betas >= 1):
        raise ValueError(f"betas: expected values in (0, 1), received range [{betas.min()}, {betas.max()}]")


def linear_beta_schedule(n_steps: int, beta_start: float = 1e-4, beta_end: float = 0.02) -> np.ndarray:
    """DDPM linear betas (float64 NumPy), ``linspace(beta_start, beta_end, n_steps)``."""
    _check_steps(n_steps)
    check_range("beta_start", beta_start, 0.0, 1.0, closed=False)
    check_range("beta_end", beta_end, 0.0, 1.0, closed=False)
    return np.linspace(beta_start, beta_end, n_steps, dtype=np.float64)


def quadratic_beta_schedule(n_steps: int = 50, beta_start: float = 1e-4, beta_end: float = 0.5) -> np.ndarray:
    """CSDI "quad" betas (float64 NumPy): ``linspace(sqrt(beta_start), sqrt(beta_end), n_steps)**2``."""
    _check_steps(n_steps)
    check_range("beta_start", beta_start, 0.0, 1.0, closed=False)
    check_range("beta_end", beta_end, 0.0, 1.0, closed=False)
    return np.linspace(beta_start**0.5, beta_end**0.5, n_steps, dtype=np.float64) ** 2


def cosine_beta_schedule(n_steps: int, s: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """Nichol & Dhariwal (2021) cosine schedule as betas (float64 NumPy), clipped at ``max_beta``."""
    _check_steps(n_steps)
    check_positive("s", s)
    check_range("max_beta", max_beta, 0.0, 1.0, closed=False)
    t = np.arange(n_steps + 1, dtype=np.float64) / n_steps
    f = np.cos((t + s) / (1 + s) * np.pi / 2) ** 2
    abar = f / f[0]
    betas = 1.0 - abar[1:] / abar[:-1]
    return np.clip(betas, 1e-12, max_beta)


def alpha_bars_from_betas(betas: ArrayInput) -> np.ndarray:
    """``alpha_bar_t = prod_{s<=t} (1 - beta_s)`` in float64."""
    b = np.asarray(betas, dtype=np.float64)
    _check_betas(b)
    return np.cumprod(1.0 - b)


class DiscreteSchedule(eqx.Module):
    """Tables of a discrete VP process (a pytree; pass it through ``jit``).

    Attributes (all shape ``(T,)``, index ``t = 0 .. T-1``): ``betas``, ``alphas = 1 - betas``,
    ``alpha_bars`` (cumulative product), ``alpha_bars_prev`` (``alpha_bar_{t-1}`` with ``alpha_bar_{-1} = 1``),
    ``posterior_variance = beta_t (1 - alpha_bar_{t-1}) / (1 - alpha_bar_t)`` (``beta~_t`` of DDPM).
    """

    betas: Float[Array, " T"]
    alphas: Float[Array, " T"]
    alpha_bars: Float[Array, " T"]
    alpha_bars_prev: Float[Array, " T"]
    posterior_variance: Float[Array, " T"]

    def __check_init__(self) -> None:
        """The five tables are finite and of one length (checked on concrete values; a no-op under tracing)."""
        names = ("betas", "alphas", "alpha_bars", "alpha_bars_prev", "posterior_variance")
        shapes = {n: tuple(np.shape(getattr(self, n))) for n in names}
        if len(set(shapes.values())) != 1:
            raise ValueError(f"betas, alphas, alpha_bars, alpha_bars_prev, posterior_variance: expected equal "
                             f"shapes (T,), received {shapes}")  # fmt: skip
        for n in names:
            check_finite(n, getattr(self, n))
        if any(is_tracer(getattr(self, n)) for n in names):
            return
        _check_betas(np.asarray(self.betas, np.float64))
        for n in ("alphas", "alpha_bars", "alpha_bars_prev"):
            v = np.asarray(getattr(self, n), np.float64)
            if np.any(v <= 0) or np.any(v > 1):
                raise ValueError(f"{n}: expected values in (0, 1], received range [{v.min()}, {v.max()}]")
        if np.any(np.asarray(self.posterior_variance) < 0):
            raise ValueError("posterior_variance: expected values >= 0, received a negative value")

    @property
    def n_steps(self) -> int:
        return int(self.betas.shape[0])

    @staticmethod
    def from_betas(betas: ArrayInput, dtype: jnp.dtype | None = None) -> DiscreteSchedule:
        b = np.asarray(betas, dtype=np.float64)
        if b.ndim != 1 or b.size == 0:
            raise ValueError(f"betas: expected a non-empty 1-D array, received shape {b.shape}")
        _check_betas(b)
        ab = np.cumprod(1.0 - b)
        ab_prev = np.concatenate([[1.0], ab[:-1]])
        post = b * (1.0 - ab_prev) / (1.0 - ab)
        dt = dtype or jnp.result_type(float)
        cast = lambda a: jnp.asarray(a, dtype=dt)
        return DiscreteSchedule(cast(b), cast(1.0 - b), cast(ab), cast(ab_prev), cast(post))


def discrete_schedule(
    kind: Literal["linear", "quadratic", "cosine"] = "linear", n_steps: int = 1000, **kwargs: float
) -> DiscreteSchedule:
    """Build a :class:`DiscreteSchedule`: ``kind`` in ``{"linear", "quadratic", "cosine"}``.

    ``discrete_schedule("quadratic", 50, beta_start=1e-4, beta_end=0.5)`` is CSDI's default.
    """
    check_choice("kind", kind, ("linear", "quadratic", "cosine"))
    fn = {
        "linear": linear_beta_schedule,
        "quadratic": quadratic_beta_schedule,
        "cosine": cosine_beta_schedule,
    }
    return DiscreteSchedule.from_betas(fn[kind](n_steps, **kwargs))


# --------------------------------------------------------------------------------------------------------------
# Continuous schedules
# --------------------------------------------------------------------------------------------------------------


class AbstractSchedule(eqx.Module):
    r"""A linear SDE $dx = f(t)\,x\,dt + g(t)\,dW$ on $t \in [0, 1]$ through its Gaussian marginal
    $x_t \mid x_0 \sim \mathcal N(\alpha(t) x_0, \sigma(t)^2 I)$ (Song et al. 2021).

    Subclasses implement :meth:`log_alpha`, :meth:`sigma`, :meth:`drift_coef` ($f$) and :meth:`diffusion`
    ($g$); :meth:`alpha` follows. Every function of :mod:`jaxkit.diffusion` that takes a continuous schedule
    takes an instance of this class (as Diffrax's ``AbstractTerm``: subclass it for a new schedule).
    """

    @abc.abstractmethod
    def log_alpha(self, t: ArrayLike) -> Array:
        r"""$\log \alpha(t)$."""

    @abc.abstractmethod
    def sigma(self, t: ArrayLike) -> Array:
        r"""Standard deviation $\sigma(t)$ of $x_t \mid x_0$."""

    @abc.abstractmethod
    def drift_coef(self, t: ArrayLike) -> Array:
        r"""$f(t)$ in $dx = f(t) x\,dt + g(t)\,dW$."""

    @abc.abstractmethod
    def diffusion(self, t: ArrayLike) -> Array:
        """$g(t)$."""

    def alpha(self, t: ArrayLike) -> Array:
        r"""Mean coefficient $\alpha(t)$ of $x_t \mid x_0$."""
        return jnp.exp(self.log_alpha(t))


class VPSchedule(AbstractSchedule):
    """Linear-beta variance-preserving SDE ``dx = -beta(t)/2 x dt + sqrt(beta(t)) dW`` on ``t in [0, 1]``."""

    beta_min: float = eqx.field(static=True, default=0.1)
    beta_max: float = eqx.field(static=True, default=20.0)

    def __check_init__(self) -> None:
        check_positive("beta_min", self.beta_min)
        check_positive("beta_max", self.beta_max)

    def beta(self, t: ArrayLike) -> Array:
        return self.beta_min + jnp.asarray(t) * (self.beta_max - self.beta_min)

    def log_alpha(self, t: ArrayLike) -> Array:
        t = jnp.asarray(t)
        return -0.5 * (self.beta_min * t + 0.5 * (self.beta_max - self.beta_min) * t**2)

    def sigma(self, t: ArrayLike) -> Array:
        """Standard deviation of ``x_t | x_0`` (``sqrt(1 - alpha^2)``, computed with ``expm1``)."""
        return jnp.sqrt(-jnp.expm1(2.0 * self.log_alpha(t)))

    def drift_coef(self, t: ArrayLike) -> Array:
        """``f(t)`` in ``dx = f(t) x dt + g(t) dW``."""
        return -0.5 * self.beta(t)

    def diffusion(self, t: ArrayLike) -> Array:
        """``g(t)``."""
        return jnp.sqrt(self.beta(t))


class CosineVPSchedule(AbstractSchedule):
    """Continuous cosine VP schedule: ``alpha(t)^2 = cos^2(((t + s)/(1 + s)) pi/2) / cos^2(s/(1+s) pi/2)``.

    ``t`` is clipped to ``t_max`` (< 1) so that ``beta(t) = -d log alpha^2/dt`` stays finite.
    """

    s: float = eqx.field(static=True, default=0.008)
    t_max: float = eqx.field(static=True, default=0.9946)

    def __check_init__(self) -> None:
        if not (np.isfinite(float(self.s)) and float(self.s) >= 0):
            raise ValueError(f"s: expected a finite offset >= 0, received {self.s!r}")
        if not 0 < float(self.t_max) < 1:
            raise ValueError(f"t_max: expected a value in (0, 1), received {self.t_max!r}")
        # alpha(t_max) ∝ cos(phase): at phase = π/2 it is 0 and log alpha, sigma, beta are NaN/inf; below 1e-4
        # the float32 phase (rounding 1e-7 near π/2) no longer resolves it
        edge = math.cos((float(self.t_max) + float(self.s)) / (1 + float(self.s)) * math.pi / 2)
        if not edge >= 1e-4:
            raise ValueError(
                f"t_max: expected cos((t_max + s)/(1 + s)·π/2) >= 1e-4 so that alpha, sigma and beta stay finite "
                f"at t = t_max, received t_max={self.t_max!r} with s={self.s!r} (cos = {edge:.2g}); lower t_max"
            )

    def _phase(self, t: ArrayLike) -> Array:
        t = jnp.minimum(jnp.asarray(t), self.t_max)
        return (t + self.s) / (1 + self.s) * (jnp.pi / 2)

    def log_alpha(self, t: ArrayLike) -> Array:
        c0 = math.cos(self.s / (1 + self.s) * math.pi / 2)
        return jnp.log(jnp.cos(self._phase(t))) - math.log(c0)

    def sigma(self, t: ArrayLike) -> Array:
        return jnp.sqrt(-jnp.expm1(2.0 * self.log_alpha(t)))

    def beta(self, t: ArrayLike) -> Array:
        return 2.0 * jnp.tan(self._phase(t)) * (jnp.pi / 2) / (1 + self.s)

    def drift_coef(self, t: ArrayLike) -> Array:
        return -0.5 * self.beta(t)

    def diffusion(self, t: ArrayLike) -> Array:
        return jnp.sqrt(self.beta(t))


class VESchedule(AbstractSchedule):
    """Variance-exploding SDE with geometric ("logarithmic") noise, ``sigma(t) = s_min (s_max/s_min)^t``.

    ``dx = g(t) dW`` with ``g(t)^2 = d sigma^2/dt = 2 sigma(t)^2 log(s_max/s_min)``. The marginal is
    ``x_t | x_0 ~ N(x_0, sigma(t)^2 - sigma(0)^2)``; following Song et al. (2021) and DiffDock we use ``sigma(t)^2``
    (the ``sigma_min^2`` offset is negligible), i.e. :meth:`alpha` is 1 and :meth:`sigma` is ``sigma(t)``.
    On SO(3) the same schedule gives IGSO(3)(``sigma(t)``) marginals.
    """

    sigma_min: float = eqx.field(static=True, default=0.1)
    sigma_max: float = eqx.field(static=True, default=1.5)

    def __check_init__(self) -> None:
        check_positive("sigma_min", self.sigma_min)
        check_positive("sigma_max", self.sigma_max)
        if not self.sigma_max > self.sigma_min:
            raise ValueError(
                f"sigma_max: expected a value > sigma_min={self.sigma_min}, received {self.sigma_max}"
            )

    def sigma(self, t: ArrayLike) -> Array:
        return self.sigma_min * (self.sigma_max / self.sigma_min) ** jnp.asarray(t)

    def alpha(self, t: ArrayLike) -> Array:
        return jnp.ones_like(jnp.asarray(t, dtype=jnp.result_type(float)))

    def log_alpha(self, t: ArrayLike) -> Array:
        return jnp.zeros_like(jnp.asarray(t, dtype=jnp.result_type(float)))

    def drift_coef(self, t: ArrayLike) -> Array:
        return jnp.zeros_like(jnp.asarray(t, dtype=jnp.result_type(float)))

    def diffusion(self, t: ArrayLike) -> Array:
        return self.sigma(t) * math.sqrt(2.0 * math.log(self.sigma_max / self.sigma_min))

    def t_of_sigma(self, sigma: ArrayLike) -> Array:
        """Inverse of :meth:`sigma`."""
        return jnp.log(jnp.asarray(sigma) / self.sigma_min) / math.log(self.sigma_max / self.sigma_min)


# --------------------------------------------------------------------------------------------------------------
# EDM grids
# --------------------------------------------------------------------------------------------------------------


def edm_grid(n_steps: int, lo: float, hi: float, rho: float = 7.0) -> jax.Array:
    """Karras et al. (2022) grid from ``hi`` down to ``lo`` (``n_steps`` points, both ends included).

    ``s_i = (hi^(1/rho) + i/(N-1) (lo^(1/rho) - hi^(1/rho)))^rho``. Works for noise levels (``edm_sigma_grid``)
    and for diffusion times (SigmaDock: 30 points of ``t`` in ``[t_min, 1]`` with ``rho = 3``).
    """
    check_int("n_steps", n_steps, minimum=2)
    _check_steps(n_steps, words=4)
    check_positive("lo", lo, strict=False)
    check_positive("hi", hi)
    check_positive("rho", rho)
    if not hi > lo:
        raise ValueError(f"hi: expected a value > lo={lo}, received {hi}")
    i = np.arange(n_steps, dtype=np.float64) / (n_steps - 1)
    g = (hi ** (1 / rho) + i * (lo ** (1 / rho) - hi ** (1 / rho))) ** rho
    return jnp.asarray(g, dtype=jnp.result_type(float))


def edm_sigma_grid(
    n_steps: int,
    sigma_min: float = 0.002,
    sigma_max: float = 80.0,
    rho: float = 7.0,
    append_zero: bool = True,
) -> jax.Array:
    """EDM noise levels ``sigma_max -> sigma_min`` (plus a final 0 if ``append_zero``)."""
    check_positive("sigma_min", sigma_min)
    check_positive("sigma_max", sigma_max)
    if not sigma_max > sigma_min:
        raise ValueError(f"sigma_max: expected a value > sigma_min={sigma_min}, received {sigma_max}")
    g = edm_grid(n_steps, sigma_min, sigma_max, rho)
    return jnp.concatenate([g, jnp.zeros((1,), g.dtype)]) if append_zero else g
