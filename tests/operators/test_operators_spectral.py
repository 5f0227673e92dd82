"""Riesz transforms and spectral derivatives against closed forms and algebraic identities (float64)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxkit.operators import (
    fractional_laplacian,
    riesz_multipliers,
    riesz_pairs,
    riesz_transform,
    spectral_derivative,
    wavenumbers,
)

SETTINGS = settings(max_examples=12, deadline=None)


def band_limited(seed: int, shape: tuple[int, ...], lengths=None, kmax: int = 3) -> np.ndarray:
    """Zero-mean trigonometric polynomial with integer modes |q_a| <= kmax (< n/2: no Nyquist content)."""
    rng = np.random.default_rng(seed)
    kmax = min(kmax, (min(shape) - 1) // 2)
    lengths = lengths or (1.0,) * len(shape)
    grids = np.meshgrid(*[np.arange(n) * L / n for n, L in zip(shape, lengths)], indexing="ij")
    u = np.zeros(shape)
    for q in itertools.product(range(-kmax, kmax + 1), repeat=len(shape)):
        if not any(q):
            continue
        phase = sum(2 * np.pi * qa * xa / L for qa, xa, L in zip(q, grids, lengths))
        u += rng.normal() * np.cos(phase + rng.uniform(0, 2 * np.pi))
    return u


shapes = st.sampled_from([(16,), (15,), (12, 10), (9, 12), (8, 6, 10)])


@SETTINGS
@given(seed=st.integers(0, 10_000), shape=shapes, aniso=st.booleans())
def test_sum_of_squared_riesz_transforms_is_minus_identity(seed, shape, aniso):
    lengths = tuple(1.0 + 0.5 * a for a in range(len(shape))) if aniso else None
    u = band_limited(seed, shape, lengths)
    with jax.enable_x64(True):
        r = riesz_transform(jnp.asarray(u), lengths=lengths)
        assert r.shape == (len(shape), *shape)
        rr = sum(riesz_transform(r[j], lengths=lengths)[j] for j in range(len(shape)))
        np.testing.assert_allclose(np.asarray(rr), -u, atol=1e-10 * max(1.0, np.abs(u).max()))
        # second-order components R_a R_b agree with composing first-order transforms
        r2 = riesz_transform(jnp.asarray(u), order=2, lengths=lengths)
        for c, (a, b) in enumerate(riesz_pairs(len(shape))):
            np.testing.assert_allclose(
                np.asarray(r2[c]), np.asarray(riesz_transform(r[b], lengths=lengths)[a]), atol=1e-10
            )


@SETTINGS
@given(seed=st.integers(0, 10_000), shape=shapes)
def test_derivative_is_minus_riesz_of_half_laplacian(seed, shape):
    """With m_j = -i k_j/|k|: ∂_j u = -R_j (-Δ)^{1/2} u. The sign-dropped form of the issue text fails."""
    lengths = tuple(2.0 + a for a in range(len(shape)))
    u = band_limited(seed, shape, lengths)
    with jax.enable_x64(True):
        half = fractional_laplacian(jnp.asarray(u), 0.5, lengths=lengths)
        r = riesz_transform(half, lengths=lengths)
        for j in range(len(shape)):
            du = np.asarray(spectral_derivative(jnp.asarray(u), axis=j, length=lengths[j]))
            scale = max(1.0, np.abs(du).max())
            np.testing.assert_allclose(-np.asarray(r[j]), du, atol=1e-9 * scale)
            assert np.abs(np.asarray(r[j]) - du).max() > 0.1 * np.abs(du).max()  # +R_j(-Δ)^½ is wrong


@SETTINGS
@given(
    q=st.lists(st.integers(-4, 4), min_size=1, max_size=3).filter(any),
    phase=st.floats(0, 2 * np.pi),
    amp=st.floats(0.1, 3.0),
)
def test_plane_wave_closed_form(q, phase, amp):
    """R_j cos(k·x + φ) = (k_j/|k|) sin(k·x + φ); with lengths L_a the wavevector is k_a = 2π q_a / L_a."""
    d = len(q)
    shape = (12, 10, 9)[:d]
    lengths = (1.0, 2.5, 0.7)[:d]
    grids = np.meshgrid(*[np.arange(n) * L / n for n, L in zip(shape, lengths)], indexing="ij")
    k = np.array([2 * np.pi * qa / L for qa, L in zip(q, lengths)])
    arg = sum(ka * xa for ka, xa in zip(k, grids)) + phase
    with jax.enable_x64(True):
        r = np.asarray(riesz_transform(jnp.asarray(amp * np.cos(arg)), lengths=lengths))
    for j in range(d):
        np.testing.assert_allclose(r[j], amp * k[j] / np.linalg.norm(k) * np.sin(arg), atol=1e-11)


def _trig_eval(coef: np.ndarray, shape: tuple[int, ...], pts: np.ndarray) -> np.ndarray:
    """Evaluate the trigonometric interpolant with fftn coefficients ``coef`` at points ``pts`` (N, d), period 1."""
    qs = np.meshgrid(*[np.fft.fftfreq(n, 1.0 / n) for n in shape], indexing="ij")
    qv = np.stack([q.ravel() for q in qs], axis=1)  # (M, d)
    e = np.exp(2j * np.pi * pts @ qv.T)  # (N, M)
    return np.real(e @ coef.ravel()) / np.prod(shape)


@pytest.mark.parametrize("rot", ["pythagorean", "quarter", "reflection"])
def test_rotation_covariance_of_the_riesz_vector(rot):
    """(R[u∘Qᵀ])(x) = Q (Ru)(Qᵀx): the first-order Riesz vector rotates with the field (2-D)."""
    if rot == "pythagorean":
        Q = np.array([[3, -4], [4, 3]]) / 5.0  # maps the integer lattice 5Z² into Z²: exact on the torus
        modes = [(5, 0), (0, 5), (5, 5), (-5, 5)]
    elif rot == "quarter":
        Q = np.array([[0.0, -1.0], [1.0, 0.0]])
        modes = [(1, 2), (3, -1), (2, 2), (0, 1)]
    else:
        Q = np.array([[1.0, 0.0], [0.0, -1.0]])
        modes = [(1, 2), (3, -1), (2, 2), (0, 1)]
    rng = np.random.default_rng(0)
    amps, phases = rng.normal(size=len(modes)), rng.uniform(0, 2 * np.pi, len(modes))
    n = 32
    shape = (n, n)
    x = np.stack(np.meshgrid(np.arange(n) / n, np.arange(n) / n, indexing="ij"), axis=-1)  # (n, n, 2)

    def field(qs, pts):
        return sum(
            a * np.cos(2 * np.pi * pts @ np.asarray(q, float) + p) for a, q, p in zip(amps, qs, phases)
        )

    u = field(modes, x)
    # v(x) = u(Qᵀx): a field with wavevectors Q q (integers by construction)
    qrot = [tuple(np.rint(Q @ np.asarray(q, float)).astype(int)) for q in modes]
    v = field(qrot, x)
    np.testing.assert_allclose(v, field(modes, x @ Q), atol=1e-9)  # x@Q == (Qᵀx) row-wise
    with jax.enable_x64(True):
        ru = np.asarray(riesz_transform(jnp.asarray(u)))
        rv = np.asarray(riesz_transform(jnp.asarray(v)))
    pts = x.reshape(-1, 2) @ Q  # Qᵀx for every grid point
    ru_at = np.stack([_trig_eval(np.fft.fftn(ru[j]), shape, pts) for j in range(2)])  # (2, N)
    expect = (Q @ ru_at).reshape(2, n, n)
    np.testing.assert_allclose(rv, expect, atol=1e-9)


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(16,), (15,), (8, 6), (7, 9), (6, 4, 5)]),
    order=st.sampled_from([1, 2]),
)
def test_output_real_for_real_input_full_spectrum(seed, shape, order):
    """Applying the multipliers on the *full* FFT spectrum of white noise (Nyquist content included) gives a real
    field (imaginary part at round-off) equal to the rfft-based ``riesz_transform``."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=shape)
    with jax.enable_x64(True):
        r = np.asarray(riesz_transform(jnp.asarray(u), order=order))
    assert r.dtype == np.float64
    mult = riesz_multipliers(shape, order, real=False)
    full = np.fft.ifftn(mult * np.fft.fftn(u)[None], axes=tuple(range(1, len(shape) + 1)))
    assert np.abs(full.imag).max() < 1e-12
    np.testing.assert_allclose(r, full.real, atol=1e-12)


