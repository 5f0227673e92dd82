"""Fit loop: learns a known least-squares solution, early stopping, loader determinism, input validation."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import ArrayLoader, fit, full_batch


def test_fit_reaches_least_squares_solution():
    kx, kw = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (128, 4))
    w_true = jnp.array([[1.0], [-2.0], [0.5], [3.0]])
    y = x @ w_true + 0.1 * jax.random.normal(kw, (128, 1))
    model = eqx.nn.Linear(4, 1, use_bias=False, key=jax.random.key(1))
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    res = fit(
        model,
        optax.sgd(0.1),
        loss,
        full_batch({"x": x, "y": y}),
        n_steps=300,
        key=jax.random.key(2),
        progress=False,
        log_every=100,
    )
    w_ls = np.linalg.lstsq(np.asarray(x), np.asarray(y), rcond=None)[0]
    np.testing.assert_allclose(np.asarray(res.model.weight).T, w_ls, atol=1e-4)
    assert [h["step"] for h in res.history] == [100, 200, 300]


def _constant_problem():
    """A 2 -> 1 linear model on 4 identical examples with a squared loss (for the early-stopping tests)."""
    model = eqx.nn.Linear(2, 1, key=jax.random.key(0))
    data = full_batch({"x": jnp.ones((4, 2)), "y": jnp.ones((4, 1))})
    return model, data, lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)


def test_early_stopping_triggers_on_flat_metric():
    model, data, loss = _constant_problem()
    res = fit(
        model,
        optax.sgd(0.0),
        loss,
        data,
        n_steps=100,
        key=jax.random.key(1),
        eval_fn=lambda m: {"val_loss": 1.0},
        eval_every=5,
        patience=3,
        progress=False,
    )
    # first eval sets best, then 3 evals without improvement -> stop at step 20
    assert res.stopped_early and res.step == 20


def test_loader_is_a_pure_function_of_step():
    x = np.arange(20.0)[:, None]
    a = ArrayLoader({"x": x}, 6, key=jax.random.key(3))
    b = ArrayLoader({"x": x}, 6, key=jax.random.key(3))
    assert a.steps_per_epoch == 3
    seen = np.concatenate([a(s)["x"][:, 0] for s in range(3)])
    assert len(set(seen.tolist())) == 18  # one epoch: no repeats
    for s in (0, 5, 2, 11):
        np.testing.assert_array_equal(a(s)["x"], b(s)["x"])
    assert not np.array_equal(a(0)["x"], a(3)["x"])  # new epoch, new permutation


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="batch_size"):
        ArrayLoader({"x": np.zeros((4, 1))}, 5, key=jax.random.key(0))
    with pytest.raises(ValueError, match="leading"):
        ArrayLoader({"x": np.zeros((4, 1)), "y": np.zeros((3, 1))}, 2, key=jax.random.key(0))
    model = eqx.nn.Linear(2, 1, key=jax.random.key(0))
    data = full_batch({"x": jnp.ones((4, 2))})
    loss = lambda m, b, k: jnp.sum(jax.vmap(m)(b["x"]))
    with pytest.raises(ValueError, match="n_steps"):
        fit(model, optax.sgd(0.1), loss, data, n_steps=-1, key=jax.random.key(0))
    with pytest.raises(ValueError, match="patience"):
        fit(model, optax.sgd(0.1), loss, data, n_steps=1, key=jax.random.key(0), patience=2)
    with pytest.raises(ValueError, match="checkpoint_dir"):
        fit(model, optax.sgd(0.1), loss, data, n_steps=1, key=jax.random.key(0), checkpoint_every=1)


def _problem():
    x = jax.random.normal(jax.random.key(0), (16, 3))
    y = x @ jnp.array([[1.0], [-1.0], [0.5]])
    model = eqx.nn.Linear(3, 1, key=jax.random.key(1))

    def loss(m, b, k):
        return jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2) + 0.0 * jax.random.normal(k)

    return model, loss, ArrayLoader({"x": x, "y": y}, 4, key=jax.random.key(2))


def _leaves(m):
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_array))]


def test_resume_falls_back_past_a_damaged_checkpoint_and_stays_bit_identical(tmp_path):
    from jaxkit.train import CheckpointManager, CheckpointWarning

    model, loss, loader = _problem()
    kw = dict(n_steps=12, key=jax.random.key(3), progress=False, log_every=2)
    ref = fit(model, optax.adam(1e-2), loss, loader, **kw)
    part = fit(
        model,
        optax.adam(1e-2),
        loss,
        loader,
        **{**kw, "n_steps": 9},
        checkpoint_dir=tmp_path,
        checkpoint_every=3,
        keep_checkpoints=3,
    )
    assert CheckpointManager(tmp_path).steps() == [3, 6, 9] and part.step == 9
    manifest = tmp_path / "ckpt_000000009" / "MANIFEST.jkx"
    raw = bytearray(manifest.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    manifest.write_bytes(bytes(raw))
    with pytest.warns(CheckpointWarning, match="ckpt_000000009"):
        res = fit(
            model,
            optax.adam(1e-2),
            loss,
            loader,
            **kw,
            checkpoint_dir=tmp_path,
            checkpoint_every=3,
            resume=True,
        )
    assert res.resumed_from == 6 and res.step == 12
    assert res.history == ref.history
    for a, b in zip(_leaves(res.model), _leaves(ref.model)):
        np.testing.assert_array_equal(a, b)
    # a checkpoint beyond n_steps is an error, not a silent "done"
    with pytest.raises(ValueError, match="beyond n_steps=5"):
        fit(
            model,
            optax.adam(1e-2),
            loss,
            loader,
            **{**kw, "n_steps": 5},
            checkpoint_dir=tmp_path,
            resume=True,
        )
    # resume=False starts over and removes the earlier run's checkpoints (which a later resume would pick up)
    with pytest.warns(CheckpointWarning, match="earlier run"):
        fit(model, optax.adam(1e-2), loss, loader, **{**kw, "n_steps": 2}, checkpoint_dir=tmp_path)
    assert CheckpointManager(tmp_path).steps() == [2]


def test_nonfinite_loss_raises_naming_the_step():
    model, loss, loader = _problem()
    with pytest.raises(FloatingPointError, match="step 2"):
        fit(model, optax.sgd(1e30), loss, loader, n_steps=50, key=jax.random.key(0), progress=False)
    res = fit(
        model,
        optax.sgd(1e30),
        loss,
        loader,
        n_steps=3,
        key=jax.random.key(0),
        progress=False,
        nonfinite="ignore",
    )
    assert not np.isfinite(res.history[-1]["loss"])
    with pytest.raises(FloatingPointError, match="step 3"):  # log_every=0: checked at the end
        fit(
            model,
            optax.sgd(1e30),
            loss,
            loader,
            n_steps=3,
            key=jax.random.key(0),
            progress=False,
            log_every=0,
        )


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n_steps": 2.5}, ValueError, "n_steps"),
        ({"log_every": -1}, ValueError, "log_every"),
        ({"eval_every": 1.5}, ValueError, "eval_every"),
        ({"keep_checkpoints": 0}, ValueError, "keep_checkpoints"),
        ({"key": 0}, TypeError, "key"),
        ({"key": np.zeros(2, np.float32)}, TypeError, "key"),
        ({"mode": "up"}, ValueError, "mode"),
        ({"nonfinite": "warn"}, ValueError, "nonfinite"),
        ({"patience": 0, "eval_fn": lambda m: {"val_loss": 0.0}}, ValueError, "patience"),
        ({"optimizer": "adam"}, TypeError, "optimizer"),
        ({"loss_fn": None}, TypeError, "loss_fn"),
        ({"data": np.zeros(3)}, TypeError, "data"),
        ({"model": {"w": jnp.array([1.0, jnp.nan])}}, ValueError, "finite"),
        ({"model": {"n": jnp.arange(3)}}, ValueError, "floating-point"),
    ],
)
def test_fit_rejects_bad_arguments(kwargs, exc, match):
    model, loss, loader = _problem()
    args = {
        "model": model,
        "optimizer": optax.sgd(0.1),
        "loss_fn": loss,
        "data": loader,
        "n_steps": 2,
        "key": jax.random.key(0),
        "progress": False,
        **kwargs,
    }
    with pytest.raises((exc, TypeError), match=match):  # TypeError: the test suite's jaxtyping+beartype hook
        fit(**args)


def test_early_stopping_on_a_nan_metric_is_an_error_not_a_silent_stop():
    """Fresh probe Z06: eval_fn returning NaN with patience=1 stopped after one step without a word (NaN compares
    false, so every evaluation counted as "no improvement")."""
    model, data, loss = _constant_problem()
    with pytest.raises(ValueError, match="eval_fn: the monitored metric 'val_loss' is nan at step 1"):
        fit(
            model,
            optax.sgd(1e-2),
            loss,
            data,
            n_steps=4,
            key=jax.random.key(1),
            eval_fn=lambda m: {"val_loss": float("nan")},
            eval_every=1,
            patience=1,
            progress=False,
        )
