"""The noise-stability regularizer of Haris, Zhang & Yoshida (ICLR 2026, arXiv:2602.08287, Def. 6.1).

**Token-resampling noise.** Each input coordinate ``Y_i`` of the noisy copy ``Y`` of ``X`` stays ``X_i`` with
probability $(1+\\rho)/2$ and is otherwise redrawn uniformly from the vocabulary $[U]$ (the redraw may hit
``X_i`` again), independently over coordinates, $\\rho \\in [-1, 1]$. Overall a token is unchanged with
probability

$$
P[Y_i = X_i] = \\frac{1+\\rho}{2} + \\frac{1-\\rho}{2U}
$$

(:func:`keep_probability`). For $U = 2$ and $\\pm 1$ coding this gives $E[X_i Y_i] = (1+\\rho)/2$, not the
$\\rho$ of the classical Boolean noise operator: we follow the paper's convention as stated.

**Agreement regularizer** (the default, ``method="agreement"``). With $M(X)$ the model's output distribution
(the softmax probabilities over the $C$ classes at the scored positions),

$$
R = (-1)^S \\sum_{i=1}^{C} M(X)_i\\, M(Y)_i , \\qquad S = 1 ,
$$

averaged over the batch (and scored positions); the training loss is $\\ell + \\gamma R$, one extra forward pass
on the noisy batch. $S = 1$ rewards agreement between the clean and the noisy prediction (the only setting the
paper tests). Gradients flow through both $M(X)$ and $M(Y)$ (the paper does not say otherwise);
``detach_clean=True`` stops the gradient through the clean branch $M(X)$ (an ablation).

**Alternative** (``method="gaussian_embedding_mse"``, our earlier construction, *not* the paper's): Gaussian
noise on the embeddings, $\\tilde e = \\rho e + \\sqrt{1-\\rho^2}\\,\\sigma z$ ($\\sigma$ = per-sequence RMS of $e$),
and the penalty $\\tfrac12\\,\\mathrm{mean}\\,\\|f(e) - f(\\tilde e)\\|^2$ on the logits
(:func:`gaussian_embedding_mse_penalty`), which for an exchangeable pair equals $E\\|f\\|^2 - \\mathrm{Stab}_\\rho[f]$.

With a Python ``gamma == 0`` the extra pass is skipped altogether, so training is bit-identical to the
unregularized baseline. An array ``gamma`` (e.g. one value per stacked model in a sweep) always runs the pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, Int

from jaxkit._typing import ArrayInput

from .._validate import (
    check_choice,
    check_int,
    check_key,
    check_size,
    finite_checked,
    is_tracer,
    traced_check,
)
from ._checks import check_gamma, check_rho, check_token_ids, rho_checked
from ._models import Transformer
from ._noise import _correlated_copy

Method = Literal["agreement", "gaussian_embedding_mse"]
METHODS = ("agreement", "gaussian_embedding_mse")


def keep_probability(rho: float | int, vocab_size: int) -> float:
    """$P[Y_i = X_i] = (1+\\rho)/2 + (1-\\rho)/(2U)$ under :func:`resample_tokens` (closed form)."""
    check_rho(rho)
    check_int("vocab_size", vocab_size, minimum=1)
    return (1.0 + rho) / 2.0 + (1.0 - rho) / (2.0 * vocab_size)


def _check_model_tokens(model: Any, tokens: Any) -> None:
    """Concrete ``tokens`` of a public entry point: a non-empty ``(B, T)`` batch whose ids lie in the model's
    vocabulary (a :class:`Transformer`; other models check their own inputs), refused eagerly here rather than by
    an Equinox runtime error from inside ``vmap`` or a NaN from an empty mean."""
    if is_tracer(tokens):
        return
    if 0 in np.shape(tokens):
        raise ValueError(
            f"tokens: expected a non-empty batch (B, T), received shape {tuple(np.shape(tokens))}"
        )
    embed = getattr(model, "tok_embed", None)
    if embed is not None:
        check_token_ids("tokens", tokens, embed.shape[0])


def _resample_core(tokens, key, rho, vocab_size, noise_mask):
    k_keep, k_new = jax.random.split(key)
    keep = jax.random.uniform(k_keep, tokens.shape) < (1.0 + rho) / 2.0
    if noise_mask is not None:
        keep = keep | ~noise_mask
    fresh = jax.random.randint(k_new, tokens.shape, 0, vocab_size, dtype=tokens.dtype)
    return jnp.where(keep, tokens, fresh)


def resample_tokens(
    tokens: ArrayInput,
    key: jax.Array,
    *,
    rho: float | int | Float[Array, ""],
    vocab_size: int,
    noise_mask: ArrayInput | None = None,
) -> Int[Array, "..."]:
    """A $\\rho$-correlated copy of ``tokens`` (any shape): each id is kept with probability $(1+\\rho)/2$, else
    redrawn uniformly from ``[0, vocab_size)``.

    ``noise_mask`` (bool, broadcastable to ``tokens``; e.g. ``[True, True, False]`` for ``[a, b, =]``) limits the
    noise to the input coordinates; masked-out positions are always kept. ``vocab_size`` is the size $U$ of the
    *input* alphabet that is resampled from (for modular addition the $K$ residues, not the ``=`` token).
    Traceable; the ids where noise applies are checked to lie in ``[0, vocab_size)`` (a ``ValueError`` on
    concrete input, an Equinox runtime error under ``jit``).
    """
    check_int("vocab_size", vocab_size, minimum=1)
    check_rho(rho)
    check_key("key", key)
    if not is_tracer(tokens):
        tokens = jnp.asarray(np.asarray(tokens))
    if not jnp.issubdtype(tokens.dtype, jnp.integer):
        raise TypeError(f"tokens: expected integer token ids, received dtype {tokens.dtype}")
    if vocab_size - 1 > jnp.iinfo(tokens.dtype).max:
        raise ValueError(
            f"vocab_size: expected at most {jnp.iinfo(tokens.dtype).max + 1} (token ids of dtype {tokens.dtype}), "
            f"received {vocab_size}"
        )
    if noise_mask is not None:
        noise_mask = jnp.asarray(noise_mask, bool)
        try:
            jnp.broadcast_shapes(noise_mask.shape, tokens.shape)
        except ValueError:
            raise ValueError(
                f"noise_mask: expected a shape broadcastable to tokens {tokens.shape}, received {noise_mask.shape}"
            ) from None
    if not is_tracer(tokens):
        sel = tokens if noise_mask is None else tokens[jnp.broadcast_to(noise_mask, tokens.shape)]
        check_token_ids("tokens", sel, vocab_size)
    else:
        bad = (tokens < 0) | (tokens >= vocab_size)
        if noise_mask is not None:
            bad = bad & noise_mask
        tokens = traced_check(tokens, bad, f"tokens: token ids outside the vocabulary [0, {vocab_size})")
    return _resample_core(tokens, key, rho_checked(rho), vocab_size, noise_mask)


def agreement_regularizer(
    probs_clean: Float[Array, "*batch classes"], probs_noisy: Float[Array, "*batch classes"], *, sign: int = 1
) -> Float[Array, ""]:
    """$R = (-1)^S \\sum_i M(X)_i M(Y)_i$ (``S = sign``), averaged over all leading (batch/position) axes.

    ``probs_*`` are probability vectors over the last axis (softmax outputs of the clean and the noisy input),
    checked (finite, non-negative, summing to 1) when concrete; traced inside a training loss, a NaN flows into
    the loss, where :func:`jaxkit.train.fit` reports it (its ``nonfinite`` policy).
    """
    if sign not in (0, 1):
        raise ValueError(f"sign: expected S = 0 or 1, received {sign!r}")
    if probs_clean.shape != probs_noisy.shape:
        raise ValueError(
            f"probs_noisy: expected the shape of probs_clean {probs_clean.shape}, received {probs_noisy.shape}"
        )
    for name, q in (("probs_clean", probs_clean), ("probs_noisy", probs_noisy)):
        if not is_tracer(q):  # traced (inside a training loss): NaN flows to the loss, which fit reports
            arr = np.asarray(q, dtype=float)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name}: expected finite probabilities, received NaN/inf entries")
            if arr.size and (arr.min() < -1e-6 or np.abs(arr.sum(-1) - 1).max() > 1e-3):
                raise ValueError(
                    f"{name}: expected probability vectors over the last axis (non-negative, summing to 1; "
                    "apply jax.nn.softmax to logits first), received entries summing to "
                    f"{float(arr.sum(-1).ravel()[0]):.4g}"
                )
    agree = jnp.mean(jnp.sum(probs_clean * probs_noisy, axis=-1))
    return -agree if sign == 1 else agree


def gaussian_embedding_mse_penalty(
    f: Callable[[jax.Array], jax.Array],
    emb: Float[Array, "batch seq d"],
    key: jax.Array,
    rho: float | int | Float[Array, ""],
    *,
    clean: jax.Array | None = None,
    positions: ArrayInput | None = None,
) -> Float[Array, ""]:
    """The alternative penalty $\\tfrac12\\,\\mathrm{mean}\\|f(e) - f(\\tilde e)\\|^2$ with Gaussian embedding noise
    $\\tilde e = \\rho e + \\sqrt{1-\\rho^2}\\sigma z$ (see the module docstring); ``f`` acts on one ``(T, d)``.

    ``clean`` (optional) are the already computed ``f(emb)`` outputs, so only the noisy pass is extra.
    ``emb`` must be a non-empty batch of finite values (``ValueError``; under ``jax.jit`` a run-time error through
    ``equinox.error_if``).
    """
    check_rho(rho)
    if 0 in jnp.shape(emb):
        raise ValueError(f"emb: expected a non-empty batch (B, T, d), received shape {tuple(jnp.shape(emb))}")
    emb = finite_checked("emb", emb)
    return _gaussian_embedding_mse_penalty(f, emb, key, rho, clean=clean, positions=positions)


def _gaussian_embedding_mse_penalty(f, emb, key, rho, *, clean=None, positions=None):
    """:func:`gaussian_embedding_mse_penalty` without the checks of ``emb`` (the training loss)."""
    keys = jax.random.split(key, emb.shape[0])
    noisy = jax.vmap(lambda e, k: _correlated_copy(e, k, rho, noise_scale=None))(emb, keys)
    out_noisy = jax.vmap(f)(noisy)
    out_clean = jax.vmap(f)(emb) if clean is None else clean
    if positions is not None:
        out_noisy, out_clean = out_noisy[:, positions], out_clean[:, positions]
    return 0.5 * jnp.mean((out_clean - out_noisy) ** 2)


def cross_entropy(logits: Float[Array, "*batch classes"], labels: Int[Array, "*batch"]) -> Float[Array, ""]:
    """Mean softmax cross-entropy with integer labels (``labels.shape == logits.shape[:-1]``, ids in
    ``[0, classes)``; an out-of-range id used to give NaN). ``logits`` must be finite, with at least one class
    (``ValueError`` naming them; under ``jax.jit`` a run-time error through ``equinox.error_if``)."""
    if jnp.ndim(logits) < 1 or jnp.shape(logits)[-1] < 1:
        raise ValueError(
            f"logits: expected at least one class on the last axis, received shape {tuple(jnp.shape(logits))}"
        )
    return _cross_entropy(finite_checked("logits", logits), labels)


def _cross_entropy(logits: Any, labels: Any) -> jax.Array:
    """:func:`cross_entropy` without the finite check of ``logits`` (the training losses: a diverging model's
    NaN loss is the optimizer's to report, at no per-step cost)."""
    if tuple(jnp.shape(labels)) != tuple(jnp.shape(logits))[:-1]:
        raise ValueError(
            f"labels: expected shape {tuple(jnp.shape(logits))[:-1]} (the scored logits without the class axis: "
            "(B,) for a classifier or one position such as positions=-1, (B, T) for positions=None on a "
            f"sequence model), received {tuple(jnp.shape(labels))}"
        )
    labels = check_token_ids("labels", labels, jnp.shape(logits)[-1])  # under jit: a run-time check
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def _per_sample_shape(model: Any, tokens: Any) -> tuple[int, ...]:
    """The output shape of ``model`` on ONE sequence ``tokens[0]`` (shape only; a clear error if it fails)."""
    if jnp.ndim(tokens) < 2:
        raise ValueError(
            f"tokens: expected a batch of sequences (B, T) (the model is called per sequence with jax.vmap), "
            f"received shape {tuple(jnp.shape(tokens))}"
        )
    try:
        out = jax.eval_shape(model, jax.ShapeDtypeStruct(jnp.shape(tokens)[1:], jnp.asarray(tokens).dtype))
    except (TypeError, ValueError, IndexError) as err:  # re-raised with the contract
        raise TypeError(
            "model: expected a per-sample callable, model(tokens) on ONE sequence of shape "
            f"{tuple(jnp.shape(tokens)[1:])} returning logits whose last axis is the classes (the batch is "
            "mapped with jax.vmap inside); calling it on one sequence failed with "
            f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}. A model that takes a "
            "batch can be wrapped as `lambda t: model(t[None])[0]`"
        ) from err
    shape = getattr(out, "shape", None)
    if shape is None or len(shape) == 0:
        raise TypeError(
            f"model: expected logits with a class axis (shape (C,) or (T, C)) per sequence, received "
            f"{'shape ()' if shape is not None else type(out).__name__}"
        )
    return tuple(shape)


