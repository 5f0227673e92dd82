"""Bad and awkward inputs to the portfolio functions: lists, rank-deficient priors, near-singular float32 priors."""

import jax
import numpy as np
import pytest

from jaxkit.portfolio import black_litterman, max_sharpe, min_variance, precision_black_litterman

S = np.array([[0.04, 0.01, 0.0], [0.01, 0.09, 0.02], [0.0, 0.02, 0.16]])
MU = np.array([0.05, 0.07, 0.09])


def test_python_lists_are_accepted_like_arrays():
    np.testing.assert_allclose(np.asarray(min_variance(S.tolist())), np.asarray(min_variance(S)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(max_sharpe(MU.tolist(), S.tolist())), np.asarray(max_sharpe(MU, S)),
                               rtol=1e-6)  # fmt: skip
    a = black_litterman(MU.tolist(), S.tolist(), [[1, 0, 0]], [0.1], tau=0.05)
    b = black_litterman(MU, S, np.array([[1.0, 0, 0]]), np.array([0.1]), tau=0.05)
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)
    with pytest.raises(TypeError, match="prior_cov: expected a (real )?numeric array"):
        black_litterman(MU, [["a", "b", "c"]] * 3, [[1, 0, 0]], [0.1])


def test_view_on_a_zero_variance_direction_raises_instead_of_nan():
    u = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    v = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    rank2 = 0.04 * np.outer(u, u) + 0.09 * np.diag([0.0, 0.0, 1.0])  # psd, zero variance along v
    with pytest.raises(ValueError, match="omega: expected a positive definite matrix.*zero-variance direction"):
        black_litterman(MU, rank2, v[None, :], [0.01], tau=0.05)
    # an explicit positive view uncertainty is fine (and finite)
    mean, cov = black_litterman(MU, rank2, v[None, :], [0.01], tau=0.05, omega=[[1e-3]])
    assert np.all(np.isfinite(np.asarray(mean))) and np.all(np.isfinite(np.asarray(cov)))
    with pytest.raises(ValueError, match="prior_cov \\+ view_cov"):
        precision_black_litterman(MU, rank2, MU, 0.5 * np.outer(u, u))


def test_float32_near_singular_prior_is_computed_in_float64():
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    prior = q @ np.diag([0.05, 2e-6, 5e-7]) @ q.T
    prior = 0.5 * (prior + prior.T)
    P, Q = np.eye(3)[:2], np.array([0.02, -0.01])
    with jax.enable_x64(True):
        ref_mean, ref_cov = (np.asarray(a) for a in black_litterman(MU, prior, P, Q, tau=0.5))
    m32, c32 = black_litterman(MU.astype(np.float32), prior.astype(np.float32), P.astype(np.float32),
                               Q.astype(np.float32), tau=0.5)  # fmt: skip
    assert m32.dtype == np.float32
    # float32 inputs carry a 6e-8 relative rounding of the prior; the float64 solve keeps the result that close
    np.testing.assert_allclose(np.asarray(m32), ref_mean, rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(np.asarray(c32), ref_cov, rtol=2e-3, atol=1e-7)
