"""Re-probe regressions: NaN paths are refused by ``recenter_paths`` instead of becoming NaN means."""

import numpy as np
import pytest

from jaxkit.forecast import recenter_paths


def test_recenter_paths_refuses_nan_and_names_the_mean_shape():
    rng = np.random.default_rng(0)
    paths = rng.normal(size=(2, 4, 3, 2))
    out = recenter_paths(paths, 0.1)
    np.testing.assert_allclose(out.mean(1), 0.1, atol=1e-12)  # each date's mean replaced
    np.testing.assert_allclose(out - out.mean(1, keepdims=True), paths - paths.mean(1, keepdims=True))
    bad = paths.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="paths: expected finite values"):
        recenter_paths(bad)  # was NaN for every path of that date
    with pytest.raises(ValueError, match="mean: expected finite values"):
        recenter_paths(paths, np.inf)
    with pytest.raises(ValueError, match=r"mean: expected a shape that broadcasts to \(B, H, N\)"):
        recenter_paths(paths, np.zeros(5))
    with pytest.raises(ValueError, match="k >= 1 paths"):
        recenter_paths(np.zeros((2, 0, 3, 2)))


def test_path_counts_above_the_size_cap_are_refused_fast():
    import time

    import jax

    from jaxkit.forecast import MLPNet, historical_bootstrap, make_forecaster, sample_paths

    r = np.random.default_rng(0).normal(0, 0.01, size=(100, 3))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_samples: the request needs about .* TiB, above the size cap"):
        historical_bootstrap(r, 5, 10**12)  # was numpy's MemoryError
    m = make_forecaster(
        n_assets=2, history=4, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.01),
        denoiser=MLPNet(hidden=8, depth=1, channels=4), key=jax.random.key(0),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"n_samples: the request needs about .* GiB, above the size cap"):
        sample_paths(m, np.zeros((1, 4, 2)), np.zeros((1, 1)), np.zeros((1, 2, 1)), jax.random.key(0),
                     n_samples=10**10, n_steps=2)  # fmt: skip  # was ~10 s then an XLA out-of-memory error
    assert time.perf_counter() - t0 < 2.0
    assert historical_bootstrap(r, 5, 7).shape == (7, 5, 3)


def test_crps_names_bad_levels_and_rolling_zscore_refuses_rows_out_of_time_order():
    """Fresh probes: crps(levels=(0.5, 1.5)) raised numpy's "Quantiles must be in the range [0, 1]" and
    levels=() a ZeroDivisionError; rolling_zscore of a shuffled date-indexed frame windowed over future dates."""
    import pandas as pd

    from jaxkit.forecast import crps, rolling_zscore

    rng = np.random.default_rng(0)
    samples, truth = rng.normal(size=(50, 6)), rng.normal(size=6)
    for bad in ((0.5, 1.5), (), (0.0, 0.5)):
        with pytest.raises(
            ValueError, match=r"levels: expected a non-empty sequence of quantile levels in \(0, 1\)"
        ):
            crps(samples, truth, levels=bad)
    # the median level alone: 2 * mean |y - median| / sum |y|, against numpy
    q = np.quantile(samples, 0.5, axis=0)
    expected = 2 * np.sum(np.abs((truth - q) * ((truth <= q) - 0.5))) / np.sum(np.abs(truth))
    assert crps(samples, truth, levels=(0.5,)) == pytest.approx(expected, rel=1e-12)
    df = pd.DataFrame(
        rng.normal(size=(40, 2)), index=pd.date_range("2021-01-01", periods=40), columns=["a", "b"]
    )
    with pytest.raises(ValueError, match=r"df: expected rows in time order.*sort_index"):
        rolling_zscore(df.sample(frac=1.0, random_state=0), window=10)
    pd.testing.assert_frame_equal(
        rolling_zscore(df.sample(frac=1.0, random_state=0).sort_index(), window=10),
        rolling_zscore(df, window=10),
        check_freq=False,
    )