def _check_positions(positions: Any, out_shape: tuple[int, ...]) -> None:
    if positions is None:
        return
    if len(out_shape) == 1:
        raise ValueError(
            f"positions: the model returns one logit vector per sequence (shape {out_shape}), so there is no "
            f"position axis to select from; pass positions=None (received positions={positions!r}; labels then "
            "have shape (B,))"
        )
    idx = np.asarray(positions) if not is_tracer(positions) else None
    if idx is not None:
        if idx.dtype.kind not in "iu" and idx.dtype != bool:
            raise TypeError(
                f"positions: expected None, an integer or integer indices, received {positions!r}"
            )
        n = out_shape[0]
        if idx.dtype != bool and idx.size and (idx.min() < -n or idx.max() >= n):
            raise ValueError(
                f"positions: expected indices into the model's position axis of length {n} (output shape "
                f"{out_shape}), received {positions!r}"
            )


def model_logits(
    model: Callable[[jax.Array], jax.Array],
    tokens: Int[Array, "batch seq"],
    positions: ArrayInput | None = None,
) -> jax.Array:
    """Logits of a batch of sequences at the scored ``positions``.

    **Model contract.** ``model`` is a per-sample callable (an Equinox module or function): called on ONE
    sequence of token ids of shape ``(T,)`` it returns logits whose LAST axis is the classes (or vocabulary):

    * ``(C,)``: one prediction per sequence (a classifier). ``positions`` must be ``None``; the result is
      ``(B, C)`` and labels are ``(B,)``.
    * ``(T, C)`` (or any ``(T, ..., C)``): one prediction per position (a sequence model). ``positions`` indexes
      the FIRST axis of that output: ``None`` keeps every position (``(B, T, ..., C)``, labels ``(B, T, ...)``),
      an integer such as ``-1`` keeps one (``(B, ..., C)``, labels ``(B, ...)``), an index array keeps those.

    The batch axis is mapped with ``jax.vmap`` here, so a model that takes a batch must be wrapped
    (``lambda t: model(t[None])[0]``); a mismatch between ``positions`` and the output raises an error saying
    what to pass. :class:`jaxkit.stability.Transformer` with ``positions=-1`` uses its cheaper ``last_only`` path.
    """
    out_shape = _per_sample_shape(model, tokens)
    _check_positions(positions, out_shape)
    if isinstance(positions, int) and positions == -1 and isinstance(model, Transformer):
        return jax.vmap(lambda t: model(t, last_only=True))(tokens)
    logits = jax.vmap(model)(tokens)
    return logits if positions is None else logits[:, positions]


