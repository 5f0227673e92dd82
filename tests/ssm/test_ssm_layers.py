"""SSM layers, transformer baseline and fixed-width arithmetic."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxkit.ssm._layers as layers_mod
from jaxkit.ssm import (
    VARIANTS,
    CausalTransformer,
    FixedPoint,
    LowFloat,
    SSMLayer,
    SSMModel,
    householder_product,
    parse_precision,
    quantize,
)


def _layer(variant, key=0, d=8, n=4):
    return SSMLayer(variant, d, n, key=jax.random.key(key), n_householder=2)


U = jax.random.normal(jax.random.key(5), (64, 8))


@pytest.mark.parametrize("variant", VARIANTS)
def test_recurrent_and_parallel_agree(variant):
    layer = _layer(variant)
    hp = layer.states(U, mode="parallel")
    hr = layer.states(U, mode="recurrent")
    scale = float(jnp.max(jnp.abs(hr)))
    assert float(jnp.max(jnp.abs(hp - hr))) <= 1e-5 * max(scale, 1.0)
    yp, yr = layer(U), layer(U, mode="recurrent")
    assert float(jnp.max(jnp.abs(yp - yr))) <= 1e-5 * max(float(jnp.max(jnp.abs(yr))), 1.0)


def test_float64_recurrent_parallel_agree_tightly():
    with jax.enable_x64(True):
        for variant in ("selective_complex", "dense"):  # complex diagonal (kernel) and matrix scans
            layer = jax.tree_util.tree_map(lambda a: a.astype(jnp.float64), _layer(variant))
            u = U.astype(jnp.float64)
            hp, hr = layer.states(u), layer.states(u, mode="recurrent")
            assert hp.dtype in (jnp.float64, jnp.complex128)
            np.testing.assert_allclose(np.asarray(hp), np.asarray(hr), atol=1e-11, rtol=1e-11)


def test_diagonal_variants_go_through_the_linear_scan_kernel(monkeypatch):
    assert layers_mod._kernel_linear_scan is not None, "kernels.linear_scan should be importable"
    calls = []
    real = layers_mod._kernel_linear_scan

    def spy(a, b, *args, **kw):
        calls.append(a.shape)
        return real(a, b, *args, **kw)

    monkeypatch.setattr(layers_mod, "_kernel_linear_scan", spy)
    _layer("selective_signed").states(U)
    assert calls == [(64, 4)]


def test_gate_ranges_per_class():
    u = 3.0 * U
    a, _ = _layer("selective_nonneg").transitions(u)
    assert float(a.min()) >= 0 and float(a.max()) <= 1
    a, _ = _layer("selective_signed").transitions(u)
    assert float(a.min()) < 0 <= float(a.max()) <= 1 and float(a.min()) >= -1
    a, _ = _layer("selective_complex").transitions(u)
    assert jnp.iscomplexobj(a) and float(jnp.abs(a).max()) <= 1 + 1e-6
    a, _ = _layer("time_invariant").transitions(u)
    assert float(jnp.max(jnp.abs(a - a[0]))) == 0.0  # independent of the input
    A, _ = _layer("dense").transitions(u)
    assert A.shape == (64, 4, 4)
    assert float(jnp.linalg.norm(A, ord=2, axis=(1, 2)).max()) <= 1 + 1e-5


def test_householder_product_matches_numpy():
    rng = np.random.default_rng(0)
    k = rng.normal(size=(3, 5))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    beta = np.array([0.3, 2.0, 1.1])
    ref = np.eye(5)
    for kj, bj in zip(k, beta):
        ref = (np.eye(5) - bj * np.outer(kj, kj)) @ ref
    np.testing.assert_allclose(
        np.asarray(householder_product(jnp.asarray(k), jnp.asarray(beta))), ref, atol=1e-5
    )


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="variant"):
        SSMModel("mamba9", 3, 2, key=jax.random.key(0))
    m = SSMModel("dense", 3, 2, key=jax.random.key(0))
    with pytest.raises(ValueError, match="tokens"):
        m(jnp.zeros((2, 5), jnp.int32))
    with pytest.raises(ValueError, match="mode"):
        m(jnp.zeros((5,), jnp.int32), mode="sideways")
    with pytest.raises(ValueError, match="positional"):
        CausalTransformer(3, 2, key=jax.random.key(0), positional="fourier")


@pytest.mark.parametrize("pe", ["sinusoidal", "learned", "rope", "alibi", "none"])
def test_transformer_is_causal(pe):
    m = CausalTransformer(4, 3, key=jax.random.key(1), positional=pe, max_len=32)
    t1 = jnp.array([0, 1, 2, 3, 1, 0, 2, 2])
    t2 = t1.at[5:].set(3)
    y1, y2 = m(t1), m(t2)
    np.testing.assert_allclose(np.asarray(y1[:5]), np.asarray(y2[:5]), atol=1e-5)
    assert float(jnp.abs(y1[5:] - y2[5:]).max()) > 1e-4
    if pe == "learned":
        with pytest.raises(ValueError, match="max_len"):
            m(jnp.zeros((40,), jnp.int32))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(-300, 300, allow_nan=False, allow_subnormal=False, width=32), min_size=1, max_size=16),
    st.integers(2, 8),
    st.integers(0, 6),
    st.sampled_from(["nearest", "floor", "toward_zero"]),
)
def test_fixed_point_against_integer_reference(xs, ib, fb, rounding):
    fmt = FixedPoint(ib, fb, rounding=rounding)
    x = np.asarray(xs, np.float32)
    q = np.asarray(quantize(jnp.asarray(x), fmt), np.float64)
    scaled = x.astype(np.float64) * 2**fb
    m = {"nearest": np.round, "floor": np.floor, "toward_zero": np.trunc}[rounding](scaled)
    m = np.clip(m, -(2 ** (ib + fb - 1)), 2 ** (ib + fb - 1) - 1)
    np.testing.assert_array_equal(q, m / 2**fb)
    assert q.max() <= fmt.max_value and q.min() >= fmt.min_value


def test_fixed_point_wraps():
    q = quantize(jnp.array([8.0, 9.0, -9.0]), FixedPoint(4, 0, overflow="wrap"))
    np.testing.assert_array_equal(np.asarray(q), [-8.0, -7.0, 7.0])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-6e4, 6e4, allow_nan=False, width=32), min_size=1, max_size=16))
def test_low_floats_match_bfloat16_and_float16_casts(xs):
    x = np.asarray(xs + [1e-6, -3e-7, 1.0 / 3.0], np.float32)  # include float16 subnormals
    xb = np.concatenate(
        [x, np.float32([1.2e-38, 3e38])]
    )  # float32 extremes (bfloat16 shares the exponent range)
    xb = np.where(np.abs(xb) < 2.0**-125, 0.0, xb).astype(np.float32)  # XLA CPU flushes float32 subnormals
    np.testing.assert_array_equal(
        np.asarray(quantize(jnp.asarray(xb), LowFloat(8, 7))),
        xb.astype(ml_dtypes.bfloat16).astype(np.float32),
    )
    np.testing.assert_array_equal(
        np.asarray(quantize(jnp.asarray(x), LowFloat(5, 10))), x.astype(np.float16).astype(np.float32)
    )


def test_quantize_complex_and_parse():
    z = jnp.array([1.3 + 2.6j])
    assert complex(quantize(z, FixedPoint(4, 1))[0]) == 1.5 + 2.5j
    assert parse_precision("fixed8.4") == FixedPoint(8, 4)
    assert parse_precision("float5e10m") == LowFloat(5, 10)
    with pytest.raises(ValueError, match="spec"):
        parse_precision("int8")
    with pytest.raises(ValueError, match="rounding"):
        FixedPoint(4, 2, rounding="up")


@pytest.mark.parametrize("variant", VARIANTS)
def test_short_conv_is_causal_and_starts_as_the_identity(variant):
    """conv_width=K: the gates and writes read Σ_{j<K} w_j ⊙ u_{t-j}; at init w = (1, 0, ..., 0), so the layer
    equals the layer without it (same key), and after any change of w, outputs before t never see u_t."""
    kw = {"key": jax.random.key(3), "n_householder": 2, "saturating": True, "coupled_input": True}
    plain, conv = SSMLayer(variant, 8, 4, **kw), SSMLayer(variant, 8, 4, conv_width=4, **kw)
    np.testing.assert_array_equal(np.asarray(conv(U)), np.asarray(plain(U)))
    w = jax.random.normal(jax.random.key(9), conv.conv_w.shape)
    conv = eqx_tree_at(lambda m: m.conv_w, conv, w)
    # numpy reference of the window on one channel
    u_np = np.asarray(U)
    ref = sum(np.asarray(w)[j] * np.vstack([np.zeros((j, 8)), u_np[: 64 - j]]) for j in range(4))
    np.testing.assert_allclose(np.asarray(conv._short_conv(U)), ref, rtol=1e-6, atol=1e-6)
    u2 = U.at[20].add(5.0)
    y1, y2 = conv(U), conv(u2)
    np.testing.assert_array_equal(np.asarray(y1[:20]), np.asarray(y2[:20]))
    assert float(jnp.max(jnp.abs(y1[20:24] - y2[20:24]))) > 0


def test_complex_gate_phase_has_exact_zero_and_pi_bands():
    """Saturating complex gate: phase/π = sign(t) max(|t| - δ, 0) / (1 - δ) with t = clip((1 + 2ε) tanh z, -1, 1):
    exactly 0 for |t| <= δ and exactly ±1 once (1 + 2ε) tanh z reaches ±1."""
    layer = SSMLayer("selective_complex", 8, 4, key=jax.random.key(0), saturating=True)
    eps, delta = layers_mod._SAT, layers_mod._PHASE_DEAD
    z = jnp.array([-5.0, -0.05, 0.0, 0.1, 5.0])
    ph = np.asarray(layer._phase(z))
    t = np.clip((1 + 2 * eps) * np.tanh(np.asarray(z, np.float64)), -1, 1)
    np.testing.assert_allclose(ph, np.sign(t) * np.maximum(np.abs(t) - delta, 0) / (1 - delta), atol=1e-6)
    assert ph[0] == -1.0 and ph[-1] == 1.0 and ph[1] == ph[2] == ph[3] == 0.0


def eqx_tree_at(where, tree, value):
    import equinox as eqx

    return eqx.tree_at(where, tree, value)


def test_dense_step_gate_scales_every_factor_and_holds_exactly_at_zero():
    """step_gate: A_t = H_m ⋯ H_1, H_j = I - β_j k_j k_jᵀ, with β_j = 2 g s_j (g, s_j the saturating units of the last and the
    per-factor gate inputs), checked against numpy; recurrent = parallel; g = 0 at every step is an exact hold
    (A = I, and with coupled writes no write, so the state stays 0); other variants refuse the flag."""
    m, n = 2, 4
    kw = {"key": jax.random.key(4), "n_householder": m, "saturating": True, "coupled_input": True}
    layer = SSMLayer("dense", 8, n, step_gate=True, ring_init=True, **kw)
    assert layer.gate_w.shape == (m * (n + 1) + 1, 8)
    eps = layers_mod._SAT
    z = (
        np.asarray(layer.gate_b, np.float64)
        + np.asarray(U, np.float64) @ np.asarray(layer.gate_w, np.float64).T
    )

    def unit(x):
        return np.clip((1 + 2 * eps) / (1 + np.exp(-x)) - eps, 0, 1)

    beta = 2 * unit(z[:, -1:]) * unit(z[:, m * n : m * n + m])
    k = z[:, : m * n].reshape(-1, m, n)
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)
    A_ref = np.stack(
        [
            np.linalg.multi_dot([np.eye(n) - b[j] * np.outer(kk[j], kk[j]) for j in reversed(range(m))])
            for b, kk in zip(beta, k)
        ]
    )
    A, b = layer.transitions(U)
    np.testing.assert_allclose(np.asarray(A), A_ref, atol=2e-5)
    assert 0 < beta.mean() < 0.2  # ring init: β_j near 0, a long memory
    hp, hr = layer.states(U, mode="parallel"), layer.states(U, mode="recurrent")
    np.testing.assert_allclose(np.asarray(hp), np.asarray(hr), atol=1e-5)
    closed = eqx_tree_at(lambda lyr: lyr.gate_b, layer, layer.gate_b.at[-1].set(-1e4))
    A0, b0 = closed.transitions(U)
    np.testing.assert_array_equal(np.asarray(A0), np.broadcast_to(np.eye(n), A0.shape))
    assert not np.any(np.asarray(b0)) and not np.any(np.asarray(closed.states(U, mode="recurrent")))
    with pytest.raises(ValueError, match="step_gate: only the 'dense' variant"):
        SSMLayer("selective_signed", 8, n, key=jax.random.key(0), step_gate=True)
