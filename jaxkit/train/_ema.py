r"""Exponential moving average of the parameters (Polyak averaging), as an optax transformation.

$\bar\theta_s = d\,\bar\theta_{s-1} + (1-d)\,\theta_s$ after every step, with the debiased read-out
$\bar\theta_s/(1-d^s)$ (``bar`` starts at zero; Kingma & Ba 2015, §3). Diffusion models sample with the
averaged weights (Ho et al. 2020; Song et al. 2021; Karras et al. 2022). Chain it last, after the optimizer, so
it sees the final updates: ``optax.chain(optimizer, track_ema(0.999))``; the average travels in the optimizer
state (checkpointed and resumed with it) and :func:`read_ema` reads it out as ``params_ema``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxkit._typing import PyTree
from jaxkit._validate import error_if_invalid

__all__ = ["EmaState", "read_ema", "track_ema"]


class EmaState(NamedTuple):
    """The state :func:`track_ema` keeps: the number of averaged steps, the (biased) average, and the decay it
    averages with (``None`` in a state built by hand, whose decay :func:`read_ema` must then be told)."""

    count: jax.Array
    average: PyTree
    decay: jax.Array | None = None


def track_ema(decay: float) -> optax.GradientTransformation:
    """Keep ``params_ema``, the EMA of ``params + updates``, in the state; the updates pass through unchanged."""
    _check_decay(decay)

    def init(params):
        return EmaState(
            jnp.zeros((), jnp.int32), jax.tree.map(jnp.zeros_like, params), jnp.asarray(decay, jnp.float32)
        )

    def update(updates, state, params=None):
        if params is None:
            raise ValueError("track_ema: the optimizer must be called with params")
        new = optax.apply_updates(params, updates)
        avg = jax.tree.map(lambda a, p: decay * a + (1.0 - decay) * p, state.average, new)
        return updates, EmaState(state.count + 1, avg, state.decay)

    return optax.GradientTransformation(init, update)


def _check_decay(decay: Any) -> None:
    if isinstance(decay, bool) or not isinstance(decay, int | float) or not 0.0 <= decay < 1.0:
        raise ValueError(f"decay: expected a number in [0, 1), received {decay!r}")


def read_ema(opt_state: optax.OptState, decay: float | None = None) -> object:
    """``params_ema``: the debiased average from the :class:`EmaState` found in ``opt_state`` (a chain's state tuple),
    with the decay the state records (:func:`track_ema`'s). ``decay``, if given, must be that one (another is
    refused: the debiasing ``1 - d^s`` would be wrong); it is required only for a hand-built state that records
    none. Refused before the first update (``ValueError``; a run-time check under ``jax.jit``): there is no
    average yet."""
    if decay is not None:
        _check_decay(decay)
    states = [
        s
        for s in jax.tree.leaves(opt_state, is_leaf=lambda s: isinstance(s, EmaState))
        if isinstance(s, EmaState)
    ]
    if len(states) != 1:
        raise ValueError(f"opt_state: expected exactly one EmaState (chain track_ema), found {len(states)}")
    s = states[0]
    # before the first update the average holds no parameters (zeros, debiased by 0/0): refused, not returned
    count = error_if_invalid(
        s.count,
        s.count < 1,
        "opt_state: no update has been averaged yet (EmaState count 0); read_ema needs at least one optimizer step",
    )
    if s.decay is None:
        if decay is None:
            raise ValueError("decay: required: this EmaState records no decay (built by hand); pass the decay it was "
                             "averaged with")  # fmt: skip
        d = jnp.asarray(decay, jnp.float32)
    else:
        d = s.decay
        if decay is not None:
            d = error_if_invalid(
                d,
                jnp.abs(d - jnp.asarray(decay, jnp.float32)) > 1e-6,
                f"decay: expected the decay track_ema averaged with (recorded in opt_state), received {decay!r}; "
                "leave decay out to use the recorded one",
            )
    c = 1.0 - d ** count.astype(jnp.float32)
    return jax.tree.map(lambda a: a / jnp.where(c > 0, c, 1.0).astype(a.dtype), s.average)
