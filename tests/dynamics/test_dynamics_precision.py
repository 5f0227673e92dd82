"""Precision per call (``dtype=``) on the flows: float64 without the global ``jax_enable_x64`` flag."""

import diffrax
import jax
import numpy as np
import pytest

import jaxkit.dynamics as dyn

S = np.array([4.0, 1.5, 0.5])


def _aligned_problem():
    """Whitened inputs (XᵀX/P = I) and an aligned start: every mode follows the Saxe closed form exactly."""
    x = np.sqrt(3.0) * np.concatenate([np.eye(3), np.eye(3)])
    return x, x * S, np.diag(S)


def _closed_form_error(dtype, rtol, atol):
    x, y, sigma = _aligned_problem()

    def loss(p):
        return dyn.mse_loss(dyn.linear_apply, p, x, y)

    def init(key, scale):
        return dyn.init_linear(key, 3, 3, 3, scale, "aligned", target=sigma)

    ts = np.linspace(0.0, 8.0, 81)
    res = dyn.gradient_flow_batch(
        loss, init, jax.random.split(jax.random.key(0), 1), [1e-3], ts, solver=diffrax.Tsit5(), rtol=rtol,
        atol=atol, dtype=dtype,
    )  # fmt: skip
    prod = np.einsum("tab,tbc->tac", np.asarray(res.params["W2"][0, 0]), np.asarray(res.params["W1"][0, 0]))
    modes = np.einsum("tii->ti", prod)
    exact = np.asarray(S[None] / (1.0 + (S[None] / 1e-3 - 1.0) * np.exp(-2.0 * S[None] * ts[:, None])))
    return res, float(np.max(np.abs(modes - exact)))


def test_float64_per_call_meets_closed_form_without_global_flag():
    assert not jax.config.jax_enable_x64
    res, err = _closed_form_error("float64", 1e-10, 1e-13)
    assert not jax.config.jax_enable_x64  # the flag is untouched
    assert isinstance(res.loss, np.ndarray) and res.loss.dtype == np.float64
    assert res.params["W1"].dtype == np.float64
    assert err < 1e-8, err  # float32 cannot resolve the modes below ~1e-7 (eps 1.2e-7 × s = 4)


def test_float32_call_is_single_precision():
    res, err = _closed_form_error("float32", 1e-6, 1e-8)
    assert np.asarray(res.loss).dtype == np.float32
    assert err > 1e-8  # the float64 bound above is not met in single precision: the test can tell them apart


def test_gradient_descent_float64_matches_numpy_reference():
    x, y, sigma = _aligned_problem()
    x, y = x.copy(), y.copy()  # own arrays for this precision

    def loss(p):
        return dyn.mse_loss(dyn.linear_apply, p, x, y)

    p0 = dyn.init_linear(jax.random.key(1), 3, 3, 3, 1e-2, "random")
    res = dyn.gradient_descent(loss, p0, 0.05, 200, save_every=50, dtype="float64")
    assert res.loss.dtype == np.float64
    # independent float64 NumPy GD on L = 1/(2P) Σ ||y - W2 W1 x||²
    w1, w2 = np.asarray(p0["W1"], np.float64), np.asarray(p0["W2"], np.float64)
    for _ in range(200):
        r = x @ w1.T @ w2.T - y  # (P, d_out)
        g2 = r.T @ (x @ w1.T) / len(x)
        g1 = w2.T @ r.T @ x / len(x)
        w1, w2 = w1 - 0.05 * g1, w2 - 0.05 * g2
    np.testing.assert_allclose(res.params["W1"][-1], w1, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(res.params["W2"][-1], w2, rtol=1e-11, atol=1e-14)


def test_gradient_flow_float64_single_run():
    x, y, sigma = _aligned_problem()
    x, y = x.copy(), y.copy()

    def loss(p):
        return dyn.mse_loss(dyn.linear_apply, p, x, y)

    p0 = dyn.init_linear(jax.random.key(0), 3, 3, 3, 1e-3, "aligned", target=sigma)
    res = dyn.gradient_flow(
        loss, p0, np.linspace(0, 8, 21), solver=diffrax.Tsit5(), rtol=1e-10, atol=1e-13, dtype="float64"
    )
    assert res.loss.dtype == np.float64
    ts = np.asarray(res.ts)
    mode = np.einsum("tab,tba->t", res.params["W2"], res.params["W1"]) / 3  # mean of the three diagonal modes
    exact = np.mean(S[None] / (1.0 + (S[None] / 1e-3 - 1.0) * np.exp(-2.0 * S[None] * ts[:, None])), axis=1)
    np.testing.assert_allclose(mode, exact, rtol=0, atol=1e-7)  # p0 was rounded to float32


@pytest.mark.parametrize("bad", ["float16", "int32", "double-ish", 3])
def test_dtype_rejects_other_precisions(bad):
    x, y, sigma = _aligned_problem()
    p0 = dyn.init_linear(jax.random.key(0), 3, 3, 3, 1e-3, "aligned", target=sigma)
    with pytest.raises(ValueError, match="dtype: expected None, 'float32' or 'float64'"):
        dyn.gradient_flow(lambda p: dyn.mse_loss(dyn.linear_apply, p, x, y), p0, [0.0, 1.0], dtype=bad)
