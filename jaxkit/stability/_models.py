"""A small decoder-only transformer (Equinox) that exposes its embedding layer.

Nanda et al. (2023, "Progress measures for grokking via mechanistic interpretability") use one layer, 4 heads,
``d_model = 128``, ``d_mlp = 512``, ReLU, learned positional embeddings, no LayerNorm; that is the default here.
The model acts on ONE sequence of token ids (shape ``(T,)``) and returns logits ``(T, vocab)``; batch with
``jax.vmap``; ``last_only=True`` returns the logits of the last position only (``(vocab,)``), computing the
last block's query, MLP and unembedding for that position alone (exact, and about twice cheaper for the
3-token modular-addition inputs). ``embed`` and ``from_embeddings`` split the forward pass at the embeddings
(used by the Gaussian-embedding alternative of the regularizer). Token ids outside ``[0, vocab_size)`` raise an
error (``ValueError`` on concrete inputs, an Equinox runtime error under ``jit``) instead of being clamped.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp

from .._nn import TransformerBlock, layer_norm
from .._typing import TreeT
from .._validate import check_int, check_size
from ..train import init_ensemble
from ._checks import check_token_ids


def _block(
    d_model: int, d_mlp: int, n_heads: int, key: jax.Array, layer_norm: bool = False
) -> TransformerBlock:
    """Residual block: ``h + Attn(LN h)``, then ``h + W₂ relu(W₁ LN h + b₁) + b₂`` (LN optional, without affine
    parameters): the package's :class:`TransformerBlock` with this model's initialization."""
    ks = jax.random.split(key, 6)
    s = 1.0 / math.sqrt(d_model)
    w_q, w_k, w_v, w_o = (jax.random.normal(k, (d_model, d_model)) * s for k in ks[:4])
    return TransformerBlock(
        w_q,
        w_k,
        w_v,
        w_o,
        jax.random.normal(ks[4], (d_model, d_mlp)) * s,
        jnp.zeros(d_mlp),
        jax.random.normal(ks[5], (d_mlp, d_model)) / math.sqrt(d_mlp),
        jnp.zeros(d_model),
        () if layer_norm else None,
        n_heads,
        jax.nn.relu,
    )


class Transformer(eqx.Module):
    """Decoder-only transformer: token + positional embeddings, ``n_layers`` blocks, unembedding."""

    tok_embed: jax.Array
    pos_embed: jax.Array
    blocks: tuple
    unembed: jax.Array
    layer_norm: bool = eqx.field(static=True)

    def __init__(
        self,
        vocab_size: int,
        seq_len: int,
        *,
        key: jax.Array,
        d_model: int = 128,
        n_heads: int = 4,
        d_mlp: int = 512,
        n_layers: int = 1,
        layer_norm: bool = False,
    ):
        for name, v in (
            ("vocab_size", vocab_size),
            ("seq_len", seq_len),
            ("d_model", d_model),
            ("n_heads", n_heads),
            ("d_mlp", d_mlp),
            ("n_layers", n_layers),
        ):
            check_int(name, v, minimum=1)
        if d_model % n_heads:
            raise ValueError(f"n_heads: expected a divisor of d_model={d_model}, received {n_heads}")
        # float32 parameters: embeddings and unembedding, then per block attention (4 d^2) and MLP (2 d d_mlp)
        n_params = (2 * vocab_size + seq_len) * d_model + n_layers * (4 * d_model**2 + 2 * d_model * d_mlp)
        check_size("vocab_size, seq_len, d_model, d_mlp, n_layers", 4 * n_params)
        ks = jax.random.split(key, n_layers + 3)
        s = 1.0 / math.sqrt(d_model)
        self.tok_embed = jax.random.normal(ks[0], (vocab_size, d_model)) * s
        self.pos_embed = jax.random.normal(ks[1], (seq_len, d_model)) * s
        self.blocks = tuple(_block(d_model, d_mlp, n_heads, k, layer_norm) for k in ks[3:])
        self.unembed = jax.random.normal(ks[2], (d_model, vocab_size)) * s
        self.layer_norm = layer_norm

    def embed(self, tokens: jax.Array) -> jax.Array:
        """Token + positional embeddings of one sequence, ``(T,) -> (T, d_model)``."""
        tokens = check_token_ids("tokens", tokens, self.tok_embed.shape[0])
        if tokens.ndim != 1 or tokens.shape[0] > self.pos_embed.shape[0]:
            raise ValueError(
                f"tokens: expected ONE sequence of shape (T,) with T <= seq_len={self.pos_embed.shape[0]} "
                f"(vmap over a batch), received shape {tokens.shape}"
            )
        return self.tok_embed[tokens] + self.pos_embed[: tokens.shape[0]]

    def from_embeddings(self, h: jax.Array, last_only: bool = False) -> jax.Array:
        """The rest of the forward pass, ``(T, d_model) -> (T, vocab)`` logits (``(vocab,)`` if ``last_only``)."""
        for i, blk in enumerate(self.blocks):
            h = blk(h, last_only=last_only and i == len(self.blocks) - 1)
        if self.layer_norm:
            h = layer_norm(h)
        return h @ self.unembed

    def __call__(self, tokens: jax.Array, last_only: bool = False) -> jax.Array:
        return self.from_embeddings(self.embed(tokens), last_only=last_only)


def init_stack(make: Callable[[jax.Array], TreeT], keys: jax.Array) -> TreeT:
    """Stack independently initialized models along a leading axis (``make(key) -> model``), for training
    several seeds in one compiled call: :func:`jaxkit.train.init_ensemble`."""
    return init_ensemble(make, keys)
