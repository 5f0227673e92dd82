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


def _zero_forcing(x, t):
    return 0.0 * x


def test_solver_grids_and_coefficients_found_by_the_long_fuzz_run():
    """NaN, repeated or uneven nodes and non-finite coefficients stopped inside diffrax with an EquinoxRuntimeError
    whose first line was a stack banner; now each names its argument before the solve."""
    bad_grids = {
        "finite node": np.array([0.0, np.nan, 0.5, 0.75, 1.0]),
        "strictly increasing": np.zeros(5),
        "strictly increasing nodes": np.array([0.0, 0.25, 0.25, 0.75, 1.0]),
        "equispaced": np.array([0.0, 0.1, 0.5, 0.75, 1.0]),
    }
    for solver in (lno.beam, lno.diffusion, lno.reaction_diffusion):
        for what, x in bad_grids.items():
            with pytest.raises(ValueError, match=f"x: expected .*{what.split()[0]}"):
                solver(_zero_forcing, x, TS)
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="k: expected finite"):
            lno.reaction_diffusion(_zero_forcing, X, TS, k=bad)
    with pytest.raises(ValueError, match="u0: expected the grid's shape"):
        lno.diffusion(_zero_forcing, X, TS, u0=np.zeros(4))
    # a float32 linspace with many nodes is still accepted as equispaced; zero forcing from rest stays at rest
    x32 = np.linspace(0.0, 1.0, 1025, dtype=np.float32)
    assert float(np.abs(np.asarray(lno.diffusion(_zero_forcing, x32, TS))).max()) == 0.0
    # a valid diffusion solve from u0 = sin(πx) decays like e^{-D λ t}, λ = (2 sin(πh/2)/h)^2 (discrete eigenvalue)
    x = np.linspace(0.0, 1.0, 17)
    h = x[1] - x[0]
    lam = (2 * np.sin(np.pi * h / 2) / h) ** 2
    u = np.asarray(lno.diffusion(_zero_forcing, x, TS, u0=np.sin(np.pi * x)))
    np.testing.assert_allclose(u, np.sin(np.pi * x)[:, None] * np.exp(-lam * TS)[None, :], atol=1e-4)


def test_brusselator_and_manufactured_coefficients_are_named():
    forcing = lambda t: 0.0 * t  # noqa: E731
    ts = np.linspace(0.0, 0.1, 3)
    with pytest.raises(ValueError, match="a: expected a finite value > 0"):
        lno.brusselator(forcing, 4, ts, a=0.0)
    for name in ("a", "b", "perturbation"):
        for bad in (np.nan, np.inf, -np.inf):
            with pytest.raises(ValueError, match=f"{name}: expected"):
                lno.brusselator(forcing, 4, ts, **{name: bad})
    # with no perturbation and no forcing the steady state (a, b/a) stays put
    uv = np.asarray(lno.brusselator(forcing, 4, ts, perturbation=0.0))
    np.testing.assert_allclose(uv[0], 1.0, atol=1e-5)
    np.testing.assert_allclose(uv[1], 3.0, atol=1e-5)

    for name, kw in (("amplitude", {}), ("d", {}), ("k", {}), ("decay", {})):
        for bad in (np.nan, np.inf):
            args = {"amplitude": 1.0, "x": X, "ts": TS, **kw}
            if name == "amplitude":
                args["amplitude"] = bad
            else:
                args[name] = bad
            with pytest.raises(ValueError, match=f"{name}: expected finite|{name}: expected a finite"):
                lno.reaction_diffusion_manufactured(**args)
    with pytest.raises(ValueError, match="ts: expected finite"):
        lno.reaction_diffusion_manufactured(1.0, X, np.array([0.0, np.nan]))
    f, u, _ = lno.reaction_diffusion_manufactured(2.0, X, TS)
    np.testing.assert_allclose(u, 2.0 * np.sin(np.pi * X)[:, None] * np.exp(-0.05 * TS)[None, :], atol=1e-6)


def test_navier_stokes_sizes_are_named():
    with pytest.raises(ValueError, match="n: the request needs about"):
        navier_stokes.fno_forcing(2**21)
    with pytest.raises(ValueError, match="record_steps: expected at most max_steps"):
        navier_stokes.solve(np.zeros((8, 8)), nu=1e-3, t_final=0.5, dt=0.5, record_steps=2**40)