def regularized_loss(
    model: Callable[[jax.Array], jax.Array],
    tokens: Int[Array, "batch seq"],
    labels: Int[Array, "..."],
    key: jax.Array,
    *,
    gamma: float | int | Float[Array, ""],
    rho: float | int | Float[Array, ""],
    vocab_size: int | None = None,
    positions: ArrayInput | None = None,
    noise_mask: ArrayInput | None = None,
    method: Method = "agreement",
    detach_clean: bool = False,
) -> tuple[Float[Array, ""], dict[str, Array]]:
    """Cross-entropy at the scored ``positions`` plus ``gamma · R`` (``method`` as in the module docstring).

    ``tokens`` ``(B, T)``; ``labels`` match the scored logits (``(B,)`` for ``positions=-1``, ``(B, T)`` for all).
    ``vocab_size`` (agreement only) is the alphabet $U$ the noise resamples from, ``noise_mask`` the positions it
    touches. Returns ``(loss, {"task": ℓ, "penalty": R})``.
    """
    check_choice("method", method, METHODS)
    check_gamma(gamma)
    check_rho(rho)
    _check_model_tokens(model, tokens)
    if method == "agreement" and not (isinstance(gamma, int | float) and gamma == 0):
        if vocab_size is None:
            raise ValueError(
                "vocab_size: expected the alphabet size the agreement regularizer resamples tokens from, "
                "received None"
            )
        check_int("vocab_size", vocab_size, minimum=1)
        dtype = tokens.dtype if is_tracer(tokens) else jnp.asarray(tokens).dtype
        if vocab_size - 1 > jnp.iinfo(dtype).max:
            raise ValueError(
                f"vocab_size: expected at most {jnp.iinfo(dtype).max + 1} (token ids of dtype {dtype}), "
                f"received {vocab_size}"
            )
    logits = model_logits(model, tokens, positions)
    task = _cross_entropy(logits, labels)
    if isinstance(gamma, int | float) and gamma == 0:
        return task, {"task": task, "penalty": jnp.zeros_like(task)}
    if method == "agreement":
        noisy = _resample_core(tokens, key, rho, vocab_size, noise_mask)
        clean = jax.lax.stop_gradient(logits) if detach_clean else logits
        pen = agreement_regularizer(
            jax.nn.softmax(clean), jax.nn.softmax(model_logits(model, noisy, positions))
        )
    else:
        emb = jax.vmap(model.embed)(tokens)
        pen = _gaussian_embedding_mse_penalty(model.from_embeddings, emb, key, rho, positions=positions)
    return task + gamma * pen, {"task": task, "penalty": pen}


