"""Noise-stability estimators against closed forms (Sheppard, Hermite ρⁿ, parities) and input validation.

One Equinox feature model (coefficients select the function) keeps the number of compilations small; ``rbg``
keys compile faster than threefry on a loaded CPU.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.stability import average_sensitivity, noise_stability, relu_mlp_stability

D = 6
KEY = jax.random.key(0, impl="rbg")
_rng = np.random.default_rng(0)
W = _rng.standard_normal(D)
W = W / np.linalg.norm(W)
W1 = _rng.standard_normal((8, D)) / np.sqrt(D)
X = jax.random.normal(jax.random.key(1, impl="rbg"), (40000, D))


def _hermite_all(t, n_max=4):
    """Normalized probabilists' Hermite polynomials He_n(t)/sqrt(n!), n = 0..n_max (E[h_n(g)^2] = 1)."""
    hs = [jnp.ones_like(t), t]
    for k in range(1, n_max):
        hs.append(t * hs[k] - k * hs[k - 1])
    return jnp.stack([h / math.sqrt(math.factorial(n)) for n, h in enumerate(hs)])


class _Features(eqx.Module):
    """f(x) = [c_sign·sign(wx), Σ_n c_n h_n(wx), g·relu(W1 x)]: coefficients pick the function under test."""

    w: jax.Array
    w1: jax.Array
    c_sign: jax.Array
    c: jax.Array
    g: jax.Array

    def __call__(self, x):
        t = x @ self.w
        return jnp.concatenate(
            [
                self.c_sign * jnp.sign(t)[None],
                (self.c @ _hermite_all(t))[None],
                self.g * jax.nn.relu(self.w1 @ x),
            ]
        )


def _features(c_sign=0.0, c=(0, 0, 0, 0, 0), g=0.0):
    f32 = lambda v: jnp.asarray(v, jnp.float32)
    return _Features(f32(W), f32(W1), f32(c_sign), f32(c), f32(g))


@pytest.mark.parametrize("rho", [-0.6, 0.2, 0.5, 0.9])
def test_sheppard(rho):
    est = noise_stability(
        _features(c_sign=1.0), X, rho=rho, key=jax.random.fold_in(KEY, int(100 * rho) + 100), n_samples=2
    )
    exact = 1.0 - 2.0 / math.pi * math.acos(rho)
    assert abs(float(est.value) - exact) < 0.01
    assert float(est.stderr) < 0.005


@pytest.mark.parametrize("n", [1, 2, 3])
def test_hermite_rho_power(n):
    rho = 0.7
    est = noise_stability(_features(c=np.eye(5)[n]), X, rho=rho, key=jax.random.fold_in(KEY, n), n_samples=2)
    assert abs(float(est.value) - rho**n) < max(4 * float(est.stderr), 0.01)
    assert float(est.stderr) < 0.03
    # odd/even degrees at -ρ: (-ρ)^n
    est = noise_stability(_features(c=np.eye(5)[n]), X, rho=-rho, key=jax.random.fold_in(KEY, n), n_samples=2)
    assert abs(float(est.value) - (-rho) ** n) < max(4 * float(est.stderr), 0.01)


def test_rho_one_is_second_moment():
    f = _features(c_sign=0.5, c=(0.3, 1.0, -0.5, 0.2, 0.1), g=1.0)
    est = noise_stability(f, X, rho=1.0, key=KEY, n_samples=2)
    second = jnp.mean(jax.vmap(lambda x: jnp.sum(f(x) ** 2))(X))
    np.testing.assert_allclose(float(est.value), float(second), rtol=1e-5)
    np.testing.assert_allclose(float(est.normalized), 1.0, rtol=1e-5)


def test_monotone_in_rho_psd_case():
    # Stab_ρ = Σ_k ρ^k W_k with W_k >= 0 (Hermite weights), so non-decreasing on [0, 1]; compare the closed form.
    f = _features(g=1.0)
    rhos = [0.0, 0.25, 0.5, 0.75, 1.0]
    vals = [float(noise_stability(f, X, rho=r, key=KEY, n_samples=2).value) for r in rhos]
    exact = [relu_mlp_stability([W1], r)[0] for r in rhos]
    assert all(b > a for a, b in zip(exact, exact[1:]))
    assert all(b > a for a, b in zip(vals, vals[1:]))
    np.testing.assert_allclose(vals, exact, rtol=0.02)


