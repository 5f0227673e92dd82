"""Fresh probes of 2026-12-07 (written from the docs alone): labeled pandas inputs used by position against
labels that disagree. Each is now refused naming the argument (or, for a strategy's Series, taken by label); the
values of the aligned calls are checked against a hand computation."""

import numpy as np
import pandas as pd
import pytest

from jaxkit import portfolio as P


@pytest.fixture
def prices():
    rng = np.random.default_rng(0)
    values = 100 * np.cumprod(1 + rng.normal(5e-4, 0.01, (60, 3)), 0)
    return pd.DataFrame(values, columns=list("abc"), index=pd.bdate_range("2021-01-01", periods=60))


@pytest.fixture
def bl():
    cov = pd.DataFrame(np.diag([0.04, 0.09, 0.0625]), index=list("abc"), columns=list("abc"))
    mu = pd.Series([0.05, 0.07, 0.06], index=list("abc"))
    return mu, cov


def test_backtest_weights_and_prices_with_other_column_orders_are_refused(prices):
    """B182/B189: the weights' columns were used by position."""
    tw = pd.DataFrame([[0.6, 0.3, 0.1]], columns=list("abc"))
    with pytest.raises(ValueError, match=r"^target_weights: expected its columns .* \['a', 'b', 'c'\]"):
        P.run_backtest(prices, np.array([0]), tw[list("cab")])
    with pytest.raises(ValueError, match="^target_weights: expected its columns"):
        P.run_backtest(prices[list("cab")], np.array([0]), tw)
    res = P.run_backtest(prices, np.array([0]), tw)
    r = prices.pct_change().to_numpy()[1:]
    w = np.array([0.6, 0.3, 0.1])
    expected = []  # buy and hold from the first close: the weights drift with the prices
    for day in r:
        expected.append(w @ day)
        w = w * (1 + day) / (1 + w @ day)
    np.testing.assert_allclose(
        np.asarray(res.returns)[1:], expected, rtol=1e-4, atol=1e-7
    )  # float32 simulation


def test_backtest_dates_other_than_the_frames_index_are_refused(prices):
    """B328: the frame's 2021 returns came back labeled with the 2022 dates passed in."""
    tw = pd.DataFrame([[0.6, 0.3, 0.1]], columns=list("abc"))
    with pytest.raises(ValueError, match="^dates: expected the dates of prices' DatetimeIndex"):
        P.run_backtest(prices, np.array([0]), tw, dates=pd.bdate_range("2022-01-03", periods=60))
    P.run_backtest(prices, np.array([0]), tw, dates=prices.index)


def test_walk_forward_takes_a_strategys_series_by_label(prices):
    """B185: a strategy returning Series([.1, .6, .3], index=c, a, b) was read by position."""
    kw = dict(dates=prices.index, freq="M", start=10)
    shuffled = P.walk_forward(prices, lambda p, d: pd.Series([0.1, 0.6, 0.3], index=list("cab")), **kw)
    ordered = P.walk_forward(prices, lambda p, d: pd.Series([0.6, 0.3, 0.1], index=list("abc")), **kw)
    np.testing.assert_array_equal(np.asarray(shuffled.returns), np.asarray(ordered.returns))
    with pytest.raises(ValueError, match="^strategy: returned weights labeled"):
        P.walk_forward(prices, lambda p, d: pd.Series([0.1, 0.6, 0.3], index=list("xyz")), **kw)


def test_pick_matrix_and_views_with_other_labels_are_refused(bl):
    """B186/B190/B191/B305: P's columns and Q's index were used by position."""
    mu, cov = bl
    pm = pd.DataFrame([[1.0, -1, 0]], columns=list("abc"))
    with pytest.raises(ValueError, match="^P: expected the columns of the pick matrix"):
        P.black_litterman(mu, cov, P=pm[list("cab")], Q=np.array([0.02]))
    with pytest.raises(ValueError, match="^P: expected the columns of the pick matrix"):
        P.idzorek_omega(np.array([0.5]), cov, pm[list("cab")], 0.05)
    with pytest.raises(ValueError, match="^P: expected the columns of the pick matrix"):
        P.he_litterman_omega(cov, pd.DataFrame([[0.0, 1, 0]], columns=list("abc"))[list("cab")], 0.05)
    two = pd.DataFrame([[1.0, -1, 0], [0, 0, 1]], columns=list("abc"), index=["v1", "v2"])
    q = pd.Series([0.02, 0.10], index=["v1", "v2"])
    with pytest.raises(ValueError, match=r"^Q: expected its index \(one entry per view"):
        P.black_litterman(mu, cov, P=two, Q=q[["v2", "v1"]])
    # the aligned call, against the closed form: he-litterman omega = diag(tau P S P^T)
    mean, _ = P.black_litterman(mu, cov, P=two, Q=q)
    S, Pm, tau = cov.to_numpy(), two.to_numpy(), 0.05
    om = np.diag(np.diag(tau * Pm @ S @ Pm.T))
    ref = mu.to_numpy() + tau * S @ Pm.T @ np.linalg.solve(
        tau * Pm @ S @ Pm.T + om, q.to_numpy() - Pm @ mu.to_numpy()
    )
    np.testing.assert_allclose(np.asarray(mean), ref, rtol=1e-5)
    # an unlabeled pick matrix (RangeIndex columns) is positional, as an array is
    unl, _ = P.black_litterman(mu, cov, P=pd.DataFrame([[1.0, -1, 0]]), Q=np.array([0.02]))
    lab, _ = P.black_litterman(mu, cov, P=pm, Q=np.array([0.02]))
    np.testing.assert_allclose(np.asarray(unl), np.asarray(lab))


def test_ragged_returns_name_the_argument():
    """B409: a ragged list gave NumPy's "setting an array element with a sequence"."""
    with pytest.raises(
        ValueError, match="^returns: expected a rectangular array, received ragged nested lists"
    ):
        P.sharpe_ratio([[0.01, 0.02], [0.03]])
