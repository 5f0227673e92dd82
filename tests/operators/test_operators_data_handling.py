"""train_operator / train_ensemble say what they do with the data: a batch size above the sample count and
float64 inputs each warn, and the history records the step and epoch of every epoch end."""

import warnings

import jax
import numpy as np

from jaxkit.operators import FNO, train_ensemble, train_operator


def _data(n=6, s=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 1, s))
    return x, np.cumsum(x, axis=-1) / s  # float64, as np.random gives


def test_train_operator_warns_on_clamped_batch_and_float64():
    x, y = _data()
    model = FNO(1, 1, 4, width=6, n_layers=1, proj_hidden=8, key=jax.random.key(0))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = train_operator(
            model, x, y, epochs=3, batch_size=20, key=jax.random.key(1), mesh=None, progress=False
        )
    msgs = [str(w.message) for w in rec if issubclass(w.category, UserWarning)]
    assert sum("batch_size: 20 is more than the 6 training samples" in m for m in msgs) == 1
    assert sum(m.startswith("x_train: float64") for m in msgs) == 1
    assert sum(m.startswith("y_train: float64") for m in msgs) == 1
    # one step per epoch (all 6 samples in one batch): history = epoch ends with their epochs
    assert [(h["step"], h["epoch"]) for h in res.history] == [(1, 0), (2, 1), (3, 2)]
    with warnings.catch_warnings(record=True) as rec:  # float32 and a batch size that fits: nothing to say
        warnings.simplefilter("always")
        train_operator(
            model, x.astype(np.float32), y.astype(np.float32), epochs=1, batch_size=3,
            key=jax.random.key(1), mesh=None, progress=False,
        )  # fmt: skip
    assert [str(w.message) for w in rec if issubclass(w.category, UserWarning)] == []


def test_train_ensemble_history_has_epochs_and_warns_on_clamp():
    x, y = _data(8)
    make = lambda k: FNO(1, 1, 4, width=6, n_layers=1, proj_hidden=8, key=k)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ens = train_ensemble(
            make, jax.random.split(jax.random.key(2), 2), x.astype(np.float32), y.astype(np.float32),
            epochs=2, batch_size=4, progress=False,
        )  # fmt: skip
    assert [str(w.message) for w in rec if issubclass(w.category, UserWarning)] == []
    for member in ens:  # 8 samples in batches of 4: epoch ends at steps 2 and 4
        assert [(h["step"], h["epoch"]) for h in member.history] == [(2, 0), (4, 1)]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        train_ensemble(
            make, jax.random.split(jax.random.key(2), 2), x.astype(np.float32), y.astype(np.float32),
            epochs=1, batch_size=9, progress=False,
        )  # fmt: skip
    assert sum("batch_size: 9 is more than the 8" in str(w.message) for w in rec) == 1