def test_spectral_derivative_matches_analytic_and_riesz_multiplier_values():
    n, L = 24, 3.0
    x = np.arange(n) * L / n
    u = np.sin(2 * np.pi * 2 * x / L) + 0.5 * np.cos(2 * np.pi * 5 * x / L)
    du = 2 * np.pi / L * (2 * np.cos(2 * np.pi * 2 * x / L) - 2.5 * np.sin(2 * np.pi * 5 * x / L))
    d2u = -((2 * np.pi / L) ** 2) * (4 * np.sin(2 * np.pi * 2 * x / L) + 12.5 * np.cos(2 * np.pi * 5 * x / L))
    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(spectral_derivative(jnp.asarray(u), 0, 1, L)), du, atol=1e-10)
        np.testing.assert_allclose(np.asarray(spectral_derivative(jnp.asarray(u), 0, 2, L)), d2u, atol=1e-9)
    m = riesz_multipliers((8, 6), 1)
    assert m.shape == (2, 8, 4)
    assert np.all(m[:, 0, 0] == 0)  # zero at k = 0
    assert m[0, 4, 1] == 0 and m[1, 1, 3] == 0  # Nyquist planes of the odd multiplier are zeroed
    np.testing.assert_allclose(m[0, 1, 1], -1j / np.sqrt(2))  # -i k_1/|k| at q = (1, 1)
    np.testing.assert_allclose(wavenumbers(4, 2.0), [0, np.pi, -2 * np.pi, -np.pi])


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(TypeError, match="real"):
        riesz_transform(jnp.ones((8,), jnp.complex64))
    with pytest.raises(ValueError, match="order"):
        riesz_transform(jnp.ones((8,)), order=3)
    with pytest.raises(ValueError, match="axes"):
        riesz_transform(jnp.ones((4, 4, 4, 4)))
    with pytest.raises(ValueError, match="lengths"):
        riesz_transform(jnp.ones((4, 4)), lengths=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="axes"):
        spectral_derivative(jnp.ones((8,)), axis=3)


