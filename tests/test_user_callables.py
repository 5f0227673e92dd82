"""A user's callable is never cached by identity (issue 49): after the user changes an array the function
closes over, the estimators return the new value (before: the value of the first call, baked into the compiled
code under the function object's identity; a fresh lambda gave the right one)."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxkit import dynamics as dyn
from jaxkit import stability as stab

KEY = jax.random.key(0)


def test_noise_stability_sees_changed_weights():
    x = jax.random.normal(jax.random.key(1), (64, 4))
    W = jnp.ones(4)
    f = lambda v: jnp.tanh(W @ v)  # noqa: E731
    first = float(stab.noise_stability(f, x, rho=0.5, key=KEY).value)
    W = jnp.array([3.0, -1.0, 0.0, 0.5])  # the closure reads the new W (Python closures are late-binding)
    again = float(stab.noise_stability(f, x, rho=0.5, key=KEY).value)
    fresh = float(stab.noise_stability(lambda v: jnp.tanh(W @ v), x, rho=0.5, key=KEY).value)
    assert again == fresh and abs(again - first) > 1e-3
    W = jnp.zeros(4)  # f == 0: the stability is exactly 0
    assert float(stab.noise_stability(f, x, rho=0.5, key=KEY).value) == 0.0


def test_average_sensitivity_sees_a_changed_mask():
    """A parity of k of the L Boolean inputs has average sensitivity exactly k."""
    x = jnp.asarray(np.random.default_rng(0).choice([-1.0, 1.0], size=(32, 6)))
    mask = jnp.array([1, 1, 0, 0, 0, 0], bool)
    f = lambda v: jnp.prod(jnp.where(mask, v, 1.0))  # noqa: E731
    assert float(stab.average_sensitivity(f, x, key=KEY, domain="boolean")[0]) == 2.0
    mask = jnp.array([1, 1, 1, 0, 1, 0], bool)
    assert float(stab.average_sensitivity(f, x, key=KEY, domain="boolean")[0]) == 4.0


def test_gradient_flow_and_descent_see_a_changed_target():
    """L(p) = |p - c|^2: the flow p(t) = c + (p0 - c) e^{-2t/tau}; GD p_k = c + (1 - 2 lr)^k (p0 - c)."""
    p0 = jnp.zeros(3)
    c = jnp.array([1.0, -2.0, 0.5])
    loss = lambda p: jnp.sum((p - c) ** 2)  # noqa: E731
    ts = jnp.array([0.0, 0.5, 1.0])
    for _ in range(2):
        got = np.asarray(dyn.gradient_flow(loss, p0, ts).params[-1])
        np.testing.assert_allclose(got, np.asarray(c) * (1 - np.exp(-2.0)), rtol=1e-3, atol=1e-4)
        gd = np.asarray(dyn.gradient_descent(loss, p0, 0.1, 10).params[-1])
        np.testing.assert_allclose(gd, np.asarray(c) * (1 - 0.8**10), rtol=1e-5)
        c = jnp.array([-3.0, 0.25, 4.0])  # the second pass must follow the new target
    # SGD: the batch function's closed-over data changes too
    data = jnp.ones(3)
    batch_fn = lambda k: data  # noqa: E731
    sgd_loss = lambda p, b: jnp.sum((p - b) ** 2)  # noqa: E731
    a = np.asarray(dyn.gradient_descent(sgd_loss, p0, 0.1, 10, batch_fn=batch_fn, key=KEY).params[-1])
    data = jnp.full(3, -2.0)
    b = np.asarray(dyn.gradient_descent(sgd_loss, p0, 0.1, 10, batch_fn=batch_fn, key=KEY).params[-1])
    np.testing.assert_allclose(a, np.ones(3) * (1 - 0.8**10), rtol=1e-5)
    np.testing.assert_allclose(b, -2.0 * np.ones(3) * (1 - 0.8**10), rtol=1e-5)


def test_saddle_check_and_grad_norms_see_a_changed_coefficient():
    """L(p) = s (p0^2 - p1^2) at 0: Hessian eigenvalues ±2|s|; grad norm at p is 2|s| |p|."""
    s = jnp.float32(1.0)
    loss = lambda p: s * (p[0] ** 2 - p[1] ** 2)  # noqa: E731
    at = jnp.zeros(2)
    first = dyn.saddle_check(loss, at)
    s = jnp.float32(3.0)
    second = dyn.saddle_check(loss, at)
    assert (first.min_eig, first.max_eig) == (-2.0, 2.0) and (second.min_eig, second.max_eig) == (-6.0, 6.0)
    traj = jnp.array([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(dyn.grad_norms(loss, traj), [6.0, 12.0], rtol=1e-6)
    s = jnp.float32(0.5)
    np.testing.assert_allclose(dyn.grad_norms(loss, traj), [1.0, 2.0], rtol=1e-6)
