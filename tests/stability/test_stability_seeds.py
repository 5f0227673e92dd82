"""Speed statistics of the stability experiments against hand-computed values; the per-member (γ, ρ) loss of a
sweep equals the per-model losses; a stack of seeds trains like separate runs."""

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
    seed_stacked_loss,
    split_members,
    stacked_batches,
    stacked_eval,
    train_method,
)


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
    assert stats["fast"]["speedup_pct"] == pytest.approx(100 * (1 - 20 / 30))
    assert "speedup_pct" not in stats["baseline"]
    curves = median_curves(RUNS, ("acc",))
    assert curves["fast"] == {"step": [10, 20, 30], "acc": [0.1, 0.9, 0.9]}
    # one stacked run of 6 members split into two "methods" of 3 seeds gives the same statistics
    stacked = [{"step": a["step"], "acc": a["acc"] + b["acc"], "loss": 1.0}
               for a, b in zip(RUNS["baseline"]["history"], RUNS["fast"]["history"])]
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
    key = jax.random.key(2)
    total, aux = seed_stacked_loss(make_member_loss_fn(**kw), 2)(models, (toks, labels, gam, rho), key)
    ks = jax.random.split(key, 2)
    m = [jax.tree_util.tree_map(lambda a, i=i: a[i] if eqx.is_array(a) else a, models) for i in range(2)]
    l0 = make_loss_fn(gamma=0.5, rho=0.25, **kw)(m[0], (toks[0], labels[0]), ks[0])[0]
    l1 = make_loss_fn(gamma=0.0, rho=-0.5, **kw)(m[1], (toks[1], labels[1]), ks[1])[0]
    np.testing.assert_allclose(aux["loss_per_seed"], [l0, l1], rtol=1e-6)
    np.testing.assert_allclose(total, l0 + l1, rtol=1e-6)


def test_stacked_training_matches_separate_runs_and_eval():
    rng = np.random.default_rng(0)
    x = rng.integers(0, P, (2, 10, 3)).astype(np.int32)
    x[..., 2] = P
    y = ((x[..., 0] + x[..., 1]) % P).astype(np.int32)
    kw = dict(n_steps=3, lr=1e-2, weight_decay=1.0, positions=-1, key=jax.random.key(3), return_model=True)
    keys = jax.random.split(jax.random.key(4), 2)
    base = MethodSpec("baseline")
    both = train_method(init_stack(_make, keys), base, stacked_batches(x, y, None, 0), n_seeds=2, **kw)
    one = train_method(init_stack(_make, keys[1:]), base, stacked_batches(x[1:], y[1:], None, 0), n_seeds=1, **kw)
    assert both["cpu_time_s"] > 0 and both["history"] == []
    l2 = jax.tree_util.tree_leaves(eqx.filter(both["model"], eqx.is_array))
    l1 = jax.tree_util.tree_leaves(eqx.filter(one["model"], eqx.is_array))
    for a, b in zip(l2, l1):  # seed 1 of the stack trained exactly like seed 1 alone (up to reassociation)
        np.testing.assert_allclose(a[1], b[0], rtol=1e-4, atol=1e-6)
    ev = stacked_eval(x, y, positions=-1, train=(x, y))(both["model"])
    for s_ in range(2):
        m = jax.tree_util.tree_map(lambda a, s_=s_: a[s_] if eqx.is_array(a) else a, both["model"])
        acc = np.mean(np.argmax(jax.vmap(m)(jnp.asarray(x[s_]))[:, -1], -1) == y[s_])
        assert float(ev["val_acc"][s_]) == pytest.approx(acc) and float(ev["train_acc"][s_]) == pytest.approx(acc)
    with pytest.raises(ValueError, match="batch_size"):
        stacked_batches(x, y, 11, 0)
