r"""Variance-exploding diffusion on SO(3) with IGSO(3) marginals (De Bortoli et al. 2022; Leach et al. 2022;
DiffDock, Corso et al. 2023; FrameDiff, Yim et al. 2023): the rotation factor of
:class:`~jaxkit.diffusion.SE3Diffusion`, on its own.

Forward process: Brownian motion $dR = R \circ g(t)\,dB$ (body-frame increments, generator $g^2 \Delta/2$), so
$R_t \mid R_0 \sim \mathrm{IGSO}(3)(\sigma(t))$ centered at $R_0$ for a :class:`VESchedule`. Scores are body-frame
3-vectors $s$ with $\nabla_R \log p = R \hat s$: the conditional score at $R_t = R_0 \exp(\hat v)$ is
$v/|v| \cdot \partial_\omega \log f$. The samplers are the rotation steps of :meth:`SE3Diffusion.sample`
(geodesic random walk; probability flow $R \leftarrow R \exp(g^2 s\,\Delta t/2)$); Brownian motion
$R \leftarrow R \exp(\sqrt{\Delta t} z)$ reaches $\mathrm{IGSO}(3)(\sqrt{T})$.

``score_fn(R, t) -> (..., 3)`` acts on whatever batch of rotations it is given; vmap over samples.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, PRNGKeyArray

from jaxkit._validate import (
    check_int,
    check_key,
    check_positive,
    check_range,
    check_size,
    is_tracer,
    library_errors,
    output_checked,
)
from jaxkit.diffusion import igso3
from jaxkit.diffusion._sampling import check_time_grid
from jaxkit.diffusion._schedules import VESchedule
from jaxkit.diffusion._se3 import AbstractSE3Sampler, EulerMaruyama, ProbabilityFlowODE, rot_step
from jaxkit.geometry import so3 as g

__all__ = [
    "brownian_motion",
    "conditional_score",
    "dsm_loss",
    "perturb",
    "probability_flow_sample",
    "reverse_sde_sample",
]

RotScoreFn = Callable[[Array, Array], Array]


def _check_schedule(schedule: object) -> None:
    if not isinstance(schedule, VESchedule):
        raise TypeError(f"schedule: expected a VESchedule, received {type(schedule).__name__}")


def perturb(key: PRNGKeyArray, R0: ArrayLike, sigma: ArrayLike) -> tuple[Array, Array]:
    """Sample ``R_t = R_0 exp(hat v)``, ``v ~ IGSO(3)(sigma)`` vectors; returns ``(R_t, v)``.

    ``R0 (..., 3, 3)``; ``sigma`` broadcasts against ``R0.shape[:-2]``.
    """
    R0 = g.check_rotation("R0", R0)
    R0 = jnp.asarray(R0)
    try:
        ok = np.broadcast_shapes(np.shape(sigma), R0.shape[:-2]) == R0.shape[:-2]
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"sigma: expected a shape that broadcasts to R0's batch shape {R0.shape[:-2]}, received {np.shape(sigma)}"
        )
    v = igso3.sample_vector(key, jnp.broadcast_to(sigma, R0.shape[:-2]), R0.shape[:-2], R0.dtype)
    return jnp.matmul(R0, g.exp(v)), v


def conditional_score(R_t: ArrayLike, R0: ArrayLike, sigma: ArrayLike) -> Array:
    """Body-frame score of ``IGSO(3)(sigma)`` centered at ``R0``, evaluated at ``R_t``."""
    R_t, R0 = g.check_rotation("R_t", R_t), g.check_rotation("R0", R0)
    if jnp.shape(R_t)[:-2] != jnp.shape(R0)[:-2]:
        raise ValueError(
            f"R_t, R0: expected the same batch shape, received {jnp.shape(R_t)} and {jnp.shape(R0)}"
        )
    return igso3.score(R_t, sigma, mean=R0)


def dsm_loss(
    score_fn: RotScoreFn,
    schedule: VESchedule,
    R0: ArrayLike,
    key: PRNGKeyArray,
    *,
    t: ArrayLike | None = None,
    t_min: float = 1e-3,
) -> Array:
    """Denoising score matching on SO(3) for one sample ``R0 (..., 3, 3)`` (e.g. N bodies), normalized as in
    DiffDock: ``mean |(score_fn(R_t, t) - s_target) / score_norm(sigma_t)|^2`` with ``t ~ U(t_min, 1)``."""
    _check_schedule(schedule)
    if not is_tracer(t_min):
        check_range("t_min", t_min, 0.0, 1.0, closed=False)
    R0 = g.check_rotation("R0", R0)
    R0 = jnp.asarray(R0)
    k_t, k_n = jax.random.split(key)
    if t is None:
        t = jax.random.uniform(k_t, (), R0.dtype, minval=t_min, maxval=1.0)
    sigma = schedule.sigma(t)
    R_t, v = perturb(k_n, R0, sigma)
    target = igso3.score_vector(v, sigma)
    return jnp.mean(((score_fn(R_t, t) - target) / igso3.score_norm(sigma)) ** 2)


def brownian_motion(key: PRNGKeyArray, R0: ArrayLike, total_time: float, n_steps: int) -> Array:
    """Geodesic random walk ``R <- R exp(hat(sqrt(dt) z))`` for ``total_time`` in ``n_steps`` steps.

    The law at the end approaches IGSO(3)(``sqrt(total_time)``) around ``R0`` as ``dt -> 0``.
    """
    R0 = g.check_rotation("R0", R0)
    check_positive("total_time", total_time)
    check_int("n_steps", n_steps, minimum=1)
    check_size("n_steps", int(n_steps) * 2 * 4, hint="one PRNG key per step")
    R0 = jnp.asarray(R0)
    dt = float(total_time) / int(n_steps)

    def step(R: Array, k: Array) -> tuple[Array, None]:
        z = jax.random.normal(k, R.shape[:-1], R.dtype)
        return jnp.matmul(R, g.exp(jnp.sqrt(dt) * z)), None  # no re-check of R in the loop

    R, _ = jax.lax.scan(step, R0, jax.random.split(key, int(n_steps)))
    return R


def _run(
    score_fn: RotScoreFn,
    schedule: VESchedule,
    R_T: ArrayLike,
    key: PRNGKeyArray,
    ts: ArrayLike,
    sampler: AbstractSE3Sampler,
    check_output: bool = True,
):
    _check_schedule(schedule)
    check_key("key", key)
    R_T = g.check_rotation("R_T", R_T)
    ts = check_time_grid(ts)
    R_T = jnp.asarray(R_T)

    def step(R: Array, inp: tuple[Array, Array, Array]) -> tuple[Array, None]:
        t, t_next, k = inp
        z = jax.random.normal(k, R.shape[:-1], R.dtype)
        s = output_checked("score_fn", score_fn(R, t), check=check_output)
        return rot_step(R, s, z, schedule, t, t_next, sampler, jnp.ones((), R.dtype)), None

    keys = jax.random.split(key, ts.shape[0] - 1)
    R, _ = jax.lax.scan(step, R_T, (ts[:-1], ts[1:], keys))
    return R


@library_errors
def reverse_sde_sample(
    score_fn: RotScoreFn,
    schedule: VESchedule,
    R_T: ArrayLike,
    key: PRNGKeyArray,
    ts: ArrayLike,
    *,
    check_output: bool = True,
) -> Array:
    """Geodesic random walk on the reverse-time SDE from ``ts[0]`` down to ``ts[-1]``. ``check_output``: NaN/inf
    from ``score_fn`` is an error (``False`` skips the check)."""
    return _run(score_fn, schedule, R_T, key, ts, EulerMaruyama(), check_output)


@library_errors
def probability_flow_sample(
    score_fn: RotScoreFn, schedule: VESchedule, R_T: ArrayLike, ts: ArrayLike, *, check_output: bool = True
) -> Array:
    """Exponential-map Euler steps on the probability-flow ODE ``dR = -R o (g^2 s / 2) dt``, ``ts[0] -> ts[-1]``.
    ``check_output``: NaN/inf from ``score_fn`` is an error (``False`` skips the check)."""
    return _run(score_fn, schedule, R_T, jax.random.key(0), ts, ProbabilityFlowODE(), check_output)
