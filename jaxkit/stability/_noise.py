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
* ``domain="tokens"``: ``x ∈ {0..V-1}ⁿ``; each token is kept with probability ``ρ`` and otherwise resampled
  uniformly from the vocabulary (``ρ ∈ [0, 1]``; ``V = 2`` recovers the Boolean case).

Facts used in the tests: ``Stab_ρ[sign⟨w,x⟩] = 1 - (2/π) arccos ρ`` (Sheppard), ``Stab_ρ[He_n(⟨w,x⟩)/√n!] = ρⁿ``
(``‖w‖ = 1``), ``Stab_1[f] = E[f²]``, ``Stab_ρ[χ_S] = ρ^{|S|}`` for parities, and for ``ρ ∈ [0, 1]``
``Stab_ρ[f] = Σ_k ρ^k W_k[f]`` is non-decreasing in ``ρ`` (Hermite / Fourier weights ``W_k ≥ 0``).

Estimator: for each of the ``N`` points ``x_i`` draw ``n_samples`` noisy copies; the per-point average of
``⟨f(x_i), f(y_ij)⟩`` is an i.i.d. unit over ``i`` and the standard error is its sample std / ``sqrt(N)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._validate import check_int, check_range

DOMAINS = ("gaussian", "boolean", "tokens")


class StabilityEstimate(NamedTuple):
    """``value`` = Stab_ρ[f] estimate, ``stderr`` its standard error, ``second_moment`` = E‖f(x)‖² on the same
    points (so ``value / second_moment`` is the normalised stability, 1 at ρ = 1)."""

    value: jax.Array
    stderr: jax.Array
    second_moment: jax.Array

    @property
    def normalized(self) -> jax.Array:
        return self.value / self.second_moment


def _flat_out(y: Any) -> jax.Array:
    return jnp.reshape(jnp.asarray(y), (-1,))


def _check_common(x: Any, rho: Any, n_samples: Any, domain: str, vocab_size: Any) -> None:
    if domain not in DOMAINS:
        raise ValueError(f"domain: expected one of {list(DOMAINS)}, received {domain!r}")
    lo = 0.0 if domain == "tokens" else -1.0
    check_range("rho", rho, lo, 1.0)
    check_int("n_samples", n_samples, minimum=2)
    shape = np.shape(x)
    if len(shape) < 1 or shape[0] < 2:
        raise ValueError(
            f"x: expected a batch of at least 2 input points with shape (N, ...), received shape {shape}"
        )
    if domain == "tokens":
        if vocab_size is None:
            raise ValueError("vocab_size: domain='tokens' needs the vocabulary size, received None")
        check_int("vocab_size", vocab_size, minimum=2)
        if not jnp.issubdtype(jnp.result_type(x), jnp.integer):
            raise TypeError(
                f"x: domain='tokens' needs integer token ids, received dtype {jnp.result_type(x)}"
            )
    elif not jnp.issubdtype(jnp.result_type(x), jnp.floating) and domain == "gaussian":
        raise TypeError(
            f"x: domain='gaussian' needs a floating-point array, received dtype {jnp.result_type(x)}"
        )


def correlated_copy(
    x: jax.Array,
    key: jax.Array,
    rho: float | jax.Array,
    *,
    domain: str = "gaussian",
    vocab_size: int | None = None,
    noise_scale: float | None = 1.0,
) -> jax.Array:
    """One ``ρ``-correlated copy of a single input ``x`` (see the module docstring for each domain)."""
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
        keep = jax.random.uniform(k1, x.shape) < rho
        fresh = jax.random.randint(k2, x.shape, 0, vocab_size, dtype=x.dtype)
        return jnp.where(keep, x, fresh)
    raise ValueError(f"domain: expected one of {list(DOMAINS)}, received {domain!r}")


def _noisy_copies(x, key, rho, n_samples, domain, vocab_size, noise_scale):
    """``n_samples`` correlated copies of every point: shape ``(N, n_samples, ...)``, drawn in one call."""
    shape = (x.shape[0], n_samples) + x.shape[1:]
    xb = x[:, None]
    if domain == "gaussian":
        z = jax.random.normal(key, shape, x.dtype)
        axes = tuple(range(2, len(shape)))
        scale = jnp.sqrt(jnp.mean(xb**2, axis=axes, keepdims=True)) if noise_scale is None else noise_scale
        return rho * xb + jnp.sqrt(jnp.maximum(1.0 - rho**2, 0.0)) * scale * z
    if domain == "boolean":
        keep = jax.random.uniform(key, shape) < (1.0 + rho) / 2.0
        return jnp.where(keep, xb, -xb)
    k1, k2 = jax.random.split(key)
    keep = jax.random.uniform(k1, shape) < rho
    fresh = jax.random.randint(k2, shape, 0, vocab_size, dtype=x.dtype)
    return jnp.where(keep, xb, fresh)


def _stability_core(f, x, key, rho, n_samples, domain, vocab_size, noise_scale):
    n = x.shape[0]
    y = _noisy_copies(x, key, rho, n_samples, domain, vocab_size, noise_scale)
    fx = jax.vmap(lambda v: _flat_out(f(v)))(x)
    fy = jax.vmap(lambda v: _flat_out(f(v)))(y.reshape((n * n_samples,) + x.shape[1:]))
    fy = fy.reshape(n, n_samples, -1)
    prods = jnp.mean(jnp.einsum("nso,no->ns", fy, fx), axis=1)
    sq = jnp.sum(fx * fx, axis=1)
    value = jnp.mean(prods)
    stderr = jnp.std(prods, ddof=1) / jnp.sqrt(n)
    return StabilityEstimate(value, stderr, jnp.mean(sq))


