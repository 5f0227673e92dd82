"""Re-probe regressions: the public scans refuse NaN/inf (eagerly and under ``jax.jit``) instead of spreading it into
every later state, with ``check_finite=False`` to skip; mismatched shapes are named."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import ssm

A = jnp.full((5, 3), 0.5)
B = jnp.ones((5, 3))


def _closed_form(a, b):
    # h_t = 0.5 h_{t-1} + 1, h_0 = 0  ->  h_t = 2 (1 - 0.5^t), t = 1..T
    return 2.0 * (1.0 - 0.5 ** np.arange(1, a.shape[0] + 1))[:, None] * np.ones(a.shape[1])


@pytest.mark.parametrize("mode", ["parallel", "recurrent"])
def test_diagonal_scan_refuses_nan_in_a(mode):
    np.testing.assert_allclose(np.asarray(ssm.diagonal_scan(A, B, mode=mode)), _closed_form(A, B), rtol=1e-6)
    bad = A.at[1, 1].set(jnp.nan)
    with pytest.raises(ValueError, match="a: expected finite values"):
        ssm.diagonal_scan(bad, B, mode=mode)  # was silently NaN from step 1 on in that channel
    with pytest.raises(Exception, match="a: expected finite values"):
        jax.block_until_ready(jax.jit(lambda a, b: ssm.diagonal_scan(a, b, mode=mode))(bad, B))
    with pytest.raises(ValueError, match="b: expected finite values"):
        ssm.diagonal_scan(A, B.at[0, 0].set(jnp.inf), mode=mode)
    out = np.asarray(ssm.diagonal_scan(bad, B, mode=mode, check_finite=False))
    assert np.isnan(out[1:, 1]).all() and np.isfinite(out[:, 0]).all()  # opt-out keeps the raw arithmetic


def test_dense_and_reflection_scans_refuse_nan_and_name_shapes():
    eye = jnp.broadcast_to(0.5 * jnp.eye(3), (5, 3, 3))
    np.testing.assert_allclose(np.asarray(ssm.dense_scan(eye, B)), _closed_form(A, B), rtol=1e-6)
    with pytest.raises(ValueError, match="A: expected finite values"):
        ssm.dense_scan(eye.at[2, 0, 0].set(jnp.nan), B)
    with pytest.raises(ValueError, match=r"A: expected shape \(5, 3, 3\)"):
        ssm.dense_scan(jnp.ones((5, 2, 2)), B)
    with pytest.raises(ValueError, match=r"b: expected shape \(5, 3\) to match a"):
        ssm.diagonal_scan(A, B[:4])
    with pytest.raises(ValueError, match="beta: expected finite values"):
        ssm.reflection_scan(jnp.ones((5, 1, 3)) / np.sqrt(3), jnp.full((5, 1), jnp.inf), B)


def test_layers_refuse_nan_inputs_integer_keys_and_empty_sequences():
    key = jax.random.key(0)
    layer = ssm.SSMLayer("dense", 4, 3, key=key)
    u = jnp.ones((5, 4))
    assert layer(u).shape == (5, 4)
    with pytest.raises(ValueError, match="u: expected finite values"):
        layer(u.at[2, 1].set(jnp.nan))  # was a finite-looking output
    with pytest.raises(Exception, match="u: expected finite values"):
        jax.block_until_ready(jax.jit(lambda v: layer(v))(u.at[0, 0].set(jnp.inf)))
    for build in (
        lambda k: ssm.SSMLayer("selective_signed", 4, 3, key=k),
        lambda k: ssm.SSMModel("selective_signed", 4, 2, key=k, d_model=8, d_state=4, n_layers=1),
        lambda k: ssm.CausalTransformer(4, 2, key=k, d_model=8, n_heads=2, n_layers=1),
    ):
        with pytest.raises(TypeError, match="key: expected a PRNG key|parameter 'key'"):
            build(3)  # was JAX's "invalid PRNG key data"
    m = ssm.SSMModel("selective_signed", 4, 2, key=key, d_model=8, d_state=4, n_layers=1)
    with pytest.raises(ValueError, match="tokens: expected a sequence of at least one token"):
        m(jnp.zeros((0,), jnp.int32))  # was "linear_scan: empty axes are not supported"


def test_householder_product_refuses_non_unit_vectors():
    H = ssm.householder_product(jnp.array([[0.6, 0.8, 0.0]]), jnp.array([2.0]))
    np.testing.assert_allclose(np.asarray(H @ H.T), np.eye(3), atol=1e-6)  # a reflection is orthogonal
    with pytest.raises(ValueError, match="k: expected unit vectors"):
        ssm.householder_product(jnp.array([[3.0, 0.0, 0.0]]), jnp.array([2.0]))  # was diag(-17, 1, 1)
    with pytest.raises(Exception, match="k: expected unit vectors"):
        jax.block_until_ready(
            jax.jit(ssm.householder_product)(jnp.array([[3.0, 0.0, 0.0]]), jnp.array([2.0]))
        )


def test_seed_statistics_and_tables_name_bad_inputs():
    import scipy.stats

    v = np.array([0.5, 0.6, 0.7])
    lo, hi = scipy.stats.t.interval(0.95, 2, loc=v.mean(), scale=scipy.stats.sem(v))
    np.testing.assert_allclose(ssm.seed_interval(list(v)), (lo, hi))
    with pytest.raises(ValueError, match="values: expected a non-empty 1-D sequence"):
        ssm.seed_interval([])  # was (nan, nan)
    with pytest.raises(ValueError, match="values: expected a non-empty 1-D sequence of finite"):
        ssm.seed_interval([0.5, np.nan])  # was (nan, nan)
    with pytest.raises(ValueError, match="confidence: expected a value in"):
        ssm.seed_interval([0.5, 0.6], confidence=1.5)  # was scipy's "alpha must be between 0 and 1"
    with pytest.raises(ValueError, match=r"runs: run 0 has no \['val_acc'\]"):
        ssm.select_runs([{"seed": 0, "train_acc": 1.0}])  # was KeyError
    with pytest.raises(ValueError, match="trans: expected a rectangular table"):
        ssm.DFA(trans=[[0, 1], [1]], accept=[True, False])  # was numpy's inhomogeneous-shape error


def test_householder_product_refuses_beta_outside_0_2():
    """beta = 3 gave I - 3 k kᵀ (eigenvalue -2) without a word: not a product of generalized reflections."""
    k = jnp.eye(3)[:2]
    H = ssm.householder_product(k, jnp.array([2.0, 0.0]))
    np.testing.assert_allclose(
        np.asarray(H), np.diag([-1.0, 1.0, 1.0]), atol=1e-6
    )  # a reflection, then identity
    with pytest.raises(ValueError, match=r"beta: expected Householder coefficients in \[0.0, 2.0\]"):
        ssm.householder_product(k, jnp.array([3.0, 1.0]))
    with pytest.raises(Exception, match="beta: expected Householder coefficients"):
        jax.block_until_ready(jax.jit(ssm.householder_product)(k, jnp.array([-0.5, 1.0])))


def test_ltlf_refuses_empty_traces_naming_the_argument():
    """Before (fresh probe m29): accepts('F p0', zeros((1, 0, 2), bool)) raised a bare IndexError."""
    from jaxkit.ssm import accepts, evaluate, prefix_labels

    for traces, kw in ((np.zeros((1, 0, 2), bool), {}), (np.zeros((3, 0), np.int64), {"n_props": 2})):
        for fn in (accepts, evaluate, prefix_labels):
            with pytest.raises(
                ValueError, match=r"traces: expected traces of length >= 1 .*shape \((1|3), 0"
            ):
                fn("F p0", traces, **kw)
    assert accepts("F p0", np.array([[[False], [True]]]), props=["p0"]).tolist() == [True]
