"""The evaluation protocol: post-processing fitted on calibration windows only (poisoned later windows change
nothing), the scorer against independent formulas, paired bootstrap differences, the trailing-window baseline
builder; denoiser objects, one-call save/load (bit-for-bit predictions), PRNG key and frame-index checks."""

import inspect
import warnings

import jax
import numpy as np
import pandas as pd
import pytest

from jaxkit.forecast import (
    AttentionNet,
    MLPNet,
    baseline_paths,
    crps,
    crps_sum,
    energy_distance,
    fit_postprocess,
    historical_bootstrap,
    load_forecaster,
    make_forecaster,
    market_data_from_frames,
    mse,
    paired_difference,
    rolling_gaussian,
    sample_paths,
    save_forecaster,
    score_paths,
)


def _gaussian_case(B=60, k=64, H=3, N=2, spread=0.5, seed=0):
    rng = np.random.default_rng(seed)
    sd = np.array([0.01, 0.02])[:N]
    truth = rng.normal(0, 1, (B, H, N)) * sd
    paths = rng.normal(0, 1, (B, k, H, N)) * sd * spread + 0.003  # too narrow, biased mean
    return paths, truth


def test_calibration_never_sees_test_windows():
    paths, truth = _gaussian_case()
    pos = np.arange(0, 600, 10)  # grid positions of the 60 decision dates
    fit_end = 400  # evaluation starts here: windows with t + H >= 400 are test windows
    post = fit_postprocess(paths, truth, positions=pos, fit_end=fit_end, horizon=3)
    test = pos + 3 >= fit_end
    poisoned = truth.copy()
    poisoned[test] = 1e3  # absurd outcomes on every test window
    post2 = fit_postprocess(paths, poisoned, positions=pos, fit_end=fit_end, horizon=3)
    np.testing.assert_array_equal(post.factor, post2.factor)
    poisoned[test] = np.nan  # even unknown outcomes
    np.testing.assert_array_equal(
        fit_postprocess(paths, poisoned, positions=pos, fit_end=fit_end, horizon=3).factor, post.factor
    )
    pb = paths.copy()
    pb[test] *= 7.0  # and the test windows' own paths
    np.testing.assert_array_equal(
        fit_postprocess(pb, truth, positions=pos, fit_end=fit_end, horizon=3).factor, post.factor
    )
    # the check can fail: poisoning one calibration window does change the fit
    poisoned = truth.copy()
    poisoned[0] = 0.5
    assert not np.allclose(
        fit_postprocess(paths, poisoned, positions=pos, fit_end=fit_end, horizon=3).factor, post.factor
    )
    assert post.n_windows == int(np.sum(~test))
    with pytest.raises(ValueError, match="no calibration window"):
        fit_postprocess(paths, truth, positions=pos, fit_end=0, horizon=3)


def test_postprocess_recovers_a_known_dispersion_error_and_recenters():
    paths, truth = _gaussian_case(B=400, spread=0.5)
    post = fit_postprocess(paths, truth)  # recenter + calibrate
    np.testing.assert_allclose(post.factor, 2.0, rtol=0.06)  # paths were half as wide as the truth's law
    out = post(paths)
    np.testing.assert_allclose(out.mean(1), 0.0, atol=1e-15)
    np.testing.assert_allclose(out.std(1) / paths.std(1), np.broadcast_to(post.factor, out.shape[2:]).reshape(1, *out.shape[2:]) * np.ones((400, 1, 1)), rtol=1e-12)  # fmt: skip
    raw = fit_postprocess(paths, truth, recenter=False, calibrate=False)
    np.testing.assert_array_equal(raw(paths), paths)
    s_raw, s_post = score_paths(paths, truth), score_paths(out, truth)
    assert s_post["crps"] < s_raw["crps"] and abs(s_post["coverage90"] - 0.9) < 0.03 < abs(
        s_raw["coverage90"] - 0.9
    )


def test_scores_match_independent_formulas():
    paths, truth = _gaussian_case(B=12, k=16)
    s = score_paths(paths, truth)
    per = score_paths(paths, truth, per_date=True)
    assert s["crps"] == pytest.approx(crps(paths, truth, sample_axis=1), rel=1e-12)
    assert s["crps_sum"] == pytest.approx(crps_sum(paths, truth, sample_axis=1), rel=1e-12)
    assert s["mse"] == pytest.approx(mse(paths, truth, sample_axis=1), rel=1e-12)
    for b in range(12):  # energy score = energy distance to the one-point sample / 2
        x = paths[b].reshape(16, -1)
        assert per["energy"][b] == pytest.approx(0.5 * energy_distance(x, truth[b].reshape(1, -1)), rel=1e-10)
    assert all(v.shape == (12,) for v in per.values())


