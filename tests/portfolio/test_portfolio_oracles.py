"""Black–Litterman, allocation and Ledoit–Wolf against PyPortfolioOpt / cvxpy / scikit-learn (float64)."""

import warnings

import jax
import numpy as np
import pytest
from pypfopt import BlackLittermanModel, EfficientFrontier
from pypfopt import black_litterman as pbl
from sklearn.covariance import ledoit_wolf as sk_ledoit_wolf

from jaxkit.portfolio import (
    black_litterman,
    ledoit_wolf,
    market_implied_prior_returns,
    market_implied_risk_aversion,
    max_sharpe,
    mean_variance,
    min_variance,
    precision_black_litterman,
    tangency,
)

N = 8


def _random_cov(rng, n=N, t=200):
    x = rng.normal(size=(t, n)) @ rng.normal(size=(n, n)) * 0.01
    return np.cov(x.T)


@pytest.fixture(scope="module")
def real_cov():
    from skfolio.datasets import load_sp500_dataset

    prices = load_sp500_dataset().iloc[-600:, :N]
    r = prices.pct_change().dropna().to_numpy()
    return np.cov(r.T) * 252, r.mean(0) * 252


def _weights(ef):
    return np.array(list(ef.clean_weights(rounding=None).values()))


@pytest.mark.parametrize("source", ["random", "real"])
@pytest.mark.parametrize("views", ["absolute", "relative"])
@pytest.mark.parametrize("omega", ["he-litterman", "idzorek", "array"])
def test_black_litterman_matches_pypfopt(source, views, omega, real_cov):
    rng = np.random.default_rng(hash((source, views, omega)) % 2**32)
    S = _random_cov(rng) if source == "random" else real_cov[0]
    pi = rng.normal(size=N) * 0.05
    if views == "absolute":
        P = np.eye(N)[[0, 3, 5]]
    else:
        P = np.eye(N)[[0, 2, 4]] - np.eye(N)[[1, 3, 6]] * np.array([[1.0], [0.5], [1.0]])
    Q = rng.normal(size=3) * 0.05
    conf = np.array([0.2, 0.7, 0.0])
    kw: dict = {}
    if omega == "idzorek":
        kw = dict(omega="idzorek", view_confidences=conf)
    elif omega == "array":
        om = np.diag(rng.uniform(0.001, 0.01, 3))
        kw = dict(omega=om)
    with jax.enable_x64(True):
        m, c = black_litterman(
            pi,
            S,
            P,
            Q,
            tau=0.05,
            omega=kw.get("omega", "he-litterman"),
            confidences=conf if omega == "idzorek" else None,
        )
        assert m.dtype == np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bl = BlackLittermanModel(S, pi=pi, P=P, Q=Q, tau=0.05, **kw)
        ref_m, ref_c = bl.bl_returns().to_numpy(), bl.bl_cov().to_numpy()
    np.testing.assert_allclose(np.asarray(m), ref_m, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(c), ref_c, rtol=0, atol=1e-10)


