"""Bad inputs to the neural-operator API: wrong shape/rank, NaN/inf, empty, wrong dtype, out-of-range settings.

Wrong rank or dtype of an annotated array argument may be caught by the suite's jaxtyping/beartype hook first (a
``TypeCheckError`` naming the argument); outside the tests the function's own ``ValueError``/``TypeError`` is raised.
"""

import jax
import numpy as np
import pytest
from jaxtyping import TypeCheckError

from jaxkit.operators import (
    FNO,
    LNO,
    RNO,
    GaussianNormalizer,
    LaplaceLayer,
    SpectralConv,
    evaluate,
    fno_optimizer,
    grid_spacing,
    predict,
    train_ensemble,
    train_operator,
)

KEY = jax.random.key(0)
ANNOT = TypeCheckError


@pytest.fixture(scope="module")
def models():
    return {
        "fno": FNO(1, 1, 4, 4, 1, proj_hidden=4, key=KEY),
        "rno": RNO(1, 1, 4, 4, 1, proj_hidden=4, key=KEY),
        "lno": LNO(1, 1, 3, 4, proj_hidden=4, key=KEY),
    }


@pytest.mark.parametrize("kind", ["fno", "rno", "lno"])
@pytest.mark.parametrize(
    "x, exc, match",
    [
        (np.zeros((2, 16), np.float32), ValueError, "channels"),  # wrong channel count
        (np.zeros((1, 16, 16), np.float32), ValueError, "axes|dimensions"),  # wrong rank
        (np.zeros((16,), np.float32), ValueError, "dimensions|axes"),  # a batch-less 1-D array
        (np.full((1, 16), np.nan, np.float32), ValueError, "finite"),  # NaN
        (np.full((1, 16), np.inf, np.float32), ValueError, "finite"),  # inf
        (np.zeros((1, 0), np.float32), ValueError, "points|modes"),  # empty grid
        (np.zeros((1, 16), np.int32), TypeError, "float"),  # wrong dtype
        (np.zeros((1, 16), np.complex64), TypeError, "real"),  # complex
    ],
)
def test_model_call_rejects(models, kind, x, exc, match):
    with pytest.raises((exc, ANNOT), match=match):
        models[kind](x)


def test_models_accept_lists_and_reject_too_coarse_grids(models):
    y = models["fno"]([[0.0] * 16])
    assert y.shape == (1, 16)
    with pytest.raises(ValueError, match="twice the number of modes"):
        models["fno"](np.zeros((1, 6), np.float32))  # 6 < 2·4 modes


