"""Your own data: MarketData from pandas frames (prices or returns, optional macro), with clear errors for bad
frames; bounded-memory chunked sampling and energy statistics give the same numbers as all-at-once."""

import jax
import numpy as np
import pandas as pd
import pytest

from jaxkit.forecast import (
    MLPNet,
    energy_distance,
    energy_test,
    forecast_windows,
    make_forecaster,
    market_data_from_frames,
    sample_paths,
    train_forecaster,
)


def _prices(t=260, n=3, seed=0):
    rng = np.random.default_rng(seed)
    idx = pd.bdate_range("2015-01-01", periods=t)
    lr = rng.normal(0.0003, 0.01, (t, n))
    return pd.DataFrame(100 * np.exp(np.cumsum(lr, 0)), index=idx, columns=[f"s{i}" for i in range(n)])


def test_frames_give_causal_market_data_and_a_trainable_forecaster():
    px = _prices()
    macro = pd.DataFrame({"idx": px.mean(axis=1), "spread": np.linspace(-1, 1, len(px))}, index=px.index)
    d = market_data_from_frames(px, macro, history=5, horizon=3, norm_window=40)
    assert d.log_returns.shape[1] == 3 and d.scale.shape == d.log_returns.shape
    assert d.macro_names == ("idx:dlog", "idx:level", "spread:diff", "spread:level")
    np.testing.assert_allclose(
        d.log_returns, np.diff(np.log(px.to_numpy()), axis=0)[-len(d.dates) :], rtol=1e-12
    )
    # causality: changing the last 10 rows changes no feature before them
    px2 = px.copy()
    px2.iloc[-10:] *= 1.5
    d2 = market_data_from_frames(px2, macro, history=5, horizon=3, norm_window=40)
    for a, b in ((d.macro, d2.macro), (d.signals, d2.signals), (d.scale, d2.scale)):
        np.testing.assert_array_equal(a[:-10], b[:-10])
    # returns give the same log returns as the prices they came from
    d3 = market_data_from_frames(
        px.pct_change().iloc[1:], None, kind="returns", history=5, horizon=3, norm_window=40
    )
    np.testing.assert_allclose(d3.log_returns[-50:], d.log_returns[-50:], rtol=1e-9, atol=1e-12)
    # train two steps and sample from the frame's last windows
    T = len(d.dates)
    win = forecast_windows(d, np.arange(4, T - 3), history=5, horizon=3)
    m = make_forecaster(n_assets=3, history=5, horizon=3, n_macro=d.macro.shape[1], n_signals=d.signals.shape[2],
                        scale=np.full(3, 0.01), denoiser=MLPNet(hidden=16, depth=1, channels=8), per_date_scale=True,
                        diffusion_steps=10, schedule="cosine", key=jax.random.key(0))  # fmt: skip
    m, hist = train_forecaster(m, win, n_steps=2, batch_size=8, key=jax.random.key(1), progress=False)
    last = forecast_windows(d, [T - 1], history=5, horizon=3)
    s = np.asarray(sample_paths(m, last["history"], last["macro"], last["signals"], jax.random.key(2),
                                n_samples=4, n_steps=3, scale=last["scale"]))  # fmt: skip
    assert s.shape == (1, 4, 3, 3) and np.all(np.isfinite(s))
    with pytest.raises(ValueError, match="scale: required"):
        sample_paths(m, last["history"], last["macro"], last["signals"], jax.random.key(2))


def _with_gap(p, row):
    p = p.copy()
    p.iloc[row, 1] = np.nan
    return p


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda p: p.iloc[::-1], "sorted in increasing order"),
        (lambda p: pd.concat([p.iloc[:100], p.iloc[99:]]), "unique dates.*appears more than once"),
        (lambda p: _with_gap(p, 50), "no gaps.*1 NaN.*first on 2015-03-12, column 's1'"),
        (lambda p: p.iloc[:120], "at least .* rows"),
        (lambda p: -p, "positive prices"),
        (lambda p: p.to_numpy(), "DataFrame"),
    ],
)
def test_bad_frames_raise_clear_errors(mutate, match):
    with pytest.raises((ValueError, TypeError), match=match):
        market_data_from_frames(mutate(_prices()), history=20, horizon=10, norm_window=60)


def test_bad_macro_frame():
    px = _prices()
    with pytest.raises(ValueError, match="macro: expected a row for every date"):
        market_data_from_frames(
            px, pd.DataFrame({"m": 1.0 + np.arange(200.0)}, index=px.index[:200]), norm_window=40
        )
    with pytest.raises(ValueError, match="macro: expected no gaps"):
        market_data_from_frames(
            px, pd.DataFrame({"m": np.r_[np.nan, np.ones(259)]}, index=px.index), norm_window=40
        )
    with pytest.raises(ValueError, match="kind"):
        market_data_from_frames(px, kind="levels")