_stability_jit = jax.jit(_stability_core, static_argnums=(0, 4, 5, 6, 7))


def noise_stability(
    f: Callable[[jax.Array], Any],
    x: jax.Array,
    *,
    rho: float | int,
    key: jax.Array,
    n_samples: int = 8,
    domain: str = "gaussian",
    vocab_size: int | None = None,
    noise_scale: float | int | None = 1.0,
) -> StabilityEstimate:
    """Monte-Carlo estimate of ``Stab_ρ[f] = E⟨f(x), f(y)⟩`` over the points ``x`` (shape ``(N, ...)``).

    Args:
        f: maps ONE input (shape ``x.shape[1:]``) to an array (any shape; outputs are flattened and the inner
            product is summed over them). A function or an Equinox model; it is vmapped and jitted here.
        x: ``N >= 2`` input points (samples of the input distribution: ``N(0, I)`` draws for the Gaussian
            stability, ``±1`` vectors, or token ids).
        rho: correlation, in ``[-1, 1]`` (``[0, 1]`` for tokens).
        key: PRNG key for the noise.
        n_samples: noisy copies per point (>= 2).
        domain: ``"gaussian"``, ``"boolean"`` or ``"tokens"``.
        vocab_size: vocabulary size (``domain="tokens"`` only).
        noise_scale: Gaussian noise scale ``σ``; ``None`` = per-sample RMS of ``x``.

    Returns:
        :class:`StabilityEstimate` ``(value, stderr, second_moment)``.
    """
    _check_common(x, rho, n_samples, domain, vocab_size)
    if domain == "gaussian" and noise_scale is not None:
        check_range("noise_scale", noise_scale, 0.0, np.inf, closed=True)
    x = jnp.asarray(x)
    import equinox as eqx

    rho_arr = jnp.asarray(rho, jnp.float32)
    if isinstance(f, eqx.Module):  # trace the model's arrays instead of baking them in as constants
        params, static = eqx.partition(f, eqx.is_array)
        return _stability_module_jit(
            params, static, x, key, rho_arr, n_samples, domain, vocab_size, noise_scale
        )
    return _stability_jit(f, x, key, rho_arr, n_samples, domain, vocab_size, noise_scale)


def _stability_module_impl(params, static, x, key, rho, n_samples, domain, vocab_size, noise_scale):
    import equinox as eqx

    model = eqx.combine(params, static)
    return _stability_core(model, x, key, rho, n_samples, domain, vocab_size, noise_scale)


def _make_module_jit():
    import equinox as eqx

    @eqx.filter_jit
    def run(params, static, x, key, rho, n_samples, domain, vocab_size, noise_scale):
        return _stability_module_impl(params, static, x, key, rho, n_samples, domain, vocab_size, noise_scale)

    return run


_stability_module_jit = _make_module_jit()


# ------------------------------------------------------------------------------------------------- sensitivity


def _sens_core(f, x, key, n_samples, domain, vocab_size):
    n, length = x.shape[0], x.shape[1]

    def label(inp):
        out = _flat_out(f(inp))
        return jnp.argmax(out) if out.shape[0] > 1 else jnp.sign(out[0])

    def per_point(xi, ki):
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

    vals = jax.vmap(per_point)(x, jax.random.split(key, n))
    return jnp.mean(vals), jnp.std(vals, ddof=1) / jnp.sqrt(n)


_sens_jit = jax.jit(_sens_core, static_argnums=(0, 3, 4, 5))


def average_sensitivity(
    f: Callable[[jax.Array], Any],
    x: jax.Array,
    *,
    key: jax.Array,
    n_samples: int = 4,
    domain: str = "tokens",
    vocab_size: int | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Average sensitivity ``as(f) = E_x Σ_i P[label f(x) ≠ label f(x^{(i)})]`` and its standard error.

    ``x^{(i)}`` changes position ``i`` only: a flipped sign (``domain="boolean"``) or a uniformly random
    *different* token (``domain="tokens"``, ``n_samples`` replacement tokens per position). The label is the
    argmax of a vector output or the sign of a scalar one. ``x`` has shape ``(N, L)``. For a parity of ``k``
    Boolean inputs ``as = k``.
    """
    if domain not in ("boolean", "tokens"):
        raise ValueError(f"domain: expected 'boolean' or 'tokens', received {domain!r}")
    check_int("n_samples", n_samples, minimum=2 if domain == "tokens" else 1)
    shape = np.shape(x)
    if len(shape) != 2 or shape[0] < 2:
        raise ValueError(f"x: expected shape (N >= 2, L) of token/Boolean sequences, received shape {shape}")
    if domain == "tokens":
        if vocab_size is None:
            raise ValueError("vocab_size: domain='tokens' needs the vocabulary size, received None")
        check_int("vocab_size", vocab_size, minimum=2)
    x = jnp.asarray(x)
    import equinox as eqx

    if isinstance(f, eqx.Module):
        params, static = eqx.partition(f, eqx.is_array)
        return _sens_module(params, static, x, key, n_samples, domain, vocab_size)
    return _sens_jit(f, x, key, n_samples, domain, vocab_size)


def _make_sens_module():
    import equinox as eqx

    @eqx.filter_jit
    def run(params, static, x, key, n_samples, domain, vocab_size):
        return _sens_core(eqx.combine(params, static), x, key, n_samples, domain, vocab_size)

    return run


_sens_module = _make_sens_module()
