"""Data handling says what it does: dropped remainders and float64 downcasts warn once, the history records
every step with its epoch, legacy uint32 keys are the same key and malformed ones are refused."""

import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import ArrayLoader, fit, fit_ensemble, init_ensemble


def _caught(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in rec if issubclass(w.category, UserWarning)]


def test_dropped_remainder_warns_once_with_the_count():
    x = np.arange(50, dtype=np.float32)[:, None]
    loader, rec = _caught(lambda: ArrayLoader({"x": x}, 24, key=jax.random.key(0)))
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "2 sample" in msg and "drop_last=False" in msg and "50" in msg
    assert loader.steps_per_epoch == 50 // 24
    for epoch in range(3):  # every epoch serves 48 distinct samples, a different 2 left out
        served = np.concatenate([loader(epoch * 2 + s)["x"][:, 0] for s in range(2)])
        assert len(set(served.tolist())) == 48
    # serving more steps never warns again
    _, rec = _caught(lambda: [loader(s) for s in range(10)])
    assert rec == []
    full, rec = _caught(lambda: ArrayLoader({"x": x}, 24, key=jax.random.key(0), drop_last=False))
    assert rec == [] and full.steps_per_epoch == 3
    served = np.concatenate([full(s)["x"][:, 0] for s in range(3)])
    assert sorted(served.tolist()) == list(range(50))
    _, rec = _caught(lambda: ArrayLoader({"x": x}, 25, key=jax.random.key(0)))
    assert rec == []  # 25 divides 50: nothing dropped, nothing said


def test_float64_data_is_converted_with_a_warning():
    if jax.config.read("jax_enable_x64"):
        pytest.skip("float64 is kept when x64 is on")
    x = np.linspace(0.0, 1.0, 8)[:, None]
    loader, rec = _caught(lambda: ArrayLoader({"x": x, "y": x.astype(np.float32)}, 4, key=jax.random.key(0)))
    assert len(rec) == 1 and "arrays['x']" in str(rec[0].message) and "float32" in str(rec[0].message)
    assert "arrays['y']" not in str(rec[0].message)
    b = loader(0)
    assert b["x"].dtype == np.float32
    np.testing.assert_array_equal(b["x"], x[loader.indices(0)].astype(np.float32))


def _toy():
    x = np.linspace(-1.0, 1.0, 10, dtype=np.float32)[:, None]
    data = {"x": x, "y": 3.0 * x}
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    return data, loss


def test_history_records_every_step_with_its_epoch():
    data, loss = _toy()
    with pytest.warns(UserWarning, match="2 sample"):
        loader = ArrayLoader(data, 4, key=jax.random.key(1))  # 10 samples, batches of 4: 2 steps per epoch
    model = eqx.nn.Linear(1, 1, key=jax.random.key(0))
    res = fit(model, optax.sgd(0.1), loss, loader, n_steps=7, key=jax.random.key(2), progress=False)
    assert [h["step"] for h in res.history] == [1, 2, 3, 4, 5, 6, 7]
    assert [h["epoch"] for h in res.history] == [0, 0, 1, 1, 2, 2, 3]
    # each recorded loss is the loss of the batch that step trained on, at the parameters before the step
    m = model
    for h in res.history[:3]:
        b = loader(h["step"] - 1)
        assert np.isclose(h["loss"], float(loss(m, b, None)), rtol=1e-5)
        g = eqx.filter_grad(lambda mm, bb=b: loss(mm, bb, None))(m)
        m = jax.tree_util.tree_map(lambda p, gg: p - 0.1 * gg, m, g)
    # a plain callable has no epochs: the history has steps only
    res = fit(model, optax.sgd(0.1), loss, lambda s: data, n_steps=3, key=jax.random.key(2), progress=False)
    assert [h["step"] for h in res.history] == [1, 2, 3] and "epoch" not in res.history[0]
    # log_every=2: logged steps 2, 4, 5 (the last) with their epochs
    res = fit(
        model, optax.sgd(0.1), loss, loader, n_steps=5, key=jax.random.key(2), log_every=2, progress=False
    )
    assert [(h["step"], h["epoch"]) for h in res.history] == [(2, 0), (4, 1), (5, 2)]


def test_ensemble_history_records_epochs():
    data, loss = _toy()
    loader = ArrayLoader(data, 5, key=jax.random.key(1))
    keys = jax.random.split(jax.random.key(3), 2)
    models = init_ensemble(lambda k: eqx.nn.Linear(1, 1, key=k), keys)
    res = fit_ensemble(models, optax.sgd(0.1), loss, loader, n_steps=5, keys=keys, progress=False)
    assert [(h["step"], h["epoch"]) for h in res.history] == [(1, 0), (2, 0), (3, 1), (4, 1), (5, 2)]


def test_legacy_uint32_keys_are_the_same_key_and_malformed_ones_are_refused():
    x = np.arange(12, dtype=np.float32)[:, None]
    typed = ArrayLoader({"x": x}, 4, key=jax.random.key(7))
    legacy = ArrayLoader({"x": x}, 4, key=jax.random.key_data(jax.random.key(7)))  # = the legacy raw key of 7
    for s in range(6):
        np.testing.assert_array_equal(typed(s)["x"], legacy(s)["x"])
    with pytest.raises(TypeError, match=r"key: .*\(2,\).*received shape \(3,\)"):
        ArrayLoader({"x": x}, 4, key=jnp.zeros(3, jnp.uint32))
    with pytest.raises(TypeError, match="key"):
        ArrayLoader({"x": x}, 4, key=7)