def make_loss_fn(
    *,
    gamma: float | int,
    rho: float | int,
    vocab_size: int | None = None,
    positions: ArrayInput | None = None,
    noise_mask: ArrayInput | None = None,
    method: Method = "agreement",
    detach_clean: bool = False,
) -> Callable[..., tuple[Array, dict[str, Array]]]:
    """``loss_fn(model, batch, key) -> (loss, aux)`` for :func:`jaxkit.train.fit` (``has_aux=True``) with
    ``batch = (tokens, labels)``: :func:`regularized_loss` with these settings. Validates ``gamma >= 0``,
    ``rho ∈ [-1, 1]`` and, for ``method="agreement"`` with ``gamma > 0``, the noise alphabet ``vocab_size``."""
    check_choice("method", method, METHODS)
    check_gamma(gamma)
    check_rho(rho)
    if method == "agreement" and not (isinstance(gamma, int | float) and gamma == 0):
        if vocab_size is None:
            raise ValueError(
                "vocab_size: the agreement regularizer resamples tokens from [0, vocab_size); give it"
            )
        check_int("vocab_size", vocab_size, minimum=2)
    kw = dict(
        vocab_size=vocab_size,
        positions=positions,
        noise_mask=noise_mask,
        method=method,
        detach_clean=detach_clean,
    )

    def loss_fn(model, batch, key):
        tokens, labels = batch
        return regularized_loss(model, tokens, labels, key, gamma=gamma, rho=rho, **kw)

    return loss_fn


