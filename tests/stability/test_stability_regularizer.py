"""The paper's regularizer (Haris et al. 2026, Def. 6.1): resampling keep-probability vs Monte Carlo, the agreement
term on a hand-computed two-token toy model, its gradient vs finite differences, γ = 0 bit-identical to the
baseline; Grokfast-EMA, tasks and the bootstrap speedup."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.stability import (
    Transformer,
    agreement_regularizer,
    char_dataset,
    grokfast_ema,
    keep_probability,
    make_loss_fn,
    modular_addition,
    python_reference_text,
    regularized_loss,
    resample_tokens,
    sparse_parity,
    speedup_ci,
)
from jaxkit.train import fit, full_batch

P = 5
TOKENS = jnp.asarray([[0, 1, P], [2, 3, P], [4, 4, P], [1, 3, P]], jnp.int32)
LABELS = (TOKENS[:, 0] + TOKENS[:, 1]) % P
MASK = jnp.asarray([True, True, False])


def _tiny(key):
    return Transformer(P + 1, 3, key=key, d_model=8, n_heads=2, d_mlp=16)


@pytest.mark.parametrize("rho,vocab", [(0.25, 113), (0.05, 2), (-1.0, 7), (-0.6, 3)])
def test_keep_probability_exact_vs_monte_carlo(rho, vocab):
    n = 200_000
    x = jax.random.randint(jax.random.key(1), (n,), 0, vocab)
    y = resample_tokens(x, jax.random.key(2), rho=rho, vocab_size=vocab)
    exact = (1 + rho) / 2 + (1 - rho) / (2 * vocab)  # the formula, written out independently
    assert keep_probability(rho, vocab) == pytest.approx(exact, abs=1e-12)
    freq = float(jnp.mean(x == y))
    assert abs(freq - exact) < 4 * math.sqrt(exact * (1 - exact) / n) + 1e-9
    changed = np.asarray(y)[np.asarray(x != y)]  # a changed token is uniform over the vocabulary
    if changed.size > 1000 and vocab > 2:
        counts = np.bincount(changed, minlength=vocab) / changed.size
        assert np.max(np.abs(counts - 1 / vocab)) < 0.02


def test_resample_respects_noise_mask_and_rho_one():
    toks = jnp.tile(TOKENS, (500, 1))
    y = resample_tokens(toks, jax.random.key(3), rho=-1.0, vocab_size=P, noise_mask=MASK)
    assert bool(jnp.all(y[:, 2] == P)) and bool(jnp.all(y[:, :2] < P))
    assert float(jnp.mean(y[:, :2] == toks[:, :2])) == pytest.approx(1 / P, abs=0.03)
    assert bool(jnp.all(resample_tokens(toks, jax.random.key(4), rho=1.0, vocab_size=P + 1) == toks))


class _TwoToken(eqx.Module):
    """Toy model on ONE token x in {0, 1}: logits = table[x] at every position."""

    table: jax.Array

    def __call__(self, tokens):
        return self.table[tokens]


def test_agreement_regularizer_hand_computed():
    # agreement of two distributions, by hand: -(0.7*0.2 + 0.3*0.8) = -0.38
    p, q = jnp.asarray([0.7, 0.3]), jnp.asarray([0.2, 0.8])
    assert float(agreement_regularizer(p, q)) == pytest.approx(-0.38, abs=1e-7)
    assert float(agreement_regularizer(p, q, sign=0)) == pytest.approx(0.38, abs=1e-7)
    # two-token toy model, logits table [[2, 0], [0, 1]]
    e = math.exp
    p0 = [e(2) / (e(2) + 1), 1 / (e(2) + 1)]
    p1 = [1 / (1 + e(1)), e(1) / (1 + e(1))]
    same = [p0[0] ** 2 + p0[1] ** 2, p1[0] ** 2 + p1[1] ** 2]
    cross = p0[0] * p1[0] + p0[1] * p1[1]
    ce = 0.5 * (-math.log(p0[0]) - math.log(p1[1]))
    model = _TwoToken(jnp.asarray([[2.0, 0.0], [0.0, 1.0]]))
    tokens, labels = jnp.asarray([[0], [1]]), jnp.asarray([0, 1])
    # rho = 1: Y = X, so R = -mean_x sum_i p_x,i^2 exactly
    loss, aux = regularized_loss(
        model, tokens, labels, jax.random.key(0), gamma=0.5, rho=1.0, vocab_size=2, positions=-1
    )
    assert float(aux["penalty"]) == pytest.approx(-0.5 * (same[0] + same[1]), abs=1e-6)
    assert float(loss) == pytest.approx(ce - 0.25 * (same[0] + same[1]), abs=1e-6)
    # rho = 0.5: Y = X with prob 3/4 + 1/8 = 7/8; E[R] = -mean_x (7/8 same_x + 1/8 cross), averaged over keys
    keep = 0.75 + 0.25 / 2
    expected = -0.5 * (keep * (same[0] + same[1]) + (1 - keep) * 2 * cross)
    pen = jax.vmap(
        lambda k: regularized_loss(model, tokens, labels, k, gamma=1.0, rho=0.5, vocab_size=2, positions=-1)[
            1
        ]["penalty"]
    )(jax.random.split(jax.random.key(1), 40_000))
    se = float(jnp.std(pen)) / math.sqrt(pen.size)
    assert abs(float(jnp.mean(pen)) - expected) < 4 * se + 1e-6


def test_regularizer_gradient_matches_finite_differences():
    with jax.enable_x64(True):
        model = _tiny(jax.random.key(0))
        model = jax.tree_util.tree_map(
            lambda a: a.astype(jnp.float64) if eqx.is_inexact_array(a) else a, model
        )
        key = jax.random.key(3)
        params, static = eqx.partition(model, eqx.is_inexact_array)

        def loss(p, gamma):  # gamma traced: the extra pass always runs, one compilation serves both
            m = eqx.combine(p, static)
            kw = dict(rho=0.25, vocab_size=P, positions=-1, noise_mask=MASK)
            return regularized_loss(m, TOKENS, LABELS, key, gamma=gamma, **kw)[0]

        vg = jax.jit(jax.value_and_grad(loss))
        gam = jnp.float64(0.75)
        _, grads = vg(params, gam)
        leaves, treedef = jax.tree_util.tree_flatten(params)
        rng = np.random.default_rng(1)
        v = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(rng.standard_normal(x.shape)) for x in leaves])
        dot = lambda g: sum(
            float(jnp.vdot(a, b)) for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(v))
        )
        analytic = dot(grads)
        h = 1e-6
        shift = lambda s: jax.tree_util.tree_map(lambda p, d: p + s * d, params, v)
        numeric = (float(vg(shift(h), gam)[0]) - float(vg(shift(-h), gam)[0])) / (2 * h)
        assert abs(analytic - numeric) < 1e-6 * max(1.0, abs(numeric))
        # the regularizer really contributes: the directional derivative changes with gamma
        assert abs(dot(vg(params, jnp.float64(0.0))[1]) - analytic) > 1e-6


def _baseline_loss(model, batch, key):
    tokens, labels = batch
    logits = jax.vmap(lambda t: model(t, last_only=True))(tokens)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def test_gamma_zero_is_bitwise_baseline_and_last_only_exact():
    model = _tiny(jax.random.key(1))
    np.testing.assert_allclose(
        jax.vmap(lambda t: model(t, last_only=True))(TOKENS),
        jax.vmap(model)(TOKENS)[:, -1],
        rtol=1e-5,
        atol=1e-6,
    )
    opt = optax.adamw(1e-2, b1=0.9, b2=0.98, weight_decay=1.0)
    data = full_batch((TOKENS, LABELS))
    kw = dict(n_steps=3, key=jax.random.key(2), progress=False)
    base = fit(model, opt, _baseline_loss, data, **kw)
    zero = fit(model, opt, make_loss_fn(gamma=0.0, rho=0.25, positions=-1), data, has_aux=True, **kw)
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
    d = modular_addition(7, 0.4, jax.random.key(0))
    x = np.concatenate([d["train_x"], d["val_x"]])
    y = np.concatenate([d["train_y"], d["val_y"]])
    assert len(d["train_x"]) == round(0.4 * 49) and len(x) == 49
    assert len({(a, b) for a, b, _ in x}) == 49 and np.all(x[:, 2] == 7)
    np.testing.assert_array_equal(y, (x[:, 0] + x[:, 1]) % 7)
    text = python_reference_text()
    assert len(text) > 100_000 and "lambda" in text
    ds = char_dataset(text, max_chars=5000)
    assert "".join(ds["vocab"][i] for i in ds["train"][:50]) == text[:50]
    sp = sparse_parity(12, 3, 4000, 500, label_noise=0.1, key=jax.random.key(1))
    bits, s = sp["val_x"][:, :12], sp["secret"]
    np.testing.assert_array_equal(sp["val_y"], bits[:, s].sum(1) % 2)  # validation labels are clean
    clean = sp["train_x"][:, s].sum(1) % 2
    assert abs(np.mean(clean != sp["train_y"]) - 0.1) < 0.03 and np.all(sp["train_x"][:, 12] == 2)


def test_speedup_ci_by_hand():
    base = [100, 110, 90, 100, 105]
    half = [50, 55, 45, 50, 52]
    r = speedup_ci(base, half, 200)  # every seed reached: the median of the paired speedups 100(1 - m/b)
    assert r["headline"] == "paired" and r["test"] == "Wilcoxon"
    assert r["speedup_pct"] == pytest.approx(50.0) and r["excludes_zero"]
    assert r["ci_low"] <= 50.0 <= r["ci_high"] and r["ci_high"] - r["ci_low"] < 10
    same = speedup_ci(base, [110, 90, 105, 100, 100], 200)
    assert same["speedup_pct"] == pytest.approx(0.0) and not same["excludes_zero"]
    never = speedup_ci(base, [None] * 5, 200)  # censored at 200: restricted means 200 vs 101
    assert never["headline"] == "censored" and never["speedup_pct"] == pytest.approx(100 * (1 - 200 / 101))
