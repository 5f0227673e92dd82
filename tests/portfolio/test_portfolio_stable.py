"""STABLE's published allocation by hand (3 assets), its guard and leverage cap, views, and the Sharpe statistics."""

import warnings

import jax
import numpy as np
import pytest

from jaxkit.portfolio import (
    sharpe_confidence_interval,
    sharpe_difference_test,
    stable_long_only_weights,
    stable_views,
    stable_weights,
    strategy_weights,
)

S0 = np.array([[0.04, 0.01, 0.00], [0.01, 0.09, 0.02], [0.00, 0.02, 0.16]])
SV = np.array([[0.02, 0.00, 0.005], [0.00, 0.03, 0.00], [0.005, 0.00, 0.05]])
MU0 = np.array([0.05, 0.06, 0.08])
MUV = np.array([0.07, 0.02, 0.10])


def test_published_fusion_and_tangency_weights_by_hand():
    phi, omega = np.linalg.inv(S0), np.linalg.inv(SV)
    sigma_bl = np.linalg.inv(phi + omega)
    mu_bl = sigma_bl @ (phi @ MU0 + omega @ MUV)
    z = np.linalg.inv(sigma_bl) @ mu_bl
    w_hand = z / z.sum()
    # the same numbers written out: Sigma_BL^{-1} mu_BL = Phi mu0 + Omega mu_v
    np.testing.assert_allclose(z, phi @ MU0 + omega @ MUV, rtol=1e-12)
    assert w_hand.min() < 0 or w_hand.max() > 0  # shorts allowed: nothing clipped
    with jax.enable_x64(True):
        w = np.asarray(stable_weights(MU0, S0, MUV, SV, leverage_cap=100.0))
    assert w.dtype == np.float64
    np.testing.assert_allclose(w, w_hand, rtol=1e-10, atol=1e-12)
    assert abs(w.sum() - 1) < 1e-12
    # lists accepted, float32 inputs give float32 output computed in float64
    w32 = stable_weights(
        MU0.astype(np.float32).tolist(), S0.tolist(), list(MUV), SV.tolist(), leverage_cap=100.0
    )
    np.testing.assert_allclose(np.asarray(w32), w_hand, rtol=1e-6)


def test_guard_and_leverage_cap():
    # views that make the net exposure 1'z negative: fall back to the minimum-variance portfolio of Sigma_BL
    muv = np.array([-0.2, -0.1, -0.3])
    phi, omega = np.linalg.inv(S0), np.linalg.inv(SV)
    z = phi @ MU0 + omega @ muv
    assert z.sum() < 0
    sigma_bl = np.linalg.inv(phi + omega)
    g = np.linalg.solve(sigma_bl, np.ones(3))
    np.testing.assert_allclose(np.asarray(stable_weights(MU0, S0, muv, SV, leverage_cap=100.0)), g / g.sum(),
                               rtol=1e-6)  # fmt: skip
    # leverage cap: gross exposure scaled down to the cap, the rest in cash
    w_free = np.asarray(stable_weights(MU0, S0, MUV, SV, leverage_cap=100.0))
    cap = 0.5 * np.abs(w_free).sum() if np.abs(w_free).sum() > 2 else 1.0
    w = np.asarray(stable_weights(MU0, S0, MUV, SV, leverage_cap=max(cap, 1.0)))
    assert np.abs(w).sum() <= max(cap, 1.0) + 1e-12
    np.testing.assert_allclose(w / w.sum(), w_free / w_free.sum(), rtol=1e-6)  # same direction
    with pytest.raises(ValueError, match="leverage_cap"):
        stable_weights(MU0, S0, MUV, SV, leverage_cap=0.5)
    with pytest.raises(ValueError, match="view_cov.*positive definite"):
        stable_weights(MU0, S0, MUV, np.diag([0.02, 0.03, 0.0]))


