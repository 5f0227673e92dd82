"""params_ema: the averaged parameters equal the hand-computed debiased EMA of the iterates; the average travels
in the optimizer state (so fit's checkpoints carry it); bad arguments raise."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import read_ema, track_ema


def test_ema_matches_hand_computed_average():
    decay, lr = 0.9, 0.1
    opt = optax.chain(optax.sgd(lr), track_ema(decay))
    params = {"w": jnp.array([1.0, -2.0]), "b": None}
    state = opt.init(params)
    iterates, avg = [], np.zeros(2)
    for s in range(1, 8):
        grads = {"w": 2 * params["w"] + 1.0, "b": None}  # gradient of |w|^2 + sum(w)
        updates, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, updates)
        iterates.append(np.asarray(params["w"]))
        avg = decay * avg + (1 - decay) * iterates[-1]
        np.testing.assert_allclose(read_ema(state, decay)["w"], avg / (1 - decay**s), rtol=1e-6)
    np.testing.assert_allclose(params["w"], iterates[-1])  # updates pass through unchanged
    # debiased EMA is a convex combination of the iterates with weights (1-d) d^(s-i) / (1-d^s)
    w = (1 - decay) * decay ** np.arange(6, -1, -1) / (1 - decay**7)
    np.testing.assert_allclose(read_ema(state, decay)["w"], w @ np.stack(iterates), rtol=1e-6)


def test_ema_errors():
    with pytest.raises(ValueError, match="decay"):
        track_ema(1.0)
    with pytest.raises(ValueError, match="EmaState"):
        read_ema(optax.sgd(0.1).init({"w": jnp.zeros(2)}), 0.9)


def test_read_ema_before_any_update_is_refused_not_zeros():
    """Fresh probe N04: read before the first step returned all-zero weights (the debiasing's 0/0). After one
    step the debiased average is the updated parameters themselves (closed form: (1-d) p / (1-d) = p)."""
    import jax.numpy as jnp
    import optax

    from jaxkit.train import read_ema, track_ema

    opt = optax.chain(optax.sgd(0.1), track_ema(0.9))
    params = {"w": jnp.array([1.0, -2.0])}
    state = opt.init(params)
    with pytest.raises(ValueError, match="opt_state: no update has been averaged yet"):
        read_ema(state, 0.9)
    grads = {"w": jnp.array([0.5, 0.5])}
    updates, state = opt.update(grads, state, params)
    new = optax.apply_updates(params, updates)
    np.testing.assert_allclose(read_ema(state, 0.9)["w"], new["w"], rtol=1e-6)