def test_chunked_sampling_equals_unchunked():
    m = make_forecaster(n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
                        denoiser=MLPNet(hidden=16, depth=1, channels=8), diffusion_steps=8, schedule="cosine",
                        key=jax.random.key(0))  # fmt: skip
    rng = np.random.default_rng(0)
    cond = (rng.normal(0, 0.02, (3, 3, 2)), rng.normal(size=(3, 1)), rng.normal(size=(3, 2, 1)))
    kw = dict(n_samples=6, sampler="ddpm")
    a = np.asarray(sample_paths(m, *cond, jax.random.key(1), chunk_size=None, **kw))
    b = np.asarray(sample_paths(m, *cond, jax.random.key(1), chunk_size=4, **kw))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # antithetic pairs: twin paths differ, the pair mean is much less noisy (nearly odd map at init)
    c = np.asarray(sample_paths(m, *cond, jax.random.key(1), antithetic=True, **kw))
    assert np.abs(c[:, 0::2] - c[:, 1::2]).min() > 0
    np.testing.assert_allclose(c[:, 0::2], -c[:, 1::2], rtol=1e-4, atol=1e-6)  # eps = 0 at init: x0 = +-noise
    with pytest.raises(ValueError, match="even"):
        sample_paths(m, *cond, jax.random.key(1), antithetic=True, n_samples=5)


def test_chunked_energy_statistics_equal_all_at_once():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(60, 5)), rng.normal(0.3, 1, (50, 5))
    full = energy_distance(x, y)
    z = np.concatenate([x, y])
    D = np.sqrt(((z[:, None] - z[None]) ** 2).sum(-1))
    ref = 2 * D[:60, 60:].mean() - D[:60, :60].mean() - D[60:, 60:].mean()
    np.testing.assert_allclose(full, ref, rtol=1e-12)
    np.testing.assert_allclose(energy_distance(x, y, chunk_bytes=1000), full, rtol=1e-12)
    t1 = energy_test(x, y, n_permutations=99, seed=3)
    t2 = energy_test(x, y, n_permutations=99, seed=3, chunk_bytes=2000)
    np.testing.assert_allclose(t1, t2, rtol=1e-12)


def test_reprobe_silent_results_now_raise():
    """Issue 20 re-probe: each returned a plausible array (the floor, an empty path set, a too-short embedding,
    NaN z-scores) without an error."""
    from jaxkit.forecast import (
        ewma_gaussian,
        ewma_volatility,
        historical_bootstrap,
        moment_z_scores,
        step_embedding,
    )

    rng = np.random.default_rng(0)
    rets = rng.normal(scale=0.01, size=(60, 3))
    with pytest.raises(
        ValueError, match=r"log_returns: expected at least one finite return per asset.*\[0, 1, 2\]"
    ):
        ewma_volatility(np.full((5, 3), np.nan))  # was the floor everywhere
    with pytest.raises(ValueError, match="floor: expected a finite value >= 0"):
        ewma_volatility(rets, floor=-1.0)
    # missing values (NaN) before a listing stay allowed: the first value is back-filled
    part = rets.copy()
    part[:5, 0] = np.nan
    assert np.all(np.isfinite(ewma_volatility(part)))
    with pytest.raises(ValueError, match="horizon: expected an integer >= 1, received 0"):
        ewma_gaussian(rets, 0, 10)  # was an empty (10, 0, 3) array
    with pytest.raises(ValueError, match="n_samples: expected an integer >= 1, received 0"):
        historical_bootstrap(rets, 5, 0)
    with pytest.raises(ValueError, match="dim: expected an even integer >= 2"):
        step_embedding(jax.numpy.int32(1), 3)  # was 2 entries for dim = 3
    np.testing.assert_allclose(
        np.asarray(step_embedding(jax.numpy.int32(1), 2)), [np.sin(1.0), np.cos(1.0)], rtol=1e-6
    )
    from jaxkit.forecast import crps

    with pytest.raises(ValueError, match="n_assets: expected an integer >= 1, received 0"):
        make_forecaster(n_assets=0, history=4, horizon=2, n_macro=0, n_signals=0, scale=np.ones(1),
                        key=jax.random.key(0))  # named 'scale' before  # fmt: skip
    with pytest.raises(ValueError, match="samples: expected at least one sample"):
        crps(np.zeros((0, 3)), np.zeros(3))  # was IndexError
    with pytest.raises(ValueError, match="sample_axis: expected an axis of samples"):
        crps(np.zeros((5, 3)), np.zeros(3), sample_axis=5)  # was numpy AxisError
    with pytest.raises(ValueError, match="cov: expected a positive semi-definite covariance"):
        moment_z_scores(rng.normal(size=(50, 3)), np.zeros(3), -np.eye(3))  # was NaN mean z-scores


