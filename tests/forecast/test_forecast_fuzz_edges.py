"""Refusals added for the fuzz suite's edges (issue 49): each names the argument it is about."""

import dataclasses

import jax
import numpy as np
import pandas as pd
import pytest

from jaxkit import forecast as fc


def _data(**changes):
    rng = np.random.default_rng(0)
    t = 12
    fields = dict(
        dates=np.asarray(pd.bdate_range("2015-01-01", periods=t)),
        tickers=("a", "b"),
        prices=np.exp(np.cumsum(0.01 * rng.standard_normal((t, 2)), 0)),
        log_returns=0.01 * rng.standard_normal((t, 2)),
        macro=rng.standard_normal((t, 1)),
        signals=rng.standard_normal((t, 2, 1)),
        macro_names=("m",),
        signal_names=("s",),
    )
    return fc.MarketData(**(fields | changes))


@pytest.mark.parametrize("name", ["prices", "log_returns", "macro", "signals"])
def test_market_data_refuses_non_finite_arrays(name):
    bad = getattr(_data(), name).copy()
    bad.flat[0] = np.nan
    with pytest.raises(ValueError, match=rf"^{name}: expected finite values"):
        _data(**{name: bad})


def test_market_data_refuses_a_negative_warmup_and_a_non_finite_scale():
    with pytest.raises(ValueError, match=r"^warmup_rows: "):
        _data(warmup_rows=-1)
    with pytest.raises(ValueError, match=r"^scale: expected finite values"):
        dataclasses.replace(_data(), scale=np.full((12, 2), np.inf))


def test_stock_signals_names_kalman_q():
    idx = pd.bdate_range("2015-01-01", periods=40)
    rng = np.random.default_rng(0)
    lr = pd.DataFrame(0.01 * rng.standard_normal((40, 2)), index=idx, columns=["A", "B"])
    s = pd.Series(0.01 * rng.standard_normal(40), index=idx)
    for q in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"^kalman_q: expected a finite variance >= 0"):
            fc.stock_signals(lr, s, s, kalman_q=q)


def _baseline_call(**changes):
    rng = np.random.default_rng(0)
    kw = dict(
        log_returns=0.01 * rng.standard_normal((30, 2)),
        positions=np.array([10, 20]),
        lookback=10,
        horizon=2,
        n_samples=4,
        methods=("bootstrap", "gaussian", "ewma_gaussian"),
    )
    return fc.baseline_paths(**(kw | changes))


def test_baseline_paths_names_its_arguments():
    with pytest.raises(ValueError, match=r"^ewma_decay: expected a value in \(0, 1\)"):
        _baseline_call(ewma_decay=np.nan)
    with pytest.raises(
        ValueError, match=r"^log_returns: expected a \(time, assets\) grid with at least one row"
    ):
        _baseline_call(log_returns=np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"^positions: expected at least one decision position"):
        _baseline_call(positions=np.zeros(0, int))
    # a window the baseline cannot be fitted on names the arguments it comes from
    with pytest.raises(
        ValueError, match=r"^log_returns, positions: the 'gaussian' baseline cannot be fitted"
    ):
        _baseline_call(log_returns=np.zeros((30, 2)))
    with pytest.raises(ValueError, match=r"^log_returns, positions: the 'bootstrap' baseline"):
        _baseline_call(positions=np.zeros(2, int))


def test_calibrate_spread_names_paths():
    rng = np.random.default_rng(0)
    paths, truth = rng.standard_normal((4, 6, 2, 2)), rng.standard_normal((4, 2, 2))
    pos = np.array([3, 6, 9, 12])
    out, f = fc.calibrate_spread(paths, truth, pos, horizon=2, min_history=1)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(f))
    bad = paths.copy()
    bad[0, 0, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"^paths: expected finite values"):
        fc.calibrate_spread(bad, truth, pos, horizon=2, min_history=1)
    with pytest.raises(ValueError, match=r"^paths: expected sampled paths with a spread"):
        fc.calibrate_spread(np.zeros_like(paths), truth, pos, horizon=2, min_history=1)


@pytest.fixture(scope="module")
def forecaster():
    return fc.make_forecaster(
        n_assets=2, history=4, horizon=2, n_macro=1, n_signals=1, scale=np.ones(2, np.float32),
        key=jax.random.key(0), denoiser=fc.MLPNet(hidden=8, depth=1, channels=4), diffusion_steps=4,
    )  # fmt: skip


def test_diffusion_forecaster_names_scale_and_aux_weight(forecaster):
    m = forecaster
    for bad in (np.nan, np.inf, 0.0, -1.0):
        with pytest.raises(ValueError, match=r"^scale: expected positive finite per-asset scales"):
            fc.DiffusionForecaster(m.denoiser, m.schedule, jax.numpy.full((2,), bad))
    with pytest.raises(ValueError, match=r"^aux_weight: expected a finite value >= 0"):
        fc.DiffusionForecaster(m.denoiser, m.schedule, m.scale, aux_weight=float("nan"))


def test_train_forecaster_names_lr_and_weight_decay(forecaster):
    w = fc.ar1_windows(6, 4, 2, 0.5, np.eye(2, dtype=np.float32) * 0.1, seed=0)
    kw = dict(n_steps=1, batch_size=3, key=jax.random.key(0), progress=False)
    for bad in (np.nan, np.inf, 0.0):
        with pytest.raises(ValueError, match=r"^lr: expected a finite value > 0"):
            fc.train_forecaster(forecaster, w, lr=bad, **kw)
    for bad in (np.nan, np.inf, -1.0):
        with pytest.raises(ValueError, match=r"^weight_decay: expected a finite value >= 0"):
            fc.train_forecaster(forecaster, w, weight_decay=bad, **kw)
