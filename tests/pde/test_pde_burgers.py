"""Burgers: ETDRK4 pseudo-spectral solver vs the Cole–Hopf exact solution (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.pde import burgers


def _error(n, steps, nu=0.1, t=1.0):
    x = jnp.arange(n) / n
    u0 = burgers.cole_hopf_solution(x, 0.0, nu=nu)
    u = burgers.solve(u0, nu=nu, t_final=t, n_steps=steps)
    return float(jnp.max(jnp.abs(u - burgers.cole_hopf_solution(x, t, nu=nu))))


def test_cole_hopf_and_fourth_order_in_time():
    with jax.enable_x64(True):
        e10, e20, e40 = _error(64, 10), _error(64, 20), _error(64, 40)
        assert e40 < 1e-8
        assert np.log2(e10 / e20) > 3.5 and np.log2(e20 / e40) > 3.5  # ETDRK4 is fourth order
        # smaller viscosity, steeper front: still converged with enough points and steps
        assert _error(256, 400, nu=0.02, t=0.5) < 1e-6


def test_float32_default_steps_and_vmap():
    x = jnp.arange(128) / 128
    u0 = jnp.stack([burgers.cole_hopf_solution(x, 0.0, nu=0.1, amplitude=a) for a in (0.3, 0.6)])
    u = jax.vmap(lambda v: burgers.solve(v, nu=0.1, t_final=0.5))(u0.astype(jnp.float32))
    assert u.dtype == jnp.float32
    ref = burgers.cole_hopf_solution(x, 0.5, nu=0.1, amplitude=0.6)
    assert float(jnp.max(jnp.abs(u[1] - ref))) < 1e-5


def test_bad_arguments():
    u0 = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="nu"):
        burgers.solve(u0, nu=0.0, t_final=1.0)
    with pytest.raises(ValueError, match="even"):
        burgers.solve(np.zeros(15, np.float32), nu=0.1, t_final=1.0)
    with pytest.raises(ValueError, match="finite"):
        burgers.solve(np.full(16, np.nan, np.float32), nu=0.1, t_final=1.0)
    with pytest.raises(ValueError, match="t_final"):
        burgers.solve(u0, nu=0.1, t_final=-1.0)
