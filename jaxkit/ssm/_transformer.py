"""A small causal transformer baseline with the usual positional-encoding choices.

Pre-LayerNorm blocks ``x + MHA(LN x)``, ``x + MLP(LN x)`` with a causal mask (Vaswani et al. 2017). Positional
encodings: ``"sinusoidal"`` (added), ``"learned"`` (added, up to ``max_len``), ``"rope"`` (rotary, Su et al. 2021),
``"alibi"`` (linear attention biases, Press et al. 2022) and ``"none"`` (NoPE; causal masking alone leaks
position). Acts on one sequence ``(T,)`` of token ids; batch with ``jax.vmap``.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._typing import PRNGKey
from jaxkit._validate import check_choice, check_int, check_ndim

from ._layers import check_tokens

POSITIONAL = ("sinusoidal", "learned", "rope", "alibi", "none")


def sinusoidal_encoding(T: int, d: int) -> jax.Array:
    """``PE[t, 2i] = sin(t / 10000^{2i/d})``, ``PE[t, 2i+1] = cos(·)``."""
    pos = np.arange(T)[:, None]
    i = np.arange((d + 1) // 2)[None, :]
    ang = pos / 10000 ** (2 * i / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(ang)[:, : (d + 1) // 2]
    pe[:, 1::2] = np.cos(ang)[:, : d // 2]
    return jnp.asarray(pe, jnp.float32)


def rope(x: jax.Array) -> jax.Array:
    """Rotary embedding of ``x`` of shape ``(T, H, Dh)`` (``Dh`` even): rotate pairs by ``t θ_i``."""
    T, _, dh = x.shape
    half = dh // 2
    freqs = 1.0 / 10000 ** (jnp.arange(half) / half)
    ang = jnp.arange(T)[:, None] * freqs[None, :]
    c, s = jnp.cos(ang)[:, None, :], jnp.sin(ang)[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)


def _layer_norm(x: jax.Array, g: jax.Array, b: jax.Array) -> jax.Array:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


class Block(eqx.Module):
    n_heads: int = eqx.field(static=True)
    positional: str = eqx.field(static=True)
    wqkv: jax.Array
    wo: jax.Array
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array
    ln: jax.Array  # (4, d): g1, b1, g2, b2

    def __init__(self, d: int, n_heads: int, positional: str, *, key: Any):
        k1, k2, k3, k4 = jax.random.split(key, 4)
        self.n_heads, self.positional = n_heads, positional
        self.wqkv = jax.random.normal(k1, (3 * d, d)) / np.sqrt(d)
        self.wo = jax.random.normal(k2, (d, d)) / np.sqrt(d)
        self.w1 = jax.random.normal(k3, (4 * d, d)) / np.sqrt(d)
        self.b1 = jnp.zeros((4 * d,))
        self.w2 = jax.random.normal(k4, (d, 4 * d)) / np.sqrt(4 * d)
        self.b2 = jnp.zeros((d,))
        self.ln = jnp.stack([jnp.ones(d), jnp.zeros(d), jnp.ones(d), jnp.zeros(d)])

    def __call__(self, x: jax.Array) -> jax.Array:
        T, d = x.shape
        h = self.n_heads
        y = _layer_norm(x, self.ln[0], self.ln[1])
        q, k, v = jnp.split(y @ self.wqkv.T, 3, -1)
        q, k, v = (t.reshape(T, h, d // h) for t in (q, k, v))
        if self.positional == "rope":
            q, k = rope(q), rope(k)
        s = jnp.einsum("thd,shd->hts", q, k) / np.sqrt(d // h)
        if self.positional == "alibi":
            slopes = 2.0 ** (-8.0 * (jnp.arange(h) + 1) / h)
            dist = jnp.arange(T)[:, None] - jnp.arange(T)[None, :]
            s = s - slopes[:, None, None] * dist[None]
        mask = jnp.tril(jnp.ones((T, T), bool))
        s = jnp.where(mask[None], s, -1e30)
        att = jnp.einsum("hts,shd->thd", jax.nn.softmax(s, -1), v).reshape(T, d)
        x = x + att @ self.wo.T
        y = _layer_norm(x, self.ln[2], self.ln[3])
        return x + jax.nn.gelu(y @ self.w1.T + self.b1) @ self.w2.T + self.b2


class CausalTransformer(eqx.Module):
    """Causal transformer: ``(T,)`` token ids -> ``(T, n_classes)`` logits."""

    positional: str = eqx.field(static=True)
    max_len: int = eqx.field(static=True)
    embed: jax.Array
    pos: jax.Array | None
    blocks: tuple
    head_w: jax.Array
    head_b: jax.Array

    def __init__(
        self,
        vocab: int,
        n_classes: int,
        *,
        key: PRNGKey,
        d_model: int = 32,
        n_heads: int = 4,
        n_layers: int = 2,
        positional: str = "rope",
        max_len: int = 512,
    ):
        check_choice("positional", positional, POSITIONAL)
        check_int("vocab", vocab, minimum=1)
        check_int("n_classes", n_classes, minimum=1)
        if d_model % n_heads or (positional == "rope" and (d_model // n_heads) % 2):
            raise ValueError(
                f"d_model: expected a multiple of n_heads (even head size for rope), received "
                f"d_model={d_model}, n_heads={n_heads}"
            )
        ke, kp, kh, *kb = jax.random.split(key, n_layers + 3)
        self.positional, self.max_len = positional, max_len
        self.embed = jax.random.normal(ke, (vocab, d_model))
        self.pos = 0.02 * jax.random.normal(kp, (max_len, d_model)) if positional == "learned" else None
        self.blocks = tuple(Block(d_model, n_heads, positional, key=k) for k in kb)
        self.head_w = jax.random.normal(kh, (n_classes, d_model)) / np.sqrt(d_model)
        self.head_b = jnp.zeros((n_classes,))

    def __call__(self, tokens: jax.Array, **_: Any) -> jax.Array:  # Any: SSM-only keywords, ignored
        check_ndim("tokens", tokens, 1, what="one sequence (T,); vmap for batches")
        check_tokens("tokens", tokens, self.embed.shape[0])
        T = tokens.shape[0]
        x = self.embed[tokens]
        if self.positional == "sinusoidal":
            x = x + sinusoidal_encoding(T, x.shape[-1])
        elif self.positional == "learned":
            if T > self.max_len:
                raise ValueError(
                    f"tokens: learned positions cover max_len={self.max_len}, received length {T}"
                )
            x = x + self.pos[:T]
        for blk in self.blocks:
            x = blk(x)
        return x @ self.head_w.T + self.head_b


__all__ = ["POSITIONAL", "CausalTransformer", "rope", "sinusoidal_encoding"]
