"""Laplace neural operator: the layer against closed forms and an independent ODE solve, the n-D formula against a
direct evaluation, and the published parameter counts."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

from jaxkit.operators import FNO, LNO, count_params, laplace_layer


def test_single_pole_layer_is_the_exact_zero_state_response():
    """H(s) = β/(s - μ) on a band-limited periodic input: the layer is y' = μy + βu, y(0) = 0, exactly."""
    with jax.enable_x64(True):
        n, dt = 63, 0.05
        period = n * dt
        t = np.arange(n) * dt
        w = 2 * np.pi * 3 / period
        u = np.cos(w * t) + 0.3
        mu, beta = -2.0, 3.0
        exact = (
            beta * (-mu * np.cos(w * t) + w * np.sin(w * t) + mu * np.exp(mu * t)) / (mu**2 + w**2)
            + 0.3 * beta * (np.exp(mu * t) - 1) / mu
        )
        y = laplace_layer(
            jnp.asarray(u)[None],
            [jnp.full((1, 1, 1), mu + 0j)],
            jnp.full((1, 1, 1), beta + 0j),
            spacing=(dt,),
        )
        assert y.shape == (1, n)
        np.testing.assert_allclose(np.asarray(y[0]), exact, atol=1e-12)
        # a conjugate pole pair = damped oscillator y'' + 2ζω₀y' + ω₀²y = u, against scipy's solve_ivp
        zeta, w0 = 0.1, 5.0
        m1 = -zeta * w0 + 1j * w0 * np.sqrt(1 - zeta**2)
        poles = jnp.asarray([m1, np.conj(m1)]).reshape(1, 1, 2)
        res = jnp.asarray([1 / (m1 - np.conj(m1)), 1 / (np.conj(m1) - m1)]).reshape(1, 1, 2)
        f = lambda s: np.sin(2 * np.pi * s / period) + 0.5 * np.cos(2 * np.pi * 5 * s / period)  # noqa: E731
        ref = solve_ivp(
            lambda s, z: [z[1], f(s) - 2 * zeta * w0 * z[1] - w0**2 * z[0]],
            (0, t[-1]),
            [0.0, 0.0],
            t_eval=t,
            rtol=1e-12,
            atol=1e-12,
            method="DOP853",
        ).y[0]
        y2 = laplace_layer(jnp.asarray(f(t))[None], [poles], res, spacing=(dt,))
        np.testing.assert_allclose(np.asarray(y2[0]), ref, atol=1e-10)


def _direct(u, poles, residues, spacing):
    """The documented n-D formula evaluated term by term with NumPy loops (float64/complex128)."""
    c_in, *grid = u.shape
    d = len(grid)
    c_out = residues.shape[1]
    alpha = np.fft.fftn(u, axes=tuple(range(1, d + 1)))
    lam = [2j * np.pi * np.fft.fftfreq(n, s) for n, s in zip(grid, spacing)]
    coords = [np.arange(n) * s for n, s in zip(grid, spacing)]
    out = np.zeros((c_out, *grid))
    for o in range(c_out):
        steady_hat = np.zeros(grid, complex)
        for i in range(c_in):
            for p in np.ndindex(*residues.shape[2:]):
                mus = [poles[a][i, o, p[a]] for a in range(d)]
                denom = np.ones(grid, complex)
                expo = np.ones(grid, complex)
                for a in range(d):
                    shape = [1] * d
                    shape[a] = grid[a]
                    denom = denom * (lam[a] - mus[a]).reshape(shape)
                    expo = expo * np.exp(mus[a] * coords[a]).reshape(shape)
                h = residues[(i, o) + p] / denom
                steady_hat += alpha[i] * h
                gamma = (-1) ** d * np.sum(alpha[i] * h) / np.prod(grid)
                out[o] += np.real(gamma * expo)
        out[o] += np.real(np.fft.ifftn(steady_hat))
    return out


def test_two_and_three_axis_layers_match_the_direct_formula():
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        for grid, modes, spacing in (((5, 6), (2, 3), (0.1, 0.3)), ((4, 3, 5), (2, 1, 2), (0.5, 0.2, 0.25))):
            c_in, c_out = 2, 3
            u = rng.normal(size=(c_in, *grid))
            poles = [
                rng.normal(size=(c_in, c_out, m)) + 1j * rng.normal(size=(c_in, c_out, m)) for m in modes
            ]
            residues = rng.normal(size=(c_in, c_out, *modes)) + 1j * rng.normal(size=(c_in, c_out, *modes))
            layer = jax.jit(lambda u, p, r, s=spacing: laplace_layer(u, p, r, spacing=s))
            y = layer(jnp.asarray(u), [jnp.asarray(p) for p in poles], jnp.asarray(residues))
            np.testing.assert_allclose(
                np.asarray(y), _direct(u, poles, residues, spacing), rtol=1e-10, atol=1e-10
            )


def test_lno_model_published_parameter_counts_and_forward():
    key = jax.random.key(0)
    # the RNO paper's counts (complex weights counted once): LNO 64k, FNO 311k at width 48, modes 4x4
    lno = eqx.filter_eval_shape(lambda k: LNO(1, 1, (4, 4), 48, key=k), key)
    fno = eqx.filter_eval_shape(lambda k: FNO(1, 1, (4, 4), 48, 4, key=k), key)
    assert count_params(lno, complex_as_one=True) == 64_241
    assert count_params(fno, complex_as_one=True) == 310_913
    assert count_params(lno) == 64_241 + 2 * 48 * 48 * 4 + 48 * 48 * 16  # imaginary planes counted as well
    model = LNO(2, 3, (3, 2), 8, proj_hidden=16, lengths=(2.0, 1.0), key=key)
    x = jax.random.normal(jax.random.key(1), (5, 2, 10, 7))

    @eqx.filter_jit
    def forward_and_grad(m):
        return jax.vmap(m)(x), eqx.filter_grad(lambda mm: jnp.sum(jax.vmap(mm)(x) ** 2))(m)

    y, grads = forward_and_grad(model)
    assert y.shape == (5, 3, 10, 7) and bool(jnp.all(jnp.isfinite(y)))
    # one sample through the checked __call__ = the batched evaluation
    np.testing.assert_allclose(
        np.asarray(y[2]), np.asarray(eqx.filter_jit(lambda m, s: m(s))(model, x[2])), rtol=1e-5, atol=1e-6
    )
    leaves = jax.tree_util.tree_leaves(eqx.filter(grads, eqx.is_inexact_array))
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in leaves)
    assert float(jnp.max(jnp.abs(grads.laplace.residue_re))) > 0
