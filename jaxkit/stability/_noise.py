"""Monte-Carlo estimators of noise stability and average sensitivity.

Noise stability (O'Donnell, *Analysis of Boolean Functions*, ch. 2 and 11; Haris, Zhang & Yoshida, "Noise
Stability of Transformer Models", ICLR 2026, arXiv:2602.08287) of ``f`` at correlation ``ρ``:

$$
\\mathrm{Stab}_\\rho[f] = \\mathbb{E}_{x,\\,y \\sim_\\rho x}\\,\\langle f(x), f(y)\\rangle ,
$$

where ``y`` is a ``ρ``-correlated copy of ``x`` that perturbs **all input coordinates at once**:

* ``domain="gaussian"``: ``y = ρ x + sqrt(1-ρ²) σ z`` with ``z ~ N(0, I)`` (Ornstein–Uhlenbeck noise). With
  ``x ~ N(0, I)`` and ``σ = 1`` this is the Gaussian noise stability (``ρ ∈ [-1, 1]``); ``noise_scale=None``
  uses ``σ`` = the per-sample RMS of ``x`` (for embeddings, which are not unit-variance; differentiable).
* ``domain="boolean"``: ``x ∈ {-1, +1}ⁿ``; each coordinate is kept with probability ``(1+ρ)/2`` and flipped
  otherwise, so ``E[x_i y_i] = ρ`` (``ρ ∈ [-1, 1]``).
* ``domain="tokens"``: ``x ∈ {0..V-1}ⁿ``; the paper's token-resampling noise (Haris et al., Def. 6.1): each
  token is kept with probability ``(1+ρ)/2`` and otherwise redrawn uniformly from the vocabulary (``ρ ∈ [-1, 1]``),
  so ``P[y_i = x_i] = (1+ρ)/2 + (1-ρ)/(2V)``.

Facts used in the tests: ``Stab_ρ[sign⟨w,x⟩] = 1 - (2/π) arccos ρ`` (Sheppard), ``Stab_ρ[He_n(⟨w,x⟩)/√n!] = ρⁿ``
(``‖w‖ = 1``), ``Stab_1[f] = E[f²]``, ``Stab_ρ[χ_S] = ρ^{|S|}`` for parities, and for ``ρ ∈ [0, 1]``
``Stab_ρ[f] = Σ_k ρ^k W_k[f]`` is non-decreasing in ``ρ`` (Hermite / Fourier weights ``W_k ≥ 0``).

Estimator: for each of the ``N`` points ``x_i`` draw ``n_samples`` noisy copies; the per-point average of
``⟨f(x_i), f(y_ij)⟩`` is an i.i.d. unit over ``i`` and the standard error is its sample std / ``sqrt(N)``. The
noise of point ``i`` comes from ``split(key, N)[i]``, so ``chunk_size`` (points per ``lax.map`` step, bounded
memory ``∝ chunk_size · n_samples``) gives the same numbers as one vectorized pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from jaxkit._typing import ArrayInput
from jaxkit._validate import traced_check

from .._callables import as_pytree
from .._validate import (
    check_finite,
    check_int,
    check_key,
    check_range,
    check_size,
    finite_checked,
    is_tracer,
    library_errors,
)
from ._checks import check_rho, check_token_ids, rho_checked

DOMAINS = ("gaussian", "boolean", "tokens")


class StabilityEstimate(NamedTuple):
    """``value`` = Stab_ρ[f] estimate, ``stderr`` its standard error, ``second_moment`` = E‖f(x)‖² on the same
    points (so ``value / second_moment`` is the normalized stability, 1 at ρ = 1).

    A record: its fields are not checked (docs/contracts.md, documented exceptions). The estimators that return
    it refuse NaN/inf from ``f`` unless called with ``check_finite=False``, where the estimate is NaN."""

    value: jax.Array
    stderr: jax.Array
    second_moment: jax.Array

    @property
    def normalized(self) -> jax.Array:
        return self.value / self.second_moment


def _flat_out(y: Any) -> jax.Array:
    return jnp.reshape(jnp.asarray(y), (-1,))


def _as_points(x: Any, domain: str) -> jax.Array:
    """Accept lists / NumPy / JAX arrays; check dtype, finiteness and the domain's values; return a JAX array."""
    if is_tracer(x):  # inside a caller's jit: static checks only
        if x.ndim < 1 or x.shape[0] < 2:
            raise ValueError(
                f"x: expected a batch of at least 2 input points with shape (N, ...), received {x.shape}"
            )
        return x
    if isinstance(x, jax.Array):
        arr = np.asarray(x)
    else:
        try:
            arr = np.asarray(x)
        except ValueError as e:  # ragged nested lists
            raise ValueError(
                f"x: expected a rectangular array of points, received a ragged sequence ({e})"
            ) from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"x: expected a numeric array of points, received dtype {arr.dtype}")
    if arr.ndim < 1 or arr.shape[0] < 2 or arr.size == 0:
        raise ValueError(
            f"x: expected a batch of at least 2 input points with shape (N, ...), received shape {arr.shape}"
        )
    check_finite("x", arr)
    if domain == "boolean" and not np.all(np.abs(arr) == 1):
        raise ValueError("x: domain='boolean' expects entries in {-1, +1}, received other values")
    if domain == "gaussian" and arr.dtype.kind != "f":
        raise TypeError(f"x: domain='gaussian' needs a floating-point array, received dtype {arr.dtype}")
    if domain == "tokens" and arr.dtype.kind not in "iu":
        raise TypeError(f"x: domain='tokens' needs integer token ids, received dtype {arr.dtype}")
    return jnp.asarray(arr)


