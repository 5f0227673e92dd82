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
    res = fit(model, optax.sgd(0.1), loss, full_batch({"x": x, "y": y}), n_steps=300, key=jax.random.key(2),
              progress=False, log_every=100)
    w_ls = np.linalg.lstsq(np.asarray(x), np.asarray(y), rcond=None)[0]
    np.testing.assert_allclose(np.asarray(res.model.weight).T, w_ls, atol=1e-4)
    assert [h["step"] for h in res.history] == [100, 200, 300]


def test_early_stopping_triggers_on_flat_metric():
    model = eqx.nn.Linear(2, 1, key=jax.random.key(0))
    data = full_batch({"x": jnp.ones((4, 2)), "y": jnp.ones((4, 1))})
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    res = fit(model, optax.sgd(0.0), loss, data, n_steps=100, key=jax.random.key(1),
              eval_fn=lambda m: {"val_loss": 1.0}, eval_every=5, patience=3, progress=False)
    # first eval sets best, then 3 evals without improvement -> stop at step 20
    assert res.stopped_early and res.step == 20


def test_loader_is_a_pure_function_of_step():
    x = np.arange(20.0)[:, None]
    a = ArrayLoader({"x": x}, 6, key=jax.random.key(3))
    b = ArrayLoader({"x": x}, 6, key=jax.random.key(3))
    assert a.steps_per_epoch == 3
    seen = np.concatenate([a(s)["x"][:, 0] for s in range(3)])
    assert len(set(seen.tolist())) == 18                     # one epoch: no repeats
    for s in (0, 5, 2, 11):
        np.testing.assert_array_equal(a(s)["x"], b(s)["x"])
    assert not np.array_equal(a(0)["x"], a(3)["x"])           # new epoch, new permutation


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
