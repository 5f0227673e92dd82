"""Bad inputs to jaxkit.stability give a clear error naming the argument (wrong shape/rank, NaN/inf, empty, wrong
dtype, out-of-range ids / ρ / γ, missing files); lists and NumPy arrays are accepted; chunked estimators return
the unchunked numbers; the WikiText-2 loader on a small slice (the shipped copy: tests/test_packaging.py)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.stability import (
    Transformer,
    agreement_regularizer,
    average_sensitivity,
    embedding_stability,
    keep_probability,
    load_wikitext2,
    make_loss_fn,
    noise_stability,
    resample_tokens,
    sparse_parity,
    speedup_ci,
    standard_methods,
)

KEY = jax.random.key(0)
MODEL = Transformer(6, 3, key=KEY, d_model=8, n_heads=2, d_mlp=16)
TOK = jnp.asarray([[0, 1, 5], [2, 3, 5]], jnp.int32)
f_sum = lambda x: jnp.sum(x * x)


def test_out_of_vocabulary_ids_raise():
    with pytest.raises(ValueError, match=r"tokens: expected token ids in \[0, 6\)"):
        MODEL(jnp.asarray([0, 1, 6]))
    with pytest.raises(ValueError, match="tokens"):
        MODEL(jnp.asarray([-1, 1, 2]))
    with pytest.raises(Exception, match="vocabulary"):  # under jit: Equinox runtime error, not a silent clamp
        eqx.filter_jit(lambda m, t: m(t))(MODEL, jnp.asarray([0, 1, 7]))
    with pytest.raises(ValueError, match=r"x: expected token ids in \[0, 4\)"):
        noise_stability(
            lambda t: t.astype(float),
            jnp.asarray([[0, 1], [2, 4]]),
            rho=0.5,
            key=KEY,
            domain="tokens",
            vocab_size=4,
        )
    with pytest.raises(ValueError, match="tokens"):
        resample_tokens(jnp.asarray([0, 3]), KEY, rho=0.5, vocab_size=3)


def test_rho_and_gamma_ranges():
    with pytest.raises(ValueError, match="rho"):
        embedding_stability(MODEL, TOK, KEY, rho=2.0)
    for bad in (1.5, -1.01, float("nan")):
        with pytest.raises(ValueError, match="rho"):
            make_loss_fn(gamma=0.75, rho=bad, vocab_size=5)
        with pytest.raises(ValueError, match="rho"):
            resample_tokens(TOK, KEY, rho=bad, vocab_size=6)
    with pytest.raises(ValueError, match="rho"):
        keep_probability(-1.1, 5)
    with pytest.raises(ValueError, match="rho"):
        noise_stability(f_sum, np.ones((4, 2)), rho=1.2, key=KEY)
    for bad in (-0.1, float("inf")):
        with pytest.raises(ValueError, match="gamma"):
            make_loss_fn(gamma=bad, rho=0.25, vocab_size=5)
        with pytest.raises(ValueError, match="gamma"):
            standard_methods(bad, 0.25)
    with pytest.raises(ValueError, match="vocab_size"):  # the agreement noise needs its alphabet
        make_loss_fn(gamma=0.75, rho=0.25)
    with pytest.raises((ValueError, TypeError), match="method"):  # TypeError from the runtime type checks
        make_loss_fn(gamma=0.75, rho=0.25, vocab_size=5, method="mse")


def test_shapes_dtypes_nan_empty():
    with pytest.raises(ValueError, match="x"):
        noise_stability(f_sum, np.ones((1, 3)), rho=0.5, key=KEY)  # one point: no standard error
    with pytest.raises(ValueError, match="x"):
        noise_stability(f_sum, np.ones((0, 3)), rho=0.5, key=KEY)  # empty
    with pytest.raises(ValueError, match="x: expected finite"):
        noise_stability(f_sum, np.array([[1.0, np.nan], [0.0, 1.0]]), rho=0.5, key=KEY)
    with pytest.raises(ValueError, match="x: expected finite"):
        noise_stability(f_sum, [[1.0, np.inf], [0.0, 1.0]], rho=0.5, key=KEY)
    with pytest.raises(TypeError, match="x"):
        noise_stability(f_sum, [["a", "b"], ["c", "d"]], rho=0.5, key=KEY)
    with pytest.raises(TypeError, match="x"):
        noise_stability(f_sum, np.ones((3, 2), np.int32), rho=0.5, key=KEY)  # gaussian needs floats
    with pytest.raises(TypeError, match="x"):
        noise_stability(f_sum, np.ones((3, 2)), rho=0.5, key=KEY, domain="tokens", vocab_size=3)
    with pytest.raises(ValueError, match="x"):
        noise_stability(f_sum, np.zeros((3, 2)), rho=0.5, key=KEY, domain="boolean")  # not ±1
    with pytest.raises(ValueError, match="chunk_size"):
        noise_stability(f_sum, np.ones((3, 2)), rho=0.5, key=KEY, chunk_size=0)
    with pytest.raises(ValueError, match="x"):
        average_sensitivity(f_sum, np.zeros(4, np.int32), key=KEY, vocab_size=3)
    with pytest.raises(ValueError, match="tokens: expected ONE sequence"):
        MODEL(TOK)  # a batch without vmap
    with pytest.raises(ValueError, match="tokens: expected ONE sequence"):
        MODEL(jnp.asarray([0, 1, 2, 3]))  # longer than seq_len
    with pytest.raises(TypeError, match="tokens"):
        MODEL(jnp.asarray([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="noise_mask"):
        resample_tokens(TOK, KEY, rho=0.5, vocab_size=6, noise_mask=[True, False])
    with pytest.raises((ValueError, TypeError), match="probs_noisy"):
        agreement_regularizer(jnp.ones((2, 3)) / 3, jnp.ones((2, 4)) / 4)
    with pytest.raises(ValueError, match="k"):
        sparse_parity(4, 5, 10, 10, label_noise=0.1, key=KEY)
    with pytest.raises(ValueError, match="label_noise"):
        sparse_parity(8, 3, 10, 10, label_noise=0.7, key=KEY)
    with pytest.raises(ValueError, match="steps"):
        speedup_ci([1, 2, 3], [1, 2], 10)


def test_lists_numpy_and_chunks_give_the_same_numbers():
    x = np.random.default_rng(0).standard_normal((37, 3)).astype(np.float32)
    f = lambda v: jnp.tanh(v)
    ref = noise_stability(f, jnp.asarray(x), rho=0.6, key=KEY, n_samples=3)
    for xs, chunk in ((x.tolist(), None), (x, 8)):  # 37 = 4 chunks of 8 + a remainder of 5
        est = noise_stability(f, xs, rho=0.6, key=KEY, n_samples=3, chunk_size=chunk)
        np.testing.assert_allclose(
            [est.value, est.stderr, est.second_moment], [ref.value, ref.stderr, ref.second_moment], rtol=1e-6
        )
    toks = np.random.default_rng(1).integers(0, 4, (21, 5))
    g = lambda t: jax.nn.one_hot(t[1], 4)
    ref = noise_stability(g, toks, rho=0.2, key=KEY, domain="tokens", vocab_size=4)
    est = noise_stability(g, toks.tolist(), rho=0.2, key=KEY, domain="tokens", vocab_size=4, chunk_size=4)
    np.testing.assert_allclose([est.value, est.stderr], [ref.value, ref.stderr], rtol=1e-6)
    s_ref = average_sensitivity(g, toks, key=KEY, vocab_size=4)
    s_chk = average_sensitivity(g, toks.tolist(), key=KEY, vocab_size=4, chunk_size=5)
    np.testing.assert_allclose(s_chk, s_ref, rtol=1e-6)
    assert float(s_ref[0]) == pytest.approx(1.0)  # only token 1 matters, every change moves the argmax


# A few lines of WikiText-2 (Merity et al. 2016, CC BY-SA 3.0), shipped so the loader test needs no data folder.
_SLICE = " \n = Homarus gammarus = \n \n Homarus gammarus , known as the European lobster or common lobster , is a species\n"
_SLICE_TEST = " \n = Robert <unk> = \n \n Robert <unk> is an English film , television and theatre actor .\n"


def test_wikitext_loader_on_a_shipped_slice(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "valid.txt")):
        load_wikitext2(tmp_path)
    (tmp_path / "valid.txt").write_text(_SLICE, encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="test.txt"):
        load_wikitext2(tmp_path)
    (tmp_path / "test.txt").write_text(_SLICE_TEST, encoding="utf-8")
    ds = load_wikitext2(tmp_path)
    assert "".join(ds["vocab"][i] for i in ds["train"]) == _SLICE
    assert ds["vocab_size"] == len(set(_SLICE)) + 1
    unk = [c not in set(_SLICE) for c in _SLICE_TEST]  # e.g. 'R', 'b', 'v': characters the train split lacks
    np.testing.assert_array_equal(ds["eval"] == ds["vocab_size"] - 1, unk)
    assert len(load_wikitext2(tmp_path, max_train_chars=20)["train"]) == 20


def test_reprobe_silent_results_now_raise():
    """Issue 20 re-probe: each gave a plausible number (a rho = 2 'copy', a token id 7 kept in a 3-word vocabulary,
    the arc-cosine map at c = 1.5, a second moment of a negative variance, NaN cross-entropy) without an error."""
    from jaxkit.stability import correlated_copy, cross_entropy, relu_correlation_map, relu_second_moment

    key = jax.random.key(0)
    x = np.random.default_rng(0).normal(size=(8, 4))
    with pytest.raises(ValueError, match=r"rho: expected a value in \[-1.0, 1.0\]"):
        correlated_copy(jnp.asarray(x), key, 2.0)
    with pytest.raises(ValueError, match=r"x: expected token ids in \[0, 3\)"):
        correlated_copy(jnp.array([0, 7]), key, 0.5, domain="tokens", vocab_size=3)
    with pytest.raises(ValueError, match=r"c: expected correlations in \[-1, 1\]"):
        relu_correlation_map(1.5)
    with pytest.raises(ValueError, match="c: expected correlations"):
        relu_correlation_map(np.nan)
    np.testing.assert_allclose(float(relu_correlation_map(0.0)), 1 / np.pi, rtol=1e-6)  # (sqrt(1) + 0) / pi
    with pytest.raises(ValueError, match="q1: expected variances >= 0"):
        relu_second_moment(-1.0, 1.0, 0.5)
    with pytest.raises(ValueError, match=r"c: expected a covariance with \|c\| <= sqrt\(q1 q2\)"):
        relu_second_moment(1.0, 1.0, 2.0)
    with pytest.raises(ValueError, match=r"labels: expected token ids in \[0, 3\)"):
        cross_entropy(jnp.zeros((2, 3)), jnp.array([0, 5]))  # was NaN
    with pytest.raises((ValueError, TypeError), match="labels"):  # TypeError: the suite's jaxtyping hook
        cross_entropy(jnp.zeros((2, 3)), jnp.array([0, 1, 1]))
    np.testing.assert_allclose(
        float(cross_entropy(jnp.zeros((2, 3)), jnp.array([0, 2]))), np.log(3), rtol=1e-6
    )


def test_cross_entropy_checks_logits_eagerly_and_under_jit_and_keeps_valid_values():
    """Issue 49: NaN logits used to give a NaN loss without a word; a valid call is unchanged (value and grad)."""
    import optax

    from jaxkit.stability import cross_entropy

    logits = jnp.asarray([[1.0, -0.5, 0.25], [0.0, 2.0, -1.0]])
    labels = jnp.asarray([2, 1])
    ref = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))
    np.testing.assert_allclose(float(cross_entropy(logits, labels)), float(ref), rtol=1e-6)
    g = jax.grad(lambda z: cross_entropy(z, labels))(logits)
    g_ref = jax.grad(lambda z: jnp.mean(optax.softmax_cross_entropy_with_integer_labels(z, labels)))(logits)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-6)
    bad = logits.at[0, 1].set(jnp.nan)
    with pytest.raises(ValueError, match="logits: expected finite values"):
        cross_entropy(bad, labels)
    with pytest.raises(Exception, match="logits: expected finite values"):
        jax.jit(cross_entropy)(bad, labels).block_until_ready()
    with pytest.raises(ValueError, match="logits: expected at least one class"):
        cross_entropy(jnp.zeros((2, 0)), labels)


def test_layer_specs_windows_and_sizes_are_checked_up_front():
    from jaxkit.stability import (
        AttentionLayer,
        ReLULayer,
        StabilityInterval,
        fixed_windows,
        stability_interval,
        stream_windows,
    )

    w = np.eye(3)
    with pytest.raises(ValueError, match="weight: expected finite values"):
        ReLULayer(np.where(w > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match="seq_len: expected an integer >= 1"):
        AttentionLayer(None, None, w, -1)
    with pytest.raises(ValueError, match="w_key: expected finite values"):
        AttentionLayer(w, np.full((3, 3), np.inf), w, 4)
    with pytest.raises(ValueError, match="lower: expected finite values"):
        StabilityInterval(float("nan"), 1.0)
    # valid specs still compose as before (one ReLU layer: exact; attention maps c to [0, c])
    assert stability_interval([AttentionLayer(None, None, w, 4)], 0.5) == (0.0, 0.5)
    stream = np.arange(50, dtype=np.int32)
    x, y = fixed_windows(stream, 4, 5)
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(ValueError, match="context: expected an integer >= 1"):
        fixed_windows(stream, 4, 0)
    with pytest.raises(ValueError, match=r"n_windows, context: the request needs about .*TiB"):
        stream_windows(stream, 2**40, 5, seed=0)
    with pytest.raises(ValueError, match="stream: expected finite values"):
        fixed_windows(np.where(stream == 3, np.nan, stream.astype(float)), 4, 5)
    with pytest.raises(ValueError, match=r"n_bits, n_train, n_val: the request needs about"):
        sparse_parity(2**40, 2, 8, 8, label_noise=0.0, key=KEY)


def test_correlated_copy_and_embedding_penalty_check_their_inputs_issue49():
    from jaxkit.stability import correlated_copy, gaussian_embedding_mse_penalty

    x = jnp.asarray([0.5, -1.0, 2.0])
    y = correlated_copy(x, KEY, 0.5)
    assert y.shape == x.shape and bool(jnp.all(jnp.isfinite(y)))
    with pytest.raises(ValueError, match="x: expected finite values"):
        correlated_copy(x.at[0].set(jnp.nan), KEY, 0.5)
    with pytest.raises(Exception, match="x: expected finite values"):
        jax.jit(lambda v: correlated_copy(v, KEY, 0.5))(x.at[0].set(jnp.inf)).block_until_ready()
    with pytest.raises(ValueError, match="noise_scale: expected a value in"):
        correlated_copy(x, KEY, 0.5, noise_scale=float("nan"))
    emb = jnp.ones((2, 3, 4))
    with pytest.raises(ValueError, match="emb: expected finite values"):
        gaussian_embedding_mse_penalty(lambda e: e, emb.at[0, 0, 0].set(jnp.nan), KEY, 0.5)
    with pytest.raises(ValueError, match="emb: expected a non-empty batch"):
        gaussian_embedding_mse_penalty(lambda e: e, emb[:0], KEY, 0.5)
