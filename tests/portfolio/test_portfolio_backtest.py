"""Backtest engine (look-ahead, hand-computed drift and costs), metrics vs hand computation, input errors."""

import jax
import numpy as np
import pandas as pd
import pytest

from jaxkit.portfolio import (
    annualized_return,
    annualized_volatility,
    black_litterman,
    calmar_ratio,
    ledoit_wolf,
    max_drawdown,
    max_sharpe,
    performance_summary,
    precision_black_litterman,
    rebalance_indices,
    run_backtest,
    sharpe_ratio,
    sortino_ratio,
    walk_forward,
)


def _prices(seed=0, t=400, n=4):
    rng = np.random.default_rng(seed)
    r = rng.normal(0.0005, 0.01, size=(t, n))
    dates = pd.bdate_range("2020-01-01", periods=t)
    return 100 * np.exp(np.cumsum(r, axis=0)), dates


def _momentum_strategy(p, d):
    # uses the whole history it is given: trailing 60-day mean and the last price
    r = p[-61:][1:] / p[-61:][:-1] - 1
    score = np.maximum(r.mean(0) + 1e-3 * np.log(p[-1] / p[0]), 0) + 1e-4
    return score / score.sum()


def test_no_look_ahead():
    p, d = _prices()
    base = walk_forward(p, _momentum_strategy, dates=d, freq="M", start=100, cost=0.001)
    cut = int(base.rebalance_index[3])
    q = p.copy()
    q[cut + 1 :] *= np.exp(np.random.default_rng(1).normal(0, 0.2, size=q[cut + 1 :].shape))
    alt = walk_forward(q, _momentum_strategy, dates=d, freq="M", start=100, cost=0.001)
    np.testing.assert_array_equal(alt.rebalance_index, base.rebalance_index)
    np.testing.assert_array_equal(alt.targets[:4], base.targets[:4])  # decisions at or before t
    np.testing.assert_array_equal(alt.returns[: cut + 1], base.returns[: cut + 1])
    assert not np.allclose(alt.targets[4:], base.targets[4:])  # the perturbation did reach later decisions


def test_two_asset_drift_and_costs_by_hand():
    # prices for 4 days; rebalance to (0.5, 0.5) at close of day 0 and day 2, cost 10 bp
    p = np.array([[100.0, 100.0], [110.0, 95.0], [110.0, 104.5], [121.0, 104.5]])
    c = 0.001
    with jax.enable_x64(True):
        res = run_backtest(p, [0, 2], [[0.5, 0.5], [0.5, 0.5]], cost=c)
    # day 0: buy from cash: turnover 1, return -c
    r0 = -c
    # day 1: r = (+10%, -5%) -> rp = 0.025; weights drift to (0.55/1.025, 0.475/1.025)
    r1 = 0.5 * 0.10 + 0.5 * -0.05
    w1 = np.array([0.55, 0.475]) / 1.025
    # day 2: r = (0, +10%) -> rp = w1[1] * 0.1; drift; rebalance back to (0.5, 0.5)
    rp2 = w1[1] * 0.10
    w2 = w1 * np.array([1.0, 1.1]) / (1 + rp2)
    tau2 = np.abs(np.array([0.5, 0.5]) - w2).sum()
    r2 = (1 + rp2) * (1 - c * tau2) - 1
    # day 3: r = (+10%, 0)
    r3 = 0.05
    np.testing.assert_allclose(res.returns, [r0, r1, r2, r3], rtol=0, atol=1e-14)
    np.testing.assert_allclose(res.turnover, [1.0, tau2], atol=1e-14)
    np.testing.assert_allclose(res.weights[1], w1, atol=1e-14)
    np.testing.assert_allclose(res.wealth[-1], (1 - c) * 1.025 * (1 + r2) * 1.05, atol=1e-13)


def test_rebalance_indices_month_ends():
    d = pd.bdate_range("2021-01-01", "2021-04-30")
    idx = rebalance_indices(d, "M")
    assert [str(d[i].date()) for i in idx] == ["2021-01-29", "2021-02-26", "2021-03-31", "2021-04-30"]


