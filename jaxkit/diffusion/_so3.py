"""Variance-exploding diffusion on SO(3) with IGSO(3) marginals (De Bortoli et al. 2022; Leach et al. 2022;
DiffDock, Corso et al. 2023; FrameDiff, Yim et al. 2023).

Forward process: Brownian motion ``dR = R o g(t) dB`` (body-frame increments, generator ``g^2 Delta/2``), so
``R_t | R_0 ~ IGSO(3)(sigma(t))`` centred at ``R_0`` for a :class:`~jaxkit.diffusion._schedules.VESchedule`
(``sigma(t)^2 = int g^2``, see the schedule's convention). Scores are body-frame 3-vectors ``s`` with
``grad_R log p = R hat(s)``: the conditional score at ``R_t = R_0 exp(hat v)`` is ``v/|v| d log f/d omega``.

Samplers are geodesic (exponential-map) schemes on a descending time grid ``ts``, ``dt = t_i - t_{i+1} > 0``:

- reverse SDE (geodesic random walk): ``R <- R exp(hat(g^2 s dt + g sqrt(dt) z))``, ``z ~ N(0, I_3)``;
- probability flow: ``R <- R exp(hat(g^2 s dt / 2))``;
- forward Brownian motion: ``R <- R exp(hat(sqrt(dt) z))`` reaches IGSO(3)(sqrt(total time)).

``score_fn(R, t) -> (..., 3)`` acts on whatever batch of rotations it is given; vmap over samples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, PRNGKeyArray

from jaxkit.diffusion import igso3
from jaxkit.diffusion._schedules import VESchedule
from jaxkit.geometry import so3 as g

__all__ = [
    "brownian_motion",
    "conditional_score",
    "dsm_loss",
    "perturb",
    "probability_flow_sample",
    "reverse_sde_sample",
]


def _check_ts(ts: ArrayLike) -> Array:
    ts = jnp.asarray(ts)
    if ts.ndim != 1 or ts.shape[0] < 2:
        raise ValueError(
            f"ts: expected a 1-D descending time grid with >= 2 entries, received shape {ts.shape}"
        )
    return ts


def perturb(key: PRNGKeyArray, R0: ArrayLike, sigma: ArrayLike) -> tuple[Array, Array]:
    """Sample ``R_t = R_0 exp(hat v)``, ``v ~ IGSO(3)(sigma)`` vectors; returns ``(R_t, v)``.

    ``R0 (..., 3, 3)``; ``sigma`` broadcasts against ``R0.shape[:-2]``.
    """
    g.check_rotation("R0", R0)
    R0 = jnp.asarray(R0)
    v = igso3.sample_vector(key, jnp.broadcast_to(sigma, R0.shape[:-2]), R0.shape[:-2], R0.dtype)
    return g.compose(R0, g.exp(v)), v


def conditional_score(R_t: ArrayLike, R0: ArrayLike, sigma: ArrayLike) -> Array:
    """Body-frame score of ``IGSO(3)(sigma)`` centred at ``R0``, evaluated at ``R_t``."""
    return igso3.score(R_t, sigma, mean=R0)


def dsm_loss(
    score_fn: Callable[[Array, Array], Array],
    schedule: VESchedule,
    R0: ArrayLike,
    key: PRNGKeyArray,
    t: ArrayLike | None = None,
    t_min: float = 0.0,
) -> Array:
    """Denoising score matching on SO(3) for one sample ``R0 (..., 3, 3)`` (e.g. N bodies), normalised as in
    DiffDock: ``mean |(score_fn(R_t, t) - s_target) / score_norm(sigma_t)|^2`` with ``t ~ U(t_min, 1)``."""
    g.check_rotation("R0", R0)
    R0 = jnp.asarray(R0)
    k_t, k_n = jax.random.split(key)
    if t is None:
        t = jax.random.uniform(k_t, (), R0.dtype, minval=t_min, maxval=1.0)
    sigma = schedule.sigma(t)
    R_t, v = perturb(k_n, R0, sigma)
    target = igso3.score_vector(v, sigma)
    return jnp.mean(((score_fn(R_t, t) - target) / igso3.score_norm(sigma)) ** 2)


def brownian_motion(key: PRNGKeyArray, R0: ArrayLike, total_time: float, num_steps: int) -> Array:
    """Geodesic random walk ``R <- R exp(hat(sqrt(dt) z))`` for ``total_time`` in ``num_steps`` steps.

    The law at the end approaches IGSO(3)(``sqrt(total_time)``) around ``R0`` as ``dt -> 0``.
    """
    g.check_rotation("R0", R0)
    if float(total_time) <= 0 or int(num_steps) < 1:
        raise ValueError(f"total_time/num_steps: expected > 0 and >= 1, received {total_time}, {num_steps}")
    R0 = jnp.asarray(R0)
    dt = float(total_time) / int(num_steps)

    def step(R: Array, k: Array) -> tuple[Array, None]:
        z = jax.random.normal(k, R.shape[:-1], R.dtype)
        return g.compose(R, g.exp(jnp.sqrt(dt) * z)), None

    R, _ = jax.lax.scan(step, R0, jax.random.split(key, int(num_steps)))
    return R


def reverse_sde_sample(
    score_fn: Callable[[Array, Array], Array], schedule: Any, R_T: ArrayLike, key: PRNGKeyArray, ts: ArrayLike
) -> Array:
    """Geodesic random walk on the reverse-time SDE from ``ts[0]`` down to ``ts[-1]``."""
    g.check_rotation("R_T", R_T)
    ts = _check_ts(ts)
    R_T = jnp.asarray(R_T)

    def step(R: Array, inp: tuple[Array, Array, Array]) -> tuple[Array, None]:
        t, t_next, k = inp
        dt = t - t_next
        gt = schedule.diffusion(t)
        z = jax.random.normal(k, R.shape[:-1], R.dtype)
        return g.compose(R, g.exp(gt**2 * score_fn(R, t) * dt + gt * jnp.sqrt(dt) * z)), None

    keys = jax.random.split(key, ts.shape[0] - 1)
    R, _ = jax.lax.scan(step, R_T, (ts[:-1], ts[1:], keys))
    return R


def probability_flow_sample(
    score_fn: Callable[[Array, Array], Array], schedule: Any, R_T: ArrayLike, ts: ArrayLike
) -> Array:
    """Exponential-map Euler steps on the probability-flow ODE ``dR = -R o (g^2 s / 2) dt``, ``ts[0] -> ts[-1]``."""
    g.check_rotation("R_T", R_T)
    ts = _check_ts(ts)

    def step(R: Array, inp: tuple[Array, Array]) -> tuple[Array, None]:
        t, t_next = inp
        return g.compose(R, g.exp(0.5 * schedule.diffusion(t) ** 2 * score_fn(R, t) * (t - t_next))), None

    R, _ = jax.lax.scan(step, jnp.asarray(R_T), (ts[:-1], ts[1:]))
    return R