@pytest.mark.parametrize(
    "grid,modes", [((16,), (5,)), ((12, 10), (3, 4)), ((8, 6), (4, 3)), ((8, 6, 10), (2, 3, 4))]
)
def test_truncated_real_dft_matches_numpy_rfftn_float64(grid, modes):
    """The CPU path of the spectral layers: the kept modes of rfftn and irfftn of a spectrum zero outside them, as
    GEMMs, against numpy's FFT in float64 (incl. a leading axis whose kept set reaches the Nyquist mode, n = 2m),
    and the same result whatever axis jax.vmap puts the batch on."""
    from jaxkit.operators._spectral import _irdft_kept, _kept_q, _rdft_kept

    with jax.enable_x64(True):
        rng = np.random.default_rng(len(grid))
        u = rng.normal(size=(2, 3, *grid))
        axes = tuple(range(-len(grid), 0))
        full = np.fft.rfftn(u, axes=axes)
        idx = np.ix_(*[q % n for q, n in zip(_kept_q(modes), grid)])
        want = full[(Ellipsis, *idx)]  # (2, 3, *kept)
        got = np.asarray(jax.vmap(lambda v: _rdft_kept(v, modes))(jnp.asarray(u)))  # (2, 3, 2, *kept)
        np.testing.assert_allclose(got[:, :, 0] + 1j * got[:, :, 1], want, rtol=1e-12, atol=1e-11)
        got1 = np.asarray(jax.vmap(lambda v: _rdft_kept(v, modes), in_axes=1, out_axes=1)(jnp.asarray(u)))
        np.testing.assert_allclose(got1, got, rtol=1e-13, atol=1e-12)
        spec = np.zeros_like(full)
        y = rng.normal(size=want.shape) + 1j * rng.normal(size=want.shape)
        spec[(Ellipsis, *idx)] = y
        want_i = np.fft.irfftn(spec, s=grid, axes=axes)
        got_i = _irdft_kept(jnp.asarray(np.stack([y[0].real, y[0].imag], axis=1)), grid, modes)
        np.testing.assert_allclose(np.asarray(got_i), want_i[0], rtol=1e-12, atol=1e-13)
