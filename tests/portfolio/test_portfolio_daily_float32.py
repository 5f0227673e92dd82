"""Maximum Sharpe and STABLE allocation on the real daily returns the package ships (skfolio's S&P 500 stocks),
float32 and float64, eagerly and under ``jit(vmap(...))``, against cvxpy (Clarabel) in float64.

The hard dates are the ones a weak forecaster produces: view means of daily size where one or two assets beat
the risk-free rate by a hair (the long-only max-Sharpe portfolio is then a vertex, and the interior-point
iterates of the inactive assets run to 1e-35 in float32). The quick preset of ``stable`` stopped there inside
``strategy_weights`` (issue 46); the solver now certifies such solutions by polishing on the identified support."""

from __future__ import annotations

import cvxpy as cp
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.forecast import load_prices
from jaxkit.portfolio import max_sharpe, solve_qp_nonneg, strategy_weights


@pytest.fixture(scope="module")
def daily():
    stocks, _ = load_prices()
    return np.log(stocks).diff().dropna().to_numpy()


def _views(daily, n_dates=12, seed=0):
    """(mean, cov) pairs: covariances of 756-day windows; means of daily size with one, two or many assets
    above zero, the smallest excess down to 1e-8 per day."""
    rng = np.random.default_rng(seed)
    T, N = daily.shape
    out = []
    for i, t in enumerate(np.linspace(800, T - 1, n_dates).astype(int)):
        cov = np.cov(daily[t - 756 + 1 : t + 1].T)
        mu = -np.abs(rng.normal(3e-4, 2e-4, N))
        k = i % 3
        if k == 0:
            mu[rng.integers(N)] = 10.0 ** rng.uniform(-8, -4)  # a single asset beats r_f by a hair
        elif k == 1:
            mu[rng.choice(N, 2, replace=False)] = 10.0 ** rng.uniform(-7, -4, 2)
        else:
            mu = rng.normal(1e-4, 5e-4, N)  # noisy views, many assets positive
            mu[0] = abs(mu[0])
        out.append((mu, cov))
    return out


def _oracle(mu, cov):
    """Long-only max Sharpe by the Cornuejols-Tutuncu transform in cvxpy (Clarabel), float64."""
    n = len(mu)
    scale = 1.0 / np.max(mu)  # the constraint mu.y = 1 at unit size
    y = cp.Variable(n, nonneg=True)
    cp.Problem(
        cp.Minimize(cp.quad_form(y, cp.psd_wrap(cov / np.mean(np.diag(cov))))), [(mu * scale) @ y == 1]
    ).solve(solver=cp.CLARABEL)
    w = np.maximum(y.value, 0.0)
    return w / w.sum()


def _sharpe(w, mu, cov):
    return float(w @ mu / np.sqrt(w @ cov @ w))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_sharpe_daily_eager_and_jit_vmap_match_cvxpy(daily, dtype):
    views = _views(daily)
    mus = np.stack([m for m, _ in views])
    covs = np.stack([c for _, c in views])
    batched = jax.jit(jax.vmap(lambda m, c: max_sharpe(m, c, dtype=dtype)))
    w_vmap = np.asarray(batched(jnp.asarray(mus.astype(dtype)), jnp.asarray(covs.astype(dtype))), np.float64)
    for i, (mu, cov) in enumerate(views):
        w = np.asarray(max_sharpe(mu.astype(dtype), cov.astype(dtype), dtype=dtype), np.float64)
        ref = _oracle(mu, cov)
        tol = 2e-3 if dtype == np.float32 else 1e-6
        for got in (w, w_vmap[i]):
            assert np.all(np.isfinite(got)) and got.min() >= 0 and abs(got.sum() - 1) < 1e-5
            # the optimum is a maximum: compare Sharpe ratios (weights may differ on flat directions)
            s_ref, s_got = _sharpe(ref, mu, cov), _sharpe(got, mu, cov)
            assert s_got >= s_ref - tol * abs(s_ref), (i, s_got, s_ref)


def test_strategy_weights_with_paths_on_daily_float32(daily):
    """STABLE's strategies, vmapped over dates, from float32 windows and float32 sampled paths whose view means
    put a single asset barely above zero on some dates (what stopped the quick preset)."""
    rng = np.random.default_rng(1)
    T, N = daily.shape
    dec = np.arange(T - 60, T, 10)
    win = np.stack([daily[t - 756 + 1 : t + 1] for t in dec]).astype(np.float32)
    paths = rng.normal(-3e-4, 1e-3, (len(dec), 32, 5, N)).astype(np.float32)
    paths[::2, :, :, 3] = np.float32(3e-4)  # only asset 3 has a positive mean view on every other date
    out = strategy_weights(win, paths, horizon=5)
    for name, w in out.items():
        assert np.all(np.isfinite(w)), name
    for name in ("MVO (sample)", "MVO (diffusion mean)", "STABLE (long-only)"):
        assert np.allclose(out[name].sum(1), 1.0, atol=1e-6) and out[name].min() >= -1e-9, name


def test_a_problem_without_solution_still_raises_naming_the_reason():
    H = np.eye(3)
    with pytest.raises(ValueError, match="infeasible"):
        solve_qp_nonneg(H, np.zeros(3), -np.ones((1, 3)), np.ones(1))  # -1.x = 1 has no x >= 0
    with pytest.raises(ValueError, match="exceed risk_free_rate"):
        max_sharpe(-np.ones(3) * 1e-4, np.eye(3) * 1e-4)
