"""TrainedOperator.save / load: one call each, config included; the loaded object predicts bit-for-bit."""

import jax
import numpy as np
import pytest

from jaxkit.operators import (
    FNO,
    LNO,
    RNO,
    GaussianNormalizer,
    TrainedOperator,
    member,
    train_ensemble,
    train_operator,
)
from jaxkit.train import CheckpointError

KEY = jax.random.key(0)


def _data(n=8, c=1, s=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, c, s)).astype(np.float32)
    return x, np.cumsum(x, axis=-1).astype(np.float32) / s


def _untrained(x, y):
    model = FNO(1, 1, 4, width=8, n_layers=1, proj_hidden=8, key=KEY)
    return TrainedOperator(model, GaussianNormalizer.fit(x), GaussianNormalizer.fit(y))


@pytest.mark.parametrize(
    "make",
    [
        lambda k: FNO(1, 1, 4, width=8, n_layers=2, proj_hidden=16, key=k),
        lambda k: RNO(1, 1, 4, width=8, n_layers=2, proj_hidden=16, norm="instance", lengths=2.0, key=k),
        lambda k: LNO(1, 1, 3, width=4, proj_hidden=8, key=k),
    ],
    ids=["fno", "rno", "lno"],
)
def test_save_load_predicts_bit_for_bit(tmp_path, make):
    x, y = _data()
    trained = train_operator(make(KEY), x, y, epochs=2, batch_size=4, key=KEY, mesh=None, progress=False)
    trained.save(tmp_path / "op")
    loaded = TrainedOperator.load(tmp_path / "op")
    assert type(loaded.model) is type(trained.model) and loaded.model.config == trained.model.config
    x_new = np.random.default_rng(1).normal(size=(3, 1, 32)).astype(np.float32)  # new data, finer grid
    np.testing.assert_array_equal(loaded.predict(x_new), trained.predict(x_new))
    assert loaded.history == trained.history and loaded.n_steps == trained.n_steps
    assert loaded.x_normalizer.eps == trained.x_normalizer.eps


def test_ensemble_member_saves(tmp_path):
    x, y = _data()
    make = lambda k: FNO(1, 1, 4, width=8, n_layers=1, proj_hidden=8, key=k)  # noqa: E731
    runs = train_ensemble(make, jax.random.split(KEY, 2), x, y, epochs=1, batch_size=4, progress=False)
    runs[1].save(tmp_path / "m1")
    np.testing.assert_array_equal(TrainedOperator.load(tmp_path / "m1").predict(x), runs[1].predict(x))
    assert member  # the public helper behind runs[i].model


def test_save_refuses_to_replace_other_folders_and_load_refuses_damage(tmp_path):
    x, y = _data()
    trained = _untrained(x, y)
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("user data")
    with pytest.raises(FileExistsError, match="not a saved TrainedOperator"):
        trained.save(keep)
    assert (keep / "notes.txt").read_text() == "user data"
    path = trained.save(tmp_path / "op")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        trained.save(path)
    trained.save(path, overwrite=True)
    victim = next(p for p in sorted(path.rglob("*")) if p.is_file() and p.stat().st_size > 64)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    with pytest.raises(CheckpointError):
        TrainedOperator.load(path)


def test_save_names_the_alternative_for_other_models(tmp_path):
    import equinox as eqx

    x, y = _data()
    base = _untrained(x, y)
    other = TrainedOperator(eqx.nn.Linear(2, 2, key=KEY), base.x_normalizer, base.y_normalizer)
    with pytest.raises(TypeError, match="tree_serialise_leaves"):
        other.save(tmp_path / "x")