@pytest.mark.parametrize(
    "build, exc, match",
    [
        (lambda: FNO(0, 1, 4, key=KEY), ValueError, "in_channels"),
        (lambda: FNO(1, 1, 0, key=KEY), ValueError, "modes"),
        (lambda: FNO(1, 1, (4, 4, 4, 4), key=KEY), ValueError, "modes"),
        (lambda: FNO(1, 1, 4, padding=1.5, key=KEY), ValueError, "padding"),
        (lambda: RNO(1, 1, 4, order=3, key=KEY), ValueError, "order"),
        (lambda: RNO(1, 1, (4, 4), lengths=(1.0,), key=KEY), ValueError, "lengths"),
        (lambda: LNO(1, 1, 4, activation="tanh", key=KEY), (ValueError, ANNOT), "activation"),
        (lambda: LNO(1, 1, (4, 4), lengths=(1.0, -2.0), key=KEY), ValueError, "lengths"),
        (lambda: LNO(1, 1, (4, 4), lengths=(1.0,), key=KEY), ValueError, "lengths"),
        (lambda: LaplaceLayer(2, 0, 3, key=KEY), ValueError, "out_channels"),
        (lambda: SpectralConv(1, 1, -1, key=KEY), ValueError, "modes"),
        (lambda: grid_spacing((1,), (1.0,)), ValueError, "at least 2"),
        (lambda: fno_optimizer(lr=0.0), ValueError, "lr"),
        (lambda: fno_optimizer(weight_decay=-1.0), ValueError, "weight_decay"),
        (lambda: GaussianNormalizer.fit(np.zeros((4, 8))), ValueError, "samples, channels"),
        (lambda: GaussianNormalizer.fit(np.zeros((0, 1, 8))), ValueError, "samples"),
        (lambda: GaussianNormalizer.fit(np.full((2, 1, 8), np.nan)), ValueError, "finite"),
    ],
)
def test_constructors_reject(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


def test_laplace_layer_call_checks_spacing():
    layer = LaplaceLayer(1, 1, (2, 2), key=KEY)
    x = np.zeros((1, 5, 6), np.float32)
    with pytest.raises(ValueError, match="spacing"):
        layer(x, spacing=(0.1,))
    with pytest.raises(ValueError, match="spacing"):
        layer(x, spacing=(0.1, 0.0))
    assert layer(x, spacing=(0.1, 0.2)).shape == (1, 5, 6)


def test_training_and_evaluation_reject_bad_data(models):
    x = np.random.default_rng(0).normal(size=(4, 1, 16)).astype(np.float32)
    make = lambda k: FNO(1, 1, 4, 4, 1, proj_hidden=4, key=k)  # noqa: E731
    bad = x.copy()
    bad[1, 0, 3] = np.nan
    with pytest.raises(ValueError, match="y_train"):
        train_operator(models["fno"], x, x[:3], epochs=1, key=KEY)
    with pytest.raises(ValueError, match="x_train"):
        train_operator(models["fno"], bad, x, epochs=1, key=KEY)
    zero = x.copy()
    zero[2] = (
        0.0  # the relative L2 loss divides by this sample's norm (the long fuzz run: an inf loss at step 2)
    )
    with pytest.raises(ValueError, match=r"y_train: expected targets with a nonzero norm.*index 2"):
        train_operator(models["fno"], x, zero, epochs=1, key=KEY)
    with pytest.raises(ValueError, match=r"y_train: expected targets with a nonzero norm"):
        train_ensemble(make, jax.random.split(KEY, 2), x, zero, epochs=1)
    tiny = x.copy()
    tiny[1] = np.finfo(
        np.float32
    ).tiny  # nonzero, but its float32 norm underflows to 0 (the long fuzz run's draw)
    with pytest.raises(ValueError, match=r"y_train: expected targets with a nonzero norm.*index 1"):
        train_operator(models["fno"], x, tiny, epochs=1, key=KEY)
    with pytest.raises(ValueError, match="epochs"):
        train_ensemble(make, jax.random.split(KEY, 2), x, x, epochs=0)
    with pytest.raises(ValueError, match="batch_size"):
        train_ensemble(make, jax.random.split(KEY, 2), x, x, epochs=1, batch_size=0)
    with pytest.raises(ValueError, match="y_train"):
        train_ensemble(make, jax.random.split(KEY, 2), x, bad, epochs=1)
    xn = yn = GaussianNormalizer.fit(x)
    with pytest.raises(ValueError, match="finite"):
        predict(models["fno"], bad, xn, yn)
    with pytest.raises(ValueError, match="at least one sample"):
        predict(models["fno"], x[:0], xn, yn)
    with pytest.raises(ValueError, match="shape"):
        evaluate(models["fno"], x, x[:, :, :8], xn, yn)


def test_reprobe_silent_results_now_raise():
    """Issue 20 re-probe: a NaN field, a negative std, gamma = 0 (lr -> 0 after step_every steps) and d = 0 gave
    an all-NaN derivative, a normalizer that flips signs, a silently frozen optimizer and an empty list."""
    from jaxkit.operators import GaussianNormalizer, fno_optimizer, riesz_pairs, spectral_derivative

    x = np.sin(2 * np.pi * np.arange(16) / 16)
    with pytest.raises(ValueError, match="u: expected finite values"):
        spectral_derivative(np.full(16, np.nan))
    with pytest.raises(ValueError, match=r"u: expected a non-empty field, received shape \(0,\)"):
        spectral_derivative(np.zeros(0))  # named 'n' before
    np.testing.assert_allclose(np.asarray(spectral_derivative(x)), 2 * np.pi * np.cos(2 * np.pi * np.arange(16) / 16),
                               atol=1e-4)  # fmt: skip
    with pytest.raises(ValueError, match="std: expected finite standard deviations >= 0"):
        GaussianNormalizer(jax.numpy.zeros(3), -jax.numpy.ones(3))
    GaussianNormalizer(jax.numpy.zeros(3), jax.numpy.zeros(3))  # a constant channel is fine (eps > 0)
    with pytest.raises(ValueError, match=r"gamma: expected a decay factor in \(0, 1\]"):
        fno_optimizer(gamma=0.0)
    with pytest.raises(ValueError, match="d: expected an integer >= 1"):
        riesz_pairs(0)
    from jaxkit.operators import mse, relative_l2

    for fn in (mse, relative_l2):  # were numpy broadcasting errors naming no argument
        with pytest.raises((ValueError, TypeError), match="target"):  # TypeError: the suite's jaxtyping hook
            fn(jax.numpy.zeros((2, 3)), jax.numpy.zeros((2, 4)))


def test_member_of_a_non_ensemble_names_the_ensemble_argument():
    from jaxkit.operators import member

    with pytest.raises(ValueError, match="^ensemble: expected a pytree with array leaves"):
        member(None, 0)


def test_layer_sizes_beyond_memory_are_refused_up_front_issue49():
    import time

    from jaxkit.operators import InstanceNorm, LaplaceLayer, LNOConfig, RieszSpectralConv, SpectralConv

    key = jax.random.key(0)
    t0 = time.perf_counter()
    for make in (
        lambda: SpectralConv(2, 2, 2**40, key=key),
        lambda: RieszSpectralConv(2, 2, 2**40, key=key),
        lambda: LaplaceLayer(2, 2, 2**40, key=key),
    ):
        with pytest.raises(ValueError, match=r"modes: the request needs about .* above the size cap"):
            make()
    with pytest.raises(ValueError, match="channels: the request needs about"):
        InstanceNorm(2**40)
    assert time.perf_counter() - t0 < 2.0
    with pytest.raises(ValueError, match="channels: expected an integer >= 1"):
        InstanceNorm(0)
    with pytest.raises(ValueError, match="width: expected an integer >= 1"):
        LNOConfig(1, 1, (4,), width=-1)
    assert InstanceNorm(3).scale.shape == (3,)


def test_spectral_conv_checks_its_inputs_issue49():
    import jax.numpy as jnp

    from jaxkit.operators import spectral_conv

    u = jnp.ones((1, 8))
    w = jnp.full((2, 1, 1), 0.5)
    assert spectral_conv(u, w, w).shape == (1, 8)
    with pytest.raises(ValueError, match="weight_im: expected finite values"):
        spectral_conv(u, w, w.at[0].set(jnp.nan))
    with pytest.raises(Exception, match="u: expected finite values"):
        jax.jit(spectral_conv)(u.at[0, 3].set(jnp.inf), w, w).block_until_ready()
