"""A loss whose gradient was NaN at an exact match (issue 49): relative_l2's gradient is 0 where a sample is
predicted exactly, and the analytic gradient elsewhere."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit.operators import relative_l2


def test_gradient_is_zero_at_an_exact_match_and_analytic_elsewhere():
    rng = np.random.default_rng(0)
    y = jnp.asarray(rng.normal(size=(3, 1, 8)), jnp.float32)
    pred = y.at[1].add(jnp.asarray(rng.normal(size=(1, 8)), jnp.float32))  # samples 0 and 2 exact
    g = np.asarray(jax.grad(lambda p: relative_l2(p, y))(pred))
    assert np.all(np.isfinite(g))
    np.testing.assert_array_equal(g[[0, 2]], 0.0)
    d, yn = np.asarray(pred[1] - y[1], np.float64), np.linalg.norm(np.asarray(y[1], np.float64))
    np.testing.assert_allclose(g[1], d / np.linalg.norm(d) / yn / 3, rtol=1e-5)  # d/dp mean_b ||p-y||/||y||
    assert float(relative_l2(y, y)) == 0.0
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda p: relative_l2(p, y))(y)), 0.0)