class _Masked(eqx.Module):
    """Parity (``majority=0``) or majority (``majority=1``) of the coordinates selected by ``mask``."""

    mask: jax.Array
    majority: jax.Array

    def __call__(self, x):
        sel = jnp.where(self.mask > 0, x, 1.0)
        par = jnp.prod(sel)
        maj = jnp.sign(jnp.sum(self.mask * x))
        return jnp.where(self.majority > 0, maj, par)


def test_boolean_parity_and_sensitivity():
    xb = jnp.where(jax.random.bernoulli(jax.random.key(5, impl="rbg"), 0.5, (20000, 8)), 1.0, -1.0)
    mask = jnp.asarray([1, 1, 1, 0, 0, 0, 0, 0], jnp.float32)
    parity, majority = _Masked(mask, jnp.asarray(0.0)), _Masked(mask, jnp.asarray(1.0))
    est = noise_stability(parity, xb, rho=0.6, key=KEY, n_samples=2, domain="boolean")
    assert abs(float(est.value) - 0.6**3) < max(4 * float(est.stderr), 0.01)
    s, _ = average_sensitivity(parity, xb[:2000], key=KEY, n_samples=1, domain="boolean")
    assert float(s) == pytest.approx(
        3.0, abs=1e-5
    )  # flipping any of the 3 relevant bits flips the parity, the others never do
    s, se = average_sensitivity(majority, xb[:2000], key=KEY, n_samples=1, domain="boolean")
    assert abs(float(s) - 1.5) < 4 * float(se) + 1e-6  # Maj_3 has total influence 3/2


def test_token_domain_indicator():
    v, rho = 5, 0.3
    xt = jax.random.randint(jax.random.key(6, impl="rbg"), (20000, 4), 0, v)
    onehot = lambda x: jax.nn.one_hot(x[0], v)
    est = noise_stability(onehot, xt, rho=rho, key=KEY, n_samples=2, domain="tokens", vocab_size=v)
    # E<e_{x0}, e_{y0}> = P[x0 = y0] = (1+ρ)/2 + (1-ρ)/(2V)  (the paper's resampling convention)
    exact = (1 + rho) / 2 + (1 - rho) / (2 * v)
    assert abs(float(est.value) - exact) < max(4 * float(est.stderr), 0.005)
    # only token 0 matters and any change of it changes the argmax: average sensitivity is exactly 1
    s, _ = average_sensitivity(onehot, xt[:200], key=KEY, n_samples=2, vocab_size=v)
    assert float(s) == pytest.approx(1.0, abs=1e-5)


def test_bad_inputs():
    f = lambda x: x.sum()
    with pytest.raises(ValueError, match="rho"):
        noise_stability(f, X[:10], rho=1.5, key=KEY)
    with pytest.raises(ValueError, match="rho"):
        noise_stability(f, X[:10], rho=-1.01, key=KEY)
    with pytest.raises(ValueError, match="n_samples"):
        noise_stability(f, X[:10], rho=0.5, key=KEY, n_samples=1)
    with pytest.raises(ValueError, match="x"):
        noise_stability(f, X[:1], rho=0.5, key=KEY)
    with pytest.raises(ValueError, match="domain"):
        noise_stability(f, X[:10], rho=0.5, key=KEY, domain="spherical")
    with pytest.raises(ValueError, match="vocab_size"):
        noise_stability(f, jnp.zeros((4, 3), jnp.int32), rho=0.5, key=KEY, domain="tokens")
    with pytest.raises(TypeError, match="x"):
        noise_stability(f, X[:10], rho=0.5, key=KEY, domain="tokens", vocab_size=3)
    with pytest.raises(ValueError, match="rho"):
        noise_stability(f, jnp.zeros((4, 3), jnp.int32), rho=-1.5, key=KEY, domain="tokens", vocab_size=3)
    with pytest.raises(ValueError, match="x"):
        average_sensitivity(f, jnp.zeros((4,), jnp.int32), key=KEY, vocab_size=3)
