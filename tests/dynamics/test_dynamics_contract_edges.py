"""Contract edges of jaxkit.dynamics closed in issue 49: non-finite inputs refused (eagerly and under jit),
record types checked, the documented nan of crossing_time comes with its warning."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import dynamics as dyn


def test_apply_refuses_nonfinite_x_eagerly_and_under_jit():
    p = dyn.init_linear(jax.random.key(0), 2, 3, 2, 0.1)
    x = jnp.array([0.5, -1.0])
    expected = np.asarray(p["W2"]) @ (np.asarray(p["W1"]) @ np.asarray(x))  # independent NumPy product
    np.testing.assert_allclose(dyn.linear_apply(p, x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(dyn.linear_apply)(p, x), expected, rtol=1e-6)
    bad = jnp.array([0.5, jnp.nan])
    with pytest.raises(ValueError, match="x: expected finite"):
        dyn.linear_apply(p, bad)
    with pytest.raises(Exception, match="x: expected finite"):  # eqx.error_if's run-time error under jit
        jax.block_until_ready(jax.jit(dyn.linear_apply)(p, bad))


def test_apply_gradient_unchanged_by_the_check():
    p = dyn.init_quadratic(jax.random.key(1), 3, 4, 0.5)
    x = jnp.array([0.3, -0.2, 0.1])
    g = jax.grad(lambda x: dyn.quadratic_apply(p, x))(x)
    W, a = np.asarray(p["W"], np.float64), np.asarray(p["a"], np.float64)
    np.testing.assert_allclose(g, 2 * W.T @ (a * (W @ np.asarray(x, np.float64))), rtol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda: dyn.Plateau(0.0, np.nan, 1.0),
        lambda: dyn.SaddleCheck(0.1, -np.inf, 1.0, False),
        lambda: dyn.PlateauCheck(1.0, 0.0, 1.0, np.nan, -1.0, True, 0),
        lambda: dyn.DiagonalJumps(
            np.ones(1), np.zeros((2, 2)), np.ones(2), np.full((1, 2), np.nan), np.zeros(1)
        ),
    ],
)
def test_records_refuse_nonfinite_fields(make):
    with pytest.raises(ValueError, match="expected finite"):
        make()


def test_records_still_behave_as_namedtuples():
    p = dyn.Plateau(0.0, 1.0, 0.5)
    assert tuple(p) == (0.0, 1.0, 0.5) and p.end == 1.0 and p._replace(level=0.25).level == 0.25
    assert repr(p) == "Plateau(start=0.0, end=1.0, level=0.5)"


def test_crossing_time_warns_when_it_returns_nan():
    with pytest.warns(RuntimeWarning, match="never reach level=2"):
        assert np.isnan(dyn.crossing_time([0.0, 1.0, 2.0], [0.0, 0.5, 1.0], 2.0))
    assert dyn.crossing_time([0.0, 1.0, 2.0], [0.0, 1.0, 2.0], 1.5) == 1.5  # linear interpolation


def test_plateaus_refuses_negative_losses_on_its_log_scale():
    ts = np.linspace(0.0, 1.0, 8)
    with pytest.raises(ValueError, match="loss: expected non-negative"):
        dyn.plateaus(ts, -np.linspace(1.0, 0.1, 8))
    assert dyn.plateaus(ts, np.full(8, 0.3)) == [dyn.Plateau(0.0, 1.0, 0.3)]  # a constant curve: one plateau


def test_long_fuzz_sizes_are_refused_up_front_naming_the_argument():
    """The long fuzz run's findings: ``max_steps`` above int32 was an OverflowError from jit, and a huge ``hidden``
    an out-of-memory error of 13 TB from XLA; both are now refused before any work, naming the argument."""
    loss = lambda p: 0.5 * jnp.sum((p - 1.0) ** 2)  # noqa: E731
    ts = np.linspace(0.0, 1.0, 3)
    with pytest.raises(ValueError, match=r"max_steps: expected an integer <= 2147483647"):
        dyn.gradient_flow(loss, jnp.zeros(2), ts, max_steps=2**40)
    out = dyn.gradient_flow(loss, jnp.zeros(2), ts, max_steps=2**31 - 1)  # the largest accepted
    np.testing.assert_allclose(np.asarray(out.params)[-1], 1.0 - np.exp(-1.0), rtol=1e-4)  # p(t) = 1 - e^{-t}
    sigma = np.diag([3.0, 1.0])
    with pytest.raises(ValueError, match=r"hidden: the request needs about"):
        dyn.linear_fixed_point(sigma, [0], 2**40)
    fp = dyn.linear_fixed_point(sigma, [0], 3)
    assert np.asarray(fp["W1"]).shape == (3, 2) and np.asarray(fp["W2"]).shape == (2, 3)
