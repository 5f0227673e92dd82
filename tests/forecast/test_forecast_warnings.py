"""Warnings a user can act on (issue 49): train_forecaster's advice names an argument it takes (before: "pass
drop_last=False", an argument of ArrayLoader that train_forecaster does not have)."""

import warnings

import jax
import numpy as np

from jaxkit.forecast import MLPNet, make_forecaster, train_forecaster


def test_left_out_windows_advice_names_batch_size():
    m = make_forecaster(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
        denoiser=MLPNet(hidden=8, depth=1, channels=4), diffusion_steps=8, key=jax.random.key(0),
    )  # fmt: skip
    rng = np.random.default_rng(0)
    win = {"history": np.zeros((6, 3, 2)), "target": rng.normal(size=(6, 2, 2)), "macro": np.zeros((6, 1)),
           "signals": np.zeros((6, 2, 1))}  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_forecaster(m, win, n_steps=1, batch_size=4, key=jax.random.key(0), progress=False)
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert not any("drop_last" in t for t in texts), texts
    left = [t for t in texts if "leave 2 window(s) out" in t]
    assert len(left) == 1 and "pass a batch_size dividing 6 (e.g. 3 or 6)" in left[0], texts
    with warnings.catch_warnings(record=True) as caught:  # a dividing batch size: nothing to say
        warnings.simplefilter("always")
        train_forecaster(m, win, n_steps=1, batch_size=3, key=jax.random.key(0), progress=False)
    assert not [w for w in caught if "window(s) out" in str(w.message)]


def test_sample_paths_defaults_to_the_recommended_ancestral_ddim():
    """The docs recommend eta=1 (deterministic DDIM, eta=0, over-disperses on a learned eps); the default was 0."""
    from jaxkit.forecast import sample_paths

    m = make_forecaster(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
        denoiser=MLPNet(hidden=8, depth=1, channels=4), diffusion_steps=8, key=jax.random.key(0),
    )  # fmt: skip
    cond = (np.zeros((1, 3, 2)), np.zeros((1, 1)), np.zeros((1, 2, 1)))
    kw = dict(n_samples=4, n_steps=4)
    default = np.asarray(sample_paths(m, *cond, jax.random.key(3), **kw))
    np.testing.assert_array_equal(
        default, np.asarray(sample_paths(m, *cond, jax.random.key(3), eta=1.0, **kw))
    )
    assert not np.allclose(default, np.asarray(sample_paths(m, *cond, jax.random.key(3), eta=0.0, **kw)))
