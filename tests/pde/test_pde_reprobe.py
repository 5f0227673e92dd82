"""Cases a fresh set of bad-input probes found silent or unbounded in jaxkit.pde, now refused up front."""

import time

import jax
import pytest

from jaxkit import pde


@pytest.mark.parametrize("fn", [pde.grf_periodic, pde.grf_neumann], ids=["grf_periodic", "grf_neumann"])
def test_grf_refuses_huge_grids_fast_with_the_memory_needed(fn):
    t0 = time.perf_counter()
    # working memory 8 (d + 4) bytes per point: 1e12 points * 48 B = 43.7 TiB
    with pytest.raises(ValueError, match=r"shape: the request needs about 43\.7 TiB"):
        fn(jax.random.key(0), (10**6, 10**6), alpha=2.0, tau=3.0)
    assert time.perf_counter() - t0 < 5.0  # nothing allocated (generous for a loaded CI machine)
    with pytest.raises(ValueError, match="size cap"):
        fn(jax.random.key(0), (10**11,), alpha=2.0, tau=3.0)
    # the cap is overridable per call, and a small grid under a lowered cap is refused too
    with pytest.raises(ValueError, match="size cap of 1 KiB"):
        fn(jax.random.key(0), (64, 64), alpha=2.0, tau=3.0, max_bytes=1024)
    assert fn(jax.random.key(0), (8, 8), alpha=2.0, tau=3.0, max_bytes=8 * 8 * 8 * 6).shape == (8, 8)


def test_spectra_refuse_huge_grids():
    for fn in (pde.periodic_spectrum, pde.neumann_spectrum):
        with pytest.raises(ValueError, match="size cap"):
            fn((10**5, 10**5, 10**5), alpha=2.0, tau=3.0)


def test_spectra_at_tau_zero_refuse_to_keep_the_infinite_mean_mode():
    """Fresh probe (2026-12-06): tau = 0 with zero_mean=False silently zeroed the (infinite) k = 0 eigenvalue."""
    import numpy as np
    import pytest

    from jaxkit.pde import neumann_spectrum, periodic_spectrum

    for spectrum in (periodic_spectrum, neumann_spectrum):
        with pytest.raises(ValueError, match="zero_mean: False keeps the k = 0 eigenvalue"):
            spectrum((8,), alpha=2.0, tau=0.0, sigma=1.0, zero_mean=False)
    # tau = 0, zero_mean: sigma defaults to 1 (documented), k != 0 entries are |2 pi k|^(-2 alpha)
    lam = periodic_spectrum((8,), alpha=2.0, tau=0.0)
    k = np.fft.fftfreq(8, d=1.0 / 8)
    want = np.where(k == 0, 0.0, np.abs(2 * np.pi * k) ** -4.0)
    np.testing.assert_allclose(lam, want, rtol=1e-12)


def test_float64_initial_conditions_computed_in_float32_are_announced():
    """burgers.solve(float64 u0) returned float32 with x64 off although the docstring promised u0's dtype."""
    import numpy as np

    u0 = np.sin(2 * np.pi * np.arange(16) / 16)
    with pytest.warns(UserWarning, match="u0: float64 data is computed in float32"):
        u = pde.burgers.solve(u0, nu=0.1, t_final=0.05)
    assert u.dtype == jax.numpy.float32
    with pytest.warns(UserWarning, match="w0: float64 data is computed in float32"):
        pde.navier_stokes.solve(np.zeros((8, 8)), nu=1e-3, t_final=0.1, dt=0.05)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # float32 input: nothing to announce
        pde.burgers.solve(u0.astype(np.float32), nu=0.1, t_final=0.05)
