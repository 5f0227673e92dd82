"""Labeled inputs are aligned by label and time indexes are sorted or refused (issue 49): before, a market or
oil Series in another order than the returns was used by position, and an availability Series was matched to
the values by position."""

import numpy as np
import pandas as pd
import pytest

from jaxkit.forecast import align_published, stock_signals


def _frames(n=300):
    rng = np.random.default_rng(0)
    idx = pd.bdate_range("2010-01-01", periods=n)
    lr = pd.DataFrame(rng.normal(0, 0.01, (n, 2)), index=idx, columns=["A", "B"])
    market = pd.Series(rng.normal(0, 0.01, n), index=idx)
    oil = pd.Series(rng.normal(0, 0.02, n), index=idx)
    return lr, market, oil


def test_stock_signals_takes_market_and_oil_by_date():
    lr, market, oil = _frames()
    ref = stock_signals(lr, market, oil)
    shuffled = stock_signals(lr, market.iloc[::-1], oil.sample(frac=1.0, random_state=1))
    for k in ref:
        pd.testing.assert_frame_equal(shuffled[k], ref[k])
    extra = pd.concat(
        [market, pd.Series([5.0], index=[pd.Timestamp("2030-01-01")])]
    )  # a date lr lacks: unused
    pd.testing.assert_frame_equal(stock_signals(lr, extra, oil)["beta_mkt"], ref["beta_mkt"])
    with pytest.raises(
        ValueError, match=r"market: expected a value on every date of log_returns.index, 1 missing"
    ):
        stock_signals(lr, market.drop(market.index[10]), oil)
    with pytest.raises(ValueError, match=r"log_returns.index: expected strictly increasing dates"):
        stock_signals(lr.iloc[::-1], market, oil)
    with pytest.raises(TypeError, match="oil"):  # jaxtyping's check in the tests, ours without
        stock_signals(lr, market, oil.to_numpy())


def test_align_published_matches_availability_by_label_and_refuses_unsorted_dates():
    idx = pd.date_range("2020-01-01", periods=4, freq="MS")
    values = pd.Series([1.0, 2.0, 3.0, 4.0], index=idx, name="v")
    available = pd.Series(idx + pd.Timedelta(days=10), index=idx)
    dates = pd.date_range("2020-01-05", periods=120, freq="D")
    ref = align_published(values, available, dates)
    got = align_published(values, available.iloc[::-1], dates)  # before: value i got availability 3 - i
    pd.testing.assert_frame_equal(got, ref)
    assert ref.loc["2020-01-11", "v"] == 1.0 and np.isnan(ref.loc["2020-01-10", "v"])
    with pytest.raises(ValueError, match="available: a Series must be indexed by the same labels"):
        align_published(values, available.set_axis(idx + pd.Timedelta(days=1)), dates)
    with pytest.raises(ValueError, match="dates: expected strictly increasing dates"):
        align_published(values, available, dates[::-1])
