"""Contract edges of jaxkit.pde closed in issue 49: the LNO closed forms check their arguments (resonance,
negative times), the Kolmogorov wavenumber is resolved by the grid, records and datasets are checked."""

import jax
import numpy as np
import pytest

from jaxkit import pde
from jaxkit.pde import darcy, lno, navier_stokes

X = np.linspace(0.0, 1.0, 9)
TS = np.linspace(0.0, 1.0, 5)


def test_closed_forms_unchanged_on_valid_input():
    # diffusion: u = sin(πx) q(t), q = A/(μ²+ω²)(μ sin ωt − ω cos ωt + ω e^{−μt}), μ = π² (D = 1, L = 1)
    mu, w = np.pi**2, 5.0
    q = 2.0 / (mu**2 + w**2) * (mu * np.sin(w * TS) - w * np.cos(w * TS) + w * np.exp(-mu * TS))
    np.testing.assert_allclose(lno.diffusion_exact(2.0, X, TS), np.sin(np.pi * X)[:, None] * q, atol=1e-6)
    # beam: ω0 = π², q = A/(ω0² − ω²)(sin ωt − (ω/ω0) sin ω0 t)
    q = 2.0 / (mu**2 - w**2) * (np.sin(w * TS) - w / mu * np.sin(mu * TS))
    np.testing.assert_allclose(lno.beam_exact(2.0, X, TS), np.sin(np.pi * X)[:, None] * q, atol=1e-6)
    np.testing.assert_allclose(
        jax.jit(lambda a: lno.beam_exact(a, X, TS))(2.0), lno.beam_exact(2.0, X, TS), atol=1e-6
    )


def test_closed_forms_refuse_their_domain_boundaries():
    with pytest.raises(ValueError, match="omega: .*resonance"):
        lno.beam_exact(1.0, X, TS, omega=np.pi**2)
    with pytest.raises(ValueError, match="ts: expected times >= 0"):
        lno.diffusion_exact(1.0, X, -TS)
    with pytest.raises(ValueError, match="length"):
        lno.diffusion_exact(1.0, X, TS, length=0.0)
    with pytest.raises(ValueError, match="rho_a"):
        lno.beam_exact(1.0, X, TS, rho_a=-1.0)
    with pytest.raises(Exception, match="amplitude: expected finite"):
        jax.block_until_ready(jax.jit(lambda a: lno.diffusion_exact(a, X, TS))(np.nan))


def test_kolmogorov_wavenumber_resolved_by_the_grid():
    f = navier_stokes.kolmogorov_forcing(8, k=4)
    np.testing.assert_allclose(f[0], -4.0 * np.cos(4 * 2 * np.pi * np.arange(8) / 8), atol=1e-5)
    with pytest.raises(ValueError, match="k: expected a wavenumber"):
        navier_stokes.kolmogorov_forcing(8, k=5)


def test_records_and_datasets_are_checked():
    with pytest.raises(ValueError, match="residual"):
        darcy.SolveInfo(True, 3, np.nan)
    with pytest.raises(ValueError, match="u_interior"):
        darcy.apply_operator(np.ones((5, 5)), np.full((3, 3), np.inf))
    x = np.zeros((3, 1, 4), np.float32)
    with pytest.raises(ValueError, match="x_train, y_train"):
        pde.PDEDataset("burgers", x, x[:2], x, x, (np.linspace(0, 1, 4),))
    with pytest.raises(ValueError, match="x: expected finite"):
        pde.subsample(np.full((2, 1024), np.nan), "burgers", 256)
