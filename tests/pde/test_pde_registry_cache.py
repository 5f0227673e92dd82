"""Caches keyed by content, not by name (issue 49): a dataset registered anew under a name gets its own compiled
sampler and disk cache (before: the first sampler's arrays came back), and a registered name (a built-in one
included) is replaced only with replace=True (before: without a word)."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import pde
from jaxkit.pde import _datasets


def _spec(value, name="toy_issue49"):
    def sampler(params, fine):
        def fn(keys):
            n = keys.shape[0]
            return jnp.full((n, fine), value, jnp.float32), jnp.full((n, fine), 2 * value, jnp.float32)

        return fn

    return _datasets.DatasetSpec(
        name=name,
        description="constant fields (test)",
        defaults={"fine_resolution": 8},
        resolutions=lambda p: [8],
        default_resolution=lambda p: 8,
        sampler=sampler,
        grid=lambda p, r: (np.linspace(0, 1, r),),
    )


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(_datasets, "SPECS", dict(_datasets.SPECS))
    monkeypatch.setattr(_datasets, "DATASETS", _datasets.DatasetTable(_datasets.DATASETS))
    monkeypatch.setattr(_datasets, "_SAMPLERS", {})


def test_a_re_registered_dataset_never_returns_the_old_arrays(registry, tmp_path):
    pde.register_dataset(_spec(1.0))
    kw = dict(n_train=2, n_test=1, progress=False)
    assert np.all(np.asarray(pde.make_dataset("toy_issue49", **kw).x_train) == 1.0)
    assert np.all(np.asarray(pde.make_dataset("toy_issue49", cache_dir=tmp_path, **kw).x_train) == 1.0)
    with pytest.raises(ValueError, match="already registered; pass replace=True"):
        pde.register_dataset(_spec(3.0))
    pde.register_dataset(_spec(3.0), replace=True)
    assert np.all(np.asarray(pde.make_dataset("toy_issue49", **kw).x_train) == 3.0)  # in memory
    assert np.all(
        np.asarray(pde.make_dataset("toy_issue49", cache_dir=tmp_path, **kw).x_train) == 3.0
    )  # disk
    assert np.all(np.asarray(pde.make_dataset("toy_issue49", cache_dir=tmp_path, **kw).y_train) == 6.0)


def test_a_built_in_name_is_not_replaced_without_consent(registry):
    burgers = pde.dataset_spec("burgers")
    pde.register_dataset(burgers)  # the same spec again: nothing to replace
    with pytest.raises(ValueError, match="'burgers' is already registered"):
        pde.register_dataset(dataclasses.replace(burgers, description="mine"))
    assert pde.dataset_spec("burgers") is burgers
