"""Stacked-ensemble trainer: each member equals an independently trained single model; resume is bit-identical."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import (
    ensemble_member,
    ensemble_optimizer,
    ensemble_size,
    fit,
    fit_ensemble,
    init_ensemble,
)

M, N, D = 3, 16, 3
LRS = [3e-3, 1e-2, 3e-2]


def _make(key):
    return eqx.nn.MLP(D, 1, 8, 1, key=key)


def _loss(model, batch, key):
    # a key-dependent input noise, so the per-member key schedule is checked too
    x = batch["x"] + 0.1 * jax.random.normal(key, batch["x"].shape)
    err = jax.vmap(model)(x) - batch["y"]
    return jnp.mean(err**2), {"mae": jnp.mean(jnp.abs(err))}


def _optimizer(lr=1e-3):
    return optax.chain(optax.clip_by_global_norm(1.0), optax.inject_hyperparams(optax.adam)(learning_rate=lr))


def _member_data(step):
    rng = np.random.default_rng([7, step])
    x = rng.normal(size=(M, N, D)).astype(np.float32)
    w = np.arange(1.0, M + 1)[:, None, None] * np.ones((M, D, 1))
    return {"x": x, "y": (x @ w).astype(np.float32)}


@pytest.fixture(scope="module")
def setup():
    keys = jax.random.split(jax.random.key(0), M)
    return init_ensemble(_make, keys), jax.random.split(jax.random.key(1), M)


def test_members_equal_independent_single_runs(setup):
    models, keys = setup
    assert ensemble_size(models) == M
    res = fit_ensemble(
        models,
        _optimizer(),
        _loss,
        _member_data,
        n_steps=12,
        keys=keys,
        member_data=True,
        hyperparams={"learning_rate": LRS},
        has_aux=True,
        progress=False,
        log_every=4,
    )
    assert [h["step"] for h in res.history] == [4, 8, 12]
    for i in range(M):
        single = fit(
            ensemble_member(models, i),
            _optimizer(LRS[i]),
            _loss,
            lambda s, i=i: jax.tree.map(lambda leaf: leaf[i], _member_data(s)),
            n_steps=12,
            key=keys[i],
            has_aux=True,
            progress=False,
            log_every=4,
        )
        a = jax.tree.leaves(eqx.filter(ensemble_member(res.model, i), eqx.is_array))
        b = jax.tree.leaves(eqx.filter(single.model, eqx.is_array))
        for x, y in zip(a, b):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)
        got = [h["member_loss"][i] for h in res.history]
        np.testing.assert_allclose(got, [h["loss"] for h in single.history], rtol=1e-5)
        np.testing.assert_allclose(
            [h["mae"][i] for h in res.history], [h["mae"] for h in single.history], rtol=1e-5
        )
    # the summed objective is what fit logs as "loss"
    np.testing.assert_allclose(res.history[-1]["loss"], sum(res.history[-1]["member_loss"]), rtol=1e-6)
    # members really differ (their learning rates do)
    assert len({round(v, 6) for v in res.history[-1]["member_loss"]}) == M


def test_shared_data_and_resume_are_bit_identical(setup, tmp_path):
    models, keys = setup
    x = np.random.default_rng(0).normal(size=(N, D)).astype(np.float32)
    batch = {"x": x, "y": x.sum(1, keepdims=True)}
    kw = dict(keys=keys, hyperparams={"learning_rate": LRS}, has_aux=True, progress=False, log_every=2)
    full = fit_ensemble(models, _optimizer(), _loss, lambda s: batch, n_steps=10, **kw)
    ck = tmp_path / "ck"
    fit_ensemble(
        models, _optimizer(), _loss, lambda s: batch, n_steps=6, checkpoint_dir=ck, checkpoint_every=3, **kw
    )  # "interrupted" after step 6
    res = fit_ensemble(
        models,
        _optimizer(),
        _loss,
        lambda s: batch,
        n_steps=10,
        checkpoint_dir=ck,
        checkpoint_every=3,
        resume=True,
        **kw,
    )
    assert res.resumed_from == 6
    for a, b in zip(
        jax.tree.leaves(eqx.filter(full.model, eqx.is_array)),
        jax.tree.leaves(eqx.filter(res.model, eqx.is_array)),
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert res.history == full.history
    # the per-member learning rates travel in the (checkpointed) optimizer state
    lr = res.opt_state[1].hyperparams["learning_rate"]
    np.testing.assert_allclose(np.asarray(lr), LRS, rtol=1e-6)


def test_bad_arguments_raise(setup):
    models, keys = setup
    data = lambda s: {"x": np.zeros((N, D), np.float32), "y": np.zeros((N, 1), np.float32)}  # noqa: E731
    with pytest.raises(ValueError, match="keys"):
        fit_ensemble(models, _optimizer(), _loss, data, n_steps=1, keys=keys[:2], has_aux=True)
    with pytest.raises(ValueError, match="momentum"):
        fit_ensemble(
            models,
            _optimizer(),
            _loss,
            data,
            n_steps=1,
            keys=keys,
            has_aux=True,
            hyperparams={"momentum": [0.9] * M},
        )
    with pytest.raises(ValueError, match="one per member"):
        ensemble_optimizer(optax.sgd(0.1), M, {"learning_rate": [0.1, 0.2]})
    with pytest.raises(ValueError, match="leading member axis"):
        fit_ensemble(models, _optimizer(), _loss, data, n_steps=1, keys=keys, has_aux=True, member_data=True)
    with pytest.raises(ValueError, match="member index"):
        ensemble_member(models, M)
