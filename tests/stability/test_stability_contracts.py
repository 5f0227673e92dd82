"""The model contract of the regularizer and the checks at the stability API's boundary, each against a value
computed independently (a hand-written loop over the batch) or an expected error that says what to pass."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.stability import (
    Transformer,
    agreement_regularizer,
    average_sensitivity,
    make_loss_fn,
    model_logits,
    modular_addition,
    noise_stability,
    resample_tokens,
    sparse_parity,
    token_agreement,
)

KEY = jax.random.key(0)


class Classifier(eqx.Module):
    """A user's per-sample classifier: ``(T,)`` token ids -> ``(C,)`` logits."""

    emb: eqx.nn.Embedding
    head: eqx.nn.Linear

    def __init__(self, vocab: int, classes: int, *, key):
        k1, k2 = jax.random.split(key)
        self.emb = eqx.nn.Embedding(vocab, 16, key=k1)
        self.head = eqx.nn.Linear(16, classes, key=k2)

    def __call__(self, tokens):
        return self.head(jnp.tanh(jnp.mean(jax.vmap(self.emb)(tokens), axis=0)))


def _agreement_by_hand(model, x, noisy, pick=lambda out: out):
    vals = []
    for xi, yi in zip(np.asarray(x), np.asarray(noisy)):
        p = jax.nn.softmax(pick(model(jnp.asarray(xi))))
        q = jax.nn.softmax(pick(model(jnp.asarray(yi))))
        vals.append(np.sum(np.asarray(p) * np.asarray(q), axis=-1).mean())
    return float(np.mean(vals))


def test_classifier_agreement_is_the_true_value_and_positions_minus_one_is_refused():
    model = Classifier(10, 5, key=KEY)
    x = jax.random.randint(jax.random.key(1), (64, 6), 0, 10)
    k = jax.random.key(2)
    noisy = resample_tokens(x, k, rho=0.5, vocab_size=10)
    got = token_agreement(model, x, k, rho=0.5, vocab_size=10, positions=None)
    assert float(got) == pytest.approx(_agreement_by_hand(model, x, noisy), rel=1e-5)
    with pytest.raises(ValueError, match="pass positions=None"):
        token_agreement(model, x, k, rho=0.5, vocab_size=10, positions=-1)
    loss_fn = make_loss_fn(gamma=0.5, rho=0.5, vocab_size=10, positions=-1)
    with pytest.raises(ValueError, match="pass positions=None"):
        loss_fn(model, (x[:8], jnp.zeros(8, jnp.int32)), k)
    loss, aux = make_loss_fn(gamma=0.5, rho=0.5, vocab_size=10)(model, (x[:8], jnp.zeros(8, jnp.int32)), k)
    assert np.isfinite(float(loss)) and aux["penalty"] < 0


def test_sequence_model_positions_index_the_first_output_axis():
    model = Transformer(12, 6, key=KEY, d_model=16, n_heads=2, d_mlp=32)
    x = jax.random.randint(jax.random.key(1), (16, 6), 0, 12)
    k = jax.random.key(3)
    noisy = resample_tokens(x, k, rho=0.25, vocab_size=12)
    for pos, pick in ((-1, lambda o: o[-1]), (2, lambda o: o[2]), (None, lambda o: o)):
        got = token_agreement(model, x, k, rho=0.25, vocab_size=12, positions=pos)
        assert float(got) == pytest.approx(_agreement_by_hand(model, x, noisy, pick), rel=1e-4)
    with pytest.raises(ValueError, match="position axis of length 6"):
        model_logits(model, x, positions=6)  # an out-of-range index would be clamped silently by JAX


def test_batched_callable_gets_the_contract_not_a_vmap_error():
    model = Classifier(10, 5, key=KEY)
    batched = lambda t: jax.vmap(model)(t)  # noqa: E731
    x = jnp.zeros((4, 6), jnp.int32)
    with pytest.raises(TypeError, match=r"per-sample callable.*t\[None\]"):
        token_agreement(batched, x, KEY, rho=0.5, vocab_size=10)
    with pytest.raises(TypeError, match="class axis"):
        model_logits(lambda t: jnp.sum(t).astype(float), x)


