"""Sizes refused up front, no hangs, a cache that cannot be silently altered, one PRNG key check."""

import time

import numpy as np
import pytest

from jaxkit.pde import DATASETS, allowed_resolutions, make_dataset
from jaxkit.pde._datasets import _load_cache, _read_meta


def _divisors_reference(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def test_allowed_resolutions_is_fast_and_exact():
    t0 = time.perf_counter()
    big = allowed_resolutions("burgers", fine_resolution=2**24)
    assert time.perf_counter() - t0 < 1.0
    assert big == [2**k for k in range(1, 25)]
    for n in (8192, 360, 1000):  # against the naive divisor list
        assert allowed_resolutions("burgers", fine_resolution=n) == [
            d for d in _divisors_reference(n) if d >= 2
        ]
    assert allowed_resolutions("darcy", fine_resolution=421)[:5] == [421, 211, 141, 106, 85]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_huge_fine_grid_is_refused_in_under_a_second(name):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="fine_resolution: expected at most"):
        allowed_resolutions(name, fine_resolution=2**34)
    assert time.perf_counter() - t0 < 1.0


def test_huge_dataset_is_refused_with_the_memory_it_needs():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"would need 3.05e\+04 GiB, above the cap max_bytes = 8 GiB"):
        make_dataset("burgers", n_train=10**9, n_test=0, resolution=8192, progress=False)
    assert time.perf_counter() - t0 < 5.0
    with pytest.raises(ValueError, match="max_bytes"):  # the cap is documented and overridable
        make_dataset("burgers", n_train=8, n_test=0, resolution=32, fine_resolution=64, max_bytes=100)
    ds = make_dataset(
        "burgers", n_train=2, n_test=1, resolution=32, fine_resolution=64, max_bytes=10**6, progress=False
    )
    assert ds.x_train.shape == (2, 1, 32)


def test_every_bit_flip_of_the_cache_metadata_is_detected(tmp_path):
    kw = dict(
        n_train=2, n_test=1, resolution=9, seed=0, cache_dir=tmp_path, progress=False, fine_resolution=17
    )
    first = make_dataset("darcy", **kw)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    meta_path = folder / "meta.json"
    raw = meta_path.read_bytes()
    meta = dict(first.metadata)
    assert _load_cache(folder, meta) is not None
    undetected = 0
    for i in range(len(raw)):
        for bit in range(8):
            flipped = bytearray(raw)
            flipped[i] ^= 1 << bit
            meta_path.write_bytes(bytes(flipped))
            try:
                _read_meta(meta_path)
                undetected += 1
            except ValueError:
                pass
    assert undetected == 0, f"{undetected} of {8 * len(raw)} single-bit flips of meta.json went unnoticed"
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x04
    meta_path.write_bytes(bytes(flipped))
    with pytest.warns(RuntimeWarning, match="damaged"):
        again = make_dataset("darcy", **kw)  # regenerated, same arrays and grid
    np.testing.assert_array_equal(again.x_train, first.x_train)
    np.testing.assert_array_equal(again.grid[0], first.grid[0])