def make_member_loss_fn(
    *,
    vocab_size: int | None = None,
    positions: ArrayInput | None = None,
    noise_mask: ArrayInput | None = None,
    method: Method = "agreement",
    detach_clean: bool = False,
) -> Callable[..., tuple[Array, dict[str, Array]]]:
    """Like :func:`make_loss_fn` but ``batch = (tokens, labels, gamma, rho)`` carries the strength and the
    correlation as arrays, so models stacked along a seed axis can each have their own ``(γ, ρ)`` (a sweep in
    one compiled call). The extra pass always runs; ``γ = 0`` members then train on ``ℓ + 0·R``, whose gradient
    equals the baseline's (adding an exact zero)."""
    check_choice("method", method, METHODS)
    kw = dict(
        vocab_size=vocab_size,
        positions=positions,
        noise_mask=noise_mask,
        method=method,
        detach_clean=detach_clean,
    )

    def loss_fn(model, batch, key):
        tokens, labels, gamma, rho = batch
        return regularized_loss(model, tokens, labels, key, gamma=gamma, rho=rho, **kw)

    return loss_fn


def embedding_stability(
    model: Callable[[jax.Array], jax.Array],
    tokens: Int[Array, "batch seq"],
    key: jax.Array,
    *,
    rho: float | int,
    n_samples: int = 1,
    positions: ArrayInput | None = None,
) -> Float[Array, ""]:
    """Normalized noise stability of the logits under ``ρ``-correlated Gaussian embedding noise (traceable, for
    logging): ``Σ⟨f(e), f(ẽ)⟩ / Σ‖f(e)‖²`` with logits centered over the vocabulary, ``σ`` = per-sequence RMS.

    ``model`` must have ``embed(tokens)`` (one ``(T,)`` sequence -> embeddings) and ``from_embeddings(e)``
    (embeddings -> logits), as :class:`Transformer` does; another object raises ``TypeError``."""
    missing = [m for m in ("embed", "from_embeddings") if not callable(getattr(model, m, None))]
    if missing:
        raise TypeError(
            f"model: expected a model with embed(tokens) and from_embeddings(embeddings) methods (e.g. a "
            f"jaxkit.stability.Transformer), received {type(model).__name__} without {' and '.join(missing)}"
        )
    check_rho(rho)
    check_int("n_samples", n_samples, minimum=1)
    _check_model_tokens(model, tokens)
    emb = jax.vmap(model.embed)(tokens)
    check_size(
        "n_samples",
        4 * n_samples * emb.size,
        hint=f"lower n_samples ({n_samples} noisy copies of the {emb.shape} embeddings are drawn)",
    )

    def centered(e):
        out = model.from_embeddings(e)
        out = out if positions is None else out[positions]
        return out - jnp.mean(out, axis=-1, keepdims=True)

    clean = jax.vmap(centered)(emb)
    num = 0.0
    for i in range(n_samples):
        keys = jax.random.split(jax.random.fold_in(key, i), emb.shape[0])
        noisy = jax.vmap(lambda e, k: _correlated_copy(e, k, rho, noise_scale=None))(emb, keys)
        num = num + jnp.sum(clean * jax.vmap(centered)(noisy))
    return num / n_samples / jnp.sum(clean**2)


