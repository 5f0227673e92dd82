"""Bad inputs to jaxkit.train's public entry points (loaders, EMA, sharding helpers, checkpoint files) give a clear
error naming the argument: NaN/inf data, wrong dtypes, negative steps, non-keys, non-meshes (issue 20)."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import (
    ArrayLoader,
    CheckpointManager,
    data_mesh,
    full_batch,
    read_ema,
    replicate,
    save_checkpoint,
    shard_batch,
    track_ema,
    write_checked_bytes,
)

KEY = jax.random.key(0)

CASES = [
    (
        "loader NaN",
        lambda: ArrayLoader({"x": np.array([[1.0], [np.nan]])}, 1, key=KEY),
        ValueError,
        r"arrays\['x'\]: expected finite",
    ),
    (
        "loader inf",
        lambda: ArrayLoader((np.ones(3), np.array([0, np.inf, 0])), 1, key=KEY),
        ValueError,
        r"arrays\[1\]: expected finite",
    ),
    ("loader strings", lambda: ArrayLoader({"x": np.array(["a", "b"])}, 1, key=KEY), TypeError, "numeric"),
    (
        "loader empty",
        lambda: ArrayLoader({"x": np.zeros((0, 2))}, 1, key=KEY),
        ValueError,
        "batch_size|sample",
    ),
    ("loader key", lambda: ArrayLoader({"x": np.ones(4)}, 2, key=0), TypeError, "key"),
    ("loader step<0", lambda: ArrayLoader({"x": np.ones(4)}, 2, key=KEY)(-1), ValueError, "step"),
    ("loader step float", lambda: ArrayLoader({"x": np.ones(4)}, 2, key=KEY)(1.5), TypeError, "step"),
    ("full_batch NaN", lambda: full_batch({"x": np.array([np.nan])}), ValueError, "expected finite"),
    ("full_batch empty", lambda: full_batch({}), ValueError, "empty"),
    ("ema decay nan", lambda: track_ema(float("nan")), ValueError, "decay"),
    ("ema decay 1", lambda: track_ema(1.0), ValueError, "decay"),
    (
        "read_ema decay",
        lambda: read_ema(optax.chain(track_ema(0.9)).init({"w": jnp.ones(2)}), 2.0),
        ValueError,
        "decay",
    ),
    ("mesh n float", lambda: data_mesh(1.5), TypeError, "n_devices"),
    ("mesh n 0", lambda: data_mesh(0), ValueError, "n_devices"),
    ("replicate no mesh", lambda: replicate({"w": jnp.ones(2)}, "cpu"), TypeError, "mesh"),
    (
        "shard axis",
        lambda: shard_batch({"x": np.ones((2, 1))}, data_mesh(1), axis="model"),
        ValueError,
        "axis",
    ),
    ("shard scalar", lambda: shard_batch({"x": np.array(1.0)}, data_mesh(1)), ValueError, "scalar"),
    (
        "checkpoint str leaf",
        lambda: save_checkpoint("/nonexistent/never", {"a": np.array(["s"])}),
        TypeError,
        r"leaf \['a'\] has dtype",
    ),
    (
        "checked bytes str",
        lambda: write_checked_bytes("/nonexistent/never", "text", kind="x"),
        TypeError,
        "bytes",
    ),
    ("manager keep bool", lambda: CheckpointManager("/tmp", keep=True), ValueError, "keep"),
]


@pytest.mark.parametrize(("call", "exc", "match"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_reported(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_loader_accepts_numpy_and_jax_alike():
    """(A Python list inside the data pytree is pytree structure, not an array: pass arrays.)"""
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    batches = [ArrayLoader({"x": a}, 2, key=KEY)(3)["x"] for a in (x, x.astype(np.float32), jnp.asarray(x))]
    for b in batches[1:]:
        np.testing.assert_array_equal(b, batches[0])
    assert (
        ArrayLoader({"x": np.arange(4)}, 2, key=KEY)(0)["x"].dtype.kind == "i"
    )  # integer data stays integer


def test_checkpoint_into_a_structure_with_other_names_fails(tmp_path):
    """Same number, shapes and dtypes of leaves but other names (or the order of two same-shape leaves swapped):
    used to load silently into the wrong leaves."""
    from jaxkit.train import CheckpointError, load_checkpoint

    p = save_checkpoint(tmp_path / "c", {"a": jnp.arange(3.0), "b": jnp.zeros(3)}, {"step": 1})
    tree, meta = load_checkpoint(p, {"a": jnp.ones(3), "b": jnp.ones(3)})
    np.testing.assert_array_equal(np.asarray(tree["a"]), [0.0, 1.0, 2.0])
    assert meta == {"step": 1}
    with pytest.raises(
        CheckpointError, match=r"like: leaf 0 is \"\['a'\]\" in the checkpoint but \"\['v'\]\""
    ):
        load_checkpoint(p, {"v": jnp.ones(3), "w": jnp.ones(3)})
    with pytest.raises(TypeError, match="metadata"):  # (under the suite's beartype hook, its message)
        save_checkpoint(tmp_path / "d", {"a": jnp.ones(2)}, [1, 2])


def test_fit_refuses_a_checkpoint_dir_that_is_a_file_before_any_work(tmp_path):
    """Fresh probe (2026-12-06): a file as checkpoint_dir gave a bare NotADirectoryError; the file is kept."""
    from jaxkit.train import fit

    f = tmp_path / "notes.txt"
    f.write_text("mine")
    model = {"w": jnp.ones(2)}

    def loss_fn(m, batch, key):
        return jnp.sum(m["w"] ** 2)

    for bad in (f, f / "sub"):
        with pytest.raises(ValueError, match=r"checkpoint_dir: expected a folder .* is a file"):
            fit(model, optax.sgd(0.1), loss_fn, lambda step: None, n_steps=2, key=KEY, checkpoint_dir=bad)
    assert f.read_text() == "mine"
    res = fit(model, optax.sgd(0.1), loss_fn, lambda step: None, n_steps=2, key=KEY,
              checkpoint_dir=tmp_path / "new" / "ckpt", progress=False)  # fmt: skip
    assert res.step == 2


def test_checkpoint_into_a_like_of_other_shapes_names_like(tmp_path):
    """A fresh probe: a shape or dtype mismatch against ``like`` did not name ``like``."""
    from jaxkit.train import CheckpointError, load_checkpoint

    p = save_checkpoint(tmp_path / "c", {"w": jnp.zeros(3)}, {})
    with pytest.raises(
        CheckpointError, match=r"has shape \(3,\), expected \(4,\) \(the shape of that leaf of like\)"
    ):
        load_checkpoint(p, {"w": jnp.ones(4)})
    with pytest.raises(CheckpointError, match=r"expected int32 \(the dtype of that leaf of like\)"):
        load_checkpoint(p, {"w": jnp.ones(3, jnp.int32)})
