"""FNO/RNO models: Flax <-> Equinox agreement, zero-shot super-resolution, parameter matching, training recipe."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from jaxkit.operators import (
    FNO,
    RNO,
    FlaxRNO,
    GaussianNormalizer,
    count_params,
    fno_optimizer,
    from_flax,
    relative_l2,
    to_flax,
    train_ensemble,
    train_operator,
)


def smooth_pairs(n, s, seed=0):
    """u ↦ u' on periodic band-limited data (an operator both models can learn)."""
    rng = np.random.default_rng(seed)
    q = np.arange(1, 6)
    c = rng.normal(size=(n, 5)) / q
    p = rng.uniform(0, 2 * np.pi, (n, 5))
    x = np.arange(s) / s
    arg = 2 * np.pi * q[None, :, None] * x + p[:, :, None]
    u = np.sum(c[:, :, None] * np.sin(arg), 1)[:, None]
    du = np.sum(c[:, :, None] * q[None, :, None] * np.cos(arg), 1)[:, None]
    return u.astype(np.float32), du.astype(np.float32)


@pytest.mark.parametrize("kind", ["fno-1d", "rno-2d-instance-padded"])
def test_flax_and_equinox_models_agree_both_ways(kind):
    key = jax.random.key(0)
    if kind == "fno-1d":
        model = FNO(2, 1, 5, 8, 2, proj_hidden=16, key=key)
        x = jax.random.normal(key, (2, 16))
    else:
        model = RNO(
            2,
            3,
            (4, 3),
            8,
            2,
            proj_hidden=16,
            norm="instance",
            padding=0.2,
            endpoint=True,
            order=2,
            per_mode=True,
            key=key,
        )
        x = jax.random.normal(key, (2, 12, 10))
    fmodel = to_flax(model)
    ecall = eqx.filter_jit(lambda m, x: m(x))
    fcall = nnx.jit(lambda m, x: m(x))
    np.testing.assert_allclose(np.asarray(fcall(fmodel, x)), np.asarray(ecall(model, x)), atol=1e-6)
    # change the NNX weights, convert back: the Equinox model follows (and differs from the original)
    leaf = fmodel.blocks[0]["spectral"].weight_re
    leaf[...] = leaf[...] + 0.5
    back = from_flax(fmodel)
    np.testing.assert_allclose(np.asarray(ecall(back, x)), np.asarray(fcall(fmodel, x)), atol=1e-6)
    assert float(jnp.abs(ecall(back, x) - ecall(model, x)).max()) > 1e-3
    # NNX constructor with rngs initializes like the Equinox one with the same key
    f2 = FlaxRNO(2, 1, 4, 8, 2, proj_hidden=16, rngs=nnx.Rngs(params=3))
    e2 = RNO(2, 1, 4, 8, 2, proj_hidden=16, key=nnx.Rngs(params=3).params())
    z = jax.random.normal(key, (2, 16))
    np.testing.assert_allclose(np.asarray(fcall(f2, z)), np.asarray(ecall(e2, z)), atol=1e-6)


@pytest.fixture(scope="module")
def trained():
    x, y = smooth_pairs(48, 32)
    res = train_operator(
        RNO(1, 1, 6, 12, 2, proj_hidden=16, key=jax.random.key(0)),
        x[:40],
        y[:40],
        epochs=12,
        batch_size=8,
        step_epochs=6,
        key=jax.random.key(1),
        progress=False,
    )
    return res, x, y


def test_training_reduces_error_and_super_resolves(trained):
    res, x, y = trained
    losses = [h["loss"] for h in res.history]
    assert losses[-1] < 0.6 * losses[0]
    err = res.evaluate(x[40:], y[40:])["rel_l2"]
    assert err < 0.5
    # zero-shot at 2x: same test functions on a twice finer grid, no retraining
    x2, y2 = smooth_pairs(48, 64)
    np.testing.assert_allclose(x2[..., ::2], x, atol=1e-5)
    p1 = res.predict(x[40:])
    p2 = res.predict(x2[40:])
    assert p2.shape == y2[40:].shape and np.all(np.isfinite(p2))
    err2 = res.evaluate(x2[40:], y2[40:])["rel_l2"]
    gap = float(relative_l2(jnp.asarray(p2[..., ::2]), jnp.asarray(p1)))
    print(f"rel-L2 at n={x.shape[-1]}: {err:.4f}, at 2n: {err2:.4f}, n-vs-2n prediction gap: {gap:.2e}")
    assert err2 < 1.5 * err + 0.05 and gap < 0.2


