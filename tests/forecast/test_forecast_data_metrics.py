"""Forecast data (publication lags, causality, Kalman betas, splits), metrics and baselines."""

import numpy as np
import pandas as pd
import pytest

from jaxkit.forecast import (
    align_published,
    coverage,
    crps,
    crps_sum,
    energy_distance,
    energy_test,
    ewma_gaussian,
    historical_bootstrap,
    kalman_betas,
    load_prices,
    moment_z_scores,
    mse,
    rolling_gaussian,
    rolling_zscore,
    stock_signals,
    walk_forward_splits,
)


def test_align_published_uses_only_released_values():
    values = pd.Series([1.0, 2.0, 3.0], index=pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01"]))
    available = pd.to_datetime(["2020-02-20", "2020-03-20", "2020-04-20"])  # CPI-like release lag
    dates = pd.to_datetime(["2020-02-19", "2020-02-20", "2020-03-19", "2020-03-23", "2020-08-01"])
    out = align_published(values, available, dates, max_age_days=60)
    got = out.iloc[:, 0].to_numpy()
    np.testing.assert_array_equal(got[:4], [np.nan, 1.0, 1.0, 2.0][:4])
    assert np.isnan(got[0]) and np.isnan(got[4])  # nothing released yet / stale after 60 days


def _frame(seed=0, t=300, n=3):
    rng = np.random.default_rng(seed)
    idx = pd.bdate_range("2010-01-01", periods=t)
    return pd.DataFrame(rng.normal(0, 0.01, (t, n)), index=idx, columns=list("abc")[:n])


def test_rolling_features_and_signals_are_causal():
    lr = _frame()
    mkt = lr.mean(axis=1)
    oil = pd.Series(np.random.default_rng(1).normal(0, 0.02, len(lr)), index=lr.index)
    cut = 200
    lr2, mkt2, oil2 = lr.copy(), mkt.copy(), oil.copy()
    lr2.iloc[cut + 1 :] *= -3.0
    mkt2.iloc[cut + 1 :] += 0.05
    oil2.iloc[cut + 1 :] = 0.3
    z1, z2 = rolling_zscore(lr, 50), rolling_zscore(lr2, 50)
    pd.testing.assert_frame_equal(z1.iloc[: cut + 1], z2.iloc[: cut + 1])
    s1, s2 = stock_signals(lr, mkt, oil), stock_signals(lr2, mkt2, oil2)
    for k in s1:
        np.testing.assert_array_equal(s1[k].to_numpy()[: cut + 1], s2[k].to_numpy()[: cut + 1], err_msg=k)
        assert not np.allclose(
            np.nan_to_num(s1[k].to_numpy()[cut + 25 :]), np.nan_to_num(s2[k].to_numpy()[cut + 25 :])
        )


def test_kalman_with_static_state_is_least_squares():
    rng = np.random.default_rng(0)
    X = np.c_[np.ones(400), rng.normal(size=(400, 2))]
    beta = np.array([[0.1, 1.2, -0.4], [0.0, 0.5, 0.8]])
    y = X @ beta.T + 0.1 * rng.normal(size=(400, 2))
    b = np.asarray(kalman_betas(y.astype(np.float32), X.astype(np.float32), q=0.0, r=1.0, p0=1e6))
    ols = np.linalg.lstsq(X, y, rcond=None)[0].T
    np.testing.assert_allclose(b[-1], ols, atol=2e-3)
    mid = np.linalg.lstsq(X[:200], y[:200], rcond=None)[0].T  # filtered at t uses rows <= t only
    np.testing.assert_allclose(b[199], mid, atol=2e-3)


def test_walk_forward_splits_are_purged():
    d = pd.bdate_range("2010-01-01", "2014-12-31")
    for tr, te in walk_forward_splits(d, [2012, 2013, 2014], horizon=5, history=10):
        assert tr.min() >= 9 and tr.max() + 5 < te.min()
        assert d[te].year.nunique() == 1


def test_bad_data_inputs():
    with pytest.raises(ValueError, match="tickers: unknown \\['NOPE'\\]"):
        load_prices(["AAPL", "NOPE"])
    with pytest.raises(ValueError, match="strictly increasing"):
        walk_forward_splits(pd.DatetimeIndex(["2020-01-02", "2020-01-01"]), [2020], horizon=1, history=1)
    with pytest.raises(ValueError, match="y, X: expected finite"):
        kalman_betas(np.array([[np.nan]] * 3), np.ones((3, 1)))


def test_crps_matches_direct_quantile_loss_and_limits():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(200, 3, 2))
    y = rng.normal(size=(3, 2))
    # direct loop implementation of the CSDI formula
    total = 0.0
    levels = np.arange(1, 20) / 20
    for a in levels:
        q = np.quantile(s, a, axis=0)
        total += (
            2
            * sum(abs((yi - qi) * ((yi <= qi) - a)) for yi, qi in zip(y.ravel(), q.ravel()))
            / np.abs(y).sum()
        )
    assert crps(s, y) == pytest.approx(total / 19, rel=1e-12)
    assert crps_sum(s, y) == pytest.approx(crps(s.sum(-1), y.sum(-1)), rel=1e-12)
    assert crps(np.repeat(y[None], 10, 0), y) == 0.0
    assert mse(np.repeat(y[None], 4, 0) + 1.0, y) == pytest.approx(1.0)
    big = rng.normal(size=(4000, 500))
    assert coverage(big, rng.normal(size=500), level=0.9) == pytest.approx(0.9, abs=0.04)