def test_resample_tokens_out_of_vocab_raises_under_jit():
    f = jax.jit(lambda t: resample_tokens(t, KEY, rho=0.5, vocab_size=10))
    assert f(jnp.array([1, 9])).shape == (2,)
    with pytest.raises(Exception, match="outside the vocabulary"):
        jax.block_until_ready(f(jnp.array([1, 12])))


def test_noise_stability_default_chunking_matches_one_pass_and_is_bounded():
    w = jnp.ones(4) / 2.0
    x = jax.random.normal(jax.random.key(1), (300, 4))
    f = lambda v: jnp.sign(v @ w)  # noqa: E731
    auto = noise_stability(f, x, rho=0.5, key=KEY)
    one = noise_stability(f, x, rho=0.5, key=KEY, chunk_size=300)
    small = noise_stability(f, x, rho=0.5, key=KEY, chunk_size=7)
    np.testing.assert_allclose(auto.value, one.value, rtol=1e-6)
    np.testing.assert_allclose(small.value, one.value, rtol=1e-6)
    # a point whose noisy copies and outputs need 32 MiB: the default chunk keeps a step under 256 MiB
    from jaxkit.stability._noise import _auto_chunk

    big = jax.ShapeDtypeStruct((10_000, 2**20 // 8), jnp.float32)  # shape only, nothing allocated
    assert _auto_chunk(lambda v: v, big, 15) * 8 * 16 * 2 * big.shape[1] <= 256 * 2**20


def test_noise_stability_reports_nan_from_f_and_can_skip_the_check():
    x = jax.random.normal(jax.random.key(1), (20, 3))
    f = lambda v: jnp.where(v[0] > 1.0, jnp.nan, v[0])  # noqa: E731
    with pytest.raises(ValueError, match="NaN or inf.*check_finite=False"):
        noise_stability(f, x, rho=0.5, key=KEY)
    assert np.isnan(float(noise_stability(f, x, rho=0.5, key=KEY, check_finite=False).value))
    with pytest.raises(Exception, match="NaN or inf"):
        jax.block_until_ready(jax.jit(lambda z: noise_stability(f, z, rho=0.5, key=KEY).value)(x))


def test_sizes_and_keys_are_refused_up_front():
    with pytest.raises(ValueError, match=r"TiB.*max_bytes"):
        modular_addition(10**6, 0.3, KEY)
    assert modular_addition(7, 0.5, KEY, max_bytes=10**6)["train_x"].shape == (24, 3)
    with pytest.raises(ValueError, match="max_bytes"):
        modular_addition(200, 0.5, KEY, max_bytes=10**6)
    for call in (
        lambda k: noise_stability(jnp.sin, jnp.ones((4, 2)), rho=0.5, key=k),
        lambda k: average_sensitivity(jnp.sum, jnp.ones((4, 2)), key=k, domain="boolean"),
        lambda k: resample_tokens(jnp.zeros(3, jnp.int32), k, rho=0.5, vocab_size=4),
        lambda k: modular_addition(7, 0.5, k),
        lambda k: sparse_parity(8, 3, 10, 10, label_noise=0.1, key=k),
    ):
        with pytest.raises(TypeError, match="key: expected a PRNG key"):
            call(jnp.zeros(2, jnp.int32))  # an integer array, not a key (a raw key is uint32)


def test_agreement_regularizer_refuses_logits():
    p = jax.nn.softmax(jnp.arange(6.0).reshape(2, 3))
    assert float(agreement_regularizer(p, p)) == pytest.approx(-float(jnp.mean(jnp.sum(p * p, -1))))
    with pytest.raises(ValueError, match="softmax"):
        agreement_regularizer(jnp.arange(6.0).reshape(2, 3), p)