def token_agreement(
    model: Callable[[jax.Array], jax.Array],
    tokens: Int[Array, "batch seq"],
    key: jax.Array,
    *,
    rho: float | int | Float[Array, ""],
    vocab_size: int,
    positions: ArrayInput | None = None,
    noise_mask: ArrayInput | None = None,
) -> Float[Array, ""]:
    """$E\\sum_i M(X)_i M(Y)_i$ under token resampling (the paper's stability measure, $= -R$ for $S=1$), for
    logging during training. Traceable.

    ``model`` follows the per-sample contract of :func:`model_logits` (called on one ``(T,)`` sequence, logits
    ``(C,)`` for a classifier with ``positions=None``, or ``(T, C)`` with ``positions`` indexing the first axis);
    ``tokens`` ``(B, T)``; the mean runs over the batch and the scored positions.
    """
    if 0 in jnp.shape(tokens):
        raise ValueError(
            f"tokens: expected a non-empty batch (B, T), received shape {tuple(jnp.shape(tokens))}"
        )
    noisy = resample_tokens(tokens, key, rho=rho, vocab_size=vocab_size, noise_mask=noise_mask)
    p = jax.nn.softmax(model_logits(model, tokens, positions))
    q = jax.nn.softmax(model_logits(model, noisy, positions))
    return jnp.mean(jnp.sum(p * q, axis=-1))


__all__ = [
    "METHODS",
    "Method",
    "agreement_regularizer",
    "cross_entropy",
    "embedding_stability",
    "gaussian_embedding_mse_penalty",
    "keep_probability",
    "make_loss_fn",
    "make_member_loss_fn",
    "model_logits",
    "regularized_loss",
    "resample_tokens",
    "token_agreement",
]
