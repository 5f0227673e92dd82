"""Speed statistics of the stability experiments against hand-computed values; the per-member (γ, ρ) loss of a
sweep equals the per-model losses; every seed of a stack (method or sweep cell) trains exactly like its own
``jaxkit.train.fit`` run, noise included, and a resumed stack is bit-identical."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxkit.stability import (
    MethodSpec,
    Transformer,
    compare_speed,
    init_stack,
    make_loss_fn,
    make_member_loss_fn,
    median_curves,
    method_optimizer,
    split_members,
    stacked_batches,
    stacked_eval,
    train_method,
)
from jaxkit.train import ensemble_member, fit


def _hist(rows):
    return [{"step": s, "acc": list(v)} for s, v in rows]


RUNS = {
    # 3 seeds; baseline reaches 0.9 at steps 20, 30, 30 -> median 30
    "baseline": {"history": _hist([(10, [0.1, 0.2, 0.3]), (20, [0.95, 0.5, 0.5]), (30, [0.95, 0.9, 0.91])])},
    # reaches at 10, 20 and never (censored at 40) -> median 20, speedup 1 - 20/30
    "fast": {"history": _hist([(10, [0.9, 0.1, 0.1]), (20, [0.9, 0.95, 0.1]), (30, [0.9, 0.95, 0.2])])},
}


def test_compare_speed_and_split_by_hand():
    stats = compare_speed(RUNS, "acc", 0.9, 40)
    assert stats["baseline"]["median"] == 30 and stats["baseline"]["per_seed"] == [20, 30, 30]
    assert stats["fast"]["per_seed"] == [10, 20, None] and stats["fast"]["reached"] == 2
    # a censored seed makes the headline the restricted-mean speedup: RMST = mean(min(T, 40))
    assert stats["fast"]["headline"] == "censored" and stats["fast"]["test"] == "log-rank"
    assert stats["fast"]["speedup_pct"] == pytest.approx(100 * (1 - (10 + 20 + 40) / (20 + 30 + 30)))
    assert stats["fast"]["reached_ci"] == pytest.approx([0.2077, 0.9385], abs=1e-4)  # Wilson 2/3
    assert "speedup_pct" not in stats["baseline"]
    curves = median_curves(RUNS, ("acc",))
    assert curves["fast"] == {"step": [10, 20, 30], "acc": [0.1, 0.9, 0.9]}
    # one stacked run of 6 members split into two "methods" of 3 seeds gives the same statistics
    stacked = [
        {"step": a["step"], "acc": a["acc"] + b["acc"], "loss": 1.0}
        for a, b in zip(RUNS["baseline"]["history"], RUNS["fast"]["history"])
    ]
    split = split_members(stacked, {"baseline": range(3), "fast": range(3, 6)})
    assert split["fast"]["history"][1] == {"step": 20, "acc": [0.9, 0.95, 0.1], "loss": 1.0}
    assert compare_speed(split, "acc", 0.9, 40) == stats
    with pytest.raises(ValueError, match="baseline"):
        compare_speed({"fast": RUNS["fast"]}, "acc", 0.9, 40)


P = 5
MASK = jnp.asarray([True, True, False])


def _make(k):
    return Transformer(P + 1, 3, key=k, d_model=8, n_heads=2, d_mlp=16)


def test_member_loss_equals_per_model_losses():
    models = init_stack(_make, jax.random.split(jax.random.key(0), 2))
    toks = jax.random.randint(jax.random.key(1), (2, 6, 3), 0, P).at[:, :, 2].set(P)
    labels = (toks[..., 0] + toks[..., 1]) % P
    gam, rho = jnp.asarray([0.5, 0.0]), jnp.asarray([0.25, -0.5])
    kw = dict(vocab_size=P, positions=-1, noise_mask=MASK)
    ks = jax.random.split(jax.random.key(2), 2)
    losses, aux = eqx.filter_vmap(make_member_loss_fn(**kw))(models, (toks, labels, gam, rho), ks)
    m = [ensemble_member(models, i) for i in range(2)]
    l0 = make_loss_fn(gamma=0.5, rho=0.25, **kw)(m[0], (toks[0], labels[0]), ks[0])[0]
    l1 = make_loss_fn(gamma=0.0, rho=-0.5, **kw)(m[1], (toks[1], labels[1]), ks[1])[0]
    np.testing.assert_allclose(losses, [l0, l1], rtol=1e-6)


def _data():
    rng = np.random.default_rng(0)
    x = rng.integers(0, P, (2, 10, 3)).astype(np.int32)
    x[..., 2] = P
    return x, ((x[..., 0] + x[..., 1]) % P).astype(np.int32)


def _single(model, spec, loss_fn, data, s, key):
    """Seed ``s`` trained alone with jaxkit.train.fit: its own slice of the batches, key split(key, 2)[s]."""
    return fit(
        model,
        method_optimizer(spec, lr=1e-2, weight_decay=1.0),
        loss_fn,
        lambda step: tuple(a[s] for a in data(step)),
        n_steps=3,
        key=jax.random.split(key, 2)[s],
        has_aux=True,
        progress=False,
    )


def _assert_member_equals(stack, s, single):
    a = jax.tree_util.tree_leaves(eqx.filter(ensemble_member(stack, s), eqx.is_array))
    b = jax.tree_util.tree_leaves(eqx.filter(single.model, eqx.is_array))
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-6)


def test_stacked_seeds_equal_independent_runs_resume_and_eval(tmp_path):
    # regularizer with token noise and Grokfast: seed s of the stack is the run of seed s alone, noise included
    x, y = _data()
    key, keys = jax.random.key(3), jax.random.split(jax.random.key(4), 2)
    spec = MethodSpec("reg", gamma=0.5, rho=0.25, grokfast=(0.9, 1.0))
    kw = dict(
        n_seeds=2,
        n_steps=3,
        lr=1e-2,
        weight_decay=1.0,
        vocab_size=P,
        noise_mask=MASK,
        positions=-1,
        key=key,
        eval_fn=stacked_eval(x, y, positions=-1, train=(x, y)),
        eval_every=1,
        return_model=True,
    )
    data = stacked_batches(x, y, 4, 0)
    res = train_method(init_stack(_make, keys), spec, data, **kw)
    loss_fn = make_loss_fn(gamma=0.5, rho=0.25, vocab_size=P, noise_mask=MASK, positions=-1)
    single = _single(_make(keys[1]), spec, loss_fn, data, 1, key)
    _assert_member_equals(res["model"], 1, single)
    assert res["cpu_time_s"] > 0 and [r["step"] for r in res["history"]] == [1, 2, 3]
    for name in ("task", "penalty"):
        np.testing.assert_allclose(
            [r[name][1] for r in res["history"]], [r[name] for r in single.history], rtol=1e-5
        )
    np.testing.assert_allclose(
        [r["member_loss"][1] for r in res["history"]], [r["loss"] for r in single.history], rtol=1e-5
    )
    # the evaluation of each member against its own predictions
    for s_ in range(2):
        m = ensemble_member(res["model"], s_)
        acc = np.mean(np.argmax(jax.vmap(m)(jnp.asarray(x[s_]))[:, -1], -1) == y[s_])
        assert res["history"][-1]["val_acc"][s_] == pytest.approx(acc)
        assert res["history"][-1]["train_acc"][s_] == pytest.approx(acc)
    # killed after 2 steps, resumed to 3: bit-identical stack and history
    ck = dict(kw, checkpoint_dir=tmp_path)
    train_method(init_stack(_make, keys), spec, data, **(ck | {"n_steps": 2}))
    resumed = train_method(init_stack(_make, keys), spec, data, **(ck | {"resume": True}))
    for u, v in zip(jax.tree_util.tree_leaves(resumed["model"]), jax.tree_util.tree_leaves(res["model"])):
        np.testing.assert_array_equal(u, v)
    assert resumed["history"] == res["history"]
    with pytest.raises(ValueError, match="n_seeds"):
        train_method(init_stack(_make, keys), spec, data, **(kw | {"n_seeds": 3}))
    with pytest.raises(ValueError, match="batch_size"):
        stacked_batches(x, y, 11, 0)


def test_sweep_members_equal_independent_runs():
    # per-member (γ, ρ) carried by the batches: each cell trains as make_loss_fn(γ, ρ) alone (γ = 0: baseline)
    x, y = _data()
    key, keys = jax.random.key(5), jax.random.split(jax.random.key(6), 2)
    gam, rho = np.float32([0.5, 0.0]), np.float32([0.25, -0.5])
    data = stacked_batches(x, y, None, 0, extra=(jnp.asarray(gam), jnp.asarray(rho)))
    res = train_method(
        init_stack(_make, keys),
        MethodSpec("sweep"),
        data,
        n_seeds=2,
        n_steps=3,
        lr=1e-2,
        weight_decay=1.0,
        vocab_size=P,
        noise_mask=MASK,
        positions=-1,
        per_member=True,
        key=key,
        return_model=True,
    )
    for s_ in range(2):
        loss_fn = make_loss_fn(
            gamma=float(gam[s_]), rho=float(rho[s_]), vocab_size=P, noise_mask=MASK, positions=-1
        )
        single = _single(_make(keys[s_]), MethodSpec("sweep"), loss_fn, lambda step: data(step)[:2], s_, key)
        _assert_member_equals(res["model"], s_, single)
