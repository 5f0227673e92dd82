"""Gradient flow (diffrax) and discrete gradient descent on a loss over a params pytree.

Gradient flow ``τ dθ/dt = −∇L(θ)`` with ``τ = 1/η`` measures time in units of gradient-descent steps of learning
rate η, so ``gradient_flow(..., tau=1/η)`` at time ``t`` is comparable to ``gradient_descent(..., lr=η)`` after
``t`` steps. Flows are solved with an adaptive solver (``"kvaerno5"``: L-stable implicit, for stiff late phases;
``"tsit5"``: explicit, cheaper for short runs), output at log-spaced times (``ts``), and stop early through a
diffrax ``Event`` once ``||∇L|| < grad_tol`` (converged); saved values after the stop repeat the final state.
``gradient_flow_batch`` runs many initialisations (seeds × init scales) in one compiled, vmapped call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxkit._typing import Array, Float, PRNGKey
from jaxkit._validate import check_int, check_positive

__all__ = ["FlowResult", "gradient_descent", "gradient_flow", "gradient_flow_batch", "log_times"]


class FlowResult(NamedTuple):
    """Trajectory: ``ts`` (T,), ``params`` (pytree with a leading T axis), ``loss`` (T,), ``t_stop`` (time the run
    ended: the convergence event or ``t1``), ``converged`` (the event fired)."""

    ts: Array
    params: Any
    loss: Array
    t_stop: Array
    converged: Array


def log_times(t1: float, n: int = 200, t_min: float | None = None) -> Float[Array, " n"]:
    """``n`` save times: 0 followed by ``n−1`` log-spaced times from ``t_min`` (default ``t1·1e-4``) to ``t1``."""
    check_positive("t1", t1)
    check_int("n", n, minimum=2)
    t_min = t1 * 1e-4 if t_min is None else t_min
    check_positive("t_min", t_min)
    if t_min >= t1:
        raise ValueError(f"t_min: expected a value < t1={t1}, received {t_min}")
    return jnp.concatenate([jnp.zeros(1), jnp.geomspace(t_min, t1, n - 1)])


def _solver(solver: Any) -> Any:
    if isinstance(solver, str):
        table = {"kvaerno5": diffrax.Kvaerno5, "tsit5": diffrax.Tsit5, "dopri5": diffrax.Dopri5}
        if solver not in table:
            raise ValueError(
                f"solver: expected one of {sorted(table)} or a diffrax solver, received {solver!r}"
            )
        return table[solver]()
    if not isinstance(solver, diffrax.AbstractSolver):
        raise TypeError(f"solver: expected a name or a diffrax solver, received {type(solver).__name__}")
    return solver


def _flow_core(
    loss_fn: Callable[[Any], Any],
    params0: Any,
    ts: Array,
    tau: float,
    solver: Any,
    rtol: float,
    atol: float,
    grad_tol: float,
    max_steps: int,
) -> FlowResult:
    grad_fn = jax.grad(loss_fn)

    def vf(t, y, args):
        return jax.tree.map(lambda g: -g / tau, grad_fn(y))

    def cond(t, y, args, **kwargs):
        g = grad_fn(y)
        return optax.tree.norm(g) < grad_tol

    event = diffrax.Event(cond) if grad_tol > 0 else None
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vf),
        solver,
        t0=ts[0],
        t1=ts[-1],
        dt0=None,
        y0=params0,
        saveat=diffrax.SaveAt(subs=[diffrax.SubSaveAt(ts=ts), diffrax.SubSaveAt(t1=True)]),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        event=event,
        max_steps=max_steps,
        throw=False,
    )
    ys_ts, ys_end = sol.ys
    t_stop = sol.ts[1][0]
    after = ts > t_stop
    params = jax.tree.map(
        lambda y, f: jnp.where(after.reshape((-1,) + (1,) * (f.ndim - 1)), f, y), ys_ts, ys_end
    )
    loss = jax.vmap(loss_fn)(params)
    converged = sol.result == diffrax.RESULTS.event_occurred
    return FlowResult(ts, params, loss, t_stop, converged)


def _check_flow_args(ts: Any, tau: float, rtol: float, atol: float, grad_tol: float, max_steps: int) -> Array:
    check_positive("tau", tau)
    check_positive("rtol", rtol)
    check_positive("atol", atol)
    check_positive("grad_tol", grad_tol, strict=False)
    check_int("max_steps", max_steps, minimum=1)
    ts = jnp.asarray(ts)
    if ts.ndim != 1 or ts.shape[0] < 2:
        raise ValueError(f"ts: expected a 1D array of at least 2 save times, received shape {ts.shape}")
    if not isinstance(ts, jax.core.Tracer) and not bool(jnp.all(jnp.diff(ts) > 0)):
        raise ValueError("ts: expected strictly increasing save times")
    return ts


def gradient_flow(
    loss_fn: Callable[[Any], Any],
    params0: Any,
    ts: Float[Array, " T"] | np.ndarray,
    *,
    tau: float = 1.0,
    solver: Any = "kvaerno5",
    rtol: float = 1e-7,
    atol: float = 1e-9,
    grad_tol: float = 0.0,
    max_steps: int = 100_000,
) -> FlowResult:
    """Exact gradient flow ``τ dθ/dt = −∇L(θ)`` from ``params0`` saved at ``ts`` (e.g. :func:`log_times`).

    ``grad_tol > 0`` adds a diffrax ``Event`` that stops the solve once ``||∇L||₂ < grad_tol``. The call is
    jit-compiled; ``loss_fn`` must be a pure function of the params (close over the data).
    """
    ts = _check_flow_args(ts, tau, rtol, atol, grad_tol, max_steps)
    leaves = jax.tree.leaves(params0)
    if not leaves:
        raise ValueError("params0: expected a non-empty params pytree")
    for leaf in leaves:
        if not isinstance(leaf, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(leaf))):
            raise ValueError("params0: expected finite values, received NaN/inf")
    out = _jit_flow(loss_fn, params0, ts, tau, _solver(solver), rtol, atol, grad_tol, max_steps)
    _check_solved(out)
    return out


def _check_solved(out: FlowResult) -> None:
    if isinstance(out.t_stop, jax.core.Tracer):
        return
    if not np.all(np.isfinite(np.asarray(out.t_stop))):
        raise RuntimeError(
            "gradient_flow: the solver failed (max_steps reached or non-finite values); raise max_steps, loosen "
            "rtol/atol, or use solver='kvaerno5' for stiff problems"
        )


_jit_flow = jax.jit(_flow_core, static_argnums=(0, 3, 4, 5, 6, 7, 8))


def gradient_flow_batch(
    loss_fn: Callable[[Any], Any],
    init_fn: Callable[[PRNGKey, Any], Any],
    keys: Array,
    scales: Float[Array, " S"] | np.ndarray,
    ts: Float[Array, " T"] | np.ndarray,
    *,
    tau: float = 1.0,
    solver: Any = "kvaerno5",
    rtol: float = 1e-7,
    atol: float = 1e-9,
    grad_tol: float = 0.0,
    max_steps: int = 100_000,
) -> FlowResult:
    """Gradient flows for every (seed, init scale) pair in one compiled, vmapped call.

    ``init_fn(key, scale) -> params``. Returns a :class:`FlowResult` whose arrays carry leading axes
    ``(n_seeds, n_scales)``.
    """
    ts = _check_flow_args(ts, tau, rtol, atol, grad_tol, max_steps)
    scales = jnp.asarray(scales)
    if scales.ndim != 1:
        raise ValueError(f"scales: expected a 1D array of init scales, received shape {scales.shape}")
    if not bool(jnp.all(scales > 0)):
        raise ValueError(f"scales: expected init scales > 0, received {np.asarray(scales).tolist()}")
    solver = _solver(solver)
    out = _jit_batch(loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps)
    _check_solved(out)
    return out


def _batch_core(loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps):
    def one(key, scale):
        return _flow_core(loss_fn, init_fn(key, scale), ts, tau, solver, rtol, atol, grad_tol, max_steps)

    return jax.vmap(lambda k: jax.vmap(lambda s: one(k, s))(scales))(keys)


_jit_batch = jax.jit(_batch_core, static_argnums=(0, 1, 5, 6, 7, 8, 9, 10))


def gradient_descent(
    loss_fn: Callable[..., Any],
    params0: Any,
    lr: float,
    n_steps: int,
    *,
    save_every: int = 1,
    batch_fn: Callable[[PRNGKey], Any] | None = None,
    key: PRNGKey | None = None,
) -> FlowResult:
    """Discrete (S)GD ``θ ← θ − η ∇L(θ)`` (optax.sgd) for ``n_steps`` steps, saving every ``save_every`` steps.

    Full batch: ``loss_fn(params)``. SGD: pass ``batch_fn(key) -> batch`` and ``key``; each step then uses
    ``loss_fn(params, batch_fn(fresh key))`` and the saved loss is evaluated on the fixed batch ``batch_fn(key)``.
    ``ts`` in the result are step counts (compare with a flow of ``tau = 1/lr``).
    """
    check_positive("lr", lr)
    check_int("n_steps", n_steps, minimum=1)
    check_int("save_every", save_every, minimum=1)
    if n_steps % save_every:
        raise ValueError(f"save_every: expected a divisor of n_steps={n_steps}, received {save_every}")
    if batch_fn is not None and key is None:
        raise ValueError("key: SGD (batch_fn given) needs a PRNG key, received None")
    return _jit_gd(loss_fn, params0, lr, n_steps, save_every, batch_fn, key)


def _gd_core(loss_fn, params0, lr, n_steps, save_every, batch_fn, key):
    opt = optax.sgd(lr)
    stochastic = batch_fn is not None

    def step(carry, _):
        params, state, k = carry
        if stochastic:
            k, sub = jax.random.split(k)
            batch = batch_fn(sub)
            loss, g = jax.value_and_grad(loss_fn)(params, batch)
        else:
            loss, g = jax.value_and_grad(loss_fn)(params)
        upd, state = opt.update(g, state, params)
        return (optax.apply_updates(params, upd), state, k), loss

    def chunk(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=save_every)
        return carry, carry[0]

    k0 = key if stochastic else jax.random.key(0)
    carry0 = (params0, opt.init(params0), k0)
    _, saved = jax.lax.scan(chunk, carry0, None, length=n_steps // save_every)
    params = jax.tree.map(lambda p0, p: jnp.concatenate([p0[None], p]), params0, saved)
    if stochastic:
        loss = jax.vmap(lambda p: loss_fn(p, batch_fn(k0)))(params)
    else:
        loss = jax.vmap(loss_fn)(params)
    ts = jnp.arange(n_steps // save_every + 1) * save_every
    return FlowResult(ts.astype(loss.dtype), params, loss, jnp.asarray(float(n_steps)), jnp.asarray(False))


_jit_gd = jax.jit(_gd_core, static_argnums=(0, 2, 3, 4, 5))
