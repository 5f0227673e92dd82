"""fit(resume=True) continues only the same run: another learning rate, optimizer, key or loss is refused (it used
to continue silently), unless resume_changes=True; the same run still resumes bit-identically."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import ArrayLoader, fit

X = np.random.default_rng(0).normal(size=(32, 3))
Y = X @ np.array([[1.0], [-2.0], [0.5]])
DATA = ArrayLoader({"x": X, "y": Y}, 8, key=jax.random.key(5))


def _loss(m, b, k):
    return jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)


def _l1(m, b, k):
    return jnp.mean(jnp.abs(jax.vmap(m)(b["x"]) - b["y"]))


def _fit(ckpt, n_steps, *, opt=None, key=1, loss=_loss, resume=True, **kw):
    model = eqx.nn.Linear(3, 1, key=jax.random.key(0))
    return fit(
        model,
        opt or optax.adam(1e-2),
        loss,
        DATA,
        n_steps=n_steps,
        key=jax.random.key(key),
        checkpoint_dir=ckpt,
        checkpoint_every=5,
        resume=resume,
        progress=False,
        **kw,
    )


def test_resume_refuses_a_changed_optimizer_key_or_loss(tmp_path):
    ckpt = tmp_path / "ckpt"
    _fit(ckpt, 10, resume=False)
    for kw, what in (
        ({"opt": optax.adam(3e-2)}, "another optimizer or learning rate"),
        ({"key": 2}, "another PRNG key"),
        ({"loss": _l1}, "another loss_fn"),
    ):
        with pytest.raises(ValueError, match=what):
            _fit(ckpt, 20, **kw)
    # another kind of optimizer: its state does not even match the checkpoint's structure
    from jaxkit.train import CheckpointError

    with pytest.raises(CheckpointError, match="expected structure"):
        _fit(ckpt, 20, opt=optax.sgd(1e-2))
    # the explicit opt-in continues from the checkpoint with the new learning rate
    res = _fit(ckpt, 20, opt=optax.adam(3e-2), resume_changes=True)
    assert res.resumed_from == 10 and res.step == 20
    # the same run resumes and ends where an uninterrupted run ends
    ckpt2 = tmp_path / "ckpt2"
    _fit(ckpt2, 10, resume=False)
    resumed = _fit(ckpt2, 20)
    straight = _fit(tmp_path / "ckpt3", 20, resume=False)
    assert resumed.resumed_from == 10
    np.testing.assert_array_equal(np.asarray(resumed.model.weight), np.asarray(straight.model.weight))
