"""Every public save (issue 49): refuses an existing path unless overwrite=True, refuses a checkpoint of another
kind even then, is atomic when interrupted after the write began (old or new, never neither), and checks that
what it is given describes the model before writing anything."""

import dataclasses
import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit import docking, forecast, ssm
from jaxkit.operators import FNO, GaussianNormalizer, TrainedOperator
from jaxkit.train import _checkpoint, load_checkpoint, read_metadata, save_checkpoint

KEY = jax.random.key(0)


def _forecaster(hidden=16):
    return forecast.make_forecaster(
        n_assets=2, history=3, horizon=2, n_macro=1, n_signals=1, scale=np.full(2, 0.02),
        denoiser=forecast.MLPNet(hidden=hidden, depth=1, channels=8), diffusion_steps=8, key=KEY,
    )  # fmt: skip


def _docking(width=8):
    cfg = docking.ModelConfig(width=width, depth=1)
    return docking.build_model(cfg, KEY), cfg


def _probe(d_model=8):
    cfg = ssm.ProbeConfig(d_model=d_model, d_state=4, n_layers=1, n_householder=1)
    return ssm.TrainedProbe(ssm.make_model(cfg, 4, 2, KEY), ssm.get_task("parity"), cfg, 4, 2)


def _operator(width=8):
    x = np.random.default_rng(0).normal(size=(4, 1, 16)).astype(np.float32)
    model = FNO(1, 1, 4, width=width, n_layers=1, proj_hidden=8, key=KEY)
    return TrainedOperator(model, GaussianNormalizer.fit(x), GaussianNormalizer.fit(x))


SAVES = {
    "forecaster": lambda p, **kw: forecast.save_forecaster(p, _forecaster(), **kw),
    "docking": lambda p, **kw: docking.save_model(p, *_docking(), **kw),
    "probe": lambda p, **kw: _probe().save(p, **kw),
    "operator": lambda p, **kw: _operator().save(p, **kw),
    "checkpoint": lambda p, **kw: save_checkpoint(p, {"w": jnp.ones(3)}, **kw),
}


@pytest.mark.parametrize("name", list(SAVES))
def test_every_save_refuses_an_existing_path_and_another_kind_even_with_overwrite(tmp_path, name):
    """Before: save_forecaster, docking.save_model and TrainedProbe.save replaced any existing checkpoint (of
    another model type too) without a word; save_checkpoint replaced any checkpoint."""
    save = SAVES[name]
    path = save(tmp_path / "m")
    before = read_metadata(path)
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        save(path)
    assert save(path, overwrite=True) == path
    for other in SAVES:
        if other == name:
            continue
        target = tmp_path / f"other_{other}"
        SAVES[other](target)
        kept = read_metadata(target)
        for overwrite in (False, True):
            with pytest.raises(FileExistsError, match="of another kind|is not a saved TrainedOperator"):
                save(target, overwrite=overwrite)
        assert read_metadata(target) == kept
    # a user's file or non-empty folder is never replaced
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a.txt").write_text("mine")
    for target in (tmp_path / "notes.txt", tmp_path / "folder"):
        with pytest.raises(FileExistsError, match="path: "):
            save(target, overwrite=True)
    assert (tmp_path / "notes.txt").read_text() == "mine" and (
        tmp_path / "folder" / "a.txt"
    ).read_text() == "mine"
    assert read_metadata(path) == before


def _values(path):
    tree, _ = load_checkpoint(path, {"w": jnp.zeros(3)})
    return np.asarray(tree["w"])


@pytest.mark.parametrize("where", ["orbax", "manifest", "swap"])
def test_an_interrupted_save_leaves_the_old_checkpoint(tmp_path, monkeypatch, where):
    """Before: a save interrupted between its two renames (old moved aside, new not yet in place) left neither;
    now the swap is one atomic exchange, and where the system has none an interrupted swap is undone."""
    path = save_checkpoint(tmp_path / "c", {"w": jnp.full(3, 1.0)})

    def boom(*a, **k):
        raise KeyboardInterrupt("killed mid-write")

    if where == "orbax":  # the arrays are half written
        real = _checkpoint._orbax_checkpointer

        class Half:
            def save(self, p, args):
                real().save(p, args=args)
                raise KeyboardInterrupt("killed mid-write")

        monkeypatch.setattr(_checkpoint, "_orbax_checkpointer", lambda: Half())
    elif where == "manifest":
        monkeypatch.setattr(_checkpoint, "write_checked_bytes", boom)
    else:  # no atomic exchange here, and the process dies between moving the old aside and the new in
        monkeypatch.setattr(
            _checkpoint, "_exchange", lambda a, b: (_ for _ in ()).throw(OSError("no")), raising=False
        )
        calls = []
        real_replace = os.replace

        def replace(a, b):
            calls.append((a, b))
            if len(calls) == 2:
                raise KeyboardInterrupt("killed between the renames")
            return real_replace(a, b)

        monkeypatch.setattr(_checkpoint.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, {"w": jnp.full(3, 2.0)}, overwrite=True)
    monkeypatch.undo()
    np.testing.assert_array_equal(_values(path), np.full(3, 1.0))  # the old one, intact
    assert save_checkpoint(path, {"w": jnp.full(3, 3.0)}, overwrite=True) == path  # and the next save works
    np.testing.assert_array_equal(_values(path), np.full(3, 3.0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_saves_check_that_the_config_describes_the_model(tmp_path):
    """Before: a docking config that does not describe the model was written beside it (the file then failed to
    load, or loaded into another architecture)."""
    model, cfg = _docking(width=8)
    with pytest.raises(ValueError, match="config: does not describe model"):
        docking.save_model(tmp_path / "d", model, dataclasses.replace(cfg, width=16))
    with pytest.raises(TypeError, match="config"):  # jaxtyping's check in the tests, ours without
        docking.save_model(tmp_path / "d", model, cfg.to_dict())
    probe = _probe()
    probe.config = dataclasses.replace(probe.config, d_model=16)
    with pytest.raises(ValueError, match="config: does not describe the probe's model"):
        probe.save(tmp_path / "p")
    fc = _forecaster()
    other = _forecaster(hidden=32)
    mixed = eqx.tree_at(lambda m: m.denoiser, fc, other.denoiser)  # arrays of hidden=32, config says 16
    with pytest.raises(ValueError, match="model: its config does not describe its arrays"):
        forecast.save_forecaster(tmp_path / "f", mixed)
    with pytest.raises(ValueError, match="tree: leaf 0"):
        save_checkpoint(tmp_path / "c", {"w": jnp.ones(3)}, like={"w": jnp.ones(4)})
    assert not any(tmp_path.iterdir())  # nothing written
    # what describes the model saves and loads back
    back, back_cfg, _ = docking.load_model(docking.save_model(tmp_path / "d", model, cfg))
    assert back_cfg == cfg
    for a, b in zip(
        jax.tree.leaves(eqx.filter(back, eqx.is_array)), jax.tree.leaves(eqx.filter(model, eqx.is_array))
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
