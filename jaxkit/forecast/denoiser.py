r"""A conditional ε-prediction denoiser over (time × assets), CSDI-style (Tashiro et al. 2021), with STABLE's
multi-level guidance.

One sample is a grid of ``L + H`` time steps × ``N`` assets: the first ``L`` rows hold the observed history (mask
1), the last ``H`` rows the noisy future :math:`x_t` (mask 0). Each token gets ``C`` channels from its value and
mask plus learned time-position and asset embeddings, the diffusion-step embedding, the projected macro context
and its asset's projected signals. A residual layer is: attention over time (per asset), attention over assets
(per time step), a gated ``tanh ⊙ sigmoid`` unit, residual and skip outputs (as CSDI).

Multi-level guidance: the same network is evaluated with the full condition (history + stock signals + macro) and
with the macro condition only (history and signals removed); a learned gate
:math:`g = \sigma(\mathrm{MLP}(\text{macro}, \text{step}))` blends them,
:math:`\hat\varepsilon = g\,\hat\varepsilon_{full} + (1-g)\,\hat\varepsilon_{macro}`.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PRNGKeyArray

__all__ = ["ConditionalDenoiser", "ResidualLayer", "step_embedding"]


def step_embedding(t: Int[Array, ""] | Float[Array, ""], dim: int) -> Float[Array, " d"]:
    """Sinusoidal embedding of the diffusion step index (Vaswani et al. 2017; as DDPM/CSDI)."""
    half = dim // 2
    freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half) / max(half - 1, 1))
    a = jnp.asarray(t, jnp.float32) * freqs
    return jnp.concatenate([jnp.sin(a), jnp.cos(a)])


def _dense(key: PRNGKeyArray, fan_in: int, fan_out: int) -> Float[Array, "i o"]:
    return jax.random.normal(key, (fan_in, fan_out)) / math.sqrt(fan_in)


def _layer_norm(x: Float[Array, "*b C"]) -> Float[Array, "*b C"]:
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5)


def _attention(q, k, v, spec: str):
    """Multi-head attention on a (S, N, heads, d) grid; ``spec`` picks the axis attended over."""
    d = q.shape[-1]
    if spec == "time":  # over S, separately for each asset n
        a = jax.nn.softmax(jnp.einsum("snhd,tnhd->nhst", q, k) / math.sqrt(d), axis=-1)
        return jnp.einsum("nhst,tnhd->snhd", a, v)
    a = jax.nn.softmax(jnp.einsum("snhd,smhd->shnm", q, k) / math.sqrt(d), axis=-1)  # over assets
    return jnp.einsum("shnm,smhd->snhd", a, v)


class ResidualLayer(eqx.Module):
    """Time attention, asset attention, gated unit; returns ``(residual output, skip)`` on a (S, N, C) grid.

    Written with whole-grid einsums (rather than nested ``vmap`` of per-sequence modules) so XLA sees a few
    large contractions."""

    w_time: Float[Array, "C 4C"]
    w_asset: Float[Array, "C 4C"]
    w_step: Float[Array, "C C"]
    w_mid: Float[Array, "C 2C"]
    w_out: Float[Array, "C 2C"]
    heads: int = eqx.field(static=True)

    def __init__(self, channels: int, heads: int, *, key: PRNGKeyArray):
        if channels % heads:
            raise ValueError(f"heads: expected a divisor of channels={channels}, received {heads}")
        k = jax.random.split(key, 5)
        C = channels
        self.w_time = _dense(k[0], C, 4 * C)
        self.w_asset = _dense(k[1], C, 4 * C)
        self.w_step = _dense(k[2], C, C)
        self.w_mid = _dense(k[3], C, 2 * C)
        self.w_out = _dense(k[4], C, 2 * C)
        self.heads = heads

    def _attend(self, y, w, spec):
        S, N, C = y.shape
        q, k, v, wo = w[:, :C], w[:, C : 2 * C], w[:, 2 * C : 3 * C], w[:, 3 * C :]
        yn = _layer_norm(y)
        split = lambda m: (yn @ m).reshape(S, N, self.heads, C // self.heads)
        o = _attention(split(q), split(k), split(v), spec).reshape(S, N, C)
        return y + o @ wo.T

    def __call__(
        self, h: Float[Array, "S N C"], step: Float[Array, " C"]
    ) -> tuple[Float[Array, "S N C"], Float[Array, "S N C"]]:
        y = h + step @ self.w_step
        y = self._attend(y, self.w_time, "time")
        y = self._attend(y, self.w_asset, "asset")
        gate, filt = jnp.split(y @ self.w_mid, 2, axis=-1)
        z = jnp.tanh(filt) * jax.nn.sigmoid(gate)
        res, skip = jnp.split(z @ self.w_out, 2, axis=-1)
        return (h + res) / math.sqrt(2.0), skip


class ConditionalDenoiser(eqx.Module):
    """ε-network for one sample: ``model(x_t, t, history, macro, signals) -> eps`` of shape (H, N).

    ``guided=False`` returns the full-condition prediction only (no macro branch, no gate).
    """

    w_in: Float[Array, "3 C"]
    time_pos: Float[Array, "S C"]
    asset_emb: Float[Array, "N C"]
    step_mlp: eqx.nn.MLP
    macro_proj: eqx.nn.MLP
    w_signal: Float[Array, "F C"]
    gate_mlp: eqx.nn.MLP
    layers: tuple[ResidualLayer, ...]
    w_out1: Float[Array, "C C"]
    w_out2: Float[Array, "C 1"]
    history: int = eqx.field(static=True)
    horizon: int = eqx.field(static=True)
    channels: int = eqx.field(static=True)
    guided: bool = eqx.field(static=True)

    def __init__(
        self,
        *,
        n_assets: int,
        history: int,
        horizon: int,
        n_macro: int,
        n_signals: int,
        channels: int = 32,
        layers: int = 2,
        heads: int = 2,
        guided: bool = True,
        key: PRNGKeyArray,
    ):
        k = jax.random.split(key, 10 + layers)
        C = channels
        self.history, self.horizon, self.channels, self.guided = history, horizon, channels, guided
        self.w_in = _dense(k[0], 3, C)  # (value, mask, 1)
        self.time_pos = 0.1 * jax.random.normal(k[1], (history + horizon, C))
        self.asset_emb = 0.1 * jax.random.normal(k[2], (n_assets, C))
        self.step_mlp = eqx.nn.MLP(C, C, C, 1, activation=jax.nn.silu, key=k[3])
        self.macro_proj = eqx.nn.MLP(n_macro, C, C, 1, activation=jax.nn.silu, key=k[4])
        self.w_signal = _dense(k[5], n_signals, C)
        self.gate_mlp = eqx.nn.MLP(2 * C, 1, C, 1, activation=jax.nn.silu, key=k[6])
        self.layers = tuple(ResidualLayer(C, heads, key=k[10 + i]) for i in range(layers))
        self.w_out1 = _dense(k[7], C, C)
        self.w_out2 = jnp.zeros((C, 1))  # start at eps = 0

    def branch(
        self,
        x_t: Float[Array, "H N"],
        step: Float[Array, " C"],
        history: Float[Array, "L N"],
        macro_e: Float[Array, " C"],
        signals: Float[Array, "N F"],
        full: bool,
    ) -> Float[Array, "H N"]:
        """One condition level: ``full=False`` drops history and stock signals (macro-only)."""
        hist = history if full else jnp.zeros_like(history)
        mask = jnp.concatenate(
            [jnp.full(hist.shape, 1.0 if full else 0.0), jnp.zeros(x_t.shape)], axis=0
        ).astype(x_t.dtype)
        vals = jnp.concatenate([hist, x_t], axis=0)
        h = jnp.stack([vals, mask, jnp.ones_like(vals)], axis=-1) @ self.w_in
        h = h + self.time_pos[:, None, :] + self.asset_emb[None, :, :] + macro_e
        if full:
            h = h + (signals @ self.w_signal)[None, :, :]
        skip = jnp.zeros_like(h)
        for layer in self.layers:
            h, s = layer(h, step)
            skip = skip + s
        skip = skip / math.sqrt(len(self.layers))
        y = (jax.nn.silu(skip @ self.w_out1) @ self.w_out2)[..., 0]
        return y[self.history :]

    def gate(self, macro_e: Float[Array, " C"], step: Float[Array, " C"]) -> Float[Array, ""]:
        return jax.nn.sigmoid(self.gate_mlp(jnp.concatenate([macro_e, step]))[0])

    def __call__(
        self,
        x_t: Float[Array, "H N"],
        t: Int[Array, ""] | Float[Array, ""],
        history: Float[Array, "L N"],
        macro: Float[Array, " M"],
        signals: Float[Array, "N F"],
        *,
        return_branches: bool = False,
    ):
        step = self.step_mlp(step_embedding(t, self.channels))
        macro_e = self.macro_proj(macro)
        eps_full = self.branch(x_t, step, history, macro_e, signals, True)
        if not self.guided:
            return (eps_full, eps_full, jnp.ones(())) if return_branches else eps_full
        eps_macro = self.branch(x_t, step, history, macro_e, signals, False)
        g = self.gate(macro_e, step)
        eps = g * eps_full + (1 - g) * eps_macro
        if return_branches:
            return eps, eps_macro, g
        return eps
