"""Cases a fresh set of bad-input probes found cryptic or unbounded in jaxkit.evaluation, now refused clearly."""

import time

import numpy as np
import pytest

from jaxkit.evaluation import paired_comparison, time_to_event


def test_negative_seed_is_named():
    with pytest.raises(ValueError, match="seed: expected an integer >= 0"):
        time_to_event([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], 5.0, seed=-1)
    with pytest.raises(ValueError, match="seed: expected an integer >= 0"):
        paired_comparison([1.0, 2.0, 3.0], [1.5, 2.0, 3.5], seed=-1)


def test_huge_n_resamples_is_refused_up_front_with_the_memory_needed():
    rng = np.random.default_rng(0)
    b = rng.normal(size=1000)
    m = b + 1.0 + rng.normal(size=1000)
    t0 = time.perf_counter()
    # 1e12 resamples of 1000 values: 16 B each (value + index) = 1.6e16 B = 14.2 PiB
    with pytest.raises(ValueError, match=r"n_resamples: the request needs about 14\.2 PiB"):
        paired_comparison(b, m, n_resamples=10**12)
    assert time.perf_counter() - t0 < 5.0
    r = paired_comparison(b, m, n_resamples=1000)  # an ordinary request still works
    assert r["ci_low"] < np.median(m - b) < r["ci_high"]
