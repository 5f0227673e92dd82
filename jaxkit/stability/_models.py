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

import equinox as eqx
import jax
import jax.numpy as jnp

from .._validate import check_int
from ..train import init_ensemble
from ._checks import check_token_ids


def causal_self_attention(
    h: jax.Array, w_q: jax.Array, w_k: jax.Array, w_v: jax.Array, w_o: jax.Array, n_heads: int
) -> jax.Array:
    """Multi-head causal softmax attention on one sequence ``h`` (``(T, d)``); weights are ``(d, d)``."""
    t, d = h.shape
    dh = d // n_heads
    q = (h @ w_q).reshape(t, n_heads, dh)
    k = (h @ w_k).reshape(t, n_heads, dh)
    v = (h @ w_v).reshape(t, n_heads, dh)
    scores = jnp.einsum("thd,shd->hts", q, k) / math.sqrt(dh)
    mask = jnp.tril(jnp.ones((t, t), bool))
    scores = jnp.where(mask[None], scores, -1e30)
    attn = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("hts,shd->thd", attn, v).reshape(t, d)
    return out @ w_o


def last_query_attention(
    h: jax.Array, w_q: jax.Array, w_k: jax.Array, w_v: jax.Array, w_o: jax.Array, n_heads: int
) -> jax.Array:
    """The causal attention output of the LAST position only (it attends to every position), ``(d,)``."""
    t, d = h.shape
    dh = d // n_heads
    q = (h[-1] @ w_q).reshape(n_heads, dh)
    k = (h @ w_k).reshape(t, n_heads, dh)
    v = (h @ w_v).reshape(t, n_heads, dh)
    attn = jax.nn.softmax(jnp.einsum("hd,shd->hs", q, k) / math.sqrt(dh), axis=-1)
    return jnp.einsum("hs,shd->hd", attn, v).reshape(d) @ w_o


def _layer_norm(h: jax.Array, eps: float = 1e-5) -> jax.Array:
    mu = jnp.mean(h, axis=-1, keepdims=True)
    var = jnp.var(h, axis=-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + eps)


class Block(eqx.Module):
    """Residual block: ``h + Attn(LN h)``, then ``h + W₂ relu(W₁ LN h + b₁) + b₂`` (LN optional)."""

    w_q: jax.Array
    w_k: jax.Array
    w_v: jax.Array
    w_o: jax.Array
    w_in: jax.Array
    b_in: jax.Array
    w_out: jax.Array
    b_out: jax.Array
    n_heads: int = eqx.field(static=True)
    layer_norm: bool = eqx.field(static=True)

    def __init__(self, d_model: int, d_mlp: int, n_heads: int, key: jax.Array, layer_norm: bool = False):
        ks = jax.random.split(key, 6)
        s = 1.0 / math.sqrt(d_model)
        self.w_q, self.w_k, self.w_v, self.w_o = (
            jax.random.normal(k, (d_model, d_model)) * s for k in ks[:4]
        )
        self.w_in = jax.random.normal(ks[4], (d_model, d_mlp)) * s
        self.b_in = jnp.zeros(d_mlp)
        self.w_out = jax.random.normal(ks[5], (d_mlp, d_model)) / math.sqrt(d_mlp)
        self.b_out = jnp.zeros(d_model)
        self.n_heads = n_heads
        self.layer_norm = layer_norm

    def __call__(self, h: jax.Array, last_only: bool = False) -> jax.Array:
        ln = _layer_norm if self.layer_norm else (lambda v: v)
        if last_only:  # (T, d) -> (d,): the last position's output only
            h = h[-1] + last_query_attention(ln(h), self.w_q, self.w_k, self.w_v, self.w_o, self.n_heads)
        else:
            h = h + causal_self_attention(ln(h), self.w_q, self.w_k, self.w_v, self.w_o, self.n_heads)
        return h + jax.nn.relu(ln(h) @ self.w_in + self.b_in) @ self.w_out + self.b_out


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
        ks = jax.random.split(key, n_layers + 3)
        s = 1.0 / math.sqrt(d_model)
        self.tok_embed = jax.random.normal(ks[0], (vocab_size, d_model)) * s
        self.pos_embed = jax.random.normal(ks[1], (seq_len, d_model)) * s
        self.blocks = tuple(Block(d_model, d_mlp, n_heads, k, layer_norm) for k in ks[3:])
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
            h = _layer_norm(h)
        return h @ self.unembed

    def __call__(self, tokens: jax.Array, last_only: bool = False) -> jax.Array:
        return self.from_embeddings(self.embed(tokens), last_only=last_only)


def init_stack(make, keys: jax.Array):
    """Stack independently initialized models along a leading axis (``make(key) -> model``), for training
    several seeds in one compiled call: :func:`jaxkit.train.init_ensemble`."""
    return init_ensemble(make, keys)
