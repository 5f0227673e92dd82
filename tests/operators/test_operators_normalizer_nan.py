"""Re-probe regression: ``GaussianNormalizer.encode``/``decode`` refuse NaN/inf (a diverged model's output) instead
of passing it through, eagerly and under ``jax.jit``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.operators import GaussianNormalizer


def test_decode_and_encode_refuse_nan():
    x = np.random.default_rng(0).normal(2.0, 3.0, size=(6, 2, 8))
    n = GaussianNormalizer.fit(x)
    np.testing.assert_allclose(np.asarray(n.decode(n.encode(jnp.asarray(x[0])))), x[0], rtol=1e-5, atol=1e-5)
    bad = jnp.ones((2, 8)).at[1, 3].set(jnp.nan)
    with pytest.raises(ValueError, match="x: expected finite values"):
        n.decode(bad)  # was NaN passed through
    with pytest.raises(ValueError, match="x: expected finite values"):
        n.encode(bad)
    with pytest.raises(Exception, match="x: expected finite values"):
        jax.block_until_ready(jax.jit(lambda z: n.decode(z))(bad))