def _check_common(rho: Any, n_samples: Any, domain: str, vocab_size: Any, chunk_size: Any) -> None:
    if domain not in DOMAINS:
        raise ValueError(f"domain: expected one of {list(DOMAINS)}, received {domain!r}")
    check_rho(rho)
    check_int("n_samples", n_samples, minimum=2)
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, minimum=1)
    if domain == "tokens":
        if vocab_size is None:
            raise ValueError("vocab_size: domain='tokens' needs the vocabulary size, received None")
        check_int("vocab_size", vocab_size, minimum=2)


def correlated_copy(
    x: jax.Array,
    key: jax.Array,
    rho: float | jax.Array,
    *,
    domain: str = "gaussian",
    vocab_size: int | None = None,
    noise_scale: float | None = 1.0,
) -> jax.Array:
    """One ``ρ``-correlated copy of a single input ``x`` (see the module docstring for each domain).

    ``x`` must be finite (``ValueError``; under ``jax.jit``/``vmap`` a run-time error through
    ``equinox.error_if``) and ``noise_scale`` a finite value ``>= 0`` or ``None``."""
    if noise_scale is not None and not is_tracer(noise_scale):
        check_range("noise_scale", noise_scale, 0.0, np.inf)
    x = finite_checked("x", jnp.asarray(x) if not is_tracer(x) else x)
    return _correlated_copy(x, key, rho, domain=domain, vocab_size=vocab_size, noise_scale=noise_scale)


def _correlated_copy(
    x: jax.Array,
    key: jax.Array,
    rho: float | jax.Array,
    *,
    domain: str = "gaussian",
    vocab_size: int | None = None,
    noise_scale: float | None = 1.0,
) -> jax.Array:
    """:func:`correlated_copy` without the checks of ``x`` and ``noise_scale`` (the estimators check their points
    once, not every noisy copy)."""
    rho = rho_checked(rho)  # a traced rho: a run-time check under jit
    if domain == "tokens":
        check_int("vocab_size", vocab_size, minimum=1)
        if not is_tracer(x):
            check_token_ids("x", x, vocab_size)
    if domain == "gaussian":
        z = jax.random.normal(key, x.shape, x.dtype)
        if noise_scale is None:
            scale = jnp.sqrt(jnp.mean(x**2))
        else:
            scale = noise_scale
        return rho * x + jnp.sqrt(jnp.maximum(1.0 - rho**2, 0.0)) * scale * z
    if domain == "boolean":
        keep = jax.random.uniform(key, x.shape) < (1.0 + rho) / 2.0
        return jnp.where(keep, x, -x)
    if domain == "tokens":
        k1, k2 = jax.random.split(key)
        keep = jax.random.uniform(k1, x.shape) < (1.0 + rho) / 2.0
        fresh = jax.random.randint(k2, x.shape, 0, vocab_size, dtype=x.dtype)
        return jnp.where(keep, x, fresh)
    raise ValueError(f"domain: expected one of {list(DOMAINS)}, received {domain!r}")


def _map_points(fn: Callable, args: Any, chunk_size: int | None) -> Any:
    """``vmap`` of ``fn`` over the leading axis, or ``lax.map`` in chunks of ``chunk_size`` points."""
    if chunk_size is None:
        return jax.vmap(fn)(args)
    return jax.lax.map(fn, args, batch_size=chunk_size)


