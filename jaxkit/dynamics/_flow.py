"""Gradient flow (diffrax) and discrete gradient descent on a loss over a params pytree.

Gradient flow ``τ dθ/dt = −∇L(θ)`` with ``τ = 1/η`` measures time in units of gradient-descent steps of learning
rate η, so ``gradient_flow(..., tau=1/η)`` at time ``t`` is comparable to ``gradient_descent(..., lr=η)`` after
``t`` steps. Flows are solved with an adaptive diffrax solver object (``diffrax.Kvaerno5()``, the default:
L-stable implicit, for stiff late phases; ``diffrax.Tsit5()``: explicit, cheaper for short runs), output at log-spaced times (``ts``), and stop early through a
diffrax ``Event`` once ``||∇L|| < grad_tol`` (converged); saved values after the stop repeat the final state.
``gradient_flow_batch`` runs many initializations (seeds × init scales) in one compiled, vmapped call.

A solve that does not reach ``t1`` (``max_steps`` exhausted, step size collapsed, non-finite values) never returns
plausible numbers: by default (``on_failure="raise"``) it raises :class:`SolveError` naming the time reached (under
an outer ``jax.jit`` through ``equinox.error_if``); with ``on_failure="flag"`` the result has ``solved=False``
and NaN at every save time after the failure. Default tolerances follow the dtype of ``params0``: ``rtol=1e-7,
atol=1e-9`` in float64, ``rtol=1e-4, atol=1e-6`` in float32 (the implicit solver cannot meet float64 tolerances
in single precision: with them it stalled and, before, returned the stalled state as if it were the answer).

Precision is chosen per call: ``dtype="float64"`` (or ``jnp.float64``) solves in double precision without the
global ``jax_enable_x64`` flag: the call runs inside ``jax.enable_x64(True)``, casts the floating-point leaves of
the initial params (and the save times) to float64, and returns the :class:`FlowResult` as NumPy float64 arrays so
the precision survives outside the call (JAX would round float64 arrays back to float32 with the flag off).
Arrays the loss closes over keep their own precision: keep data as NumPy float64 arrays (``np.asarray``), which
the solve then reads in float64. ``dtype="float32"`` forces single precision; ``dtype=None`` (default) follows the
params as given. One caveat: JAX and Equinox cache the conversion of closed-over NumPy arrays by object, so the
same array objects cannot serve a float32 and then a float64 call in one process (a ``TypeError`` says so): give
each precision its own arrays (``X.copy()``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxkit._callables import as_pytree
from jaxkit._typing import Array, ArrayInput, Float, PRNGKey, Scalar
from jaxkit._validate import (
    check_choice,
    check_int,
    check_key,
    check_positive,
    check_size,
    error_if_invalid,
    library_errors,
)

__all__ = [
    "FlowResult",
    "SolveError",
    "gradient_descent",
    "gradient_flow",
    "gradient_flow_batch",
    "log_times",
]

_SolverState = TypeVar("_SolverState")
"""The state type of the diffrax solver passed as ``solver`` (each solver has its own)."""


class SolveError(RuntimeError):
    """A gradient flow / descent did not reach its final time (``max_steps``, step-size collapse, NaN/inf)."""


class FlowResult(NamedTuple):
    """Trajectory: ``ts`` (T,), ``params`` (pytree with a leading T axis), ``loss`` (T,), ``t_stop`` (time the run
    ended: the convergence event, ``t1``, or where a failed solve stopped), ``converged`` (the ``grad_tol`` event
    fired; always False without ``grad_tol``), ``solved`` (the run reached ``t1`` or the event; False only with
    ``on_failure="flag"``, and then the saves after ``t_stop`` are NaN)."""

    ts: Array
    params: Any
    loss: Array
    t_stop: Array
    converged: Array
    solved: Any = True


def log_times(t1: float, n: int = 200, t_min: float | None = None) -> Float[Array, " n"]:
    """``n`` save times: 0 followed by ``n−1`` log-spaced times from ``t_min`` (default ``t1·1e-4``) to ``t1``."""
    check_positive("t1", t1)
    check_int("n", n, minimum=2)
    check_size("n", 8 * n, hint=f"{n} save times")
    t_min = t1 * 1e-4 if t_min is None else t_min
    check_positive("t_min", t_min)
    t1, t_min = float(t1), float(t_min)
    if t_min >= t1:
        raise ValueError(f"t_min: expected a value < t1={t1}, received {t_min}")
    return jnp.concatenate([jnp.zeros(1), jnp.geomspace(t_min, t1, n - 1)])


def _solver(solver: diffrax.AbstractSolver) -> diffrax.AbstractSolver:
    if not isinstance(solver, diffrax.AbstractSolver):
        raise TypeError(
            f"solver: expected a diffrax solver (e.g. diffrax.Kvaerno5(), diffrax.Tsit5()), received "
            f"{type(solver).__name__} {solver!r}"[:200]
        )
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
    converged = sol.result == diffrax.RESULTS.event_occurred
    solved = (sol.result == diffrax.RESULTS.successful) | converged
    after = ts > t_stop

    def fill(y, f):
        mask = after.reshape((-1,) + (1,) * (f.ndim - 1))
        return jnp.where(
            mask, jnp.where(solved, f, jnp.nan), y
        )  # after a failure: NaN, never a plausible value

    params = jax.tree.map(fill, ys_ts, ys_end)
    loss = jax.vmap(loss_fn)(params)
    return FlowResult(ts, params, loss, t_stop, converged, solved)


def _tolerances(dtype: Any, rtol: float | None, atol: float | None) -> tuple[float, float]:
    single = jnp.finfo(dtype).bits < 64
    rtol = (1e-4 if single else 1e-7) if rtol is None else rtol
    atol = (1e-6 if single else 1e-9) if atol is None else atol
    check_positive("rtol", rtol)
    check_positive("atol", atol)
    return float(rtol), float(atol)


_MAX_STEPS = 2**31 - 1


def _check_flow_args(ts: Any, tau: float, grad_tol: float, max_steps: int, on_failure: str) -> Array:
    check_positive("tau", tau)
    check_positive("grad_tol", grad_tol, strict=False)
    check_int("max_steps", max_steps, minimum=1)
    if max_steps > _MAX_STEPS:
        raise ValueError(
            f"max_steps: expected an integer <= {_MAX_STEPS} (diffrax counts steps in int32), received {max_steps}"
        )
    check_choice("on_failure", on_failure, ("raise", "flag"))
    ts = jnp.asarray(ts)
    if not jnp.issubdtype(ts.dtype, jnp.floating):
        ts = ts.astype(jnp.result_type(float))
    if ts.ndim != 1 or ts.shape[0] < 2:
        raise ValueError(f"ts: expected a 1D array of at least 2 save times, received shape {ts.shape}")
    if not isinstance(ts, jax.core.Tracer):
        tn = np.asarray(ts)
        if not np.all(np.isfinite(tn)):
            raise ValueError("ts: expected finite save times, received NaN/inf")
        if not np.all(np.diff(tn) > 0):
            raise ValueError("ts: expected strictly increasing save times")
    return ts


def _check_params(name: str, params: Any) -> Any:
    leaves = jax.tree.leaves(params)
    if not leaves:
        raise ValueError(f"{name}: expected a non-empty params pytree")
    dtypes = [
        leaf.dtype if isinstance(leaf, jax.ShapeDtypeStruct) else jnp.result_type(leaf) for leaf in leaves
    ]
    for leaf, dtype in zip(leaves, dtypes):
        if not jnp.issubdtype(dtype, jnp.floating):
            raise TypeError(f"{name}: expected floating-point leaves, received dtype {dtype}")
        if not isinstance(leaf, jax.core.Tracer | jax.ShapeDtypeStruct) and not np.all(
            np.isfinite(np.asarray(leaf))
        ):
            raise ValueError(f"{name}: expected finite values, received NaN/inf")
    return jnp.result_type(*dtypes)


def _precision(dtype: Any) -> Any:
    """``None`` or the requested float dtype (float32 / float64), validated."""
    if dtype is None:
        return None
    try:
        dt = np.dtype(dtype) if isinstance(dtype, str | type | np.dtype) else None
    except TypeError:
        dt = None
    if dt is None or dt.name not in ("float32", "float64"):
        raise ValueError(f"dtype: expected None, 'float32' or 'float64', received {dtype!r}")
    return dt


def _is_f64(dt: Any) -> bool:
    return dt is not None and dt == np.dtype(np.float64)  # (np.dtype(...) == None is True: test None first)


_MIXED = (
    "a float32 and a float64 call closed over the same NumPy arrays (JAX and Equinox cache their conversion "
    "by object): give each precision its own arrays, e.g. X.copy()"
)


@contextlib.contextmanager
def _x64_scope(dt: Any) -> Any:
    """``jax.enable_x64(True)`` for a float64 call (else nothing); turns the dtype clash of data reused across
    precisions into an error that says what to change."""
    with jax.enable_x64(True) if _is_f64(dt) else contextlib.nullcontext():
        try:
            yield
        except TypeError as e:
            if "requires arguments to have the same dtypes" in str(e):
                raise TypeError(f"dtype={None if dt is None else dt.name}: {_MIXED} ({e})") from e
            raise


def _cast_tree(tree: Any, dt: Any) -> Any:
    """Floating-point leaves of ``tree`` cast to ``dt`` (other leaves untouched)."""
    if dt is None:
        return tree

    def cast(x):
        if isinstance(x, jax.ShapeDtypeStruct) or not jnp.issubdtype(jnp.result_type(x), jnp.floating):
            return x
        return jnp.asarray(x, dt)

    return jax.tree.map(cast, tree)


@functools.lru_cache(maxsize=64)
def _cast_init(init_fn: Callable, dt: Any) -> Callable:
    """``init_fn`` with its floating-point leaves cast to ``dt`` (cached: the same wrapper for the same
    ``init_fn``, so the compiled batch is reused across calls)."""

    def init(key, scale):
        return _cast_tree(init_fn(key, scale), dt)

    return init


def _to_numpy(out: FlowResult, dt: Any) -> FlowResult:
    """A float64 result as NumPy arrays (keeps float64 outside the x64 scope); otherwise unchanged."""
    if not _is_f64(dt):
        return out
    return jax.tree.map(np.asarray, out)


@library_errors
def gradient_flow(
    loss_fn: Callable[..., Scalar],
    params0: object,
    ts: Float[Array, " T"] | ArrayInput,
    *,
    tau: float = 1.0,
    solver: diffrax.AbstractSolver[_SolverState] = diffrax.Kvaerno5(),
    rtol: float | None = None,
    atol: float | None = None,
    grad_tol: float = 0.0,
    max_steps: int = 100_000,
    on_failure: Literal["raise", "flag"] = "raise",
    dtype: Any = None,  # Any: checked at run time (None, "float32", "float64" or a float dtype; else ValueError)
) -> FlowResult:
    """Exact gradient flow ``τ dθ/dt = −∇L(θ)`` from ``params0`` saved at ``ts`` (e.g. :func:`log_times`).

    ``grad_tol > 0`` adds a diffrax ``Event`` that stops the solve once ``||∇L||₂ < grad_tol``. The call is
    jit-compiled; ``loss_fn`` must be a pure function of the params (close over the data). ``rtol``/``atol``
    default to ``1e-7``/``1e-9`` in float64 and ``1e-4``/``1e-6`` in float32. ``dtype="float64"`` solves in
    double precision for this call only (no global ``jax_enable_x64``; the result comes back as NumPy float64
    arrays; see the module docstring), ``"float32"`` in single precision, ``None`` follows ``params0``. ``solver`` is any
    ``diffrax.AbstractSolver`` (adaptive: the step size is PID-controlled to ``rtol``/``atol``).

    Raises:
        SolveError: (``on_failure="raise"``, the default) the solve stopped before ``ts[-1]`` (``max_steps``
            reached, step size collapsed, NaN/inf). With ``on_failure="flag"`` the result carries
            ``solved=False`` and NaN after ``t_stop`` instead.
    """
    dt = _precision(dtype)
    with _x64_scope(dt):
        if dt is not None:
            ts = np.asarray(ts, dt) if not isinstance(ts, jax.core.Tracer) else ts.astype(dt)
        ts = _check_flow_args(ts, tau, grad_tol, max_steps, on_failure)
        params0 = _cast_tree(params0, dt)
        p_dtype = _check_params("params0", params0)
        ts = ts.astype(jnp.promote_types(ts.dtype, p_dtype))  # float32 save times, float64 params: float64
        rtol, atol = _tolerances(ts.dtype, rtol, atol)
        loss_fn = as_pytree(loss_fn, params0, name="loss_fn")  # traced each call: its arrays are never stale
        out = _jit_flow(loss_fn, params0, ts, tau, _solver(solver), rtol, atol, grad_tol, max_steps)
        if on_failure == "raise" and not isinstance(out.solved, jax.core.Tracer) and not np.all(out.solved):
            _refuse_non_finite_start(loss_fn, params0)
        return _to_numpy(_check_solved(out, on_failure, max_steps, ts), dt)


def _refuse_non_finite_start(loss_fn: Callable[[Any], Scalar], params0: Any) -> None:
    """A failed solve whose cause is the start itself: a non-finite loss or gradient at ``params0`` (no step size
    helps; "raise max_steps" would mislead). Raises ``ValueError`` naming ``loss_fn``; returns otherwise."""
    value, grad = jax.value_and_grad(loss_fn)(params0)
    bad_grad = not all(bool(jnp.all(jnp.isfinite(g))) for g in jax.tree_util.tree_leaves(grad))
    if not bool(jnp.isfinite(value)) or bad_grad:
        what = (
            f"the loss is {float(value)}" if not bool(jnp.isfinite(value)) else "its gradient is not finite"
        )
        raise ValueError(
            f"loss_fn: at params0 {what}, so the flow cannot start (expected a finite loss and gradient); check "
            "loss_fn and params0 (e.g. a log or division at the initial point)"
        )


def _check_solved(out: FlowResult, on_failure: str, max_steps: int, ts: Array) -> FlowResult:
    if on_failure == "flag":
        return out
    hint = (
        f"raise max_steps (now {max_steps}), loosen rtol/atol, or use solver=diffrax.Kvaerno5() for stiff problems; "
        "pass on_failure='flag' to get the partial trajectory (NaN after the failure) instead"
    )
    if isinstance(out.solved, jax.core.Tracer):
        return error_if_invalid(out, ~out.solved, f"gradient_flow: the solve stopped before t1; {hint}")
    solved = np.asarray(out.solved)
    if not np.all(solved):
        t_stop = np.asarray(out.t_stop)
        where = (
            f"at t = {float(t_stop):.6g} of t1 = {float(ts[-1]):.6g}"
            if solved.ndim == 0
            else f"in {int(solved.size - solved.sum())} of {solved.size} runs (earliest stop t = "
            f"{float(np.min(t_stop[~solved])):.6g} of t1 = {float(ts[-1]):.6g})"
        )
        raise SolveError(f"gradient_flow: the solve stopped {where}; {hint}")
    return out


_jit_flow = jax.jit(_flow_core, static_argnums=(3, 4, 5, 6, 7, 8))


@library_errors
def gradient_flow_batch(
    loss_fn: Callable[..., Scalar],
    init_fn: Callable[[PRNGKey, Scalar], object],
    keys: Array,
    scales: Float[Array, " S"] | ArrayInput,
    ts: Float[Array, " T"] | ArrayInput,
    *,
    tau: float = 1.0,
    solver: diffrax.AbstractSolver[_SolverState] = diffrax.Kvaerno5(),
    rtol: float | None = None,
    atol: float | None = None,
    grad_tol: float = 0.0,
    max_steps: int = 100_000,
    on_failure: Literal["raise", "flag"] = "raise",
    dtype: Any = None,  # Any: checked at run time (None, "float32", "float64" or a float dtype; else ValueError)
) -> FlowResult:
    """Gradient flows for every (seed, init scale) pair in one compiled, vmapped call.

    ``init_fn(key, scale) -> params``. Returns a :class:`FlowResult` whose arrays carry leading axes
    ``(n_seeds, n_scales)``. Tolerances and ``on_failure`` as in :func:`gradient_flow` (one failed run raises
    :class:`SolveError`, naming how many failed). ``dtype="float64"`` runs ``init_fn`` and the solves in double
    precision for this call only (as in :func:`gradient_flow`).
    """
    dt = _precision(dtype)
    with _x64_scope(dt):
        return _gradient_flow_batch(
            loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps, on_failure, dt
        )


def _gradient_flow_batch(
    loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps, on_failure, dt
) -> FlowResult:
    if dt is not None:
        ts = np.asarray(ts, dt) if not isinstance(ts, jax.core.Tracer) else ts.astype(dt)
        init_fn = _cast_init(init_fn, dt)
    ts = _check_flow_args(ts, tau, grad_tol, max_steps, on_failure)
    scales = jnp.asarray(scales, dt) if dt is not None else jnp.asarray(scales)
    if scales.ndim != 1 or scales.shape[0] < 1:
        raise ValueError(
            f"scales: expected a non-empty 1D array of init scales, received shape {scales.shape}"
        )
    if not isinstance(scales, jax.core.Tracer) and not bool(jnp.all(jnp.isfinite(scales) & (scales > 0))):
        raise ValueError(f"scales: expected finite init scales > 0, received {np.asarray(scales).tolist()}")
    if np.ndim(keys) < 1 or np.shape(keys)[0] < 1:
        raise ValueError(f"keys: expected a non-empty batch of PRNG keys, received shape {np.shape(keys)}")
    check_key("keys", keys)
    example = jax.eval_shape(init_fn, keys[0], scales[0])
    dtype = _check_params("init_fn(keys[0], scales[0])", example)
    init_fn = as_pytree(init_fn, keys[0], scales[0], name="init_fn")  # both traced each call: never stale
    loss_fn = as_pytree(loss_fn, example, name="loss_fn")
    ts = ts.astype(jnp.promote_types(ts.dtype, dtype))
    rtol, atol = _tolerances(ts.dtype, rtol, atol)
    solver = _solver(solver)
    out = _jit_batch(loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps)
    return _to_numpy(_check_solved(out, on_failure, max_steps, ts), dt)


def _batch_core(loss_fn, init_fn, keys, scales, ts, tau, solver, rtol, atol, grad_tol, max_steps):
    def one(key, scale):
        return _flow_core(loss_fn, init_fn(key, scale), ts, tau, solver, rtol, atol, grad_tol, max_steps)

    return jax.vmap(lambda k: jax.vmap(lambda s: one(k, s))(scales))(keys)


_jit_batch = jax.jit(_batch_core, static_argnums=(5, 6, 7, 8, 9, 10))


@library_errors
def gradient_descent(
    loss_fn: Callable[..., Scalar],
    params0: object,
    lr: float,
    n_steps: int,
    *,
    save_every: int = 1,
    batch_fn: Callable[[PRNGKey], object] | None = None,
    key: PRNGKey | None = None,
    on_failure: Literal["raise", "flag"] = "raise",
    dtype: Any = None,  # Any: checked at run time (None, "float32", "float64" or a float dtype; else ValueError)
) -> FlowResult:
    """Discrete (S)GD ``θ ← θ − η ∇L(θ)`` (optax.sgd) for ``n_steps`` steps, saving every ``save_every`` steps.

    Full batch: ``loss_fn(params)``. SGD: pass ``batch_fn(key) -> batch`` and ``key``; each step then uses
    ``loss_fn(params, batch_fn(fresh key))`` and the saved loss is evaluated on the fixed batch ``batch_fn(key)``.
    ``ts`` in the result are step counts (compare with a flow of ``tau = 1/lr``). ``dtype="float64"`` iterates
    in double precision for this call only (as in :func:`gradient_flow`; NumPy float64 result).

    Raises:
        SolveError: (``on_failure="raise"``) the iterates diverged (a saved loss or parameter is NaN/inf), naming
            the first such step; with ``on_failure="flag"`` the result has ``solved=False`` instead.
    """
    check_positive("lr", lr)
    check_int("n_steps", n_steps, minimum=1)
    if (
        n_steps > 2**31 - 1
    ):  # the step counter is int32; 1e12 used to fail deep in the jit call (OverflowError)
        raise ValueError(f"n_steps: expected at most 2**31 - 1 steps, received {n_steps}")
    check_int("save_every", save_every, minimum=1)
    check_choice("on_failure", on_failure, ("raise", "flag"))
    if n_steps % save_every:
        raise ValueError(f"save_every: expected a divisor of n_steps={n_steps}, received {save_every}")
    if batch_fn is not None and key is None:
        raise ValueError("key: SGD (batch_fn given) needs a PRNG key, received None")
    if key is not None:
        check_key("key", key)
    dt = _precision(dtype)
    with _x64_scope(dt):
        params0 = _cast_tree(params0, dt)
        _check_params("params0", params0)
        n_params = sum(int(np.size(leaf)) for leaf in jax.tree_util.tree_leaves(params0))
        n_saved = n_steps // save_every + 1
        check_size(
            "n_steps",
            n_saved * (n_params + 2) * (dt if dt is not None else np.dtype(np.float32)).itemsize,
            hint=f"{n_saved} saved iterates of {n_params} parameters; raise save_every to save fewer",
        )
        if batch_fn is not None:  # the user's functions traced each call: their arrays are never stale
            batch_fn = as_pytree(batch_fn, key, name="batch_fn")
            loss_fn = as_pytree(loss_fn, params0, jax.eval_shape(batch_fn, key), name="loss_fn")
        else:
            loss_fn = as_pytree(loss_fn, params0, name="loss_fn")
        out = _jit_gd(loss_fn, params0, lr, n_steps, save_every, batch_fn, key)
        out = _to_numpy(out, dt)
    if on_failure == "flag":
        return out
    if isinstance(out.solved, jax.core.Tracer):
        return error_if_invalid(out, ~out.solved, "gradient_descent: the iterates diverged (NaN/inf)")
    if not bool(out.solved):
        bad = (
            int(np.flatnonzero(~np.isfinite(np.asarray(out.loss)))[0])
            if not np.all(np.isfinite(np.asarray(out.loss)))
            else None
        )
        at = f"at step {int(out.ts[bad])}" if bad is not None else "(a parameter is NaN/inf)"
        raise SolveError(
            f"gradient_descent: the iterates diverged {at}; lower lr (now {lr}) or pass "
            "on_failure='flag' to get the trajectory"
        )
    return out


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
    finite = jnp.all(jnp.isfinite(loss))
    for leaf in jax.tree.leaves(params):
        finite &= jnp.all(jnp.isfinite(leaf))
    return FlowResult(
        ts.astype(loss.dtype), params, loss, jnp.asarray(float(n_steps)), jnp.asarray(False), finite
    )


_jit_gd = jax.jit(_gd_core, static_argnums=(2, 3, 4))
