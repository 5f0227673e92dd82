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

from jaxkit._nn import TransformerBlock
from jaxkit._typing import PRNGKey
from jaxkit._validate import check_choice, check_int, check_key, check_ndim, check_size

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


def alibi_bias(T: int, n_heads: int) -> jax.Array:
    """ALiBi score bias ``-m_h (t - s)`` of shape ``(H, T, T)``, slopes ``m_h = 2^{-8(h+1)/H}`` (Press et al. 2022)."""
    slopes = 2.0 ** (-8.0 * (jnp.arange(n_heads) + 1) / n_heads)
    dist = jnp.arange(T)[:, None] - jnp.arange(T)[None, :]
    return -(slopes[:, None, None] * dist[None])


def _block(d: int, n_heads: int, *, key: PRNGKey) -> TransformerBlock:
    """Pre-LayerNorm block with a GELU MLP of width ``4 d``: the package's :class:`TransformerBlock` with this
    model's initialization (projections ``N(0, 1/fan_in)``, LayerNorm gains 1 and biases 0)."""
    k1, k2, k3, k4 = jax.random.split(key, 4)
    w_q, w_k, w_v = jnp.split(jax.random.normal(k1, (3 * d, d)) / np.sqrt(d), 3, 0)
    wo = jax.random.normal(k2, (d, d)) / np.sqrt(d)
    w1 = jax.random.normal(k3, (4 * d, d)) / np.sqrt(d)
    w2 = jax.random.normal(k4, (d, 4 * d)) / np.sqrt(4 * d)
    ln = (jnp.ones(d), jnp.zeros(d), jnp.ones(d), jnp.zeros(d))
    return TransformerBlock(
        w_q.T, w_k.T, w_v.T, wo.T, w1.T, jnp.zeros((4 * d,)), w2.T, jnp.zeros((d,)), ln, n_heads, jax.nn.gelu
    )


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
        for name, v in (("d_model", d_model), ("n_heads", n_heads), ("max_len", max_len)):
            check_int(name, v, minimum=1)
        check_int("n_layers", n_layers, minimum=0)  # 0: embeddings and readout only
        # float32 parameters: embeddings, positions, readout, and per block attention and MLP (about 12 d^2)
        n_params = (vocab + n_classes + 1 + max_len) * d_model + n_layers * 12 * d_model**2
        check_size("vocab, n_classes, d_model, n_layers, max_len", 4 * n_params)
        if d_model % n_heads or (positional == "rope" and (d_model // n_heads) % 2):
            raise ValueError(
                f"d_model: expected a multiple of n_heads (even head size for rope), received "
                f"d_model={d_model}, n_heads={n_heads}"
            )
        check_key("key", key)
        ke, kp, kh, *kb = jax.random.split(key, n_layers + 3)
        self.positional, self.max_len = positional, max_len
        self.embed = jax.random.normal(ke, (vocab, d_model))
        self.pos = 0.02 * jax.random.normal(kp, (max_len, d_model)) if positional == "learned" else None
        self.blocks = tuple(_block(d_model, n_heads, key=k) for k in kb)
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
        rotate = rope if self.positional == "rope" else None
        n_heads = self.blocks[0].n_heads if self.blocks else 1
        bias = (lambda t: alibi_bias(t, n_heads)) if self.positional == "alibi" else None
        for blk in self.blocks:
            x = blk(x, rotate=rotate, score_bias=bias)
        return x @ self.head_w.T + self.head_b


__all__ = ["POSITIONAL", "CausalTransformer", "rope", "sinusoidal_encoding"]
