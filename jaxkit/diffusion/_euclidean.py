"""Gaussian diffusion on R^n: forward marginals, exact conditional scores, denoising losses.

Every function accepts either a :class:`~jaxkit.diffusion.DiscreteSchedule` with an integer step index
``t`` (DDPM: ``x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps``) or a continuous schedule
(:class:`VPSchedule`, :class:`CosineVPSchedule`, :class:`VESchedule`) with a float time ``t in [0, 1]``
(``x_t = alpha(t) x_0 + sigma(t) eps``). Functions act on one sample of any shape; batch with ``jax.vmap``.

Scores (Vincent 2011; Song et al. 2021): ``grad log q(x_t | x_0) = -(x_t - alpha x_0)/sigma^2 = -eps/sigma``.
The denoising score-matching loss is normalized the usual way, ``lambda(t) = sigma(t)^2``, i.e.
``|| sigma s_theta(x_t, t) + eps ||^2`` (which equals the eps-prediction loss with ``eps_theta = -sigma s_theta``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, PRNGKeyArray

from jaxkit._validate import check_nonempty, error_if_invalid, finite_checked, is_tracer, traced_check
from jaxkit.diffusion._schedules import AbstractSchedule, DiscreteSchedule

Schedule: TypeAlias = DiscreteSchedule | AbstractSchedule

__all__ = [
    "Schedule",
    "check_time",
    "conditional_score",
    "dsm_loss",
    "eps_loss",
    "eps_to_score",
    "gaussian_marginal_score",
    "marginal_coefs",
    "predict_x0",
    "q_posterior",
    "q_sample",
    "score_to_eps",
]


def check_time(schedule: Schedule, t: ArrayLike, name: str = "t") -> ArrayLike:
    """Validate a diffusion time against its schedule; returns ``t`` (checked inside ``jit`` where needed).

    A :class:`DiscreteSchedule` takes an integer step index in ``[0, T-1]``: a float raises ``TypeError`` and an
    index outside the range ``ValueError`` (a traced index is checked at run time with ``eqx.error_if``, never
    wrapped or clamped). A continuous :class:`AbstractSchedule` takes a time in ``[0, 1]`` (a traced time is
    checked at run time the same way). Anything else as ``schedule`` raises ``TypeError``.
    """
    if isinstance(schedule, DiscreteSchedule):
        T = schedule.n_steps
        dtype = jnp.result_type(t)
        if not jnp.issubdtype(dtype, jnp.integer):
            raise TypeError(
                f"{name}: expected an integer step index in [0, {T - 1}] for a DiscreteSchedule, received "
                f"dtype {dtype} ({t!r})"[:200]
            )
        if is_tracer(t):
            return traced_check(t, (t < 0) | (t >= T), f"{name}: step index outside [0, {T - 1}]")
        a = np.asarray(t)
        if a.size and (a.min() < 0 or a.max() >= T):
            raise ValueError(
                f"{name}: expected step indices in [0, {T - 1}], received range [{a.min()}, {a.max()}]"
            )
        return t
    if isinstance(schedule, AbstractSchedule):
        if is_tracer(t):
            return traced_check(
                t, ~((t >= 0.0) & (t <= 1.0)), f"{name}: diffusion time outside [0, 1] (or NaN)"
            )
        a = np.asarray(t, dtype=np.float64)
        if a.size and (not np.all(np.isfinite(a)) or a.min() < 0.0 or a.max() > 1.0):
            raise ValueError(
                f"{name}: expected diffusion times in [0, 1], received range [{a.min()}, {a.max()}]"
            )
        return t
    raise TypeError(
        f"schedule: expected a DiscreteSchedule or an AbstractSchedule (VPSchedule, CosineVPSchedule, "
        f"VESchedule, ...), received {type(schedule).__name__}"
    )


def _check_sigma_nonzero(sigma: Array, t: Any) -> Array:
    """The score divides by ``sigma_t``; at ``t = 0`` of a VP schedule ``sigma_t = 0`` (at run time on a tracer)."""
    if is_tracer(sigma):
        return traced_check(
            sigma, sigma <= 0, "t: the score divides by sigma_t, which is 0 at this t; use t > 0"
        )
    if np.any(np.asarray(sigma) <= 0):
        raise ValueError(
            f"t: the score divides by sigma_t, which is 0 at t = {np.asarray(t).min()}; expected "
            "times with sigma_t > 0 (e.g. t >= t_min > 0)"
        )
    return sigma


def _check_broadcasts(name: str, x: Array, target_name: str, target: Array) -> None:
    """``x`` must broadcast to the shape of ``target`` (``ValueError`` naming both otherwise)."""
    try:
        ok = np.broadcast_shapes(x.shape, target.shape) == target.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name}: expected a shape that broadcasts to the shape of {target_name} {target.shape}, received "
            f"{x.shape}"
        )


def _check_t_broadcasts(t: ArrayLike, x_name: str, x: Array) -> None:
    """The coefficients at ``t`` (of ``t``'s shape) multiply ``x``: the shapes must broadcast (NumPy rules)."""
    try:
        np.broadcast_shapes(np.shape(t), x.shape)
    except ValueError:
        raise ValueError(
            f"t: expected a shape that broadcasts with {x_name} {x.shape} (a scalar, or e.g. (B, 1, ...) for a "
            f"batch of B), received {np.shape(t)}"
        ) from None


def marginal_coefs(schedule: Schedule, t: ArrayLike) -> tuple[Array, Array]:
    """``(alpha_t, sigma_t)`` with ``x_t | x_0 ~ N(alpha_t x_0, sigma_t^2 I)`` for a discrete index or a time."""
    t = check_time(schedule, t)
    if isinstance(schedule, DiscreteSchedule):
        ab = schedule.alpha_bars[jnp.asarray(t)]
        return jnp.sqrt(ab), jnp.sqrt(1.0 - ab)
    return schedule.alpha(t), schedule.sigma(t)


def q_sample(schedule: Schedule, x0: ArrayLike, t: ArrayLike, noise: ArrayLike) -> Array:
    """Forward marginal sample ``x_t = alpha_t x_0 + sigma_t noise`` (``noise ~ N(0, I)`` supplied by the caller)."""
    x0, noise = jnp.asarray(x0), jnp.asarray(noise)
    if x0.shape != noise.shape:
        raise ValueError(f"noise: expected the shape of x0 {x0.shape}, received {noise.shape}")
    x0, noise = finite_checked("x0", x0), finite_checked("noise", noise)
    _check_t_broadcasts(t, "x0", x0)
    a, s = marginal_coefs(schedule, t)
    return a * x0 + s * noise


def conditional_score(schedule: Schedule, x_t: ArrayLike, x0: ArrayLike, t: ArrayLike) -> Array:
    """Exact ``grad_{x_t} log q(x_t | x_0) = -(x_t - alpha_t x_0) / sigma_t^2``."""
    x_t, x0 = jnp.asarray(x_t), jnp.asarray(x0)
    if x0.shape != x_t.shape:
        raise ValueError(f"x0: expected the shape of x_t {x_t.shape}, received {x0.shape}")
    x_t, x0 = finite_checked("x_t", x_t), finite_checked("x0", x0)
    _check_t_broadcasts(t, "x_t", x_t)
    a, s = marginal_coefs(schedule, t)
    s = _check_sigma_nonzero(s, t)
    return -(x_t - a * x0) / s**2


def gaussian_marginal_score(
    schedule: Schedule, x_t: ArrayLike, t: ArrayLike, mean: ArrayLike, std: ArrayLike
) -> Array:
    """Exact marginal score when the data are ``N(mean, std^2 I)``: ``-(x_t - alpha mean)/(alpha^2 std^2 + sigma^2)``.

    A closed-form target for testing samplers (the reverse process must return ``N(mean, std^2 I)``). ``mean``
    and ``std`` broadcast to the shape of ``x_t``; all three finite, ``std >= 0``. The marginal variance
    ``alpha^2 std^2 + sigma^2`` must be positive: ``std = 0`` at ``t = 0`` of a VP schedule (a point mass, no
    score) is refused, eagerly (``ValueError``) and under ``jax.jit`` (a run-time error).
    """
    x_t = finite_checked("x_t", jnp.asarray(x_t))
    mean, std = jnp.asarray(mean), jnp.asarray(std)
    _check_broadcasts("mean", mean, "x_t", x_t)
    _check_broadcasts("std", std, "x_t", x_t)
    mean, std = finite_checked("mean", mean), finite_checked("std", std)
    std = error_if_invalid(std, std < 0, "std: expected standard deviations >= 0, received a negative value")
    _check_t_broadcasts(t, "x_t", x_t)
    a, s = marginal_coefs(schedule, t)
    var = error_if_invalid(
        a**2 * std**2 + s**2,
        a**2 * std**2 + s**2 <= 0,
        "std, t: the marginal variance alpha_t^2 std^2 + sigma_t^2 is 0 (std = 0 at sigma_t = 0): no score; "
        "use std > 0 or t with sigma_t > 0",
    )
    return -(x_t - a * mean) / var


def eps_to_score(schedule: Schedule, eps: ArrayLike, t: ArrayLike) -> Array:
    """``score = -eps / sigma_t`` (``sigma_t > 0``: not at ``t = 0`` of a VP schedule)."""
    eps = finite_checked("eps", jnp.asarray(eps))
    _check_t_broadcasts(t, "eps", eps)
    s = marginal_coefs(schedule, t)[1]
    s = _check_sigma_nonzero(s, t)
    return -eps / s


def score_to_eps(schedule: Schedule, score: ArrayLike, t: ArrayLike) -> Array:
    """``eps = -sigma_t score``."""
    score = finite_checked("score", jnp.asarray(score))
    _check_t_broadcasts(t, "score", score)
    return -score * marginal_coefs(schedule, t)[1]


def predict_x0(schedule: Schedule, x_t: ArrayLike, t: ArrayLike, eps: ArrayLike) -> Array:
    """``x0_hat = (x_t - sigma_t eps) / alpha_t``."""
    x_t, eps = jnp.asarray(x_t), jnp.asarray(eps)
    if eps.shape != x_t.shape:
        raise ValueError(f"eps: expected the shape of x_t {x_t.shape}, received {eps.shape}")
    x_t, eps = finite_checked("x_t", x_t), finite_checked("eps", eps)
    _check_t_broadcasts(t, "x_t", x_t)
    a, s = marginal_coefs(schedule, t)
    return (x_t - s * eps) / a


def q_posterior(
    schedule: DiscreteSchedule, x0: ArrayLike, x_t: ArrayLike, t: ArrayLike
) -> tuple[Array, Array]:
    """DDPM posterior ``q(x_{t-1} | x_t, x_0) = N(mean, var)`` (Ho et al. 2020, eq. 7); returns ``(mean, var)``."""
    if not isinstance(schedule, DiscreteSchedule):
        raise TypeError(f"schedule: expected a DiscreteSchedule, received {type(schedule).__name__}")
    t = jnp.asarray(check_time(schedule, t), dtype=jnp.int32)
    x0, x_t = jnp.asarray(x0), jnp.asarray(x_t)
    if x0.shape != x_t.shape:
        raise ValueError(f"x_t: expected the shape of x0 {x0.shape}, received {x_t.shape}")
    x0, x_t = finite_checked("x0", x0), finite_checked("x_t", x_t)
    _check_t_broadcasts(t, "x_t", x_t)
    ab_prev, beta = schedule.alpha_bars_prev[t], schedule.betas[t]
    # 1 - alpha_bar without cancellation: -expm1(sum log1p(-beta)); "1 - alpha_bars[t]" in float32 loses the digits
    # of a small beta (c0 at t = 0 came out 0.99983 instead of 1)
    one_minus_ab = -jnp.expm1(jnp.cumsum(jnp.log1p(-schedule.betas)))
    one_minus_ab_prev = jnp.concatenate([jnp.zeros((1,), one_minus_ab.dtype), one_minus_ab[:-1]])
    c0 = jnp.sqrt(ab_prev) * beta / one_minus_ab[t]
    ct = jnp.sqrt(1.0 - beta) * one_minus_ab_prev[t] / one_minus_ab[t]
    return c0 * jnp.asarray(x0) + ct * jnp.asarray(x_t), schedule.posterior_variance[t]


def eps_loss(
    eps_fn: Callable[[Array, Array], Array],
    schedule: DiscreteSchedule,
    x0: ArrayLike,
    key: PRNGKeyArray,
    *,
    t: ArrayLike | None = None,
) -> Array:
    """DDPM "simple" loss for one sample: ``mean (eps_fn(x_t, t) - eps)^2`` with ``t ~ U{0..T-1}`` unless given.

    ``eps_fn(x_t, t_index)`` receives an int32 scalar index. Batch with ``jax.vmap`` over ``(x0, key)``.
    """
    if not isinstance(schedule, DiscreteSchedule):
        raise TypeError(f"schedule: expected a DiscreteSchedule, received {type(schedule).__name__}")
    x0 = jnp.asarray(x0)
    check_nonempty("x0", x0)  # the mean over no entries is nan
    k_t, k_e = jax.random.split(key)
    if t is None:
        t = jax.random.randint(k_t, (), 0, schedule.n_steps)
    t = check_time(schedule, t)
    eps = jax.random.normal(k_e, x0.shape, x0.dtype)
    x_t = q_sample(schedule, x0, t, eps)
    return jnp.mean((eps_fn(x_t, t) - eps) ** 2)


def dsm_loss(
    score_fn: Callable[[Array, Array], Array],
    schedule: Schedule,
    x0: ArrayLike,
    key: PRNGKeyArray,
    *,
    t: ArrayLike | None = None,
    t_min: float = 1e-3,
) -> Array:
    """Denoising score matching for one sample, normalized: ``mean (sigma_t score_fn(x_t, t) + eps)^2``.

    Continuous schedules draw ``t ~ U(t_min, 1)`` unless ``t`` is given; a discrete schedule draws an index.
    Same signature as :func:`jaxkit.diffusion.so3_diffusion.dsm_loss` and
    :meth:`jaxkit.diffusion.SE3Diffusion.dsm_loss` (``fn, schedule/process, data, key, *, t, t_min``).
    """
    x0 = jnp.asarray(x0)
    check_nonempty("x0", x0)  # the mean over no entries is nan
    if not is_tracer(t_min) and not 0.0 <= float(t_min) < 1.0:
        raise ValueError(f"t_min: expected a value in [0, 1), received {t_min!r}")
    k_t, k_e = jax.random.split(key)
    if t is None:
        if isinstance(schedule, DiscreteSchedule):
            t = jax.random.randint(k_t, (), 0, schedule.n_steps)
        else:
            t = jax.random.uniform(k_t, (), minval=t_min, maxval=1.0)
    eps = jax.random.normal(k_e, x0.shape, x0.dtype)
    x_t = q_sample(schedule, x0, t, eps)
    sigma = marginal_coefs(schedule, t)[1]
    return jnp.mean((sigma * score_fn(x_t, t) + eps) ** 2)
