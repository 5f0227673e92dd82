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
