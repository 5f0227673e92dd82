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


def test_relu_moment_maps_refuse_bad_values_under_jit_and_vmap():
    """Fresh probe: under jit relu_correlation_map(1.2) returned 1.0 and relu_second_moment(1, 1, 2) (a
    covariance breaking Cauchy-Schwarz) returned 0.5, both without a word; eagerly each refuses."""
    import jax
    import jax.numpy as jnp

    from jaxkit.stability import relu_correlation_map, relu_second_moment

    def raises(match, fn, *args):
        with pytest.raises(Exception, match=match):
            jax.block_until_ready(fn(*args))

    corr = r"c: expected correlations in \[-1, 1\]"
    for bad in (jnp.array([1.2]), jnp.array([-0.5, jnp.nan]), jnp.array([-jnp.inf])):
        raises(corr, jax.jit(relu_correlation_map), bad)
        raises(corr, jax.vmap(relu_correlation_map), bad)
        with pytest.raises(ValueError, match=corr):
            relu_correlation_map(bad)
    cs = r"c: expected a covariance with \|c\| <= sqrt\(q1 q2\) \(Cauchy-Schwarz\)"
    raises(cs, jax.jit(relu_second_moment), 1.0, 1.0, 2.0)
    raises(cs, jax.vmap(relu_second_moment), jnp.ones(2), jnp.ones(2), jnp.array([0.5, 2.0]))
    raises(cs, jax.jit(lambda c: relu_second_moment(1.0, 4.0, c)), -2.5)  # concrete variances, traced c
    raises("q1: expected variances >= 0", jax.jit(relu_second_moment), -1.0, 1.0, 0.0)
    raises("q2: expected finite values", jax.jit(relu_second_moment), 1.0, jnp.inf, 0.0)
    raises(
        "c: expected finite values",
        jax.vmap(relu_second_moment),
        jnp.ones(1),
        jnp.ones(1),
        jnp.array([jnp.nan]),
    )
    with pytest.raises(ValueError, match=cs):
        relu_second_moment(1.0, 1.0, 2.0)
    # valid inputs: the eager values, jitted and vmapped
    c = jnp.array([-1.0, -0.3, 0.0, 0.7, 1.0])
    ref = np.asarray(relu_correlation_map(c))
    np.testing.assert_allclose(np.asarray(jax.jit(relu_correlation_map)(c)), ref, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(relu_correlation_map)(c)), ref, rtol=1e-6)
    np.testing.assert_allclose(ref[[0, -1]], [0.0, 1.0], atol=1e-6)
    q1, q2, cov = jnp.array([1.0, 2.0, 0.0]), jnp.array([4.0, 0.5, 3.0]), jnp.array([-2.0, 0.3, 0.0])
    ref2 = np.asarray(relu_second_moment(q1, q2, cov))
    np.testing.assert_allclose(np.asarray(jax.jit(relu_second_moment)(q1, q2, cov)), ref2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(relu_second_moment)(q1, q2, cov)), ref2, rtol=1e-6)
    np.testing.assert_allclose(
        ref2[1],
        np.sqrt(1.0) / (2 * np.pi) * (np.sin(np.arccos(0.3)) + (np.pi - np.arccos(0.3)) * 0.3),
        rtol=1e-5,
    )
