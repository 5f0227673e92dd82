"""The shared layer norm and transformer block (``jaxkit/_nn.py``) against Equinox's own layers."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxkit._nn import TransformerBlock, layer_norm


def _block(key, d=8, heads=2, ln=()):
    ks = jax.random.split(key, 8)
    w = [jax.random.normal(k, (d, d)) / np.sqrt(d) for k in ks[:4]]
    return TransformerBlock(
        *w,
        jax.random.normal(ks[4], (d, 3 * d)) / np.sqrt(d),
        0.1 * jax.random.normal(ks[5], (3 * d,)),
        jax.random.normal(ks[6], (3 * d, d)) / np.sqrt(3 * d),
        0.1 * jax.random.normal(ks[7], (d,)),
        ln,
        heads,
        jax.nn.gelu,
    )


def test_layer_norm_matches_equinox():
    x = jax.random.normal(jax.random.key(0), (5, 6)) * 3 + 1
    g, b = jnp.linspace(0.5, 2.0, 6), jnp.linspace(-1.0, 1.0, 6)
    ref = eqx.nn.LayerNorm(6, eps=1e-5)
    ref = eqx.tree_at(lambda m: (m.weight, m.bias), ref, (g, b))
    np.testing.assert_allclose(layer_norm(x, g, b), jax.vmap(ref)(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(layer_norm(x).mean(-1), 0.0, atol=1e-6)


def test_block_attention_matches_equinox_multihead_attention_and_last_only_is_exact():
    d, heads, T = 8, 2, 5
    blk = _block(jax.random.key(1), d, heads)
    h = jax.random.normal(jax.random.key(2), (T, d))
    mha = eqx.nn.MultiheadAttention(heads, d, key=jax.random.key(3))
    mha = eqx.tree_at(
        lambda m: (m.query_proj.weight, m.key_proj.weight, m.value_proj.weight, m.output_proj.weight),
        mha,
        (blk.w_q.T, blk.w_k.T, blk.w_v.T, blk.w_o.T),
    )
    causal = jnp.tril(jnp.ones((T, T), bool))
    np.testing.assert_allclose(blk.attention(h), mha(h, h, h, mask=causal), rtol=1e-5, atol=1e-5)
    ref = h + mha(layer_norm(h), layer_norm(h), layer_norm(h), mask=causal)
    ref = ref + jax.nn.gelu(layer_norm(ref) @ blk.w_in + blk.b_in) @ blk.w_out + blk.b_out
    np.testing.assert_allclose(blk(h), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(blk(h, last_only=True), blk(h)[-1], rtol=1e-6, atol=1e-6)
    rot = lambda q: q[::-1]  # any map of the (T, H, dh) queries and keys; last_only must see every position
    np.testing.assert_allclose(
        blk(h, rotate=rot, last_only=True), blk(h, rotate=rot)[-1], rtol=1e-6, atol=1e-6
    )
