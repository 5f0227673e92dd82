"""Fresh probes of 2026-12-07 (written from the docs alone): PDE solvers that returned NaN or a grossly wrong
field without a word, and checks that did not hold under ``jax.jit``/``jax.vmap``."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.pde import burgers, darcy, lno, navier_stokes


def test_burgers_blow_up_with_the_default_steps_is_refused_naming_n_steps():
    """E44: 256 points, nu = 1e-3, the default 100 steps returned all NaN; 5000 steps are finite."""
    u0 = jnp.asarray(np.sin(2 * np.pi * np.arange(256) / 256), jnp.float32)
    with pytest.raises(ValueError, match="^n_steps: the solution became non-finite"):
        burgers.solve(u0, nu=1e-3, t_final=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 256 points resolve this front only to about 1 % of max|u|
        assert np.isfinite(np.asarray(burgers.solve(u0, nu=1e-3, t_final=1.0, n_steps=5000))).all()


def test_burgers_under_resolved_shock_is_warned():
    """E09: 32 points, nu = 1e-4, 5 sin(2 pi x): max|u| 4.83 where a resolved solve gives about 0.49."""
    u0 = jnp.asarray(5 * np.sin(2 * np.pi * np.arange(32) / 32), jnp.float32)
    with pytest.warns(UserWarning, match="u0: the solution is under-resolved on 32 grid points"):
        burgers.solve(u0, nu=1e-4, t_final=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a resolved case (128 points, nu = 0.01): no warning
        burgers.solve(
            jnp.asarray(np.sin(2 * np.pi * np.arange(128) / 128), jnp.float32), nu=0.01, t_final=1.0
        )


@pytest.mark.parametrize("transform", ["jit", "vmap"])
def test_nan_initial_data_is_refused_under_jit_and_vmap(transform):
    """E36/E38/E39/P15: the eager call refused NaN; under jit/vmap NaN came back."""
    u = jnp.ones((2, 64)).at[1, 3].set(jnp.nan)
    w = jnp.ones((2, 16, 16)).at[1, 0, 0].set(jnp.nan)
    wrap = jax.jit if transform == "jit" else (lambda f: f)
    with pytest.raises(Exception, match="u0: expected finite values"):
        jax.block_until_ready(wrap(jax.vmap(lambda v: burgers.solve(v, nu=0.1, t_final=0.1)))(u))
    with pytest.raises(Exception, match="w0: expected finite values"):
        jax.block_until_ready(
            wrap(jax.vmap(lambda v: navier_stokes.solve(v, nu=1e-2, t_final=0.01, dt=1e-3)))(w)
        )


@pytest.mark.parametrize("scheme", ["cn", "ifrk4"])
def test_navier_stokes_blow_up_is_refused_naming_dt(scheme):
    """E16/E45: a step past the explicit advection's stability limit returned NaN."""
    x = np.arange(16) / 16
    X, Y = np.meshgrid(x, x, indexing="ij")
    w0 = jnp.asarray(
        200 * (np.sin(2 * np.pi * X) + np.cos(4 * np.pi * Y) + np.sin(2 * np.pi * (X + Y))), jnp.float32
    )
    with pytest.raises(ValueError, match=f"^dt: the vorticity became non-finite .* scheme='{scheme}'"):
        navier_stokes.solve(w0, nu=1e-3, t_final=1.0, dt=0.05, scheme=scheme)


def test_darcy_checks_hold_under_vmap_and_jit():
    """E40/E41/E43/P16: NaN, zero or negative a (and NaN f) under vmap/jit gave a PCG maxiter message or a value."""
    good = jnp.ones((17, 17))
    for bad in (good.at[5, 5].set(jnp.nan), good.at[2:15, 2:9].set(-1.0), good * 0.0):
        with pytest.raises(ValueError, match="^a: expected a strictly positive, finite coefficient field"):
            jax.vmap(darcy.solve)(jnp.stack([good, bad]))
    with pytest.raises(Exception, match="f: expected finite values"):
        jax.block_until_ready(jax.jit(lambda f: darcy.solve(good, f=f))(good.at[5, 5].set(jnp.nan)))
    u = jax.vmap(darcy.solve)(jnp.stack([good, 2 * good]))
    np.testing.assert_allclose(
        np.asarray(u[1]), np.asarray(u[0]) / 2, rtol=1e-4, atol=1e-7
    )  # u scales as 1/a


def test_lno_problems_name_a_non_finite_forcing():
    """P17/P18: diffrax's "maximum number of solver steps" error instead of naming the forcing."""
    with pytest.raises(ValueError, match="^forcing: the time integration did not reach ts"):
        lno.diffusion(lambda x, t: jnp.nan * x, jnp.linspace(0, 1, 9), jnp.linspace(0, 1, 5))
    with pytest.raises(ValueError, match="^forcing: the time integration did not reach ts"):
        lno.duffing(lambda t: jnp.inf * jnp.ones_like(t), jnp.linspace(0, 1, 5))


def test_a_traced_viscosity_is_refused_naming_it():
    """E42: vmap over nu raised JAX's ConcretizationTypeError naming nothing."""
    from jaxkit._validate import check_positive

    u0 = jnp.sin(jnp.arange(64) / 64 * 2 * jnp.pi)
    # the suite's runtime type checking (``nu: float``) names it first; without it, check_positive does
    with pytest.raises(TypeError, match="nu"):
        jax.vmap(lambda nu: burgers.solve(u0, nu=nu, t_final=0.1))(jnp.array([0.1, 0.2]))
    with pytest.raises(TypeError, match="^nu: expected a concrete number .* received a traced value"):
        jax.vmap(lambda nu: check_positive("nu", nu))(jnp.array([0.1, 0.2]))
