"""Gaussian random fields: empirical spectra against the target covariance, exact scaling identities."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxkit.pde import grf


def _draw(fn, shape, n, **kw):
    keys = jax.random.split(jax.random.key(0), n)
    return np.asarray(jax.jit(jax.vmap(lambda k: fn(k, shape, **kw)))(keys), dtype=np.float64)


def test_periodic_1d_spectrum_matches_covariance():
    kw = dict(alpha=2.0, tau=5.0, sigma=25.0)  # FNO Burgers: 625(-Δ+25I)^-2
    n = 32
    u = _draw(grf.grf_periodic, (n,), 2000, **kw)
    emp = np.mean(np.abs(np.fft.fft(u, axis=-1)) ** 2, axis=0) / n**2
    lam = grf.periodic_spectrum((n,), **kw)
    assert emp[0] < 1e-10  # zero-mean mode removed
    np.testing.assert_allclose(emp[1:8], lam[1:8], rtol=0.1)
    # pointwise variance = sum of eigenvalues (the KL trace), compare with the closed form sum
    np.testing.assert_allclose(u.var(axis=0).mean(), lam.sum(), rtol=0.05)
    # independent check of λ_1 from the operator definition: σ²((2π)² + τ²)^-α
    assert lam[1] == pytest.approx(625.0 / (4 * np.pi**2 + 25.0) ** 2)


def test_periodic_2d_spectrum_and_isotropy():
    kw = dict(alpha=2.5, tau=7.0, sigma=np.sqrt(2) * 7**1.5)
    n = 16
    u = _draw(grf.grf_periodic, (n, n), 1000, **kw)
    emp = np.mean(np.abs(np.fft.fft2(u)) ** 2, axis=0) / n**4
    lam = grf.periodic_spectrum((n, n), **kw)
    for idx in [(1, 0), (0, 1), (1, 1), (2, 1), (0, 3)]:
        assert emp[idx] == pytest.approx(lam[idx], rel=0.15)
    assert lam[1, 0] == pytest.approx(lam[0, 1]) and lam[1, 0] == pytest.approx(lam[-1, 0])


def test_neumann_2d_spectrum_via_dct():
    import scipy.fft

    kw = dict(alpha=2.0, tau=3.0, sigma=3.0)  # FNO Darcy: GRF.m with σ = τ^(α-1)
    n = 16
    u = _draw(grf.grf_neumann, (n, n), 1000, **kw)
    emp = np.mean(scipy.fft.dctn(u, axes=(1, 2), norm="ortho") ** 2, axis=0) / n**2
    lam = grf.neumann_spectrum((n, n), **kw)
    for idx in [(1, 0), (0, 1), (1, 1), (2, 0), (2, 3)]:
        assert emp[idx] == pytest.approx(lam[idx], rel=0.15)
    assert lam[1, 0] == pytest.approx(9.0 * (np.pi**2 + 9.0) ** -2.0)
    # zero-Neumann: the cosine series has zero normal derivative, so the cell-center field is smooth across
    # the mirror boundary (mirror-extended samples have the same spectrum decay) — check the mean is zero
    assert abs(u.mean()) < 0.05 * u.std()


@settings(max_examples=10, deadline=None)
@given(sigma=st.floats(0.1, 10.0), alpha=st.floats(0.6, 3.0), tau=st.floats(0.5, 8.0))
def test_sigma_scales_field_linearly(sigma, alpha, tau):
    key = jax.random.key(3)
    a = grf.grf_periodic(key, (8, 8), alpha=alpha, tau=tau, sigma=sigma, dtype=jnp.float32)
    b = grf.grf_periodic(key, (8, 8), alpha=alpha, tau=tau, sigma=2 * sigma, dtype=jnp.float32)
    np.testing.assert_allclose(
        np.asarray(b), 2 * np.asarray(a), rtol=1e-5, atol=1e-6 * float(jnp.abs(b).max())
    )


def test_bad_arguments():
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="alpha"):
        grf.grf_periodic(key, (8,), alpha=-1.0, tau=1.0)
    with pytest.raises(ValueError, match="shape"):
        grf.grf_neumann(key, (8, 8, 8, 8), alpha=2.0, tau=1.0)
    with pytest.raises(ValueError, match="sigma"):
        grf.grf_periodic(key, (8,), alpha=2.0, tau=1.0, sigma=0.0)
