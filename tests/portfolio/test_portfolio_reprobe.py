"""Re-probe regressions: ``solve_qp_nonneg`` says "infeasible" / "unbounded" instead of blaming ``max_iter``, and
drops redundant consistent equality rows (which used to stop the interior-point iteration)."""

import numpy as np
import pytest
import scipy.optimize

from jaxkit.portfolio import solve_qp_nonneg

H, C = np.eye(2), np.zeros(2)


def test_infeasible_and_unbounded_problems_are_named():
    with pytest.raises(ValueError, match="infeasible"):
        solve_qp_nonneg(H, C, np.ones((1, 2)), np.array([-1.0]))  # x >= 0 cannot sum to -1
    with pytest.raises(ValueError, match="inconsistent.*infeasible"):
        solve_qp_nonneg(H, C, np.ones((2, 2)), np.array([1.0, 2.0]))  # was "raise max_iter"
    with pytest.raises(ValueError, match="H, c: the objective is unbounded below"):
        solve_qp_nonneg(np.zeros((2, 2)), np.array([-1.0, 0.0]), np.array([[1.0, -1.0]]), np.zeros(1))


def test_redundant_rows_are_dropped_and_match_an_independent_solver():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 4))
    Hq, c = M @ M.T + 0.1 * np.eye(4), rng.normal(size=4)
    A = np.vstack([np.ones(4), 2 * np.ones(4), [1.0, 0, 0, 0]])  # row 2 = 2 x row 1, consistent b
    b = np.array([1.0, 2.0, 0.2])
    x = np.asarray(solve_qp_nonneg(Hq, c, A, b, dtype=np.float64))  # was "raise max_iter"
    ref = scipy.optimize.minimize(
        lambda z: 0.5 * z @ Hq @ z + c @ z,
        np.full(4, 0.25),
        jac=lambda z: Hq @ z + c,
        constraints=[{"type": "eq", "fun": lambda z: A[[0, 2]] @ z - b[[0, 2]]}],
        bounds=[(0, None)] * 4,
        method="SLSQP",
        options={"ftol": 1e-14},
    ).x
    np.testing.assert_allclose(x, ref, atol=1e-5)


def test_value_checks_hold_under_jit_and_vmap():
    """Before: under jit a NaN covariance gave [0.5, 0.5], tangency with all-negative means the minimum-Sharpe
    portfolio [1/3, 2/3], and an infeasible QP a plausible-looking x."""
    import jax
    import jax.numpy as jnp

    from jaxkit import portfolio as pf

    with pytest.raises(Exception, match="cov: expected finite values"):
        jax.block_until_ready(jax.jit(pf.min_variance)(jnp.array([[1.0, jnp.nan], [jnp.nan, 1.0]])))
    with pytest.raises(Exception, match="mean: the tangency direction"):
        jax.block_until_ready(jax.jit(lambda m: pf.tangency(m, jnp.eye(2)))(jnp.array([-0.1, -0.2])))
    w = jax.jit(lambda m: pf.tangency(m, jnp.eye(2)))(jnp.array([0.1, 0.3]))
    np.testing.assert_allclose(np.asarray(w), [0.25, 0.75], rtol=1e-5)  # Sigma^-1 mu / 1^T Sigma^-1 mu
    with pytest.raises(Exception, match="solve_qp_nonneg: the interior-point solve did not reach"):
        f = jax.jit(lambda b: pf.solve_qp_nonneg(jnp.eye(2), jnp.zeros(2), jnp.ones((1, 2)), b))
        jax.block_until_ready(f(jnp.array([-1.0])))
    with pytest.raises(Exception, match="mean: expected finite values"):
        m = jnp.array([[0.1, 0.2], [jnp.nan, 0.1]])
        jax.block_until_ready(jax.vmap(lambda mu: pf.mean_variance(mu, jnp.eye(2)))(m))
    # the documented fallback of max_sharpe under tracing (no asset beats rf: long-only min variance) still holds
    w = jax.jit(jax.vmap(lambda mu: pf.max_sharpe(mu, jnp.eye(2))))(jnp.array([[0.1, 0.2], [-0.1, -0.2]]))
    np.testing.assert_allclose(np.asarray(w[1]), [0.5, 0.5], atol=1e-4)


def test_sizes_and_horizon_are_refused_up_front():
    import time

    from jaxkit import portfolio as pf

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n: the request needs about 373 GiB, above the size cap"):
        pf.equal_weight(10**11)  # was an XLA RESOURCE_EXHAUSTED (or an abort)
    assert time.perf_counter() - t0 < 1.0
    r = np.random.default_rng(0).normal(0, 0.01, size=(2, 60, 3))
    with pytest.raises(ValueError, match="horizon: expected an integer >= 1"):
        pf.strategy_weights(r, horizon=0)  # was a zero covariance and a failed solve deep inside


def test_performance_summary_refuses_nan_negative_or_nested_turnover():
    """Fresh probe (2026-12-06): a NaN turnover came back as turnover_per_year = nan without a word."""
    from jaxkit.portfolio import performance_summary

    r = [0.01, 0.02, -0.01, 0.005]
    with pytest.raises(ValueError, match="turnover"):
        performance_summary(r, turnover=[0.1, float("nan")])
    with pytest.raises(ValueError, match="turnover: expected values >= 0"):
        performance_summary(r, turnover=[0.1, -0.2])
    with pytest.raises(ValueError, match="turnover"):
        performance_summary(r, turnover=[[0.1, 0.2]])
    out = performance_summary(r, turnover=[0.1, 0.3], periods_per_year=4)
    assert out["turnover_per_rebalance"] == pytest.approx(0.2)
    assert out["turnover_per_year"] == pytest.approx(0.4 / (4 / 4))


def test_metrics_refuse_a_date_series_out_of_time_order():
    """max_drawdown of a shuffled date-indexed Series compounded in row order (a different, wrong number)."""
    import pandas as pd

    from jaxkit import portfolio

    r = pd.Series(np.random.default_rng(0).normal(0.0, 0.02, 60), pd.date_range("2020-01-01", periods=60))
    shuffled = r.sample(frac=1.0, random_state=1)
    w = np.cumprod(1.0 + r.to_numpy())
    expected = np.max(1.0 - w / np.maximum(np.maximum.accumulate(w), 1.0))  # numpy, in date order
    assert portfolio.max_drawdown(r) == pytest.approx(expected, rel=1e-12)
    for fn in (portfolio.max_drawdown, portfolio.annualized_return, portfolio.performance_summary):
        with pytest.raises(ValueError, match="returns: expected a series in time order.*sort_index"):
            fn(shuffled)
    assert portfolio.max_drawdown(shuffled.sort_index()) == pytest.approx(expected, rel=1e-12)


def test_rebalance_indices_refuses_a_zero_step():
    """Fresh probe: freq="0" raised ZeroDivisionError."""
    import pandas as pd

    from jaxkit.portfolio import rebalance_indices

    dates = pd.bdate_range("2022-01-03", periods=30)
    with pytest.raises(ValueError, match=r"freq: expected 'D', 'W', 'M', 'Q' or a step >= 1"):
        rebalance_indices(dates, "0")
    np.testing.assert_array_equal(rebalance_indices(dates, "10"), [0, 10, 20])
