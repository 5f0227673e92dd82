"""The noise-stability regularizer: one extra forward pass on ``ρ``-correlated embeddings.

Haris, Zhang & Yoshida (ICLR 2026, arXiv:2602.08287) regularize transformers towards high noise stability. The
paper's exact penalty could not be retrieved offline, so this is our documented choice. For a model split at its
embeddings, ``f = from_embeddings``, and embeddings ``e`` of a batch, draw the ``ρ``-correlated copy
``ẽ = ρ e + sqrt(1-ρ²) σ z`` (``z ~ N(0, I)``, ``σ`` = per-sequence RMS of ``e``, so the
noise scales with the embeddings and shrinking them does not help) and penalize the *noise sensitivity*

$$
R_\\rho = \\tfrac12\\,\\mathrm{mean}\\,\\|f(e) - f(\\tilde e)\\|^2 ,
$$

which for an exchangeable pair equals ``E‖f‖² - Stab_ρ[f]`` (per output coordinate): lowering it raises the
stability relative to the output scale. The loss is ``task + strength · R_ρ``; logits are compared at the
``positions`` the task scores (all by default). ``strength = 0`` skips the extra pass altogether, so training is
bit-identical to the unregularized baseline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from .._validate import check_range
from ._noise import correlated_copy


def noise_stability_penalty(
    f: Callable[[jax.Array], jax.Array],
    emb: jax.Array,
    key: jax.Array,
    rho: float | int,
    *,
    clean: jax.Array | None = None,
    positions: Any = None,
) -> jax.Array:
    """``½ mean ‖f(e) - f(ẽ)‖²`` over a batch of embeddings ``emb`` (``(B, T, d)``); ``f`` acts on one ``(T, d)``.

    ``clean`` (optional) are the already computed ``f(emb)`` outputs, so only the noisy pass is extra.
    """
    keys = jax.random.split(key, emb.shape[0])
    noisy = jax.vmap(lambda e, k: correlated_copy(e, k, rho, noise_scale=None))(emb, keys)
    out_noisy = jax.vmap(f)(noisy)
    out_clean = jax.vmap(f)(emb) if clean is None else clean
    if positions is not None:
        out_noisy, out_clean = out_noisy[:, positions], out_clean[:, positions]
    return 0.5 * jnp.mean((out_clean - out_noisy) ** 2)


def cross_entropy(logits: jax.Array, labels: jax.Array) -> jax.Array:
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def regularized_loss(
    model: Any,
    tokens: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    *,
    strength: float | int | jax.Array,
    rho: float | int,
    positions: Any = None,
) -> tuple[jax.Array, dict]:
    """Cross-entropy of ``model`` (``embed`` / ``from_embeddings`` split) plus ``strength · R_ρ``.

    ``tokens`` ``(B, T)``; ``labels`` match ``logits[:, positions]`` (``(B,)`` for one position, ``(B, T)`` for
    all). Returns ``(loss, {"task": ..., "penalty": ...})``; with a Python ``strength == 0`` the penalty is not
    computed (an array ``strength``, e.g. a schedule, always computes it).
    """
    emb = jax.vmap(model.embed)(tokens)
    logits = jax.vmap(model.from_embeddings)(emb)
    scored = logits if positions is None else logits[:, positions]
    task = cross_entropy(scored, labels)
    if isinstance(strength, int | float) and strength == 0:
        return task, {"task": task, "penalty": jnp.zeros_like(task)}
    pen = noise_stability_penalty(model.from_embeddings, emb, key, rho, clean=logits, positions=positions)
    return task + strength * pen, {"task": task, "penalty": pen}


def make_loss_fn(*, strength: float | int, rho: float | int, positions: Any = None) -> Callable:
    """``loss_fn(model, batch, key) -> (loss, aux)`` for :func:`jaxkit.train.fit` (``has_aux=True``), with
    ``batch = (tokens, labels)``. Validates ``strength >= 0`` and ``ρ ∈ [-1, 1]``."""
    check_range("rho", rho, -1.0, 1.0)
    check_range("strength", strength, 0.0, float("inf"))

    def loss_fn(model, batch, key):
        tokens, labels = batch
        return regularized_loss(model, tokens, labels, key, strength=strength, rho=rho, positions=positions)

    return loss_fn


def embedding_stability(
    model: Any,
    tokens: jax.Array,
    key: jax.Array,
    *,
    rho: float | int,
    n_samples: int = 1,
    positions: Any = None,
) -> jax.Array:
    """Normalised noise stability of the logits under ``ρ``-correlated embedding noise (traceable, for logging):
    ``Σ⟨f(e), f(ẽ)⟩ / Σ‖f(e)‖²`` with logits centred over the vocabulary, ``σ`` = per-sequence RMS."""
    emb = jax.vmap(model.embed)(tokens)

    def centred(e):
        out = model.from_embeddings(e)
        out = out if positions is None else out[positions]
        return out - jnp.mean(out, axis=-1, keepdims=True)

    clean = jax.vmap(centred)(emb)
    num = 0.0
    for i in range(n_samples):
        keys = jax.random.split(jax.random.fold_in(key, i), emb.shape[0])
        noisy = jax.vmap(lambda e, k: correlated_copy(e, k, rho, noise_scale=None))(emb, keys)
        num = num + jnp.sum(clean * jax.vmap(centred)(noisy))
    return num / n_samples / jnp.sum(clean**2)
