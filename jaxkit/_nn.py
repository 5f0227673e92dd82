"""Shared neural-network pieces: one layer norm and one pre-norm transformer block.

Private to the package (like ``_validate`` and ``_typing``): every subpackage may use them, users see them through
the models built on them (``jaxkit.stability.Transformer``, ``jaxkit.ssm.CausalTransformer``, the forecaster's
attention denoiser).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


def layer_norm(
    x: Float[Array, "*b d"],
    weight: Float[Array, " d"] | None = None,
    bias: Float[Array, " d"] | None = None,
    eps: float = 1e-5,
) -> Float[Array, "*b d"]:
    """``(x - mean) / sqrt(var + eps)`` over the last axis (biased variance; Ba et al. 2016), then ``* weight + bias``
    when given. The same arithmetic as ``eqx.nn.LayerNorm``, for plain arrays and without a module."""
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    y = (x - mu) * jax.lax.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


class TransformerBlock(eqx.Module):
    """Pre-norm residual block on one sequence ``h`` ``(T, d)``: ``h + Attn(LN h)``, then
    ``h + W_out act(W_in LN h + b_in) + b_out`` (Vaswani et al. 2017; pre-norm as in GPT-2).

    Attention is multi-head causal softmax attention with ``(d, d)`` projections ``w_q, w_k, w_v, w_o`` (applied as
    ``h @ w``), scores scaled by ``1/sqrt(d / n_heads)``; ``rotate`` (e.g. rotary embeddings) maps the ``(T, H, dh)``
    queries and keys, ``score_bias`` adds a ``(H, T, T)`` bias to the scores (e.g. ALiBi). ``ln`` is ``None`` (no
    normalization), ``()`` (normalization without affine parameters) or ``(g1, b1, g2, b2)``. ``last_only=True``
    returns the output of the last position only, ``(d,)``, computing its query, MLP and residual alone (exact).
    """

    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    w_in: Array
    b_in: Array
    w_out: Array
    b_out: Array
    ln: tuple[Array, ...] | None
    n_heads: int = eqx.field(static=True)
    activation: Callable[[Array], Array] = eqx.field(static=True)

    def _norm(self, h: Array, i: int) -> Array:
        if self.ln is None:
            return h
        if not self.ln:
            return layer_norm(h)
        return layer_norm(h, self.ln[2 * i], self.ln[2 * i + 1])

    def attention(
        self,
        h: Float[Array, "T d"],
        *,
        rotate: Callable[[Array], Array] | None = None,
        score_bias: Callable[[int], Array] | None = None,
        last_only: bool = False,
    ) -> Array:
        """The attention output (before the residual): ``(T, d)``, or ``(d,)`` for the last position only."""
        t, d = h.shape
        dh = d // self.n_heads
        q_rows = h[-1:] if last_only and rotate is None else h  # rotations need every position's index
        q = (q_rows @ self.w_q).reshape(q_rows.shape[0], self.n_heads, dh)
        k = (h @ self.w_k).reshape(t, self.n_heads, dh)
        v = (h @ self.w_v).reshape(t, self.n_heads, dh)
        if rotate is not None:
            q, k = rotate(q), rotate(k)
            q = q[-1:] if last_only else q
        s = jnp.einsum("thd,shd->hts", q, k) / math.sqrt(dh)
        if score_bias is not None:
            s = s + score_bias(t)[:, -q.shape[0] :]
        if not last_only:
            s = jnp.where(jnp.tril(jnp.ones((t, t), bool))[None], s, -1e30)
        out = jnp.einsum("hts,shd->thd", jax.nn.softmax(s, axis=-1), v).reshape(q.shape[0], d) @ self.w_o
        return out[0] if last_only else out

    def __call__(
        self,
        h: Float[Array, "T d"],
        *,
        rotate: Callable[[Array], Array] | None = None,
        score_bias: Callable[[int], Array] | None = None,
        last_only: bool = False,
    ) -> Array:
        a = self.attention(self._norm(h, 0), rotate=rotate, score_bias=score_bias, last_only=last_only)
        h = (h[-1] if last_only else h) + a
        return h + self.activation(self._norm(h, 1) @ self.w_in + self.b_in) @ self.w_out + self.b_out