def test_views_from_paths_by_hand_and_long_only_variant():
    rng = np.random.default_rng(0)
    paths = rng.normal(0.001, 0.02, (40, 5, 3))
    m = paths.mean(1)
    mu, S = stable_views(paths)
    np.testing.assert_allclose(np.asarray(mu), m.mean(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(S), (m - m.mean(0)).T @ (m - m.mean(0)) / 39, rtol=1e-6)
    with pytest.raises(ValueError, match="more samples than assets"):
        stable_views(paths[:3])
    w = np.asarray(stable_long_only_weights(MU0, S0, MUV, SV))
    assert w.min() >= 0 and abs(w.sum() - 1) < 1e-6


def test_strategy_weights_rows_are_budgets():
    rng = np.random.default_rng(1)
    win = rng.normal(0.0005, 0.01, (2, 120, 4))
    paths = rng.normal(0.0005, 0.01, (2, 16, 3, 4))
    out = strategy_weights(win, paths, horizon=3)
    for name, w in out.items():
        if "guard" in name:
            continue
        assert w.shape == (2, 4) and np.all(np.isfinite(w)), name
        if name != "STABLE (published)":
            np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-6, err_msg=name)
            assert w.min() >= -1e-9, name  # long-only rules


def test_sharpe_bootstrap_interval_matches_iid_asymptotics_and_difference_test():
    rng = np.random.default_rng(2)
    T = 2520
    r = rng.normal(0.0004, 0.01, T)
    sr, lo, hi = sharpe_confidence_interval(r, block=1, n_boot=2000, periods_per_year=252)
    # iid normal: sd of the annualised Sharpe is sqrt(252 (1 + SR_d^2/2) / T) (Lo 2002)
    sd = np.sqrt(252 * (1 + (sr / np.sqrt(252)) ** 2 / 2) / T)
    assert abs((hi - lo) / (2 * 1.96) / sd - 1) < 0.12
    assert lo < sr < hi
    # calibration under H0 (two independent series of the same law): ~5% rejections at the 5% level
    p = [sharpe_difference_test(*rng.normal(0.0004, 0.01, (2, 500)), block=5, n_boot=200, seed=i)["p_value"]
         for i in range(60)]  # fmt: skip
    assert np.mean(np.array(p) < 0.05) < 0.17
    better = rng.normal(0.003, 0.01, T)
    res = sharpe_difference_test(better, r, block=5, n_boot=1000)
    assert res["diff"] > 0 and res["p_value"] < 0.01


def test_sharpe_of_a_constant_series_is_nan_with_a_reason():
    from jaxkit.portfolio import performance_summary, sharpe_ratio

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert np.isnan(sharpe_ratio(np.full(100, 0.01)))
        assert np.isnan(performance_summary(np.zeros(50))["sharpe"])
    assert any("constant returns" in str(w.message) for w in rec)


@pytest.mark.parametrize("fn_name", ["stable_weights", "stable_long_only_weights"])
def test_stable_weights_dtype_follows_inputs_or_dtype_argument(fn_name):
    """``dtype=`` as in ``max_sharpe``: the result's dtype is the argument's (else the inputs'), the values are the
    float64 computation's rounded to it, and a dtype other than float32/float64 is refused naming ``dtype``."""
    from jaxkit import portfolio as pf

    fn = getattr(pf, fn_name)
    rng = np.random.default_rng(3)
    a = rng.normal(size=(60, 4)) * 0.01 + 0.001
    b = rng.normal(size=(60, 4)) * 0.012 + 0.002
    args64 = (a.mean(0), np.cov(a.T), b.mean(0), np.cov(b.T))
    args32 = tuple(np.asarray(x, np.float32) for x in args64)
    ref = np.asarray(fn(*args64, dtype=np.float64))
    assert ref.dtype == np.float64
    # default: the inputs' float dtype as JAX holds it (float32 unless jax_enable_x64), as max_sharpe
    assert np.asarray(fn(*args64)).dtype == jax.dtypes.canonicalize_dtype(np.float64)
    assert np.asarray(fn(*args32)).dtype == np.float32
    w32 = np.asarray(fn(*args64, dtype=np.float32))
    assert w32.dtype == np.float32
    np.testing.assert_array_equal(w32, ref.astype(np.float32))
    w64 = np.asarray(fn(*args32, dtype="float64"))
    assert w64.dtype == np.float64
    np.testing.assert_array_equal(
        w64, np.asarray(fn(*[x.astype(np.float64) for x in args32], dtype=np.float64))
    )
    with pytest.raises(ValueError, match="dtype"):
        fn(*args64, dtype=np.int32)
