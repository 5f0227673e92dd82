"""Samplers: DDPM ancestral and DDIM (discrete VP), reverse SDE and probability-flow ODE (continuous, diffrax).

All samplers are pure functions of ``(model_fn, schedule, x_T, key)``; wrap them in ``jax.jit`` (the model
function and the integer options are static: close over them with ``functools.partial``) and ``jax.vmap`` over
``(x_T, key)`` to draw many samples. ``x_T`` may have any shape; the model function sees that shape.

- :func:`ddpm_sample` (Ho et al. 2020): ``x_{t-1} = (x_t - beta_t/sqrt(1-abar_t) eps)/sqrt(alpha_t) + s_t z``,
  ``s_t^2 = beta~_t`` (posterior) or ``beta_t``.
- :func:`ddim_sample` (Song, Meng, Ermon 2021): on a sub-sequence of ``n_steps`` indices,
  ``x_prev = sqrt(abar_prev) x0_hat + sqrt(1 - abar_prev - s^2) eps + s z`` with
  ``s = eta sqrt((1-abar_prev)/(1-abar_t)) sqrt(1 - abar_t/abar_prev)``; ``eta = 0`` is deterministic and
  ``eta = 1`` with all steps equals DDPM with the posterior variance.
- :func:`reverse_sde_sample`: Euler–Maruyama for ``dx = [f x - g^2 score] dt + g dW`` backwards in time.
- :func:`probability_flow_sample`: ``dx/dt = f x - g^2 score / 2`` with a diffrax solver.

Model functions: ``eps_fn(x_t, t_index)`` (int32 scalar index; or the float ``(t_index + 1)/T`` with
``time_input="fraction"``) for the discrete samplers; ``score_fn(x_t, t)`` with a float time for the continuous.
The Lie-group samplers (SO(3), SE(3)^N) live in :mod:`jaxkit.diffusion.so3_diffusion` and
:class:`jaxkit.diffusion.SE3Diffusion`.

NaN policy: every sampler checks what the model function returns (``check_output=True``, the default): NaN or
inf from ``eps_fn``/``score_fn`` raises ``ValueError`` naming the function (a run-time error under ``jax.jit``)
instead of flowing silently into the sample; ``check_output=False`` skips the check (one reduction per step).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import diffrax
import jax
import jax.numpy as jnp
import lineax
import numpy as np
from jaxtyping import Array, ArrayLike, PRNGKeyArray

from jaxkit._validate import (
    check_choice,
    check_int,
    check_key,
    check_size,
    error_if_invalid,
    finite_checked,
    is_tracer,
    library_errors,
    output_checked,
)
from jaxkit.diffusion._schedules import AbstractSchedule, DiscreteSchedule

__all__ = [
    "check_time_grid",
    "ddim_sample",
    "ddim_timesteps",
    "ddpm_sample",
    "probability_flow_sample",
    "reverse_sde_sample",
    "time_grid",
]


def _like_x(name: str, out: Any, x: Any) -> Any:
    """The output of the user callable ``name``, which must have the shape of its input ``x`` (static check)."""
    if jnp.shape(out) != jnp.shape(x):
        raise ValueError(
            f"{name}: expected the callable to return an array of the shape of its input {jnp.shape(x)}, "
            f"received shape {jnp.shape(out)}"
        )
    return out


def _time_arg(t_index: Array, n_steps: int, time_input: Literal["index", "fraction"]) -> Array:
    if time_input == "index":
        return t_index
    return (t_index + 1).astype(jnp.result_type(float)) / n_steps


def _check_discrete(schedule: object) -> None:
    if not isinstance(schedule, DiscreteSchedule):
        raise TypeError(f"schedule: expected a DiscreteSchedule, received {type(schedule).__name__}")


def _check_continuous(schedule: object) -> None:
    if not isinstance(schedule, AbstractSchedule):
        raise TypeError(
            f"schedule: expected a continuous AbstractSchedule (VPSchedule, VESchedule, ...), received "
            f"{type(schedule).__name__}"
        )


def ddim_timesteps(total_steps: int, n_steps: int) -> np.ndarray:
    """Descending, distinct step indices ``T-1 .. 0`` (``n_steps`` of them, evenly spaced)."""
    check_int("total_steps", total_steps, minimum=1)
    check_int("n_steps", n_steps, minimum=1)
    if total_steps > np.iinfo(np.int32).max:
        raise ValueError(
            f"total_steps: expected at most {np.iinfo(np.int32).max} (the indices are int32), received {total_steps}"
        )
    if n_steps > total_steps:
        raise ValueError(f"n_steps: expected at most the schedule length {total_steps}, received {n_steps}")
    check_size("n_steps", 12 * n_steps)  # the float64 grid and its int32 copy
    ts = np.round(np.linspace(total_steps - 1, 0, n_steps)).astype(np.int32)
    return ts


@library_errors
def ddpm_sample(
    eps_fn: Callable[[Array, Array], Array],
    schedule: DiscreteSchedule,
    x_T: ArrayLike,
    key: PRNGKeyArray,
    *,
    variance: Literal["posterior", "beta"] = "posterior",
    time_input: Literal["index", "fraction"] = "index",
    clip_x0: float | None = None,
    check_output: bool = True,
) -> Array:
    """Ancestral DDPM sampling from ``x_T ~ N(0, I)`` through all ``T`` steps; returns ``x_0``.
    ``check_output``: NaN/inf from ``eps_fn`` is an error (the module's NaN policy)."""
    _check_discrete(schedule)
    check_choice("variance", variance, ("posterior", "beta"))
    check_choice("time_input", time_input, ("index", "fraction"))
    check_key("key", key)
    x_T = finite_checked("x_T", jnp.asarray(x_T))
    T = schedule.n_steps
    ts = jnp.arange(T - 1, -1, -1, dtype=jnp.int32)
    keys = jax.random.split(key, T)

    def step(x: Array, inp: tuple[Array, Array]) -> tuple[Array, None]:
        t, k = inp
        eps = output_checked(
            "eps_fn", _like_x("eps_fn", eps_fn(x, _time_arg(t, T, time_input)), x), check=check_output
        )
        ab, beta, alpha = schedule.alpha_bars[t], schedule.betas[t], schedule.alphas[t]
        if clip_x0 is not None:
            x0 = jnp.clip((x - jnp.sqrt(1 - ab) * eps) / jnp.sqrt(ab), -clip_x0, clip_x0)
            ab_prev = schedule.alpha_bars_prev[t]
            mean = (jnp.sqrt(ab_prev) * beta * x0 + jnp.sqrt(alpha) * (1 - ab_prev) * x) / (1 - ab)
        else:
            mean = (x - beta / jnp.sqrt(1.0 - ab) * eps) / jnp.sqrt(alpha)
        var = schedule.posterior_variance[t] if variance == "posterior" else beta
        z = jax.random.normal(k, x.shape, x.dtype)
        x = mean + jnp.where(t > 0, jnp.sqrt(var), 0.0) * z
        return x, None

    x0, _ = jax.lax.scan(step, x_T, (ts, keys))
    return x0


@library_errors
def ddim_sample(
    eps_fn: Callable[[Array, Array], Array],
    schedule: DiscreteSchedule,
    x_T: ArrayLike,
    key: PRNGKeyArray,
    *,
    n_steps: int | None = None,
    eta: float = 0.0,
    time_input: Literal["index", "fraction"] = "index",
    clip_x0: float | None = None,
    check_output: bool = True,
) -> Array:
    """DDIM sampling with ``n_steps`` (default: all ``T``) evenly spaced steps and stochasticity ``eta``.
    ``check_output``: NaN/inf from ``eps_fn`` is an error (the module's NaN policy)."""
    _check_discrete(schedule)
    check_choice("time_input", time_input, ("index", "fraction"))
    check_key("key", key)
    if not (np.isfinite(float(eta)) and float(eta) >= 0):
        raise ValueError(f"eta: expected a finite value >= 0, received {eta}")
    T = schedule.n_steps
    ts = ddim_timesteps(T, T if n_steps is None else n_steps)
    t_prev = np.concatenate([ts[1:], [-1]]).astype(np.int32)
    x_T = finite_checked("x_T", jnp.asarray(x_T))
    keys = jax.random.split(key, len(ts))

    def step(x: Array, inp: tuple[Array, Array, Array]) -> tuple[Array, None]:
        t, tp, k = inp
        eps = output_checked(
            "eps_fn", _like_x("eps_fn", eps_fn(x, _time_arg(t, T, time_input)), x), check=check_output
        )
        ab = schedule.alpha_bars[t]
        ab_prev = jnp.where(tp >= 0, schedule.alpha_bars[jnp.maximum(tp, 0)], 1.0)
        x0 = (x - jnp.sqrt(1.0 - ab) * eps) / jnp.sqrt(ab)
        if clip_x0 is not None:
            x0 = jnp.clip(x0, -clip_x0, clip_x0)
            eps = (x - jnp.sqrt(ab) * x0) / jnp.sqrt(1.0 - ab)
        s = eta * jnp.sqrt((1.0 - ab_prev) / (1.0 - ab)) * jnp.sqrt(jnp.clip(1.0 - ab / ab_prev, 0.0))
        dir_coef = jnp.sqrt(jnp.clip(1.0 - ab_prev - s**2, 0.0))
        z = jax.random.normal(k, x.shape, x.dtype)
        return jnp.sqrt(ab_prev) * x0 + dir_coef * eps + s * z, None

    x0, _ = jax.lax.scan(step, x_T, (jnp.asarray(ts), jnp.asarray(t_prev), keys))
    return x0


def time_grid(
    n_steps: int,
    t_min: float = 1e-3,
    t_max: float = 1.0,
    kind: Literal["uniform", "edm"] = "uniform",
    rho: float = 3.0,
) -> Array:
    """Descending integration times ``t_max -> t_min`` (``n_steps + 1`` points): uniform or EDM (``rho``)."""
    from jaxkit.diffusion._schedules import edm_grid

    check_int("n_steps", n_steps, minimum=1)
    check_size("n_steps", 32 * (int(n_steps) + 1), hint=f"a grid of {n_steps + 1} times")
    check_choice("kind", kind, ("uniform", "edm"))
    if not np.isfinite(t_max):
        raise ValueError(f"t_max: expected a finite time, received {t_max}")
    if not 0 <= t_min < t_max:
        raise ValueError(f"t_min: expected 0 <= t_min < t_max={t_max}, received {t_min}")
    if kind == "edm":
        return edm_grid(n_steps + 1, t_min, t_max, rho)
    return jnp.linspace(t_max, t_min, n_steps + 1, dtype=jnp.result_type(float))


def check_time_grid(ts: ArrayLike, name: str = "ts") -> Array:
    """A descending 1-D grid of at least 2 diffusion times in ``[0, 1]`` (a traced grid at run time)."""
    if not is_tracer(ts):
        a = np.asarray(ts, dtype=np.float64)
        if a.ndim != 1 or a.shape[0] < 2:
            raise ValueError(
                f"{name}: expected a 1-D descending time grid with >= 2 entries, received shape {a.shape}"
            )
        if not np.all(np.isfinite(a)) or a.min() < 0 or a.max() > 1:
            raise ValueError(f"{name}: expected times in [0, 1], received range [{a.min()}, {a.max()}]")
        if np.any(np.diff(a) >= 0):
            raise ValueError(
                f"{name}: expected a strictly descending grid (t_max -> t_min), received {a[:4]}..."
            )
    elif jnp.ndim(ts) != 1 or jnp.shape(ts)[0] < 2:
        raise ValueError(
            f"{name}: expected a 1-D descending time grid with >= 2 entries, received shape {jnp.shape(ts)}"
        )
    else:
        bad = ~((ts >= 0.0) & (ts <= 1.0)).all() | jnp.any(jnp.diff(ts) >= 0)
        return error_if_invalid(ts, bad, f"{name}: expected a strictly descending grid of times in [0, 1]")
    return jnp.asarray(ts)


@library_errors
def reverse_sde_sample(
    score_fn: Callable[[Array, Array], Array],
    schedule: AbstractSchedule,
    x_T: ArrayLike,
    key: PRNGKeyArray,
    ts: ArrayLike,
    *,
    check_output: bool = True,
) -> Array:
    """Euler–Maruyama (diffrax) on the reverse-time SDE ``dx = [f(t) x - g(t)^2 score(x, t)] dt + g(t) dW``.

    ``ts`` is a descending time grid (e.g. :func:`time_grid`); integration runs in ``s = -t`` so that diffrax
    steps forward, with the steps placed exactly on ``ts``. Returns the sample at ``ts[-1]``.
    ``check_output``: NaN/inf from ``score_fn`` is an error (the module's NaN policy).
    """
    _check_continuous(schedule)
    check_key("key", key)
    x_T = finite_checked("x_T", jnp.asarray(x_T))
    ts = check_time_grid(ts)
    ss = -ts

    def drift(s: Array, x: Array, args: Any) -> Array:
        t = -s
        score = output_checked("score_fn", _like_x("score_fn", score_fn(x, t), x), check=check_output)
        return -(schedule.drift_coef(t) * x - schedule.diffusion(t) ** 2 * score)

    def diffusion(s: Array, x: Array, args: Any) -> Any:
        return lineax.DiagonalLinearOperator(
            jnp.broadcast_to(schedule.diffusion(-s), x.shape).astype(x.dtype)
        )

    bm = diffrax.UnsafeBrownianPath(shape=x_T.shape, key=key)
    terms = diffrax.MultiTerm(diffrax.ODETerm(drift), diffrax.ControlTerm(diffusion, bm))
    sol = diffrax.diffeqsolve(
        terms,
        diffrax.Euler(),
        adjoint=diffrax.ForwardMode(),
        t0=ss[0],
        t1=ss[-1],
        dt0=None,
        y0=x_T,
        stepsize_controller=diffrax.StepTo(ts=ss),
        saveat=diffrax.SaveAt(t1=True),
        max_steps=int(ts.shape[0]),
    )
    return sol.ys[0]


@library_errors
def probability_flow_sample(
    score_fn: Callable[[Array, Array], Array],
    schedule: AbstractSchedule,
    x_T: ArrayLike,
    ts: ArrayLike,
    solver: diffrax.AbstractSolver[object] | None = None,
    *,
    check_output: bool = True,
) -> Array:
    """Probability-flow ODE ``dx/dt = f(t) x - g(t)^2 score(x, t) / 2`` from ``ts[0]`` to ``ts[-1]`` (diffrax).

    ``solver`` defaults to Heun (2nd order) with steps exactly on ``ts``; ``check_output``: NaN/inf from
    ``score_fn`` is an error (the module's NaN policy).
    """
    _check_continuous(schedule)
    x_T = finite_checked("x_T", jnp.asarray(x_T))
    ts = check_time_grid(ts)

    def vf(t: Array, x: Array, args: Any) -> Array:
        score = output_checked("score_fn", _like_x("score_fn", score_fn(x, t), x), check=check_output)
        return schedule.drift_coef(t) * x - 0.5 * schedule.diffusion(t) ** 2 * score

    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vf),
        solver or diffrax.Heun(),
        t0=ts[0],
        t1=ts[-1],
        dt0=None,
        y0=x_T,
        stepsize_controller=diffrax.StepTo(ts=ts),
        saveat=diffrax.SaveAt(t1=True),
        max_steps=int(ts.shape[0]),
    )
    return sol.ys[0]