def test_paired_difference_interval():
    rng = np.random.default_rng(0)
    b = rng.normal(1.0, 0.1, 200)
    a = b - 0.05 + rng.normal(0, 0.01, 200)
    d = paired_difference(a, b)
    assert d["excludes_0"] and d["ci"][0] < -0.05 < d["ci"][1] and d["mean"] == pytest.approx(np.mean(a - b))
    same = paired_difference(b + rng.normal(0, 0.01, 200), b)
    assert not same["excludes_0"]


def test_baseline_builder_uses_trailing_windows_only():
    rng = np.random.default_rng(0)
    r = rng.normal(0, 0.01, (300, 2))
    pos = np.array([50, 120, 299])
    out = baseline_paths(
        r, pos, lookback=60, horizon=3, n_samples=8, methods=("bootstrap", "gaussian"), seed=5
    )
    for j, t in enumerate(pos):
        np.testing.assert_array_equal(
            out["bootstrap"][j], historical_bootstrap(r[max(0, t - 59) : t + 1], 3, 8, seed=5 + j)
        )
        np.testing.assert_array_equal(
            out["gaussian"][j], rolling_gaussian(r[max(0, t - 59) : t + 1], 3, 8, seed=5 + j)
        )
    r2 = r.copy()
    r2[121:] = 9.0  # the future of date 120 does not matter
    np.testing.assert_array_equal(
        baseline_paths(r2, pos[:2], lookback=60, horizon=3, n_samples=8, methods=("gaussian",), seed=5)[
            "gaussian"
        ],
        out["gaussian"][:2],
    )
    with pytest.raises(ValueError, match="methods"):
        baseline_paths(r, pos, lookback=60, horizon=3, n_samples=8, methods=("arima",))


def _unchecked(f):
    """``f`` without the test suite's runtime annotation checker (jaxtyping import hook): what a user calls."""
    return inspect.unwrap(f)


def _tiny(denoiser, per_date_scale=False, make=make_forecaster):
    return make(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02), denoiser=denoiser,
        diffusion_steps=8, per_date_scale=per_date_scale, key=jax.random.key(0),
    )  # fmt: skip


def test_denoiser_is_an_object_and_strings_are_refused():
    assert _tiny(MLPNet(hidden=16, depth=1, channels=8)).denoiser.__class__.__name__ == "MLPDenoiser"
    assert (
        _tiny(AttentionNet(channels=8, layers=1, heads=2)).denoiser.__class__.__name__
        == "ConditionalDenoiser"
    )
    with pytest.raises(TypeError, match="denoiser: expected a denoiser object"):
        _tiny("mlp", make=_unchecked(make_forecaster))
    with pytest.raises(ValueError, match="heads: expected a divisor"):
        AttentionNet(channels=10, heads=3)


@pytest.mark.parametrize(
    "den", [MLPNet(hidden=16, depth=1, channels=8), AttentionNet(channels=8, layers=1, heads=2)]
)
def test_save_load_predicts_bit_for_bit(tmp_path, den):
    m = _tiny(den, per_date_scale=True)
    m = jax.tree.map(
        lambda x: x + 0.01 if hasattr(x, "dtype") and x.dtype == np.float32 and x.ndim >= 2 else x, m
    )  # not the init: the weight matrices moved (the 1-D noise schedule stays valid)
    rng = np.random.default_rng(0)
    cond = (rng.normal(0, 0.02, (2, 3, 2)), rng.normal(size=(2, 1)), rng.normal(size=(2, 2, 1)))
    kw = dict(n_samples=4, n_steps=4, eta=1.0, scale=np.full((2, 2), 0.02))
    a = np.asarray(sample_paths(m, *cond, jax.random.key(3), **kw))
    save_forecaster(tmp_path / "fc", m, {"note": "mine"})
    m2, meta = load_forecaster(tmp_path / "fc")
    assert meta == {"note": "mine"}
    np.testing.assert_array_equal(np.asarray(sample_paths(m2, *cond, jax.random.key(3), **kw)), a)
    with pytest.raises(ValueError, match="not a saved forecaster"):
        from jaxkit.train import save_checkpoint

        save_checkpoint(tmp_path / "other", {"w": np.zeros(2, np.float32)})
        load_forecaster(tmp_path / "other")