def _stability_core(f, x, key, rho, n_samples, domain, vocab_size, noise_scale, chunk_size):
    n = x.shape[0]

    def per_point(args):
        xi, ki = args
        ys = jax.vmap(
            lambda k: _correlated_copy(
                xi, k, rho, domain=domain, vocab_size=vocab_size, noise_scale=noise_scale
            )
        )(jax.random.split(ki, n_samples))
        fx = _flat_out(f(xi))
        fy = jax.vmap(lambda v: _flat_out(f(v)))(ys)
        return jnp.mean(fy @ fx), jnp.sum(fx * fx)

    prods, sq = _map_points(per_point, (x, jax.random.split(key, n)), chunk_size)
    value = jnp.mean(prods)
    stderr = jnp.std(prods, ddof=1) / jnp.sqrt(n)
    n_bad = jnp.sum(~(jnp.isfinite(prods) & jnp.isfinite(sq)))
    return StabilityEstimate(value, stderr, jnp.mean(sq)), n_bad


@library_errors
def noise_stability(
    f: Callable[[jax.Array], jax.Array],
    x: ArrayInput,
    *,
    rho: float | int | Float[Array, ""],
    key: jax.Array,
    n_samples: int = 8,
    domain: str = "gaussian",
    vocab_size: int | None = None,
    noise_scale: float | int | None = 1.0,
    chunk_size: int | None = None,
    check_finite: bool = True,
) -> StabilityEstimate:
    """Monte-Carlo estimate of ``Stab_ρ[f] = E⟨f(x), f(y)⟩`` over the points ``x`` (shape ``(N, ...)``).

    Args:
        f: maps ONE input (shape ``x.shape[1:]``) to an array (any shape; outputs are flattened and the inner
            product is summed over them). A function or an Equinox model; it is vmapped and jitted here.
        x: ``N >= 2`` input points (samples of the input distribution: ``N(0, I)`` draws for the Gaussian
            stability, ``±1`` vectors, or token ids).
        rho: correlation, in ``[-1, 1]`` (a traced scalar is checked at run time under ``jax.jit``).
        key: PRNG key for the noise.
        n_samples: noisy copies per point (>= 2).
        domain: ``"gaussian"``, ``"boolean"`` or ``"tokens"``.
        vocab_size: vocabulary size (``domain="tokens"`` only).
        noise_scale: Gaussian noise scale ``σ``; ``None`` = per-sample RMS of ``x``.
        chunk_size: points per ``lax.map`` step (bounded memory). ``None`` chooses it so that the noisy copies
            and outputs of one step stay under 256 MiB (``f``'s own intermediates scale with the
            chunk too: pass a smaller ``chunk_size`` for a large model). Same numbers for every chunk size.
        check_finite: raise if ``f`` returns NaN or inf on any point or noisy copy (a ``ValueError``; an Equinox
            runtime error under ``jit``). ``False`` skips the check (slightly faster); the estimate is then NaN.

    Returns:
        :class:`StabilityEstimate` ``(value, stderr, second_moment)``.
    """
    _check_common(rho, n_samples, domain, vocab_size, chunk_size)
    check_key("key", key)
    if domain == "gaussian" and noise_scale is not None:
        check_range("noise_scale", noise_scale, 0.0, np.inf, closed=True)
    x = _as_points(x, domain)
    # one point's noisy copies (and their keys) are the least that is held at once, whatever chunk_size is
    check_size("n_samples", 8 * (n_samples + 1) * max(1, int(np.prod(x.shape[1:]))))
    if domain == "tokens":
        check_token_ids("x", x, vocab_size)
    # a user's function is traced on every call (its arrays are arguments of the compiled code, never baked in
    # under the function's identity: changed weights give the new value)
    f = as_pytree(f, jax.ShapeDtypeStruct(x.shape[1:], x.dtype), name="f")
    if chunk_size is None:
        chunk_size = _auto_chunk(f, x, n_samples)
    args = (
        x,
        key,
        jnp.asarray(rho_checked(rho), jnp.float32),
        n_samples,
        domain,
        vocab_size,
        noise_scale,
        chunk_size,
    )
    params, static = eqx.partition(f, eqx.is_array)  # the arrays traced, not baked in as constants
    est, n_bad = _stability_module_jit(params, static, *args)
    if not check_finite:
        return est
    msg = (
        "f: returned NaN or inf on some points or their noisy copies; check f (or its parameters), or pass "
        "check_finite=False to skip this check"
    )
    if is_tracer(n_bad):
        return est._replace(value=traced_check(est.value, n_bad > 0, msg))
    if int(n_bad) > 0:
        raise ValueError(msg.replace("some points", f"{int(n_bad)} of {x.shape[0]} points"))
    return est


CHUNK_BYTES = 256 * 2**20


