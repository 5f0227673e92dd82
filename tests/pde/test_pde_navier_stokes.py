"""Navier–Stokes: Taylor–Green decay, an exactly steady forced mode, kinematics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.pde import navier_stokes as ns


def test_taylor_green_decay_second_order():
    with jax.enable_x64(True):
        n, nu = 32, 0.01
        w0 = ns.taylor_green(n, 0.0, nu=nu, k=2)
        exact = ns.taylor_green(n, 1.0, nu=nu, k=2)
        errs = [
            float(jnp.max(jnp.abs(ns.solve(w0, nu=nu, t_final=1.0, dt=dt, record_steps=2)[-1] - exact)))
            for dt in (0.02, 0.01)
        ]
        assert errs[1] < 2e-5
        assert 3.6 < errs[0] / errs[1] < 4.4  # Crank–Nicolson: second order
        # the integrating factor integrates pure viscous decay exactly
        w = ns.solve(w0, nu=nu, t_final=1.0, dt=0.05, scheme="ifrk4")[-1]
        assert float(jnp.max(jnp.abs(w - exact))) < 1e-13


def test_ifrk4_and_cn_agree_with_advection():
    with jax.enable_x64(True):
        n = 16
        x = jnp.arange(n) / n
        w0 = jnp.sin(2 * jnp.pi * x)[:, None] * jnp.cos(4 * jnp.pi * x)[None, :] + jnp.cos(
            2 * jnp.pi * (x[:, None] + x)
        )
        f = ns.fno_forcing(n, jnp.float64)
        a = ns.solve(w0, nu=1e-3, t_final=0.2, dt=0.01, forcing=f, scheme="ifrk4")[-1]
        b = ns.solve(w0, nu=1e-3, t_final=0.2, dt=2.5e-4, forcing=f, scheme="cn")[-1]
        assert float(jnp.linalg.norm(a - w0)) > 0.05 * float(jnp.linalg.norm(w0))  # the flow did evolve
        assert float(jnp.linalg.norm(a - b)) < 2e-3 * float(jnp.linalg.norm(b))


def test_forced_mode_is_steady():
    with jax.enable_x64(True):
        n, nu = 32, 1e-3
        f = ns.fno_forcing(n, jnp.float64)
        ws = f / (nu * 8 * np.pi**2)  # -νΔw_s = f on the |k|² = 2 shell; advection vanishes
        w = ns.solve(ws, nu=nu, t_final=2.0, dt=0.01, forcing=f, record_steps=4)
        assert float(jnp.max(jnp.abs(w - ws[None]))) < 1e-11 * float(jnp.max(jnp.abs(ws)))


def test_laminar_kolmogorov_flow_is_steady_on_2pi_torus():
    with jax.enable_x64(True):
        n, nu = 16, 1.0 / 40
        f = ns.kolmogorov_forcing(n, dtype=jnp.float64)
        ws = f / (nu * 16)  # -νΔw = f for the cos(4y) mode on [0, 2π)²
        w = ns.solve(ws, nu=nu, t_final=1.0, dt=0.01, forcing=f, record_steps=2, length=2 * np.pi)
        assert float(jnp.max(jnp.abs(w - ws[None]))) < 1e-11 * float(jnp.max(jnp.abs(ws)))


def test_velocity_is_divergence_free_and_has_vorticity_w():
    n = 32
    x = jnp.arange(n) / n
    w = jnp.sin(2 * jnp.pi * x)[:, None] * jnp.cos(4 * jnp.pi * x)[None, :]

    @jax.jit
    def div_curl(w):
        u, v = ns.velocity(w)
        k = jnp.fft.fftfreq(n, 1.0 / n)
        kx, ky = 2j * jnp.pi * k[:, None], 2j * jnp.pi * k[None, :]
        uh, vh = jnp.fft.fft2(u), jnp.fft.fft2(v)
        return jnp.fft.ifft2(kx * uh + ky * vh).real, jnp.fft.ifft2(kx * vh - ky * uh).real

    div, curl = div_curl(w)
    assert float(jnp.abs(div).max()) < 1e-4
    np.testing.assert_allclose(np.asarray(curl), np.asarray(w), atol=1e-4)


def test_bad_arguments():
    w0 = np.zeros((16, 16), np.float32)
    with pytest.raises(ValueError, match="nu"):
        ns.solve(w0, nu=-1.0, t_final=1.0, dt=0.1)
    with pytest.raises(ValueError, match="even"):
        ns.solve(np.zeros((15, 15), np.float32), nu=1e-3, t_final=1.0, dt=0.1)
    with pytest.raises(ValueError, match="scheme"):
        ns.solve(w0, nu=1e-3, t_final=1.0, dt=0.1, scheme="euler")
    with pytest.raises(ValueError, match="forcing"):
        ns.solve(w0, nu=1e-3, t_final=1.0, dt=0.1, forcing=np.zeros((8, 8), np.float32))