def test_energy_distance_detects_shift():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    assert abs(energy_distance(a, b)) < 0.05
    assert energy_distance(a, b + 1.0) > 0.5


def test_energy_test_exact_permutation_distribution_and_calibration():
    """T = nm/(n+m) E; the Monte-Carlo p-value matches the exact one from all C(12, 7) relabelings; under H0
    the rejection rate at 5% is 5% (binomial bounds), and a shift is detected."""
    import itertools

    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(7, 2)), rng.normal(size=(5, 2)) + 0.7
    T, p = energy_test(x, y, n_permutations=20000, seed=3)
    assert T == pytest.approx(7 * 5 / 12 * energy_distance(x, y), rel=1e-10)
    z = np.concatenate([x, y])
    exact = [
        35 / 12 * energy_distance(z[list(c)], z[[i for i in range(12) if i not in c]])
        for c in itertools.combinations(range(12), 7)
    ]
    p_exact = np.mean(np.asarray(exact) >= T - 1e-12)
    assert abs(p - p_exact) < 4 * np.sqrt(p_exact * (1 - p_exact) / 20000) + 1e-4
    pv = [
        energy_test(rng.normal(size=(20, 3)), rng.normal(size=(20, 3)), n_permutations=199, seed=i)[1]
        for i in range(200)
    ]
    assert 0.005 <= np.mean(np.asarray(pv) <= 0.05) <= 0.10
    assert energy_test(rng.normal(size=(60, 3)), rng.normal(size=(60, 3)) + 0.8, n_permutations=199)[1] < 0.01


def test_moment_z_scores_are_standard_normal_under_the_law():
    rng = np.random.default_rng(4)
    mu, L = np.array([0.5, -1.0, 2.0]), np.array([[1.0, 0, 0], [0.6, 0.8, 0], [-0.3, 0.2, 0.9]])
    S = L @ L.T
    zs = [moment_z_scores(rng.multivariate_normal(mu, S, 400), mu, S) for _ in range(300)]
    mz, cz = np.stack([z[0] for z in zs]), np.stack([z[1] for z in zs])
    assert mz.shape == (300, 3) and cz.shape == (300, 6)
    assert abs(np.mean(mz**2) - 1) < 0.12 and abs(np.mean(cz**2) - 1) < 0.15
    assert np.abs(moment_z_scores(rng.multivariate_normal(mu + 0.3, S, 400), mu, S)[0]).max() > 4
    with pytest.raises(ValueError, match="mean, cov"):
        moment_z_scores(np.zeros((5, 3)), mu[:2], S)