def _auto_chunk(f: Callable, x: Any, n_samples: int) -> int | None:
    """Points per ``lax.map`` step so that one step's noisy inputs and outputs fit in 256 MiB
    (``None`` = every point at once when they all fit)."""
    try:
        out = jax.eval_shape(f, jax.ShapeDtypeStruct(x.shape[1:], x.dtype))
        out_size = sum(int(np.prod(o.shape)) for o in jax.tree_util.tree_leaves(out))
    except (TypeError, ValueError, IndexError):  # the real call reports f's error
        out_size = 1
    per_point = 8 * (n_samples + 1) * (int(np.prod(x.shape[1:])) + out_size)
    chunk = max(1, CHUNK_BYTES // max(per_point, 1))
    return None if chunk >= x.shape[0] else int(chunk)


@eqx.filter_jit
def _stability_module_jit(
    params, static, x, key, rho, n_samples, domain, vocab_size, noise_scale, chunk_size
):
    model = eqx.combine(params, static)
    return _stability_core(model, x, key, rho, n_samples, domain, vocab_size, noise_scale, chunk_size)


# ------------------------------------------------------------------------------------------------- sensitivity


def _sens_core(f, x, key, n_samples, domain, vocab_size, chunk_size):
    n, length = x.shape[0], x.shape[1]

    def label(inp):
        out = _flat_out(f(inp))
        return jnp.argmax(out) if out.shape[0] > 1 else jnp.sign(out[0])

    def per_point(args):
        xi, ki = args
        base = label(xi)

        def per_pos(i, k):
            def one(kk):
                if domain == "boolean":
                    xj = xi.at[i].set(-xi[i])
                else:  # uniformly random *different* token
                    shift = jax.random.randint(kk, (), 1, vocab_size, dtype=xi.dtype)
                    xj = xi.at[i].set((xi[i] + shift) % vocab_size)
                return (label(xj) != base).astype(jnp.float32)

            return jnp.mean(jax.vmap(one)(jax.random.split(k, n_samples)))

        return jnp.sum(jax.vmap(per_pos)(jnp.arange(length), jax.random.split(ki, length)))

    vals = _map_points(per_point, (x, jax.random.split(key, n)), chunk_size)
    return jnp.mean(vals), jnp.std(vals, ddof=1) / jnp.sqrt(n)


@library_errors
def average_sensitivity(
    f: Callable[[jax.Array], jax.Array],
    x: ArrayInput,
    *,
    key: jax.Array,
    n_samples: int = 4,
    domain: str = "tokens",
    vocab_size: int | None = None,
    chunk_size: int | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Average sensitivity ``as(f) = E_x Σ_i P[label f(x) ≠ label f(x^{(i)})]`` and its standard error.

    ``x^{(i)}`` changes position ``i`` only: a flipped sign (``domain="boolean"``) or a uniformly random
    *different* token (``domain="tokens"``, ``n_samples`` replacement tokens per position). The label is the
    argmax of a vector output or the sign of a scalar one. ``x`` has shape ``(N, L)`` (list, NumPy or JAX). For a
    parity of ``k`` Boolean inputs ``as = k``. ``chunk_size``: points per ``lax.map`` step (bounded memory
    ``∝ chunk_size · L · n_samples``; ``None`` chooses it as :func:`noise_stability` does), same numbers for
    every chunk size.
    """
    if domain not in ("boolean", "tokens"):
        raise ValueError(f"domain: expected 'boolean' or 'tokens', received {domain!r}")
    check_key("key", key)
    check_int("n_samples", n_samples, minimum=2 if domain == "tokens" else 1)
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, minimum=1)
    if domain == "tokens":
        if vocab_size is None:
            raise ValueError("vocab_size: domain='tokens' needs the vocabulary size, received None")
        check_int("vocab_size", vocab_size, minimum=2)
    x = _as_points(x, domain)
    if x.ndim != 2:
        raise ValueError(
            f"x: expected shape (N >= 2, L) of token/Boolean sequences, received shape {x.shape}"
        )
    if domain == "tokens":
        check_token_ids("x", x, vocab_size)
    f = as_pytree(f, jax.ShapeDtypeStruct(x.shape[1:], x.dtype), name="f")  # traced on every call
    if chunk_size is None:
        chunk = _auto_chunk(f, x, n_samples * x.shape[1])
        chunk_size = chunk
    params, static = eqx.partition(f, eqx.is_array)
    return _sens_module(params, static, x, key, n_samples, domain, vocab_size, chunk_size)


@eqx.filter_jit
def _sens_module(params, static, x, key, n_samples, domain, vocab_size, chunk_size):
    return _sens_core(eqx.combine(params, static), x, key, n_samples, domain, vocab_size, chunk_size)
