"""Daily-scale float32 inputs, per-call precision, pandas labels and the stated contracts of the allocation rules
(against PyPortfolioOpt, closed forms and brute force)."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxkit import portfolio as pf


def _daily_posterior(n=10, seed=0):
    """A daily-scale STABLE posterior: prior from 3 years of simulated daily returns, views from 64 sampled paths."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    C = A @ A.T + n * np.eye(n)
    corr = C / np.sqrt(np.outer(np.diag(C), np.diag(C)))
    vol = rng.uniform(0.01, 0.03, n)
    S0 = vol[:, None] * corr * vol[None, :]
    r = rng.multivariate_normal(rng.normal(3e-4, 3e-4, n), S0, 756)
    mu0, S0 = r.mean(0), np.cov(r.T)
    paths = rng.multivariate_normal(mu0 + 2e-4, S0, size=(64, 5))
    mv, Sv = pf.stable_views(paths)
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    return pf.precision_black_litterman(f32(mu0), f32(S0), f32(mv), f32(Sv), predictive=True)


def _sharpe(w, mu, S):
    w = np.asarray(w, np.float64)
    return float(w @ mu / np.sqrt(w @ S @ w))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_max_sharpe_on_a_daily_float32_posterior_matches_pypfopt(seed):
    from pypfopt import EfficientFrontier

    mu, S = _daily_posterior(seed=seed)
    assert mu.dtype == jnp.float32 and float(jnp.max(jnp.diag(S))) < 2e-3  # daily scale, single precision
    w = np.asarray(pf.max_sharpe(mu, S))
    mu64, S64 = np.asarray(mu, np.float64), np.asarray(S, np.float64)
    ef = EfficientFrontier(mu64, S64, weight_bounds=(0, 1))
    ref = np.array(list(ef.max_sharpe(risk_free_rate=0.0).values()))
    np.testing.assert_allclose(w, ref, atol=2e-3)
    assert _sharpe(w, mu64, S64) >= _sharpe(ref, mu64, S64) - 1e-5
    # the same portfolio from annualised inputs (weights do not depend on the period)
    np.testing.assert_allclose(np.asarray(pf.max_sharpe(mu * 252, S * 252)), w, atol=2e-3)


def test_min_variance_and_mean_variance_on_daily_float32_inputs_match_pypfopt():
    from pypfopt import EfficientFrontier

    mu, S = _daily_posterior(seed=3)
    mu64, S64 = np.asarray(mu, np.float64), np.asarray(S, np.float64)
    ref = np.array(list(EfficientFrontier(mu64, S64).min_volatility().values()))
    np.testing.assert_allclose(np.asarray(pf.min_variance(S)), ref, atol=2e-3)
    delta = 2.5  # unit-free: daily and annualised inputs give the same portfolio
    ref = np.array(list(EfficientFrontier(mu64, S64).max_quadratic_utility(risk_aversion=delta).values()))
    np.testing.assert_allclose(np.asarray(pf.mean_variance(mu, S, delta)), ref, atol=3e-3)
    np.testing.assert_allclose(
        np.asarray(pf.mean_variance(mu, S, delta)),
        np.asarray(pf.mean_variance(mu * 252, S * 252, 2.5)),
        atol=2e-3,
    )


def test_precision_per_call_without_the_global_flag():
    assert not jax.config.jax_enable_x64
    mu, S = _daily_posterior(seed=4)
    w64 = pf.max_sharpe(mu, S, dtype=jnp.float64)
    assert w64.dtype == jnp.float64 and not jax.config.jax_enable_x64
    w32 = pf.max_sharpe(mu, S)
    assert w32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(w32), np.asarray(w64), atol=2e-3)
    for f, args in (
        (pf.min_variance, (S,)),
        (pf.mean_variance, (mu, S, 500.0)),
        (pf.inverse_volatility, (S,)),
    ):
        assert f(*args, dtype="float64").dtype == jnp.float64
    with pytest.raises(ValueError, match="dtype: expected float32 or float64"):
        pf.max_sharpe(mu, S, dtype=jnp.int32)


def test_solver_error_advice_is_true():
    # stopped while improving: the advice to raise max_iter is true (a larger budget converges)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 6))
    X[:, 5] = 3 * X[:, 0] + 0.1 * X[:, 5]  # a vertex solution (w_5 = 0): one iteration does not identify it
    S = X.T @ X / 50
    with pytest.raises(ValueError, match="still improving; raise max_iter"):
        pf.min_variance(S, max_iter=1)
    assert np.isclose(float(jnp.sum(pf.min_variance(S, max_iter=60))), 1.0)
    # infeasible (x >= 0, sum x = -1): said so up front, whatever max_iter or dtype (it used to stall, and an
    # inconsistent pair of rows blamed max_iter); the message never promises that more iterations help
    H, c, A, b = np.eye(2), np.zeros(2), np.ones((1, 2)), -np.ones(1)
    for kw in ({"max_iter": 60}, {"max_iter": 600}, {"dtype": jnp.float64}):
        with pytest.raises(ValueError, match="infeasible") as e:
            pf.solve_qp_nonneg(H, c, A, b, **kw)
        assert "raise max_iter" not in str(e.value)


