"""Every statistic an experiment computes over a dataset handles every shape its presets produce.

The shapes come from the generators themselves (``jax.eval_shape`` of each dataset's sampler at the preset's
fine resolution, then the preset's subsampling), not from a list typed here, so a preset that adds a dataset or
changes a channel count is covered. Checked against numpy on the same arrays: the trivial predictor is the
identity where inputs and targets have the same channels, else persistence (the last input channel)."""

from __future__ import annotations

import functools
import json

import jax
import numpy as np
import pytest

from experiments import _registry, rno_benchmarks
from jaxkit.pde import dataset_spec, refined_resolution, subsample
from jaxkit.pde._datasets import _params

_registry.discover()


def _preset_cases():
    presets = _registry.EXPERIMENTS["rno_benchmarks"].presets
    for preset, cfg in presets.items():
        for name, dcfg in cfg["datasets"].items():
            yield pytest.param(preset, name, dcfg, cfg, id=f"{preset}-{name}")


def _test_shapes(name: str, dcfg: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(x, y) shapes of one test sample at the training grid, as ``load_data`` produces them."""
    return _shapes(name, json.dumps(dcfg["options"], sort_keys=True), dcfg["res"], tuple(dcfg["sr"]))


@functools.cache
def _shapes(name: str, options: str, res: int, sr: tuple[int, ...]):
    dcfg = {"options": json.loads(options), "res": res, "sr": sr}
    spec = dataset_spec(name)
    params = _params(spec, dict(dcfg["options"]))
    res = dcfg["res"]
    hi = refined_resolution(name, res, max((1,) + tuple(dcfg["sr"])))
    fine = params["fine_resolution"]
    fn = spec.sampler(params, fine)
    xs, ys = jax.eval_shape(fn, jax.ShapeDtypeStruct((1, 2), np.uint32))
    out = []
    for s in (xs, ys):
        arr = np.broadcast_to(np.float32(0), s.shape)  # a view: no memory at paper sizes
        arr = spec.subsample(arr, params, hi)
        out.append(subsample(arr, name, refined_resolution(name, res, 1)).shape[1:])
    return out[0], out[1]


@pytest.mark.parametrize(("preset", "name", "dcfg", "cfg"), list(_preset_cases()))
def test_rno_benchmarks_data_stats_on_every_preset_shape(preset, name, dcfg, cfg):
    x_shape, y_shape = _test_shapes(name, dcfg)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3,) + x_shape).astype(np.float32)
    y = rng.normal(size=(3,) + y_shape).astype(np.float32)
    stats = rno_benchmarks.data_stats({"test": {1: (x, y)}})
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    pred = x64 if x_shape == y_shape else np.repeat(x64[:, -1:], y_shape[0], axis=1)
    rel = np.mean(
        np.linalg.norm((pred - y64).reshape(3, -1), axis=1) / np.linalg.norm(y64.reshape(3, -1), axis=1)
    )
    assert stats["identity_rel_l2"] == pytest.approx(rel, rel=1e-9)
    assert stats["target_rms"] == pytest.approx(np.sqrt(np.mean(y64**2)), rel=1e-12)
    assert stats["trivial"] == ("identity" if x_shape == y_shape else "persistence (last input channel)")
    for v in stats.values():
        assert isinstance(v, str) or np.isfinite(v)


def test_data_stats_refuses_mismatched_grids():
    x, y = np.ones((2, 1, 8)), np.ones((2, 1, 16))
    with pytest.raises(ValueError, match="same samples and grid"):
        rno_benchmarks.data_stats({"test": {1: (x, y)}})
