"""Warnings a user can act on (issue 49): train_forecaster's advice names an argument it takes (before: "pass
drop_last=False", an argument of ArrayLoader that train_forecaster does not have)."""

import warnings

import jax
import numpy as np

from jaxkit.forecast import MLPNet, make_forecaster, train_forecaster


def _tiny_model_and_six_windows():
    """A 2-asset guided forecaster and 6 training windows (zero conditioning, Gaussian targets)."""
    m = make_forecaster(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
        denoiser=MLPNet(hidden=8, depth=1, channels=4), diffusion_steps=8, key=jax.random.key(0),
    )  # fmt: skip
    rng = np.random.default_rng(0)
    win = {"history": np.zeros((6, 3, 2)), "target": rng.normal(size=(6, 2, 2)), "macro": np.zeros((6, 1)),
           "signals": np.zeros((6, 2, 1))}  # fmt: skip
    return m, win


def test_left_out_windows_advice_names_batch_size():
    m, win = _tiny_model_and_six_windows()
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


def test_the_logged_loss_is_the_documented_sum():
    """A zero predictor scores 1 per ε-MSE term: loss = 1 + 2 * aux_weight for a guided model (the docstring used to
    say "mean ε-prediction loss", which a zero predictor would score 1)."""
    import equinox as eqx

    from jaxkit.forecast import forecaster_loss

    m = make_forecaster(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
        denoiser=MLPNet(hidden=8, depth=1, channels=4), diffusion_steps=8, key=jax.random.key(0),
    )  # fmt: skip
    zero = eqx.tree_at(
        lambda mm: mm.denoiser, m, jax.tree.map(lambda a: a * 0 if eqx.is_inexact_array(a) else a, m.denoiser)
    )
    rng = np.random.default_rng(0)
    B = 512
    batch = {"history": rng.normal(0, 0.02, (B, 3, 2)).astype(np.float32), "macro": np.zeros((B, 1), np.float32),
             "signals": np.zeros((B, 2, 1), np.float32), "target": rng.normal(0, 0.02, (B, 2, 2)).astype(np.float32)}  # fmt: skip
    loss, terms = forecaster_loss(zero, batch, jax.random.key(1))
    for k in ("eps_mse", "eps_mse_full", "eps_mse_macro"):
        assert abs(float(terms[k]) - 1.0) < 0.1, (k, terms[k])  # E eps^2 = 1 over 2048 draws
    np.testing.assert_allclose(
        float(loss),
        float(terms["eps_mse"] + m.aux_weight * (terms["eps_mse_full"] + terms["eps_mse_macro"])),
        rtol=1e-6,
    )
    assert abs(float(loss) - 3.0) < 0.3


def test_the_progress_bar_says_what_its_loss_sums(capsys):
    """The bar's ``loss`` is forecaster_loss's sum; its default label says so (a zero predictor shows 3, not 1)."""
    m, win = _tiny_model_and_six_windows()
    train_forecaster(m, win, n_steps=1, batch_size=3, key=jax.random.key(0))
    err = capsys.readouterr().err
    assert m.denoiser.guided
    assert f"loss = eps-MSE + {m.aux_weight:g} x two branch eps-MSEs" in err, err[-500:]
