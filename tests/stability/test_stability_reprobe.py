"""Re-probe regressions: ``median_spread`` names an empty or malformed ``steps`` (was an IndexError)."""

import numpy as np
import pytest

from jaxkit.stability import median_spread


def test_median_spread_names_empty_and_bad_steps():
    r = median_spread([10, None, 30], 100)
    assert r["median"] == float(np.median([10, 100, 30])) and r["reached"] == 2 and r["n_seeds"] == 3
    with pytest.raises(ValueError, match="steps: expected the steps-to-target of at least one seed"):
        median_spread([], 10)  # was IndexError from numpy
    with pytest.raises(ValueError, match="steps: expected integers >= 0 or None"):
        median_spread([1, -5], 10)
    with pytest.raises(ValueError, match="censor: expected an integer >= 0"):
        median_spread([1], -1)


def test_value_checks_hold_under_jit():
    """Before: a traced rho = 2 gave a stability of 6.5, out-of-range labels a NaN loss, NaN probabilities a NaN
    regularizer without a word."""
    import jax
    import jax.numpy as jnp

    from jaxkit.stability import agreement_regularizer, cross_entropy, noise_stability, resample_tokens

    key = jax.random.key(0)
    x = jax.random.normal(jax.random.key(1), (50, 3))
    with pytest.raises(Exception, match=r"rho: expected values in \[-1, 1\]"):
        jax.block_until_ready(jax.jit(lambda r: noise_stability(jnp.sum, x, rho=r, key=key).value)(2.0))
    ok = jax.jit(lambda r: noise_stability(jnp.sum, x, rho=r, key=key).value)(1.0)
    np.testing.assert_allclose(float(ok), float(jnp.mean(jnp.sum(x, 1) ** 2)), rtol=1e-5)  # rho = 1: E f(x)^2
    with pytest.raises(Exception, match=r"rho: expected values in \[-1, 1\]"):
        f = jax.jit(lambda r: resample_tokens(jnp.arange(4), key, rho=r, vocab_size=4))
        jax.block_until_ready(f(jnp.array(-3.0)))
    with pytest.raises(Exception, match="labels: token ids outside the vocabulary"):
        jax.block_until_ready(jax.jit(cross_entropy)(jnp.zeros((2, 3)), jnp.array([0, 7])))
    np.testing.assert_allclose(float(jax.jit(cross_entropy)(jnp.zeros((2, 3)), jnp.array([0, 2]))), np.log(3))
    p = jnp.array([[0.5, 0.5], [jnp.nan, 0.5]])
    with pytest.raises(ValueError, match="probs_clean: expected finite probabilities"):
        agreement_regularizer(p, p)


def test_median_spread_refuses_a_step_beyond_the_run_length():
    """Fresh probe: steps [10, 200] with censor=100 gave median 105 and max 200, past the end of the run."""
    with pytest.raises(
        ValueError, match=r"steps: expected steps <= censor=100 \(the run length\), received 200"
    ):
        median_spread([10, 200], censor=100)
    out = median_spread(
        [10, None, 100], censor=100
    )  # a step equal to the run length is a reach at the last step
    assert out["median"] == float(np.median([10, 100, 100])) and out["reached"] == 2
