"""Re-probe regression: a user callable returning the wrong shape is named (was a broadcasting TypeError from
inside the sampler loop)."""

import jax
import jax.numpy as jnp
import pytest

from jaxkit import diffusion as dm

S = dm.discrete_schedule("linear", 20)


def test_a_callable_of_the_wrong_output_shape_is_named():
    with pytest.raises(
        ValueError, match=r"eps_fn: expected the callable to return an array of the shape of its"
    ):
        dm.ddim_sample(lambda x, t: jnp.zeros(5), S, jnp.ones(3), jax.random.key(0), n_steps=5)
    with pytest.raises(ValueError, match=r"eps_fn: expected the callable to return .* received shape \(1,\)"):
        dm.ddpm_sample(lambda x, t: jnp.zeros(1), S, jnp.ones(3), jax.random.key(0))
    with pytest.raises(ValueError, match="score_fn: expected the callable to return"):
        dm.probability_flow_sample(lambda x, t: x[:1], dm.VPSchedule(), jnp.ones(2), dm.time_grid(4))
    out = dm.ddim_sample(lambda x, t: jnp.zeros_like(x), S, jnp.ones(3), jax.random.key(0), n_steps=5)
    assert out.shape == (3,)
