r"""A conditional ε-prediction denoiser over (time × assets), CSDI-style (Tashiro et al. 2021), with STABLE's
multi-level guidance.

One sample is a grid of ``L + H`` time steps × ``N`` assets: the first ``L`` rows hold the observed history (mask
1), the last ``H`` rows the noisy future $x_t$ (mask 0). Each token gets ``C`` channels from its value and
mask plus learned time-position and asset embeddings, the diffusion-step embedding, the projected macro context
and its asset's projected signals. A residual layer is: attention over time (per asset), attention over assets
(per time step), a gated ``tanh ⊙ sigmoid`` unit, residual and skip outputs (as CSDI).

Multi-level guidance: the same network is evaluated with the full condition (history + stock signals + macro) and
with the macro condition only (history and signals removed); a learned gate
$g = \sigma(\mathrm{MLP}(\text{macro}, \text{step}))$ blends them,
$\hat\varepsilon = g\,\hat\varepsilon_{full} + (1-g)\,\hat\varepsilon_{macro}$. The gate starts at
$g\approx0.88$ (output bias 2): with an uninformative start (0.5) the macro-only level, which cannot see the
history, dominated early training in the AR(1) sanity run and pulled the conditional mean towards zero.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int, PRNGKeyArray

from jaxkit._nn import layer_norm
from jaxkit._validate import check_int, check_size


def _check_sizes(width_name: str, **sizes: int) -> None:
    """Every size an integer >= 1, and no weight matrix (a size x the layer width ``sizes[width_name]``, float32)
    above the size cap; the width is checked first, so the message names the size that is too large."""
    for name, v in sizes.items():
        check_int(name, v, minimum=1)
    width = sizes[width_name]
    check_size(width_name, 16.0 * width * width, hint=f"a ({width}, 4 x {width}) float32 weight matrix")
    for name, v in sizes.items():
        check_size(name, 16.0 * v * width, hint=f"a ({v}, 4 x {width}) float32 weight matrix")


__all__ = ["AttentionNet", "ConditionalDenoiser", "MLPDenoiser", "MLPNet", "ResidualLayer", "step_embedding"]


def step_embedding(t: Int[Array, ""] | Float[Array, ""], dim: int) -> Float[Array, " d"]:
    """Sinusoidal embedding of the diffusion step index (Vaswani et al. 2017; as DDPM/CSDI); ``dim`` even."""
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 2 or dim % 2:
        raise ValueError(f"dim: expected an even integer >= 2 (sin and cos halves), received {dim!r}")
    check_size("dim", 12 * dim)  # float32 frequencies, angles and the sin/cos halves
    half = dim // 2
    freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half) / max(half - 1, 1))
    a = jnp.asarray(t, jnp.float32) * freqs
    return jnp.concatenate([jnp.sin(a), jnp.cos(a)])


def _numpy_rng(key: PRNGKeyArray) -> np.random.Generator:
    """Host RNG seeded from a JAX key: initializing with NumPy avoids compiling one tiny kernel per shape."""
    raw = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    return np.random.default_rng(np.asarray(raw).astype(np.uint32).ravel().tolist())


def _dense(rng: np.random.Generator, fan_in: int, fan_out: int, scale: float = 1.0) -> Float[Array, "i o"]:
    return jnp.asarray(scale * rng.standard_normal((fan_in, fan_out)) / math.sqrt(fan_in), jnp.float32)


def _mlp(rng: np.random.Generator, n_in: int, n_hidden: int, n_out: int) -> tuple[Array, ...]:
    z = lambda n: jnp.zeros((n,), jnp.float32)  # noqa: E731
    return (_dense(rng, n_in, n_hidden), z(n_hidden), _dense(rng, n_hidden, n_out), z(n_out))


def _apply_mlp(p: tuple[Array, ...], x: Array) -> Array:
    w1, b1, w2, b2 = p
    return jax.nn.silu(x @ w1 + b1) @ w2 + b2


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
        _check_sizes("channels", channels=channels, heads=heads)
        if channels % heads:
            raise ValueError(f"heads: expected a divisor of channels={channels}, received {heads}")
        rng = _numpy_rng(key)
        C = channels
        self.w_time = _dense(rng, C, 4 * C)
        self.w_asset = _dense(rng, C, 4 * C)
        self.w_step = _dense(rng, C, C)
        self.w_mid = _dense(rng, C, 2 * C)
        self.w_out = _dense(rng, C, 2 * C)
        self.heads = heads

    def _attend(self, y, w, spec):
        S, N, C = y.shape
        q, k, v, wo = w[:, :C], w[:, C : 2 * C], w[:, 2 * C : 3 * C], w[:, 3 * C :]
        yn = layer_norm(y)
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
    step_mlp: tuple[Array, ...]
    macro_proj: tuple[Array, ...]
    w_signal: Float[Array, "F C"]
    gate_mlp: tuple[Array, ...]
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
        _check_sizes(
            "channels", n_assets=n_assets, history=history, horizon=horizon, n_macro=n_macro, n_signals=n_signals,
            channels=channels, layers=layers, heads=heads,
        )  # fmt: skip
        rng = _numpy_rng(key)
        C = channels
        self.history, self.horizon, self.channels, self.guided = history, horizon, channels, guided
        self.w_in = _dense(rng, 3, C)  # (value, mask, 1)
        self.time_pos = _dense(rng, history + horizon, C, 0.1 * math.sqrt(history + horizon))
        self.asset_emb = _dense(rng, n_assets, C, 0.1 * math.sqrt(n_assets))
        self.step_mlp = _mlp(rng, C, C, C)
        self.macro_proj = _mlp(rng, n_macro, C, C)
        self.w_signal = _dense(rng, n_signals, C)
        w1, b1, w2, _ = _mlp(rng, 2 * C, C, 1)
        self.gate_mlp = (
            w1,
            b1,
            w2,
            jnp.full((1,), 2.0, jnp.float32),
        )  # start at g ~ 0.88: trust the full level
        self.layers = tuple(
            ResidualLayer(
                C, heads, key=jax.random.wrap_key_data(jnp.asarray(rng.integers(0, 2**32, 2), jnp.uint32))
            )
            for _ in range(layers)
        )
        self.w_out1 = _dense(rng, C, C)
        self.w_out2 = jnp.zeros((C, 1), jnp.float32)  # start at eps = 0

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
        return jax.nn.sigmoid(_apply_mlp(self.gate_mlp, jnp.concatenate([macro_e, step]))[0])

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
        """ε prediction ``(H, N)``; ``return_branches=True`` returns ``(eps, eps_full, eps_macro, gate)`` (for the
        loss, which trains each level on its own as well as the blend)."""
        step = _apply_mlp(self.step_mlp, step_embedding(t, self.channels))
        macro_e = _apply_mlp(self.macro_proj, macro)
        eps_full = self.branch(x_t, step, history, macro_e, signals, True)
        if not self.guided:
            return (eps_full, eps_full, eps_full, jnp.ones(())) if return_branches else eps_full
        eps_macro = self.branch(x_t, step, history, macro_e, signals, False)
        g = self.gate(macro_e, step)
        eps = g * eps_full + (1 - g) * eps_macro
        if return_branches:
            return eps, eps_full, eps_macro, g
        return eps


class MLPDenoiser(eqx.Module):
    r"""A residual-MLP ε-network on the flattened sample, with the same interface and multi-level guidance as
    :class:`ConditionalDenoiser`: ``model(x_t, t, history, macro, signals) -> eps (H, N)``.

    Input $[x_t, h\cdot m, s\cdot m, m, \mathrm{emb}(\text{macro})]$ with $m=1$ for the full level and $m=0$
    for the macro-only level; ``depth`` pre-norm residual blocks
    $u \leftarrow u + W_2\,\mathrm{SiLU}(W_1\,\mathrm{LN}(u) + e_t)$ of width ``hidden``, with the step embedding
    $e_t$ added inside each block; a zero-initialized read-out (so training starts at $\hat\varepsilon = 0$).
    No attention over time and assets, so it is cheaper per evaluation than :class:`ConditionalDenoiser`; the
    ``stable_ablation`` experiment measures its per-date scale, schedule, training budget and sampler."""

    w_in: Float[Array, "D W"]
    b_in: Float[Array, " W"]
    step_mlp: tuple[Array, ...]
    macro_proj: tuple[Array, ...]
    gate_mlp: tuple[Array, ...]
    blocks: tuple[tuple[Array, ...], ...]
    w_out: Float[Array, "W HN"]
    b_out: Float[Array, " HN"]
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
        hidden: int = 256,
        depth: int = 3,
        channels: int = 64,
        guided: bool = True,
        key: PRNGKeyArray,
    ):
        _check_sizes(
            "hidden", n_assets=n_assets, history=history, horizon=horizon, n_macro=n_macro,
            n_signals=n_signals, hidden=hidden, depth=depth, channels=channels,
        )  # fmt: skip
        rng = _numpy_rng(key)
        N, L, H, C, W = n_assets, history, horizon, channels, hidden
        self.history, self.horizon, self.channels, self.guided = history, horizon, channels, guided
        d_in = H * N + L * N + N * n_signals + 1 + C
        self.w_in = _dense(rng, d_in, W)
        self.b_in = jnp.zeros((W,), jnp.float32)
        self.step_mlp = _mlp(rng, C, C, C)
        self.macro_proj = _mlp(rng, n_macro, C, C)
        w1, b1, w2, _ = _mlp(rng, 2 * C, C, 1)
        self.gate_mlp = (
            w1,
            b1,
            w2,
            jnp.full((1,), 2.0, jnp.float32),
        )  # start at g ~ 0.88, as the attention net
        self.blocks = tuple(
            (_dense(rng, W, W), jnp.zeros((W,), jnp.float32), _dense(rng, C, W), _dense(rng, W, W, 0.5))
            for _ in range(depth)
        )
        self.w_out = jnp.zeros((W, H * N), jnp.float32)
        self.b_out = jnp.zeros((H * N,), jnp.float32)

    def branch(self, x_t, step, history, macro_e, signals, full: bool):
        m = 1.0 if full else 0.0
        u = jnp.concatenate(
            [x_t.ravel(), m * history.ravel(), m * signals.ravel(), jnp.full((1,), m, x_t.dtype), macro_e]
        )
        u = u @ self.w_in + self.b_in
        for w1, b1, ws, w2 in self.blocks:
            u = u + jax.nn.silu(layer_norm(u) @ w1 + b1 + step @ ws) @ w2
        return (jax.nn.silu(layer_norm(u)) @ self.w_out + self.b_out).reshape(x_t.shape)

    def gate(self, macro_e: Float[Array, " C"], step: Float[Array, " C"]) -> Float[Array, ""]:
        return jax.nn.sigmoid(_apply_mlp(self.gate_mlp, jnp.concatenate([macro_e, step]))[0])

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
        """ε prediction ``(H, N)``; ``return_branches=True`` returns ``(eps, eps_full, eps_macro, gate)``."""
        step = _apply_mlp(self.step_mlp, step_embedding(t, self.channels))
        macro_e = _apply_mlp(self.macro_proj, macro)
        eps_full = self.branch(x_t, step, history, macro_e, signals, True)
        if not self.guided:
            return (eps_full, eps_full, eps_full, jnp.ones(())) if return_branches else eps_full
        eps_macro = self.branch(x_t, step, history, macro_e, signals, False)
        g = self.gate(macro_e, step)
        eps = g * eps_full + (1 - g) * eps_macro
        if return_branches:
            return eps, eps_full, eps_macro, g
        return eps


def _positive_int(name: str, v: object) -> None:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
        raise ValueError(f"{name}: expected an integer >= 1, received {v!r}")


@dataclass(frozen=True)
class AttentionNet:
    """Choice of denoiser for :func:`make_forecaster`: the CSDI-like :class:`ConditionalDenoiser` (attention over
    time and over assets) with ``channels`` per token, ``layers`` residual layers and ``heads`` attention heads
    (``heads`` must divide ``channels``)."""

    channels: int = 32
    layers: int = 2
    heads: int = 2

    def __post_init__(self):
        for name in ("channels", "layers", "heads"):
            _positive_int(name, getattr(self, name))
        if self.channels % self.heads:
            raise ValueError(f"heads: expected a divisor of channels={self.channels}, received {self.heads}")

    def build(
        self, *, n_assets: int, history: int, horizon: int, n_macro: int, n_signals: int, guided: bool,
        key: PRNGKeyArray,
    ) -> ConditionalDenoiser:  # fmt: skip
        """The initialized network for these sizes."""
        return ConditionalDenoiser(
            n_assets=n_assets, history=history, horizon=horizon, n_macro=n_macro, n_signals=n_signals,
            channels=self.channels, layers=self.layers, heads=self.heads, guided=guided, key=key,
        )  # fmt: skip

    def to_dict(self) -> dict:
        return {"kind": "attention", **asdict(self)}


@dataclass(frozen=True)
class MLPNet:
    """Choice of denoiser for :func:`make_forecaster`: the residual-MLP :class:`MLPDenoiser` of width
    ``hidden`` and ``depth`` blocks; ``channels`` sizes its step and macro embeddings."""

    hidden: int = 256
    depth: int = 3
    channels: int = 32

    def __post_init__(self):
        for name in ("hidden", "depth", "channels"):
            _positive_int(name, getattr(self, name))
        if self.channels % 2:
            raise ValueError(
                f"channels: expected an even integer (sin/cos step embedding), received {self.channels}"
            )

    def build(
        self, *, n_assets: int, history: int, horizon: int, n_macro: int, n_signals: int, guided: bool,
        key: PRNGKeyArray,
    ) -> MLPDenoiser:  # fmt: skip
        """The initialized network for these sizes."""
        return MLPDenoiser(
            n_assets=n_assets, history=history, horizon=horizon, n_macro=n_macro, n_signals=n_signals,
            hidden=self.hidden, depth=self.depth, channels=self.channels, guided=guided, key=key,
        )  # fmt: skip

    def to_dict(self) -> dict:
        return {"kind": "mlp", **asdict(self)}


def denoiser_from_dict(d: dict) -> AttentionNet | MLPNet:
    """Inverse of ``AttentionNet.to_dict`` / ``MLPNet.to_dict``."""
    kinds = {"attention": AttentionNet, "mlp": MLPNet}
    d = dict(d)
    kind = d.pop("kind", None)
    if kind not in kinds:
        raise ValueError(f"denoiser: expected kind 'attention' or 'mlp', received {kind!r}")
    return kinds[kind](**d)
