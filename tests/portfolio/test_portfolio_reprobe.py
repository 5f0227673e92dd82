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
    with pytest.raises(Exception, match="H, c, A, b: solve_qp_nonneg's interior-point solve did not reach"):
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


def test_min_variance_and_max_sharpe_refuse_the_zero_covariance():
    """Fresh probe: min_variance(zeros) returned equal weights and max_sharpe(mu, zeros) [0.34, 0.24, 0.42]
    without a word; every portfolio has variance 0, so neither question has an answer."""
    import jax

    from jaxkit import portfolio as pf

    zero = np.zeros((3, 3))
    with pytest.raises(ValueError, match="cov: the zero matrix .* minimum-variance portfolio is undefined"):
        pf.min_variance(zero)
    with pytest.raises(Exception, match="cov: the zero matrix"):
        jax.block_until_ready(jax.jit(pf.min_variance)(zero))
    with pytest.raises(ValueError, match="cov: the zero matrix .* infinite Sharpe ratio"):
        pf.max_sharpe(np.array([0.1, 0.2, 0.05]), zero)
    # a zero-variance asset (cash) is a question with an answer; mean_variance of a zero cov is a linear program
    np.testing.assert_allclose(np.asarray(pf.min_variance(np.diag([0.0, 1.0, 2.0]))), [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(pf.mean_variance(np.array([0.1, 0.2, 0.05]), zero)), [0, 1, 0], atol=1e-6
    )


def _reduced_min_variance(S: np.ndarray) -> np.ndarray:
    n = S.shape[0]
    return scipy.optimize.minimize(
        lambda w: w @ S @ w,
        np.full(n, 1.0 / n),
        jac=lambda w: 2 * S @ w,
        constraints=[{"type": "eq", "fun": lambda w: np.sum(w) - 1.0}],
        bounds=[(0, None)] * n,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 500},
    ).x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_min_variance_of_a_duplicate_asset_is_the_equal_split(dtype):
    """Fresh probe: a singular covariance (one asset listed twice) has infinitely many minimum-variance
    portfolios. The documented answer (docs/contracts.md) is the analytic center of the optimal set: an equal
    split between the duplicates. The KKT polish used to replace it by an arbitrary point of the set (in 2 of 60
    random cases in float64: [.., 0.39, 0.0] for two copies of one asset)."""
    import jax

    from jaxkit import portfolio as pf

    tol = 1e-7 if dtype == np.float64 else 2e-4
    rng = np.random.default_rng(0)
    cases = [(np.array([[1.0, 0.2], [0.2, 1.0]]), 0, 1)]  # cov [[1, 1, .2], [1, 1, .2], [.2, .2, 1]]
    for _ in range(12):
        m = int(rng.integers(2, 6))
        M = rng.normal(size=(m, m + 3))
        cases.append((M @ M.T / (m + 3), int(rng.integers(0, m)), int(rng.integers(0, m + 1))))
    with jax.enable_x64(True):
        for S, i, j in cases:
            E = np.insert(np.eye(len(S)), j, np.eye(len(S))[i], axis=0)  # row j: a copy of asset i
            cov = E @ S @ E.T
            ii = i if i < j else i + 1  # asset i's index once the copy is inserted
            w = np.asarray(pf.min_variance(cov.astype(dtype)), np.float64)
            ref = _reduced_min_variance(S)
            np.testing.assert_allclose(w[ii], w[j], atol=tol)
            merged = np.delete(w, j)
            merged[i] += w[j]  # the two copies together hold the reduced problem's weight of asset i
            np.testing.assert_allclose(merged, ref, atol=max(tol, 1e-6) * 10)
            assert w @ cov @ w == pytest.approx(ref @ S @ ref, rel=max(tol, 1e-9) * 10)
        w = np.asarray(pf.min_variance(np.array([[1, 1, 0.2], [1, 1, 0.2], [0.2, 0.2, 1.0]], dtype)))
        np.testing.assert_allclose(w, [0.25, 0.25, 0.5], atol=tol)  # variance 0.6, the reduced problem's


def test_strategy_weights_refuses_a_constant_asset_naming_window_returns():
    """The long fuzz run's finding: an all-zero window reached the Ledoit-Wolf shrinkage (0/0) and surfaced as a
    run-time error about an internal ``cov``; a constant asset has a singular covariance, where maximum Sharpe and
    minimum variance have no unique answer, so it is refused up front naming ``window_returns``."""
    from jaxkit.portfolio import strategy_weights

    rng = np.random.default_rng(0)
    win = rng.normal(0.0, 0.01, (3, 20, 4))
    ok = strategy_weights(win, horizon=5)
    assert all(np.all(np.isfinite(w)) for w in ok.values())
    for bad in (np.zeros_like(win), win.copy()):
        bad[1, :, 2] = 0.001  # asset 2 constant in window 1
        with pytest.raises(ValueError, match=r"window_returns: expected every asset's returns to vary"):
            strategy_weights(bad, horizon=5)
    with pytest.raises(ValueError, match=r"window_returns: expected a lookback of at least 2"):
        strategy_weights(win[:, :1], horizon=5)


@pytest.mark.parametrize("scale", [3e-34, 1e-20, 1e-6, 1.0, 1e6, 1e30])
def test_max_sharpe_weights_do_not_depend_on_the_scale_of_mean(scale):
    """Max-Sharpe weights are invariant to a positive scale of the excess returns. The long fuzz run drew
    mean = 3e-34 (float32): the scaled QP's Hessian overflowed and the solver stopped at iteration 0 with a NaN
    residual, blaming max_iter. Compared with the unscaled problem solved in float64."""
    from jaxkit.portfolio import max_sharpe

    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4))
    cov = a @ a.T / 4 + 0.1 * np.eye(4)
    mean = rng.normal(size=4)
    ref = np.asarray(max_sharpe(mean, cov, dtype=np.float64))
    w = np.asarray(max_sharpe((mean * scale).astype(np.float32), cov.astype(np.float32)))
    np.testing.assert_allclose(w, ref, atol=2e-6)


def test_long_fuzz_findings_name_the_arguments():
    """The long fuzz run (2026-12-07) drew inputs where the float32 solve stalls or a backtest overflows: the errors
    named no argument (`solve_qp_nonneg: ...`, `returns: ...` of an internal series); they name the problem data."""
    import pandas as pd

    from jaxkit.portfolio import max_sharpe, run_backtest, solve_qp_nonneg

    with pytest.raises(ValueError, match=r"^mean, cov: max_sharpe's interior-point iteration stalled"):
        max_sharpe(np.array([1.1754944e-38, -1.0, -1.0, -1.0], np.float32), np.eye(4, dtype=np.float32))
    with pytest.raises(ValueError, match=r"^H, c, A, b: solve_qp_nonneg's interior-point iteration stalled"):
        solve_qp_nonneg(np.eye(3, dtype=np.float32), np.zeros(3, np.float32),
                        np.array([[1e-8, 0.0, 0.0]], np.float32), np.ones(1, np.float32))  # fmt: skip
    rng = np.random.default_rng(0)
    p = np.full((81, 3), 5.9604645e-08, np.float32)
    p[rng.random((81, 3)) < 0.3] = 9.9
    with pytest.raises(ValueError, match=r"^prices: the simulated portfolio is not finite"):
        run_backtest(p, np.array([10, 40]), np.array([[0.3, 0.3, 0.4], [0.5, 0.25, 0.25]]),
                     dates=pd.bdate_range("2020-01-01", periods=81))  # fmt: skip
