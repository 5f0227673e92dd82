"""Line 1 of issue 16 at small scale: on held-out windows of a synthetic market with volatility regimes and
cross-asset correlation (a known source of distributional skill), the forecaster as the stable pipeline builds it
(residual-MLP denoiser, EWMA per-date scale, CSDI's 50-step schedule, ancestral sampling) beats the bootstrap,
Gaussian and GARCH baselines on CRPS and CRPS-sum, covers 85-95% of outcomes with its 90% intervals, and its mean
is no worse than the zero forecast."""

import jax
import numpy as np
import pandas as pd

from jaxkit.forecast import (
    MLPNet,
    coverage,
    crps,
    crps_sum,
    forecast_windows,
    garch_paths,
    historical_bootstrap,
    make_forecaster,
    market_data_from_frames,
    mse,
    rolling_gaussian,
    sample_paths,
    train_forecaster,
)


def _regime_market(T=2400, seed=0):
    """Two-state Markov volatility (x0.6 / x1.8, switch probability 2%/day), asset vols 1-2%, correlation 0.6."""
    rng = np.random.default_rng(seed)
    state = np.zeros(T, int)
    for t in range(1, T):
        state[t] = state[t - 1] if rng.random() > 0.02 else 1 - state[t - 1]
    vol = np.where(state == 1, 1.8, 0.6)[:, None] * np.array([0.01, 0.015, 0.02])
    C = np.full((3, 3), 0.6) + 0.4 * np.eye(3)
    r = vol * (rng.standard_normal((T, 3)) @ np.linalg.cholesky(C).T)
    idx = pd.bdate_range("2000-01-03", periods=T)
    return pd.DataFrame(100 * np.exp(np.cumsum(r, 0)), index=idx, columns=list("abc"))


def test_forecaster_beats_baselines_on_held_out_windows():
    """Measured (seed 0): diffusion CRPS 0.764 / CRPS-sum 0.748 / coverage 0.878 / MSE 4.16e-4; best baselines
    GARCH 0.787 / 0.779; zero-forecast MSE 4.20e-4."""
    L, H, K, LB = 5, 2, 64, 500
    d = market_data_from_frames(_regime_market(), history=L, horizon=H, norm_window=120)
    n = len(d.dates)
    train, test = np.arange(L, n - 500), np.arange(n - 450, n - H - 1, 10)
    win, tw = (
        forecast_windows(d, train, history=L, horizon=H),
        forecast_windows(d, test, history=L, horizon=H),
    )
    m = make_forecaster(
        n_assets=3, history=L, horizon=H, n_macro=d.macro.shape[1], n_signals=d.signals.shape[2],
        scale=np.full(3, 0.01), denoiser=MLPNet(hidden=64, depth=2, channels=32), per_date_scale=True,
        schedule="quadratic", diffusion_steps=50, key=jax.random.key(0),
    )  # fmt: skip
    m, _ = train_forecaster(m, win, n_steps=800, batch_size=128, lr=3e-3, ema_decay=0.99, key=jax.random.key(1),
                            progress=False)  # fmt: skip
    s = np.asarray(sample_paths(m, tw["history"], tw["macro"], tw["signals"], jax.random.key(2), n_samples=K,
                                sampler="ddpm", scale=tw["scale"]))  # fmt: skip
    truth = tw["target"]
    base = {
        name: np.stack([f(d.log_returns[t - LB + 1 : t + 1], H, K, seed=j) for j, t in enumerate(test)])
        for name, f in (
            ("bootstrap", historical_bootstrap),
            ("gaussian", rolling_gaussian),
            ("garch", garch_paths),
        )
    }
    best_crps = min(crps(b, truth, sample_axis=1) for b in base.values())
    best_sum = min(crps_sum(b, truth, sample_axis=1) for b in base.values())
    got = (
        crps(s, truth, sample_axis=1),
        crps_sum(s, truth, sample_axis=1),
        coverage(s, truth, sample_axis=1),
    )
    assert got[0] <= best_crps and got[1] <= best_sum, (got, best_crps, best_sum)
    assert 0.85 <= got[2] <= 0.95, got
    assert mse(s, truth, sample_axis=1) <= np.mean(truth**2)


def test_calibrate_spread_is_causal_and_recovers_a_known_dispersion_error():
    from jaxkit.forecast import calibrate_spread, recenter_paths

    rng = np.random.default_rng(0)
    B, k, H, N = 80, 400, 2, 3
    truth = rng.normal(0, 1.0, (B, H, N))
    paths = rng.normal(0, 0.8, (B, k, H, N))  # 20% too narrow
    pos = np.arange(B) * 5
    cal, f = calibrate_spread(paths, truth, pos, horizon=5, window=40, min_history=6)
    assert np.all(f[:6] == 1.0) and abs(np.median(f[20:]) - 1.25) < 0.08
    np.testing.assert_allclose(cal.mean(1), paths.mean(1), atol=1e-12)  # the mean is kept
    # date b only uses outcomes of windows that ended by its own position
    t2 = truth.copy()
    t2[50:] += 10.0
    _, f2 = calibrate_spread(paths, t2, pos, horizon=5, window=40, min_history=6)
    np.testing.assert_array_equal(f[:51], f2[:51])
    assert f2[52] != f[52]
    r = recenter_paths(paths, 0.5)
    np.testing.assert_allclose(r.mean(1), 0.5, atol=1e-12)
