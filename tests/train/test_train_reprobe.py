"""Cases a fresh set of bad-input probes found destructive, cryptic or unbounded in jaxkit.train."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import ArrayLoader, fit, full_batch, load_checkpoint, save_checkpoint


def test_save_checkpoint_never_replaces_a_file_or_a_users_folder(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("user data")
    with pytest.raises(FileExistsError, match="path: .* is not a jaxkit checkpoint folder"):
        save_checkpoint(notes, {"a": jnp.ones(2)})
    assert notes.read_text() == "user data"  # (was moved aside and deleted, a checkpoint in its place)
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "x.csv").write_text("1,2")
    with pytest.raises(FileExistsError, match="not a jaxkit checkpoint folder"):
        save_checkpoint(folder, {"a": jnp.ones(2)})
    assert (folder / "x.csv").read_text() == "1,2" and sorted(p.name for p in folder.iterdir()) == ["x.csv"]
    # an existing checkpoint is replaced with overwrite=True (issue 49), and an empty folder may be used
    ck = tmp_path / "ck"
    save_checkpoint(ck, {"a": jnp.ones(2)})
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        save_checkpoint(ck, {"a": jnp.full(2, 3.0)})
    save_checkpoint(ck, {"a": jnp.full(2, 3.0)}, overwrite=True)
    np.testing.assert_array_equal(np.asarray(load_checkpoint(ck, {"a": jnp.zeros(2)})[0]["a"]), [3.0, 3.0])
    empty = tmp_path / "empty"
    empty.mkdir()
    save_checkpoint(empty, {"a": jnp.ones(2)})
    np.testing.assert_array_equal(np.asarray(load_checkpoint(empty, {"a": jnp.zeros(2)})[0]["a"]), [1.0, 1.0])


def test_loader_scalar_leaf_and_unreachable_step_are_named():
    with pytest.raises(ValueError, match="arrays: every leaf needs a leading"):
        ArrayLoader({"x": np.float32(1.0)}, 1, key=jax.random.key(0))
    loader = ArrayLoader({"x": np.ones((8, 2), np.float32)}, 2, key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"step: expected a step within 2\*\*32 epochs"):
        loader(10**15)
    assert loader(4 * (2**32 - 1))["x"].shape == (2, 2)  # the last reachable epoch still works


def test_eval_fn_returning_a_non_dict_is_named():
    model = eqx.nn.Linear(2, 1, key=jax.random.key(0))
    data = full_batch({"x": np.ones((4, 2), np.float32)})
    loss = lambda m, b, k: jnp.mean(jax.vmap(m)(b["x"]) ** 2)
    with pytest.raises(TypeError, match="eval_fn: expected a dict of metric name -> float"):
        fit(model, optax.sgd(0.1), loss, data, n_steps=2, key=jax.random.key(1), eval_fn=lambda m: 1.0,
            eval_every=1, progress=False)  # fmt: skip


def test_global_norm_of_a_non_finite_leaf_is_non_finite_and_documented():
    """Fresh probe: global_norm returns NaN/inf for a NaN/inf leaf. That is the propagation a training loop needs
    to see divergence (as optax.global_norm), so it is a documented exception: the docstring and
    docs/contracts.md say so."""
    from jaxkit.train import global_norm

    tree = {"w": jnp.array([[3.0, 0.0], [0.0, 4.0]]), "b": jnp.array([12.0]), "step": 7}
    assert float(global_norm(tree)) == pytest.approx(13.0)  # integer leaves are not parameters
    for bad, expected in ((np.nan, np.isnan), (np.inf, np.isposinf), (-np.inf, np.isposinf)):
        t = {**tree, "b": jnp.array([bad])}
        assert expected(float(global_norm(t)))
        assert expected(float(optax.global_norm({"w": t["w"], "b": t["b"]})))
    assert "non-finite leaf gives a non-finite norm" in global_norm.__doc__


def test_full_batch_refuses_empty_data():
    """Before (fresh probe t25/t27): full_batch({'x': ones((0, 2))}) was accepted and `fit` then stopped with
    "training loss is nan ... lower the learning rate", which blames the wrong cause."""
    from jaxkit.train import full_batch

    for data in ({"x": jnp.ones((0, 2))}, (jnp.ones((4, 2)), jnp.ones((0,)))):
        with pytest.raises(ValueError, match=r"arrays: expected non-empty arrays .* shape \(0,"):
            full_batch(data)
    batch = {"x": jnp.ones((3, 2))}
    assert full_batch(batch)(7)["x"].shape == (3, 2)
