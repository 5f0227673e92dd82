"""Cases a fresh set of bad-input probes found silent or cryptic in jaxkit.operators, now defined or refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.operators import relative_l2


def test_relative_l2_zero_target_is_defined_not_nan():
    z = jnp.zeros((2, 4))
    assert float(relative_l2(z, z)) == 0.0  # an exact match of a zero field: no error
    assert float(jax.jit(relative_l2)(z, z)) == 0.0
    assert float(relative_l2(jnp.ones((2, 4)), z)) == np.inf  # no finite relative error exists
    pred = jnp.array([[0.0, 0.0], [1.0, 2.0], [3.0, 0.0]])
    target = jnp.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    ref = [0.0, np.linalg.norm([0.0, 1.0]) / np.linalg.norm([1.0, 1.0]), np.inf]
    np.testing.assert_allclose(np.asarray(relative_l2(pred, target, per_sample=True)), ref, rtol=1e-6)
    # the gradient stays finite where the target norm is zero (double-where), as the loss needs
    g = jax.grad(lambda p: relative_l2(p, target[:2]))(pred[:2] + 0.5)
    assert np.all(np.isfinite(np.asarray(g)))


def test_relative_l2_empty_batch_raises():
    with pytest.raises(ValueError, match="pred: expected a non-empty batch"):
        relative_l2(jnp.ones((0, 4)), jnp.ones((0, 4)))
    with pytest.raises((ValueError, TypeError), match="pred"):  # no batch axis
        relative_l2(jnp.float32(1.0), jnp.float32(1.0))


def test_instance_norm_names_scale_and_shift_of_the_wrong_length():
    """Fresh probe: scale/shift with 3 entries for 2 channels gave "mul got incompatible shapes (2, 8), (3, 1)"."""
    import inspect

    from jaxkit.operators import instance_norm

    u = jnp.arange(16.0).reshape(2, 8)
    with pytest.raises(Exception, match="scale"):  # in this suite the jaxtyping hook names it first
        instance_norm(u, jnp.ones(3), jnp.zeros(2))
    plain = inspect.unwrap(instance_norm)  # as a user runs it, without the test suite's runtime type checking
    with pytest.raises(ValueError, match=r"scale: expected shape \(2,\), one value per channel"):
        plain(u, jnp.ones(3), jnp.zeros(2))
    with pytest.raises(ValueError, match=r"shift: expected shape \(2,\)"):
        plain(u, jnp.ones(2), jnp.zeros(3))
    x = np.asarray(u, np.float64)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(
        np.asarray(instance_norm(u, jnp.ones(2), jnp.zeros(2))), ref, rtol=1e-5, atol=1e-6
    )