def test_pandas_in_pandas_out_labeled_by_ticker():
    from pypfopt import black_litterman as pbl

    tick = ["AAA", "BBB", "CCC"]
    rng = np.random.default_rng(1)
    rets = pd.DataFrame(
        rng.normal(5e-4, 0.01, (300, 3)) @ np.array([[1, 0.3, 0], [0, 1, 0.2], [0, 0, 1]]), columns=tick
    )
    S = pf.sample_covariance(rets)
    assert isinstance(S, pd.DataFrame) and list(S.columns) == tick == list(S.index)
    np.testing.assert_allclose(S.to_numpy(), rets.cov().to_numpy(), rtol=1e-5)
    lw, _ = pf.ledoit_wolf(rets)
    assert isinstance(lw, pd.DataFrame) and list(lw.index) == tick
    mu = rets.mean()
    for w in (pf.max_sharpe(mu, S), pf.min_variance(S), pf.mean_variance(mu, S, 100.0), pf.tangency(mu, S),
              pf.inverse_volatility(S)):  # fmt: skip
        assert isinstance(w, pd.Series) and list(w.index) == tick and np.isclose(w.sum(), 1.0)
    caps = pd.Series([3.0, 2.0, 1.0], index=tick)
    prior = pf.market_implied_prior_returns(caps, S, 2.5)
    ref = pbl.market_implied_prior_returns(caps, 2.5, S.astype(float), risk_free_rate=0.0)
    assert isinstance(prior, pd.Series) and list(prior.index) == tick
    np.testing.assert_allclose(prior.to_numpy(), ref.to_numpy(), rtol=1e-5)
    m, C = pf.black_litterman(prior, S, np.eye(3)[:1], np.array([0.001]))
    assert isinstance(m, pd.Series) and isinstance(C, pd.DataFrame) and list(C.columns) == tick
    m2, C2 = pf.precision_black_litterman(mu, S, mu, S)
    assert list(m2.index) == tick and isinstance(C2, pd.DataFrame)
    assert list(pf.stable_weights(mu, S, mu, S).index) == tick
    assert isinstance(pf.max_sharpe(mu.to_numpy(), S.to_numpy()), jax.Array)  # arrays in, arrays out
    with pytest.raises(ValueError, match="same asset labels"):
        pf.max_sharpe(mu[["BBB", "AAA", "CCC"]], S)


def test_tangency_contract():
    # a maximum-Sharpe fully invested portfolio exists: it is returned and beats every other one (brute force)
    mu, S = np.array([0.1, 0.05, 0.02]), np.array([[0.04, 0.01, 0.0], [0.01, 0.09, 0.02], [0.0, 0.02, 0.16]])
    w = np.asarray(pf.tangency(mu, S), np.float64)
    rng = np.random.default_rng(0)
    others = rng.normal(size=(20000, 3))
    others /= others.sum(1, keepdims=True)
    best = max(_sharpe(o, mu, S) for o in others if np.all(np.isfinite(o)))
    assert _sharpe(w, mu, S) >= best - 1e-9
    # no portfolio has positive excess return at the normalization: the old answer was the minimum-Sharpe one
    with pytest.raises(ValueError, match="negative net exposure"):
        pf.tangency([-0.1, -0.2], np.eye(2))
    assert _sharpe([3, -2], np.array([-0.1, -0.2]), np.eye(2)) > 0  # so [1/3, 2/3] (Sharpe -0.22) was wrong
    with pytest.raises(ValueError, match="zero net exposure"):
        pf.tangency([0.1, -0.1], np.eye(2))  # used to give [inf, -inf]
    with pytest.raises(ValueError, match="invertible covariance"):
        pf.tangency([0.1, 0.2], np.ones((2, 2)))  # singular PSD: used to give NaN
    with pytest.raises(ValueError, match="equals risk_free_rate"):
        pf.tangency([0.01, 0.01], np.eye(2), 0.01)


def test_market_prior_needs_a_net_long_market():
    with pytest.raises(ValueError, match="positive sum"):
        pf.market_implied_prior_returns([1.0, -1.0], np.eye(2), 2.5)  # used to give all-NaN
    with pytest.raises(ValueError, match="positive sum"):
        pf.market_implied_prior_returns([-1.0, -1.0], np.eye(2), 2.5)  # would flip the prior's sign


def test_rebalance_indices_refuse_unsorted_dates():
    d = pd.DatetimeIndex(["2020-02-03", "2020-01-02", "2020-03-02"])
    with pytest.raises(ValueError, match="strictly increasing dates"):
        pf.rebalance_indices(d, "M")  # used to return month ends of the wrong dates
