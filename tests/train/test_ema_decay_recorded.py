"""Fresh probe N05 (2026-12-07, left open then): ``read_ema(state, decay)`` with a decay other than the one given
to ``track_ema`` returned a wrongly debiased average without a word. The state now records its decay."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import EmaState, read_ema, track_ema


def _state(decay, steps=3):
    params = {"w": jnp.array([1.0, -2.0])}
    opt = optax.chain(optax.sgd(0.1), track_ema(decay))
    state = opt.init(params)
    iterates = []
    for s in range(steps):
        grads = {"w": jnp.array([0.5, 1.0]) * (s + 1)}
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        iterates.append(np.asarray(params["w"]))
    return state, np.stack(iterates)


def test_read_ema_uses_the_recorded_decay_and_refuses_another():
    state, iterates = _state(0.9)
    w = 0.1 * 0.9 ** np.arange(2, -1, -1)  # (1 - d) d^(s - i) for s = 3 steps, debiased by 1 - d^3
    expected = w @ iterates / (1 - 0.9**3)
    np.testing.assert_allclose(np.asarray(read_ema(state)["w"]), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(read_ema(state, 0.9)["w"]), expected, rtol=1e-6)
    with pytest.raises(
        ValueError, match=r"^decay: expected the decay track_ema averaged with .* received 0\.5"
    ):
        read_ema(state, 0.5)


def test_a_hand_built_state_needs_its_decay():
    state = EmaState(jnp.ones((), jnp.int32), {"w": jnp.array([0.1, 0.2])})
    with pytest.raises(ValueError, match="^decay: required"):
        read_ema((state,))
    np.testing.assert_allclose(np.asarray(read_ema((state,), 0.9)["w"]), np.array([1.0, 2.0]), rtol=1e-6)