def test_energy_test_guards_huge_permutation_counts_and_keeps_its_stream():
    """Issue 20 re-probe: n_permutations=1e9 ran on (building every permutation first: GBs within seconds)."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(6, 2)), rng.normal(size=(5, 2)) + 1.0
    with pytest.raises(ValueError, match="n_permutations: expected at most 1000000"):
        energy_test(x, y, n_permutations=10**9)
    # permutations drawn block by block give the same p-value for any block size (chunk_bytes)
    t1, p1 = energy_test(x, y, n_permutations=199, seed=3)
    t2, p2 = energy_test(x, y, n_permutations=199, seed=3, chunk_bytes=200)
    assert t1 == pytest.approx(t2, rel=1e-12) and p1 == p2
    # the same stream as drawing every permutation up front (the earlier implementation)
    z, r = np.concatenate([x, y]), np.random.default_rng(3)
    D = np.sqrt(((z[:, None] - z[None]) ** 2).sum(-1))
    stats = []
    for p in [np.arange(11)] + [r.permutation(11) for _ in range(199)]:
        a, b = p[:6], p[6:]
        stats.append(30 / 11 * (2 * D[np.ix_(a, b)].mean() - D[np.ix_(a, a)].mean() - D[np.ix_(b, b)].mean()))
    assert t1 == pytest.approx(stats[0], rel=1e-10)
    assert p1 == pytest.approx((1 + np.sum(np.array(stats[1:]) >= stats[0] - 1e-12)) / 200)


def test_kalman_variances_are_checked():
    """Issue 20 re-probe: q = -1 gave betas that jump to inf (a negative state noise variance)."""
    from jaxkit.forecast import kalman_betas

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 1))
    y = 0.7 * X + 0.01 * rng.normal(size=(40, 2))
    with pytest.raises(ValueError, match="q: expected a finite variance >= 0, received -1.0"):
        kalman_betas(y, X, q=-1.0)
    with pytest.raises(ValueError, match="r: expected a finite variance > 0"):
        kalman_betas(y, X, r=0.0)
    # q = 0 with a diffuse prior: the last filtered beta is least squares (the docstring's identity)
    b = np.asarray(kalman_betas(y, X, q=0.0, r=1.0, p0=1e8))[-1, :, 0]
    np.testing.assert_allclose(b, np.linalg.lstsq(X, y, rcond=None)[0][0], rtol=1e-3)


def test_make_forecaster_and_scores_name_the_argument_issue49():
    from jaxkit.forecast import PostProcess, energy_distance, make_forecaster, moment_z_scores, score_paths

    kw = dict(
        n_assets=2, history=4, horizon=2, n_macro=0, n_signals=0, scale=np.ones(2), key=jax.random.key(0)
    )
    with pytest.raises(ValueError, match="diffusion_steps: expected an integer >= 1"):
        make_forecaster(**kw, diffusion_steps=0)
    with pytest.raises(ValueError, match="diffusion_steps: the request needs about"):
        make_forecaster(**kw, diffusion_steps=2**40)
    with pytest.raises(ValueError, match="aux_weight: expected a finite value >= 0"):
        make_forecaster(**kw, aux_weight=float("nan"))
    with pytest.raises(ValueError, match=r"scale: expected shape \(n_assets,\) = \(3,\)"):
        make_forecaster(**{**kw, "n_assets": 3})
    with pytest.raises(ValueError, match="factor: expected finite values"):
        PostProcess(True, np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="n_windows: expected an integer >= 0"):
        PostProcess(True, np.ones(2), -1)
    rng = np.random.default_rng(0)
    paths, truth = rng.normal(size=(3, 8, 2, 2)), rng.normal(size=(3, 2, 2))
    with pytest.raises(ValueError, match="level: expected a value in"):
        score_paths(paths, truth, level=float("nan"))
    with pytest.raises(ValueError, match="samples: expected finite values"):
        moment_z_scores(np.full((4, 2), np.nan), np.zeros(2), np.eye(2))
    with pytest.raises(ValueError, match="samples: expected a non-empty"):
        moment_z_scores(np.zeros((0, 2)), np.zeros(2), np.eye(2))
    x = rng.normal(size=(5, 2))
    with pytest.raises(ValueError, match="chunk_bytes: expected an integer >= 1"):
        energy_distance(x, x + 1, chunk_bytes=-1)
