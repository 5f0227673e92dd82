"""The refusals added for the fuzz suite's edge tables (tests/fuzz, issue 49): each names its argument
(docs/contracts.md), where the call used to return NaN, a result of the wrong structure, an error naming another
argument, or an Equinox runtime error from inside ``vmap``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.stability import (
    MethodSpec,
    Transformer,
    compare_speed,
    compare_steps,
    embedding_stability,
    regularized_loss,
    relu_layer_moments,
    speedup_ci,
    stacked_batches,
    steps_to_target,
)

KEY = jax.random.key(0)
P = 5
MODEL = Transformer(P + 1, 3, key=KEY, d_model=8, n_heads=2, d_mlp=16)
TOK = jnp.asarray([[0, 1, 5], [2, 3, 5]], jnp.int32)
LABELS = jnp.asarray([1, 0], jnp.int32)
HIST = [{"step": 10, "acc": [0.1, 0.95]}, {"step": 20, "acc": [0.95, 0.95]}]
RUNS = {"baseline": {"history": HIST}, "fast": {"history": HIST}}


def test_method_spec_checks_gamma_and_rho():
    assert MethodSpec("reg", gamma=0.5, rho=0.25) == ("reg", 0.5, 0.25, None, "agreement", False)
    assert MethodSpec("reg", 0.5)._replace(rho=0.5).rho == 0.5
    with pytest.raises(ValueError, match="gamma: expected a finite strength"):
        MethodSpec("reg", gamma=float("nan"))
    with pytest.raises(ValueError, match="gamma"):
        MethodSpec("reg", gamma=-1.0)
    with pytest.raises(ValueError, match="rho"):
        MethodSpec("reg", rho=float("inf"))


def test_speed_statistics_name_their_argument():
    with pytest.raises(ValueError, match="n_boot: the request needs about"):
        speedup_ci([20, 30, 30], [10, 20, 25], 40, n_boot=2**40)
    with pytest.raises(ValueError, match="n_steps"):
        compare_steps({"baseline": [20, 30], "fast": [10, None]}, 0)
    with pytest.raises(ValueError, match="n_steps"):
        compare_speed(RUNS, "acc", 0.9, -1)
    with pytest.raises(ValueError, match="metric: expected a metric logged in history"):
        steps_to_target(HIST, "loss", 0.9)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="target: expected a finite real number"):
            steps_to_target(HIST, "acc", bad)
        with pytest.raises(ValueError, match="target"):
            compare_speed(RUNS, "acc", bad, 40)
    assert steps_to_target(HIST, "acc", 0.9) == [20, 10] and steps_to_target(HIST, "acc", 0.0) == [10, 10]


def test_stacked_batches_seed_and_jax_arrays():
    xs, ys = jnp.zeros((2, 6, 3), jnp.int32), jnp.zeros((2, 6), jnp.int32)
    assert stacked_batches(xs, ys, 4, 0)(1)[0].shape == (2, 4, 3)  # JAX arrays are accepted
    with pytest.raises(ValueError, match="seed"):
        stacked_batches(xs, ys, 4, -1)


def test_embedding_stability_refusals():
    with pytest.raises(ValueError, match=r"tokens: expected token ids in \[0, 6\)"):
        embedding_stability(MODEL, TOK.at[0, 0].set(-1), KEY, rho=0.5)
    with pytest.raises(ValueError, match="tokens: expected a non-empty batch"):
        embedding_stability(MODEL, TOK[:0], KEY, rho=0.5)
    with pytest.raises(ValueError, match="n_samples: the request needs about"):
        embedding_stability(MODEL, TOK, KEY, rho=0.5, n_samples=2**40)


def test_regularized_loss_refusals():
    kw = dict(gamma=0.5, rho=0.25, vocab_size=P, positions=-1, noise_mask=jnp.asarray([True, True, False]))
    loss, aux = regularized_loss(MODEL, TOK, LABELS, KEY, **kw)
    assert np.isfinite(float(loss))
    cases = [
        (dict(tokens=TOK.at[0, 0].set(-1)), r"tokens: expected token ids in \[0, 6\)"),
        (dict(tokens=TOK[:0], labels=LABELS[:0]), "tokens: expected a non-empty batch"),
        (dict(gamma=float("nan")), "gamma: expected a finite strength"),
        (dict(gamma=float("inf")), "gamma"),
        (dict(rho=2.0), "rho"),
        (dict(vocab_size=-1), "vocab_size"),
        (dict(vocab_size=None), "vocab_size: expected the alphabet size"),
        (dict(vocab_size=2**40), "vocab_size: expected at most"),
    ]
    base = dict(tokens=TOK, labels=LABELS)
    for change, match in cases:
        args = base | {k: v for k, v in change.items() if k in base}
        kws = kw | {k: v for k, v in change.items() if k not in base}
        with pytest.raises(ValueError, match=match):
            regularized_loss(MODEL, args["tokens"], args["labels"], KEY, **kws)
    # gamma = 0 skips the noise pass: no alphabet is needed
    assert np.isfinite(
        float(regularized_loss(MODEL, TOK, LABELS, KEY, **(kw | {"gamma": 0, "vocab_size": None}))[0])
    )


def test_relu_layer_moments_checks_its_inputs():
    w, mean, k, c = np.ones((3, 2)), np.zeros(2), np.eye(2), 0.5 * np.eye(2)
    assert [a.shape for a in relu_layer_moments(w, mean, k, c)] == [(3,), (3, 3), (3, 3)]
    nan = np.full((2, 2), np.nan)
    cases = [
        (dict(w=np.full((3, 2), np.inf)), "w: expected finite values"),
        (dict(w=np.ones(3)), "w: expected an array with 2 dimensions"),
        (dict(mean=np.zeros(3)), r"mean: expected shape \(2\)"),
        (dict(mean=np.array([np.nan, 0.0])), "mean: expected finite values"),
        (dict(k=np.eye(3)), r"k: expected shape \(2, 2\)"),
        (dict(k=nan), "k: expected finite values"),
        (dict(c=np.ones((3, 2))), r"c: expected shape \(2, 2\)"),
        (dict(c=nan), "c: expected finite values"),
        (dict(bias=np.zeros(2)), r"bias: expected shape \(3\)"),
        (dict(bias=np.full(3, np.nan)), "bias: expected finite values"),
    ]
    for change, match in cases:
        args = dict(w=w, mean=mean, k=k, c=c) | change
        with pytest.raises(ValueError, match=match):
            relu_layer_moments(**args)
    with pytest.raises(TypeError, match="w"):
        relu_layer_moments(np.array([["a", "b"]]), mean, k, c)