def test_matched_parameter_counts_and_reference_count():
    key = jax.random.key(0)
    # the FNO-1d of Li et al. (modes 16, width 64) has 549,569 parameters in the authors' code
    shapes = lambda cls, *a, **k: eqx.filter_eval_shape(cls, *a, key=key, **k)  # no weights materialised
    assert count_params(shapes(FNO, 1, 1, 16, 64, proj_hidden=128)) == 549_569
    assert count_params(FNO(1, 1, 3, 4, 1, proj_hidden=4, key=key)) == count_params(
        shapes(FNO, 1, 1, 3, 4, 1, proj_hidden=4)
    )
    for modes, width in [
        ((16,), 64),
        ((12, 12), 32),
        ((6, 6), 16),
        ((4, 8), 16),
        ((12,), 16),
        ((8, 3, 3), 16),
    ]:
        f = count_params(shapes(FNO, 1, 1, modes, width))
        r = count_params(shapes(RNO, 1, 1, modes, width))
        assert 1.0 < r / f < 1.10, (modes, width, f, r)


def test_ensemble_members_follow_their_single_runs(tmp_path):
    x, y = smooth_pairs(24, 16, seed=3)
    keys = jax.random.split(jax.random.key(5), 2)
    make = lambda k: FNO(1, 1, 4, 6, 2, proj_hidden=8, key=k)
    kw = dict(batch_size=8, step_epochs=2, progress=False)
    ens = train_ensemble(make, keys, x, y, epochs=3, **kw)
    for i in range(2):  # member i = train_operator from make(split(keys[i])[0]) with key=keys[i]
        single = train_operator(
            make(jax.random.split(keys[i])[0]), x, y, epochs=3, key=keys[i], mesh=None, **kw
        )
        np.testing.assert_allclose(ens[i].predict(x), single.predict(x), atol=2e-5)
        assert [h["step"] for h in ens[i].history] == [h["step"] for h in single.history] == [3, 6, 9]
        np.testing.assert_allclose(
            [h["loss"] for h in ens[i].history], [h["loss"] for h in single.history], rtol=1e-5
        )
    assert np.abs(ens[0].predict(x) - ens[1].predict(x)).max() > 1e-3
    # checkpoint after 2 epochs, resume to 3: the same members and history as the uninterrupted run
    train_ensemble(make, keys, x, y, epochs=2, checkpoint_dir=tmp_path, **kw)
    res = train_ensemble(make, keys, x, y, epochs=3, checkpoint_dir=tmp_path, resume=True, **kw)
    for a, b in zip(res, ens):
        np.testing.assert_array_equal(a.predict(x), b.predict(x))
        assert a.history == b.history


def test_normalizer_optimizer_and_loss_against_definitions():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(50, 2, 7)).astype(np.float32)
    n = GaussianNormalizer.fit(x)
    z = np.asarray(jax.vmap(n.encode)(jnp.asarray(x)))
    np.testing.assert_allclose(z.mean(axis=(0, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(z.std(axis=(0, 2)), 1, atol=1e-3)
    np.testing.assert_allclose(np.asarray(jax.vmap(n.decode)(jnp.asarray(z))), x, atol=1e-5)
    p, t = rng.normal(size=(4, 3, 5)), rng.normal(size=(4, 3, 5))
    ref = np.mean([np.linalg.norm(p[i] - t[i]) / np.linalg.norm(t[i]) for i in range(4)])
    np.testing.assert_allclose(float(relative_l2(jnp.asarray(p), jnp.asarray(t))), ref, rtol=1e-5)
    # Adam's first update has magnitude lr; the staircase halves it after step_every steps
    opt = fno_optimizer(1e-2, 0.0, step_every=3, gamma=0.5)
    w = jnp.zeros(3)
    state = opt.init(w)
    sizes = []
    for _ in range(6):
        upd, state = opt.update(jnp.ones(3), state, w)
        w = optax.apply_updates(w, upd)
        sizes.append(float(jnp.abs(upd).max()))
    np.testing.assert_allclose(sizes, [1e-2] * 3 + [5e-3] * 3, rtol=1e-3)


def test_model_bad_input_raises_clear_errors():
    m = RNO(2, 1, (4, 4), 8, 2, key=jax.random.key(0))
    with pytest.raises(ValueError, match="spatial axes"):
        m(jnp.ones((4, 2, 16, 16)))  # a batch passed without vmap
    with pytest.raises(ValueError, match="input channels"):
        m(jnp.ones((3, 16, 16)))
    with pytest.raises(ValueError, match="below twice the number of modes"):
        m(jnp.ones((2, 16, 7)))
    with pytest.raises(TypeError, match="real"):
        m(jnp.ones((2, 16, 16), jnp.complex64))
    with pytest.raises(ValueError, match="y_train"):
        train_operator(m, np.ones((4, 2, 16, 16)), np.ones((3, 1, 16, 16)), epochs=1, key=jax.random.key(0))
    with pytest.raises(ValueError, match="x_train"):
        train_operator(
            m, np.full((4, 2, 16, 16), np.nan), np.ones((4, 1, 16, 16)), epochs=1, key=jax.random.key(0)
        )
