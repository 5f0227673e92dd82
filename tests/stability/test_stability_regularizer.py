"""Regularizer gradient vs finite differences, strength 0 == baseline (bitwise), Grokfast EMA, tasks, errors."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.stability._grokfast import grokfast_ema
from jaxkit.stability._models import Transformer
from jaxkit.stability._regularizer import make_loss_fn, regularized_loss
from jaxkit.stability._tasks import char_dataset, modular_addition, python_reference_text
from jaxkit.train import fit, full_batch

P = 5
TOKENS = jnp.asarray([[0, 1, P], [2, 3, P], [4, 4, P], [1, 3, P]], jnp.int32)
LABELS = (TOKENS[:, 0] + TOKENS[:, 1]) % P


def _tiny(key):
    return Transformer(P + 1, 3, key=key, d_model=8, n_heads=2, d_mlp=16)


def test_penalty_gradient_matches_finite_differences():
    with jax.enable_x64(True):
        model = _tiny(jax.random.PRNGKey(0))
        model = jax.tree_util.tree_map(
            lambda a: a.astype(jnp.float64) if eqx.is_inexact_array(a) else a, model
        )
        key = jax.random.PRNGKey(3)
        params, static = eqx.partition(model, eqx.is_inexact_array)

        def loss(p, strength):  # strength traced: the penalty is always computed, one compilation serves all
            m = eqx.combine(p, static)
            return regularized_loss(m, TOKENS, LABELS, key, strength=strength, rho=0.8, positions=-1)[0]

        vg = jax.jit(jax.value_and_grad(loss))
        lam = jnp.float64(0.7)
        _, grads = vg(params, lam)
        leaves, treedef = jax.tree_util.tree_flatten(params)
        rng = np.random.default_rng(1)
        v = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(rng.standard_normal(x.shape)) for x in leaves])
        dot = lambda g: sum(
            float(jnp.vdot(a, b)) for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(v))
        )
        analytic = dot(grads)
        h = 1e-6
        shift = lambda s: jax.tree_util.tree_map(lambda p, d: p + s * d, params, v)
        numeric = (float(vg(shift(h), lam)[0]) - float(vg(shift(-h), lam)[0])) / (2 * h)
        assert abs(analytic - numeric) < 1e-6 * max(1.0, abs(numeric))
        # the penalty really contributes: the directional derivative changes with the strength
        assert abs(dot(vg(params, jnp.float64(0.0))[1]) - analytic) > 1e-6


def _baseline_loss(model, batch, key):
    tokens, labels = batch
    logits = jax.vmap(model)(tokens)[:, -1]
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def test_strength_zero_is_bitwise_baseline():
    model = _tiny(jax.random.PRNGKey(1))
    opt = optax.adamw(1e-2, b1=0.9, b2=0.98, weight_decay=1.0)
    data = full_batch((TOKENS, LABELS))
    kw = dict(n_steps=3, key=jax.random.PRNGKey(2), progress=False)
    base = fit(model, opt, _baseline_loss, data, **kw)
    zero = fit(model, opt, make_loss_fn(strength=0.0, rho=0.9, positions=-1), data, has_aux=True, **kw)
    lb = jax.tree_util.tree_leaves(eqx.filter(base.model, eqx.is_array))
    lz = jax.tree_util.tree_leaves(eqx.filter(zero.model, eqx.is_array))
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(lb, lz))
    assert zero.history[-1]["penalty"] == 0.0  # the extra pass was skipped


def test_grokfast_ema_matches_reference_recursion():
    alpha, lamb = 0.9, 2.0
    tx = grokfast_ema(alpha, lamb)
    params = {"w": jnp.zeros(3)}
    state = tx.init(params)
    grads = [np.array([1.0, -2.0, 0.5]), np.array([0.0, 1.0, 1.0]), np.array([3.0, 0.0, -1.0])]
    ema = None
    for g in grads:
        ema = g if ema is None else alpha * ema + (1 - alpha) * g
        upd, state = tx.update({"w": jnp.asarray(g, jnp.float32)}, state, params)
        np.testing.assert_allclose(np.asarray(upd["w"]), g + lamb * ema, rtol=1e-6)


def test_tasks():
    d = modular_addition(7, 0.4, jax.random.PRNGKey(0))
    x = np.concatenate([d["train_x"], d["val_x"]])
    y = np.concatenate([d["train_y"], d["val_y"]])
    assert len(d["train_x"]) == round(0.4 * 49) and len(x) == 49
    assert len({(a, b) for a, b, _ in x}) == 49 and np.all(x[:, 2] == 7)
    np.testing.assert_array_equal(y, (x[:, 0] + x[:, 1]) % 7)
    text = python_reference_text()
    assert len(text) > 100_000 and "lambda" in text
    ds = char_dataset(text, max_chars=5000)
    assert "".join(ds["vocab"][i] for i in ds["train"][:50]) == text[:50]
    assert len(ds["train"]) + len(ds["val"]) == 5000


def test_bad_inputs():
    with pytest.raises(ValueError, match="rho"):
        make_loss_fn(strength=1.0, rho=1.5)
    with pytest.raises(ValueError, match="strength"):
        make_loss_fn(strength=-1.0, rho=0.5)
    with pytest.raises(ValueError, match="alpha"):
        grokfast_ema(alpha=1.5)
    with pytest.raises(ValueError, match="n_heads"):
        Transformer(5, 3, key=jax.random.PRNGKey(0), d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="train_fraction"):
        modular_addition(7, 1.0, jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="text"):
        char_dataset("short")


def test_steps_to_target_and_median_spread():
    from jaxkit.stability._seeds import median_spread, steps_to_target

    hist = [
        {"step": 10, "val_acc": [0.1, 0.96, 0.2]},
        {"step": 20, "loss": 1.0},
        {"step": 30, "val_acc": [0.97, 0.5, 0.3]},
    ]
    steps = steps_to_target(hist, "val_acc", 0.95)
    assert steps == [30, 10, None]
    s = median_spread(steps, censor=40)
    assert s["median"] == 30 and s["reached"] == 2 and s["max"] == 40 and s["per_seed"] == [30, 10, None]
    assert steps_to_target(hist, "val_acc", 0.25, mode="min") == [10, None, 10]
    with pytest.raises(ValueError, match="mode"):
        steps_to_target(hist, "val_acc", 0.5, mode="up")