def test_ar1_conditional_law_matches_simulation():
    from jaxkit.forecast import ar1_conditional_law, ar1_windows

    phi, A = 0.7, np.array([[1.0, 0.0], [0.6, 0.8]])
    mean, cov = ar1_conditional_law(np.array([1.0, -1.5]), 3, phi, A)
    rng = np.random.default_rng(0)
    x, paths = np.tile([1.0, -1.5], (200000, 1)), []
    for _ in range(3):
        x = phi * x + rng.normal(size=x.shape) @ A.T
        paths.append(x)
    paths = np.concatenate(paths, 1)
    mz, cz = moment_z_scores(paths, mean, cov)
    assert np.abs(mz).max() < 4.5 and np.abs(cz).max() < 4.5
    w = ar1_windows(100000, 2, 1, phi, A, seed=1)  # stationary: Var = A A^T / (1 - phi^2) at every step
    np.testing.assert_allclose(np.cov(w["target"][:, 0].T), A @ A.T / (1 - phi**2), atol=0.03)
    with pytest.raises(ValueError, match="phi"):
        ar1_windows(4, 1, 1, 1.0, A, seed=0)
    with pytest.raises(ValueError, match="horizon: expected an integer >= 1"):
        ar1_windows(4, 1, 0, phi, A, seed=0)
    with pytest.raises(ValueError, match="last: expected shape"):
        ar1_conditional_law(np.zeros(3), 2, phi, A)


def test_baselines_shapes_and_moments():
    rng = np.random.default_rng(0)
    w = rng.multivariate_normal([0.001, -0.002], [[1e-4, 5e-5], [5e-5, 2e-4]], 2000)
    g = rolling_gaussian(w, 3, 4000, seed=1)
    assert g.shape == (4000, 3, 2)
    np.testing.assert_allclose(np.cov(g[:, 0].T), np.cov(w.T), rtol=0.1)
    bsp = historical_bootstrap(w, 3, 50, seed=2)
    rows = {tuple(r) for r in w}
    assert bsp.shape == (50, 3, 2) and all(tuple(r) in rows for r in bsp.reshape(-1, 2))


def test_ewma_gaussian_uses_recent_volatility_and_window_correlation():
    # window: calm for 400 rows, then 3x volatility for 60 rows; the EWMA (lambda 0.94) sees the recent regime
    rng = np.random.default_rng(3)
    C = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])
    z = rng.multivariate_normal(np.zeros(3), C, 460)
    vol = np.where(np.arange(460) < 400, 1.0, 3.0)[:, None] * np.array([0.01, 0.02, 0.015])
    w = z * vol
    lam = 0.94
    wts = lam ** np.arange(460)[::-1]  # direct float64 sum, independent of the pandas EWMA in the library
    sig = np.sqrt((wts[:, None] * w**2).sum(0) / wts.sum())
    want = sig[:, None] * np.corrcoef(w.T) * sig[None, :]
    paths = ewma_gaussian(w, 2, 40000, decay=lam, seed=1)
    assert paths.shape == (40000, 2, 3)
    for h in range(2):
        np.testing.assert_allclose(
            np.cov(paths[:, h].T), want, atol=0.03 * np.sqrt(np.outer(sig, sig)).max() ** 2
        )
        np.testing.assert_allclose(np.diag(np.cov(paths[:, h].T)), np.diag(want), rtol=0.03)
    assert np.all(np.abs(paths.mean(0)) < 4 * sig / np.sqrt(40000))  # zero mean
    assert np.all(np.abs(np.corrcoef(paths[:, 0, 0], paths[:, 1, 0])[0, 1]) < 0.03)  # i.i.d. steps
    assert sig[0] > 2.5 * w[:400, 0].std()  # recent volatility, not the window average
    np.testing.assert_array_equal(ewma_gaussian(w.tolist(), 2, 5, seed=4), ewma_gaussian(w, 2, 5, seed=4))
    with pytest.raises(ValueError, match="decay"):
        ewma_gaussian(w, 2, 5, decay=1.0)
    w_const = w.copy()
    w_const[:, 1] = 0.0
    with pytest.raises(ValueError, match="constant columns \\[1\\]"):
        ewma_gaussian(w_const, 2, 5)
    w_nan = w.copy()
    w_nan[5, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        ewma_gaussian(w_nan, 2, 5)
