"""Spectral helpers refuse grids above the size cap up front (they ran into NumPy MemoryErrors naming no
argument)."""

import numpy as np
import pytest

from jaxkit.operators import riesz_multipliers, wavenumbers


def test_huge_spectral_grids_are_refused_with_the_memory_needed():
    # 1e12 wavenumbers at 24 B each = 21.8 TiB
    with pytest.raises(ValueError, match=r"n: the request needs about 21\.8 TiB"):
        wavenumbers(10**12)
    with pytest.raises(ValueError, match="shape: the request needs .*size cap"):
        riesz_multipliers((10**6, 10**6))
    # small grids are unchanged: the multipliers match -i k / |k| directly
    m = riesz_multipliers((8,), real=False)
    k = 2 * np.pi * np.fft.fftfreq(8, 1 / 8)
    expect = np.where(k == 0, 0, -1j * np.sign(k))
    expect[4] = 0  # Nyquist plane zeroed
    np.testing.assert_allclose(m[0], expect, atol=1e-12)