def test_metrics_by_hand():
    r = np.array([0.01, -0.02, 0.03, -0.01, 0.005])
    f = 12
    with jax.enable_x64(True):
        got = {
            "ret": float(annualized_return(r, f)),
            "vol": float(annualized_volatility(r, f)),
            "sharpe": float(sharpe_ratio(r, 0.001, f)),
            "sortino": float(sortino_ratio(r, 0.0, f)),
            "mdd": float(max_drawdown(r)),
            "calmar": float(calmar_ratio(r, f)),
        }
    growth = 1.01 * 0.98 * 1.03 * 0.99 * 1.005
    ret = growth ** (12 / 5) - 1
    mean, sd = np.mean(r), np.sqrt(np.sum((r - np.mean(r)) ** 2) / 4)
    wealth = np.array([1.01, 1.01 * 0.98, 1.01 * 0.98 * 1.03, 1.01 * 0.98 * 1.03 * 0.99])
    mdd = max(1 - wealth[1] / wealth[0], 1 - wealth[3] / wealth[2])  # two dips: -2% then -1%
    assert got["ret"] == pytest.approx(ret, rel=1e-12)
    assert got["vol"] == pytest.approx(sd * np.sqrt(12), rel=1e-12)
    assert got["sharpe"] == pytest.approx((mean - 0.001) / sd * np.sqrt(12), rel=1e-12)
    assert got["sortino"] == pytest.approx(mean / np.sqrt((0.02**2 + 0.01**2) / 5) * np.sqrt(12), rel=1e-12)
    assert got["mdd"] == pytest.approx(mdd, rel=1e-12) and mdd == pytest.approx(0.02)
    assert got["calmar"] == pytest.approx(ret / mdd, rel=1e-12)
    summary = performance_summary(r, turnover=[0.5, 0.3], periods_per_year=f)
    assert summary["turnover_per_year"] == pytest.approx(0.8 / (5 / 12))


def test_bad_inputs_raise_clear_errors():
    rng = np.random.default_rng(0)
    S = np.cov(rng.normal(size=(50, 3)).T)
    mu = np.array([0.01, 0.02, 0.03])
    not_psd = S.copy()
    not_psd[0, 1] = not_psd[1, 0] = 10.0
    with pytest.raises(ValueError, match="positive semi-definite"):
        max_sharpe(mu, not_psd)
    with pytest.raises(ValueError, match="prior_cov.*positive semi-definite"):
        precision_black_litterman(mu, not_psd, mu, S)
    with pytest.raises(ValueError, match="Q: expected shape \\(2,\\)"):
        black_litterman(mu, S, np.eye(3)[:2], np.ones(3), tau=0.05)
    with pytest.raises(ValueError, match="P: expected shape \\(k, 3\\)"):
        black_litterman(mu, S, np.eye(4)[:2], np.ones(2), tau=0.05)
    with pytest.raises(ValueError, match="view_mean: expected length 3"):
        precision_black_litterman(mu, S, np.ones(4), S)
    with pytest.raises(ValueError, match="confidences"):
        black_litterman(mu, S, np.eye(3)[:2], np.ones(2), tau=0.05, omega="idzorek")
    with pytest.raises(ValueError, match="exceed risk_free_rate"):
        max_sharpe(-mu, S)
    p, d = _prices(t=50, n=3)
    bad = p.copy()
    bad[10, 1] = np.nan
    with pytest.raises(ValueError, match="prices: expected finite prices.*row 10, column 1"):
        run_backtest(bad, [5], [[1 / 3] * 3], dates=d)
    with pytest.raises(ValueError, match="dates: expected strictly increasing"):
        run_backtest(p, [5], [[1 / 3] * 3], dates=d[::-1])
    with pytest.raises(ValueError, match="returns: expected finite"):
        ledoit_wolf(np.where(rng.random((20, 3)) < 0.1, np.nan, 0.0))
