"""The IGSO(3) table cache is validated at load (issue 49): a cache file with a NaN entry or a missing table is
rebuilt (before: a NaN table was returned and propagated into every sample and score)."""

import numpy as np
import pytest

from jaxkit.diffusion import _igso3


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXKIT_CACHE_DIR", str(tmp_path))
    _igso3.tables.cache_clear()
    yield _igso3._cache_path()
    _igso3.tables.cache_clear()


def test_a_damaged_table_cache_is_rebuilt(cache):
    good = {k: np.array(v) for k, v in _igso3.tables().items()}
    assert cache.exists() and all(np.all(np.isfinite(v)) for v in good.values())
    for damage in ("nan", "missing"):
        bad = dict(good)
        if damage == "nan":
            bad["cdf"] = bad["cdf"].copy()
            bad["cdf"][3, 5] = np.nan
        else:
            del bad["score_norm"]
        np.savez(cache, **bad)
        _igso3.tables.cache_clear()
        got = _igso3.tables()
        assert set(got) == set(good)
        for k in good:
            np.testing.assert_array_equal(got[k], good[k])
