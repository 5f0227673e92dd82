"""Dataset layer: determinism, resolution nesting, disk cache (reuse, damage), argument errors."""

import numpy as np
import pytest

from jaxkit.pde import DATASETS, allowed_resolutions, make_dataset

SMALL = {"fine_resolution": 64, "chunk_size": 4, "progress": False}


def test_registry_lists_all_names():
    for name in [
        "burgers",
        "darcy",
        "navier_stokes_1e-3",
        "navier_stokes_1e-4",
        "navier_stokes_1e-5",
        "duffing",
        "beam",
        "diffusion",
        "reaction_diffusion",
        "brusselator",
        "navier_stokes_re40",
        "navier_stokes_re500",
        "navier_stokes_re5000",
    ]:
        assert name in DATASETS and "esolution" in DATASETS[name]
    assert allowed_resolutions("darcy")[:5] == [421, 211, 141, 106, 85]
    assert 256 in allowed_resolutions("burgers") and 8192 in allowed_resolutions("burgers")


def test_burgers_same_seed_same_data_and_nested_resolutions():
    a = make_dataset("burgers", n_train=3, n_test=2, resolution=32, seed=1, **SMALL)
    b = make_dataset("burgers", n_train=3, n_test=2, resolution=64, seed=1, **SMALL)
    c = make_dataset("burgers", n_train=3, n_test=2, resolution=32, seed=2, **SMALL)
    assert a.x_train.shape == (3, 1, 32) and a.y_test.shape == (2, 1, 32) and a.x_train.dtype == np.float32
    np.testing.assert_array_equal(a.x_train, b.x_train[:, :, ::2])  # same underlying samples
    np.testing.assert_array_equal(a.y_test, b.y_test[:, :, ::2])
    assert not np.allclose(a.x_train, c.x_train)
    np.testing.assert_allclose(a.grid[0], np.arange(32) / 32)
    assert a.metadata["seed"] == 1 and a.metadata["params"]["nu"] == 0.1 and "jaxkit_version" in a.metadata
    # sample i does not depend on how many samples are drawn
    d = make_dataset("burgers", n_train=2, n_test=1, resolution=32, seed=1, **SMALL)
    np.testing.assert_array_equal(d.x_train, a.x_train[:2])
    assert not np.allclose(a.x_train[0], a.x_test[0])


def test_cache_reuse_and_damage(tmp_path):
    kw = dict(
        n_train=2, n_test=1, resolution=9, seed=0, cache_dir=tmp_path, progress=False, fine_resolution=17
    )
    first = make_dataset("darcy", **kw)
    assert isinstance(first.x_train, np.memmap)
    assert set(np.unique(first.x_train)) == {3.0, 12.0}
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    stamp = (folder / "y_train.npy").stat().st_mtime_ns
    again = make_dataset("darcy", **kw)
    assert (folder / "y_train.npy").stat().st_mtime_ns == stamp  # reused, not regenerated
    np.testing.assert_array_equal(again.y_train, first.y_train)
    raw = bytearray((folder / "y_train.npy").read_bytes())
    raw[-3] ^= 0xFF
    (folder / "y_train.npy").write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="damaged"):
        fixed = make_dataset("darcy", **kw)
    np.testing.assert_array_equal(fixed.y_train, make_dataset("darcy", **{**kw, "cache_dir": None}).y_train)


def test_navier_stokes_and_lno_shapes():
    ns = make_dataset(
        "navier_stokes_1e-3",
        n_train=1,
        n_test=1,
        resolution=8,
        seed=0,
        progress=False,
        fine_resolution=16,
        dt=0.05,
        t_final=12,
    )
    assert ns.x_train.shape == (1, 10, 8, 8) and ns.y_train.shape == (1, 2, 8, 8)
    assert np.all(np.isfinite(ns.y_train))
    rd = make_dataset("reaction_diffusion", n_train=2, n_test=1, resolution=14, seed=0, progress=False)
    assert rd.x_train.shape == (2, 1, 14, 20) and [g.shape for g in rd.grid] == [(14,), (20,)]
    np.testing.assert_allclose(rd.grid[0], np.linspace(0, 2, 40)[::3])
    # u = A sin(πx) e^{-0.05t} with A ~ U[0.05, 10]: recover A and check the family
    x, t = rd.grid
    amp = rd.y_train[:, 0, 3, 0] / np.sin(np.pi * x[3])
    assert np.all((amp > 0.05) & (amp < 10))
    np.testing.assert_allclose(
        rd.y_train[:, 0],
        amp[:, None, None] * np.sin(np.pi * x)[None, :, None] * np.exp(-0.05 * t)[None, None, :],
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        ("nope", {}, "name"),
        ("burgers", {"resolution": 100, "fine_resolution": 64}, "resolution"),
        ("burgers", {"resolution": 32, "viscosity": 1.0}, "unknown option"),
        ("burgers", {"resolution": 32, "nu": -0.1}, "nu"),
        ("burgers", {"resolution": 32, "fine_resolution": 63}, "even"),
        ("darcy", {"resolution": 9, "fine_resolution": 17, "low": 0.0}, "positive"),
    ],
)
def test_bad_arguments(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_dataset(name, n_train=1, n_test=1, seed=0, **kwargs)


def test_subsample_and_refined_resolution_nest_like_make_dataset():
    from jaxkit.pde import refined_resolution, subsample

    kw = dict(n_train=2, n_test=1, seed=3, progress=False, fine_resolution=17)
    fine = make_dataset("darcy", resolution=17, **kw)
    coarse = make_dataset("darcy", resolution=5, **kw)
    np.testing.assert_array_equal(subsample(fine.y_train, "darcy", 5), coarse.y_train)
    np.testing.assert_array_equal(subsample(fine.x_test, "darcy", stride=4), coarse.x_test)
    assert refined_resolution("darcy", 5, 4) == 17 and refined_resolution("burgers", 32, 4) == 128
    assert subsample(np.zeros((2, 1, 64)), "burgers", 16).shape == (2, 1, 16)
    with pytest.raises(ValueError, match="resolution"):
        subsample(fine.y_train, "darcy", 6)  # (17-1)/(6-1) is not an integer
    with pytest.raises(ValueError, match="exactly one"):
        subsample(fine.y_train, "darcy", 5, stride=4)
    with pytest.raises(ValueError, match="x"):
        subsample(np.zeros(5), "darcy", stride=2)


def test_a_solver_that_blows_up_is_refused_not_stored(tmp_path):
    """Burgers at viscosity 1/1000 and a large initial amplitude with the default 100 ETDRK4 steps (sized for
    nu = 0.1) overflows; the generator raises instead of returning (or caching) NaN samples, a finite case passes.
    """
    from jaxkit.pde import make_dataset

    opts = dict(alpha=2.5, tau=7.0, sigma=400.0, nu=1e-3, fine_resolution=2048)
    with pytest.raises(ValueError, match="non-finite values.*n_steps"):
        make_dataset("burgers", n_train=2, n_test=1, resolution=256, cache_dir=tmp_path, **opts)
    assert [p.name for p in tmp_path.iterdir() if ".tmp" not in p.name] == []  # nothing cached
    ds = make_dataset("burgers", n_train=2, n_test=1, resolution=256, n_steps=2000, **{**opts, "sigma": 49.0})
    assert np.isfinite(ds.y_train).all() and np.isfinite(ds.y_test).all()