@pytest.mark.parametrize("source", ["random", "real"])
def test_precision_form_matches_pypfopt(source, real_cov):
    rng = np.random.default_rng(7)
    S = _random_cov(rng) if source == "random" else real_cov[0]
    mu0 = rng.normal(size=N) * 0.05
    samples = rng.normal(size=(64, N)) * 0.1
    mv, Sv = samples.mean(0), np.cov(samples.T)
    with jax.enable_x64(True):
        m, c = precision_black_litterman(mu0, S, mv, Sv)
        m2, c2 = precision_black_litterman(mu0, S, mv, Sv, predictive=True)
        # precision form literally: (Phi + Omega)^-1 (Phi mu0 + Omega mv)
    Phi, Om = np.linalg.inv(S), np.linalg.inv(Sv)
    direct_c = np.linalg.inv(Phi + Om)
    bl = BlackLittermanModel(S, pi=mu0, P=np.eye(N), Q=mv, tau=1.0, omega=Sv)
    np.testing.assert_allclose(np.asarray(m), bl.bl_returns().to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(c2), bl.bl_cov().to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(c), direct_c, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(np.asarray(m), direct_c @ (Phi @ mu0 + Om @ mv), rtol=1e-8, atol=1e-12)


def test_equilibrium_prior_and_risk_aversion():
    rng = np.random.default_rng(3)
    S = _random_cov(rng)
    caps = rng.uniform(1, 10, N)
    market = rng.normal(0.0004, 0.01, 500)
    with jax.enable_x64(True):
        pi = market_implied_prior_returns(caps, S, 2.5, 0.01)
        delta = market_implied_risk_aversion(market)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = pbl.market_implied_prior_returns(dict(enumerate(caps)), 2.5, S, 0.01)
    np.testing.assert_allclose(np.asarray(pi), np.asarray(ref), atol=1e-12)
    import pandas as pd

    prices = pd.Series(np.cumprod(np.r_[1.0, 1 + market]))
    np.testing.assert_allclose(float(delta), pbl.market_implied_risk_aversion(prices), rtol=1e-10)


@pytest.mark.parametrize("source", ["random", "real"])
def test_long_only_weights_match_cvxpy(source, real_cov):
    rng = np.random.default_rng(11)
    S = _random_cov(rng) if source == "random" else real_cov[0]
    mu = rng.normal(size=N) * 0.05 + 0.02 if source == "random" else real_cov[1]
    with jax.enable_x64(True):
        w_ms = np.asarray(max_sharpe(mu, S, 0.01))
        w_mv = np.asarray(min_variance(S))
        w_qu = np.asarray(mean_variance(mu, S, 3.0))
        w_tan = np.asarray(tangency(mu, S))
    ef = EfficientFrontier(mu, S)
    ef.max_sharpe(risk_free_rate=0.01)
    np.testing.assert_allclose(w_ms, _weights(ef), atol=1e-4)
    ef = EfficientFrontier(mu, S)
    ef.min_volatility()
    np.testing.assert_allclose(w_mv, _weights(ef), atol=1e-4)
    ef = EfficientFrontier(mu, S)
    ef.max_quadratic_utility(risk_aversion=3.0)
    np.testing.assert_allclose(w_qu, _weights(ef), atol=1e-4)
    z = np.linalg.inv(S) @ mu  # closed form; cvxpy with wide bounds only agrees to its solver tolerance
    np.testing.assert_allclose(w_tan, z / z.sum(), atol=1e-10)
    ef = EfficientFrontier(mu, S, weight_bounds=(-50, 50))
    ef.max_sharpe()
    np.testing.assert_allclose(w_tan, _weights(ef), atol=2e-3)
    assert (w_ms >= 0).all() and abs(w_ms.sum() - 1) < 1e-12


def test_vmapped_max_sharpe_equals_loop():
    rng = np.random.default_rng(5)
    covs = np.stack([_random_cov(rng) for _ in range(3)])
    mus = rng.normal(size=(3, N)) * 0.05 + 0.02
    mus[2] = -np.abs(mus[2])  # no asset beats rf: falls back to minimum variance
    with jax.enable_x64(True):
        batched = np.asarray(jax.vmap(max_sharpe)(mus, covs))
        for i in range(2):
            np.testing.assert_allclose(batched[i], np.asarray(max_sharpe(mus[i], covs[i])), atol=1e-8)
        np.testing.assert_allclose(batched[2], np.asarray(min_variance(covs[2])), atol=1e-8)


@pytest.mark.parametrize("source", ["random", "real"])
def test_ledoit_wolf_matches_sklearn(source, real_cov):
    rng = np.random.default_rng(2)
    if source == "random":
        x = rng.normal(size=(60, N)) @ rng.normal(size=(N, N))
    else:
        from skfolio.datasets import load_sp500_dataset

        x = load_sp500_dataset().iloc[-300:].pct_change().dropna().to_numpy()
    with jax.enable_x64(True):
        cov, s = ledoit_wolf(x)
    ref_cov, ref_s = sk_ledoit_wolf(x)
    np.testing.assert_allclose(float(s), ref_s, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(cov), ref_cov, rtol=1e-10, atol=1e-14)


def test_ledoit_wolf_one_asset_matches_sklearn():
    """One asset: the sample variance is already the target, so the shrinkage is 0 as in sklearn (a fresh probe
    found 1.0, a 0/0 of rounding errors)."""
    x = np.random.default_rng(1).normal(size=(50, 1))
    with jax.enable_x64(True):
        cov, s = ledoit_wolf(x)
    ref_cov, ref_s = sk_ledoit_wolf(x)
    assert float(s) == ref_s == 0.0
    np.testing.assert_allclose(np.asarray(cov), ref_cov, rtol=1e-12)
