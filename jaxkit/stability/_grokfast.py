"""Grokfast-EMA (Lee et al. 2024, "Grokfast: Accelerated Grokking by Amplifying Slow Gradients") as optax.

``μ_t = α μ_{t-1} + (1-α) g_t`` (``μ_0 = g_0``, as in the reference code), and the update passed on is
``g_t + λ μ_t``: the slow (low-frequency) gradient component is amplified. Defaults ``α = 0.98``, ``λ = 2``.
Chain it before the optimizer: ``optax.chain(grokfast_ema(), optax.adamw(...))``. Elementwise, so it acts
independently on models stacked along a seed axis.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from .._validate import check_range


class GrokfastState(NamedTuple):
    count: jax.Array
    ema: Any


def grokfast_ema(alpha: float | int = 0.98, lamb: float | int = 2.0) -> optax.GradientTransformation:
    """Gradient transformation adding ``λ ·`` EMA(gradients) to the gradients."""
    check_range("alpha", alpha, 0.0, 1.0)
    check_range("lamb", lamb, 0.0, float("inf"))

    def init(params):
        return GrokfastState(jnp.zeros((), jnp.int32), jax.tree_util.tree_map(jnp.zeros_like, params))

    def update(updates, state, params=None):
        first = state.count == 0
        ema = jax.tree_util.tree_map(
            lambda m, g: jnp.where(first, g, alpha * m + (1.0 - alpha) * g), state.ema, updates
        )
        new = jax.tree_util.tree_map(lambda g, m: g + lamb * m, updates, ema)
        return new, GrokfastState(state.count + 1, ema)

    return optax.GradientTransformation(init, update)
