"""Cases a fresh set of bad-input probes found silent or cryptic in jaxkit.operators, now defined or refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.operators import mse, relative_l2


def test_relative_l2_zero_target_is_defined_not_nan():
    z = jnp.zeros((2, 4))
    assert float(relative_l2(z, z)) == 0.0  # an exact match of a zero field: no error
    assert float(jax.jit(relative_l2)(z, z)) == 0.0
    assert float(relative_l2(jnp.ones((2, 4)), z)) == np.inf  # no finite relative error exists
    pred = jnp.array([[0.0, 0.0], [1.0, 2.0], [3.0, 0.0]])
    target = jnp.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    ref = [0.0, np.linalg.norm([0.0, 1.0]) / np.linalg.norm([1.0, 1.0]), np.inf]
    np.testing.assert_allclose(np.asarray(relative_l2(pred, target, per_sample=True)), ref, rtol=1e-6)
    # the gradient stays finite where the target norm is zero (double-where), as the loss needs
    g = jax.grad(lambda p: relative_l2(p, target[:2]))(pred[:2] + 0.5)
    assert np.all(np.isfinite(np.asarray(g)))


def test_relative_l2_empty_batch_raises():
    with pytest.raises(ValueError, match="pred: expected a non-empty batch"):
        relative_l2(jnp.ones((0, 4)), jnp.ones((0, 4)))
    with pytest.raises((ValueError, TypeError), match="pred"):  # no batch axis
        relative_l2(jnp.float32(1.0), jnp.float32(1.0))


def test_instance_norm_names_scale_and_shift_of_the_wrong_length():
    """Fresh probe: scale/shift with 3 entries for 2 channels gave "mul got incompatible shapes (2, 8), (3, 1)"."""
    import inspect

    from jaxkit.operators import instance_norm

    u = jnp.arange(16.0).reshape(2, 8)
    with pytest.raises(Exception, match="scale"):  # in this suite the jaxtyping hook names it first
        instance_norm(u, jnp.ones(3), jnp.zeros(2))
    plain = inspect.unwrap(instance_norm)  # as a user runs it, without the test suite's runtime type checking
    with pytest.raises(ValueError, match=r"scale: expected shape \(2,\), one value per channel"):
        plain(u, jnp.ones(3), jnp.zeros(2))
    with pytest.raises(ValueError, match=r"shift: expected shape \(2,\)"):
        plain(u, jnp.ones(2), jnp.zeros(3))
    x = np.asarray(u, np.float64)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(
        np.asarray(instance_norm(u, jnp.ones(2), jnp.zeros(2))), ref, rtol=1e-5, atol=1e-6
    )


def _raises_traced(fn, *args, match):
    """``fn(*args)`` under ``jax.jit`` refuses with ``match`` (eqx.error_if's run-time error, possibly wrapped)."""
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(jax.jit(fn)(*args))


def test_relative_l2_and_mse_refuse_nan_inf_under_jit_and_vmap():
    """Fresh probe: under jit a NaN in pred scored 0.0 (a perfect match), [0., 1.] per sample, [0.] under vmap; a
    NaN target 0.0 too; inf in pred gave inf; mse gave nan/inf. All without a word (eagerly they refuse)."""
    nan_pred = jnp.array([[jnp.nan, 1.0]])
    for bad, arg in ((nan_pred, "pred"), (jnp.array([[jnp.inf, 1.0]]), "pred")):
        for fn in (relative_l2, mse):
            _raises_traced(fn, bad, jnp.ones((1, 2)), match=f"{arg}: expected finite values")
            _raises_traced(fn, jnp.ones((1, 2)), bad, match="target: expected finite values")
            with pytest.raises(ValueError, match=f"{arg}: expected finite values"):
                fn(bad, jnp.ones((1, 2)))  # eagerly, as before
    two = jnp.array([[jnp.nan, 1.0], [0.0, 0.0]])
    _raises_traced(
        lambda p, t: relative_l2(p, t, per_sample=True), two, jnp.ones((2, 2)), match="pred: expected"
    )
    with pytest.raises(Exception, match="pred: expected finite values"):
        jax.block_until_ready(jax.vmap(relative_l2)(nan_pred[:, None], jnp.ones((1, 1, 2))))
    with pytest.raises(Exception, match="target: expected finite values"):
        jax.block_until_ready(jax.vmap(mse)(jnp.ones((1, 1, 2)), nan_pred[:, None]))
    # finite inputs: the eager result, jitted and vmapped
    rng = np.random.default_rng(0)
    p, t = (jnp.asarray(rng.normal(size=(3, 2, 5)), jnp.float32) for _ in range(2))
    for fn in (relative_l2, mse, lambda a, b: relative_l2(a, b, per_sample=True)):
        np.testing.assert_allclose(np.asarray(jax.jit(fn)(p, t)), np.asarray(fn(p, t)), rtol=1e-6)
        np.testing.assert_allclose(
            np.asarray(jax.vmap(fn)(p[:, None], t[:, None])).ravel(),
            [float(np.asarray(fn(p[i : i + 1], t[i : i + 1])).ravel()[0]) for i in range(3)],
            rtol=1e-6,
        )
    assert float(jax.jit(relative_l2)(jnp.ones((1, 2)), jnp.zeros((1, 2)))) == np.inf  # documented, unchanged


def test_relative_l2_core_never_scores_nan_as_a_match():
    """The cause of the 0.0 above: ``jnp.where(sq > 0, sqrt(sq), 0)`` sent a NaN squared error (NaN > 0 is False)
    to the exact-match branch, and a NaN target norm to the zero-target branch. The unchecked core, which the
    training loss calls, now keeps NaN as NaN, so ``fit``'s divergence check sees it."""
    from jaxkit.operators._training import _relative_l2_core

    nan = jnp.nan
    out = np.asarray(
        _relative_l2_core(
            jnp.array([[nan, 1.0], [0.0, 0.0], [2.0, 0.0]]),
            jnp.array([[1.0, 1.0], [nan, 0.0], [0.0, 0.0]]),
            per_sample=True,
        )
    )
    assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == np.inf
    assert np.isnan(float(jax.jit(_relative_l2_core)(jnp.array([[nan, 0.0]]), jnp.zeros((1, 2)))))
    z = jnp.zeros((2, 3))
    assert float(_relative_l2_core(z, z)) == 0.0


def test_training_loss_stops_on_a_nan_loss():
    """The training loss calls the unchecked core; a NaN prediction gives a NaN loss (it used to read 0.0, a
    perfect score) and ``fit`` stops with FloatingPointError."""
    import equinox as eqx
    import optax

    from jaxkit.operators._training import _relative_l2_core
    from jaxkit.train import fit

    class Bad(eqx.Module):
        w: jax.Array

        def __call__(self, x):
            return x * self.w * jnp.nan

    x = jnp.ones((4, 1, 3))

    def loss(model, batch, key):
        return _relative_l2_core(jax.vmap(model)(batch), batch)

    with pytest.raises(FloatingPointError, match="the training loss is nan"):
        fit(
            Bad(jnp.ones(())),
            optax.sgd(1e-3),
            loss,
            lambda step: x,
            n_steps=2,
            key=jax.random.key(0),
            progress=False,
        )


def test_instance_norm_refuses_nan_under_jit_and_vmap():
    """Fresh probe: a NaN u under jit gave an all-NaN output without a word."""
    from jaxkit.operators import instance_norm

    u = jnp.arange(16.0).reshape(2, 8)
    ones, zeros = jnp.ones(2), jnp.zeros(2)
    _raises_traced(instance_norm, u.at[0, 1].set(jnp.nan), ones, zeros, match="u: expected finite values")
    _raises_traced(instance_norm, u, ones.at[1].set(jnp.inf), zeros, match="scale: expected finite values")
    _raises_traced(instance_norm, u, ones, zeros.at[0].set(jnp.nan), match="shift: expected finite values")
    with pytest.raises(Exception, match="u: expected finite values"):
        jax.block_until_ready(
            jax.vmap(instance_norm, (0, None, None))(u[None].at[0, 0, 0].set(jnp.nan), ones, zeros)
        )
    ref = np.asarray(instance_norm(u, ones, zeros))
    np.testing.assert_allclose(np.asarray(jax.jit(instance_norm)(u, ones, zeros)), ref, rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jax.vmap(instance_norm, (0, None, None))(u[None], ones, zeros))[0], ref, rtol=1e-6
    )


@pytest.mark.parametrize("name", ["spectral_derivative", "fractional_laplacian", "riesz_transform"])
def test_spectral_functions_refuse_nan_under_jit_and_vmap(name):
    """Fresh probe: a NaN u under jit gave an all-NaN output (the FFT spreads it) without a word."""
    import jaxkit.operators as ops

    fn = getattr(ops, name)
    u = jnp.sin(2 * jnp.pi * jnp.arange(16.0) / 16)
    _raises_traced(fn, u.at[3].set(jnp.nan), match="u: expected finite values")
    _raises_traced(fn, u.at[3].set(-jnp.inf), match="u: expected finite values")
    with pytest.raises(Exception, match="u: expected finite values"):
        jax.block_until_ready(jax.vmap(fn)(jnp.stack([u, u.at[0].set(jnp.nan)])))
    with pytest.raises(ValueError, match="u: expected finite values"):
        fn(u.at[3].set(jnp.nan))
    ref = np.asarray(fn(u))
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(u)), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(fn)(jnp.stack([u, u])))[1], ref, rtol=1e-5, atol=1e-6)