def test_integer_keys_are_refused_with_the_shared_message():
    m = _tiny(MLPNet(hidden=16, depth=1, channels=8))
    cond = (np.zeros((1, 3, 2)), np.zeros((1, 1)), np.zeros((1, 2, 1)))
    with pytest.raises(TypeError, match="key: expected a PRNG key"):
        _unchecked(sample_paths)(
            m, *cond, 0, n_samples=2
        )  # used to fail inside JAX ("invalid PRNG key data")
    with pytest.raises(TypeError, match="key: expected a PRNG key"):
        _unchecked(make_forecaster)(
            n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.ones(2), key=1
        )


def _frame(t=300):
    rng = np.random.default_rng(0)
    idx = pd.bdate_range("2015-01-01", periods=t)
    return pd.DataFrame(
        100 * np.exp(np.cumsum(rng.normal(0, 0.01, (t, 2)), 0)), index=idx, columns=["a", "b"]
    )


def test_frames_need_dates_and_short_norm_windows_work_and_warmup_is_announced():
    px = _frame()
    with pytest.raises(ValueError, match="expected a DatetimeIndex"):
        market_data_from_frames(px.reset_index(drop=True))  # row numbers used to become 1970 dates
    with pytest.warns(UserWarning, match="feature warm-up") as rec:
        d = market_data_from_frames(px, norm_window=20)  # used to fail inside pandas (min_periods > window)
    assert d.warmup_rows > 0 and pd.Timestamp(d.dates[0]) == px.index[d.warmup_rows]
    assert str(px.index[d.warmup_rows].date()) in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = px.copy()
        s.index = s.index.strftime("%Y-%m-%d")  # date strings still parse
        assert market_data_from_frames(s).warmup_rows > 0


def test_reprobe_silent_or_cryptic_cases_are_clear():
    from jaxkit.forecast import train_forecaster, walk_forward_splits

    rng = np.random.default_rng(0)
    s = rng.normal(size=(16, 3, 2))
    with pytest.raises(ValueError, match="normalizer"):
        crps(s, np.zeros((3, 2)))  # used to return inf
    with pytest.raises(ValueError, match="normalizer"):
        score_paths(s[None], np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="finite scores"):
        paired_difference(np.array([1.0, np.nan, 2.0]), np.ones(3))  # used to return nan
    m = _tiny(MLPNet(hidden=8, depth=1, channels=4))
    h, mac, sig = np.zeros((1, 3, 2)), np.zeros((1, 1)), np.zeros((1, 2, 1))
    with pytest.raises(ValueError, match="condition\\['signals'\\]: expected finite"):
        sample_paths(
            m, h, mac, np.full((1, 2, 1), np.nan), jax.random.key(0), n_samples=2, n_steps=2
        )  # NaN paths
    with pytest.raises(ValueError, match="condition\\['macro'\\]: expected shape \\(1, 1\\)"):
        sample_paths(m, h, np.zeros((1, 3)), sig, jax.random.key(0), n_samples=2, n_steps=2)
    win = {"history": np.zeros((4, 3, 2)), "target": rng.normal(size=(4, 2, 2)), "macro": np.zeros((4, 1)),
           "signals": np.zeros((4, 2, 1))}  # fmt: skip
    with pytest.raises(
        ValueError, match="windows\\['macro'\\]: expected shape"
    ):  # was a dot_general TypeError
        train_forecaster(m, dict(win, macro=np.zeros((4, 3))), n_steps=1, batch_size=2, key=jax.random.key(0),
                         progress=False)  # fmt: skip
    with pytest.warns(UserWarning, match="batch_size: 20 is more than the 4 training windows"):  # was silent
        train_forecaster(m, win, n_steps=1, batch_size=20, key=jax.random.key(0), progress=False)
    with pytest.raises(ValueError, match="horizon: expected an integer >= 1"):  # was a numpy shape error
        walk_forward_splits(pd.bdate_range("2000-01-01", periods=800), [2002], horizon=0, history=1)


def test_paired_difference_pairs_two_series_by_date_not_by_position():
    import pandas as pd

    from jaxkit.forecast import paired_difference

    rng = np.random.default_rng(1)
    x, y = rng.normal(size=50), rng.normal(size=50)
    dates = pd.date_range("2020-01-01", periods=50)
    ref = paired_difference(x, y, n_resamples=200)
    shuffled = pd.Series(y, index=dates).sample(frac=1.0, random_state=1)
    assert paired_difference(pd.Series(x, index=dates), shuffled, n_resamples=200) == ref
    with pytest.raises(ValueError, match="b: expected the labels of a"):
        paired_difference(pd.Series(x, index=dates), pd.Series(y, index=dates + pd.Timedelta(days=366)))
