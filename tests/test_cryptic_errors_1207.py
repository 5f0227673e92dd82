"""Bad arguments found by a probe: each is refused up front, naming the argument (not a raw error from inside)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def test_linear_scan_accepts_numpy_inputs_with_h0():
    from jaxkit.kernels.linear_scan import linear_scan, linear_scan_reference

    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 0.9, (2, 8, 4)).astype(np.float32)
    b = rng.normal(size=(2, 8, 4)).astype(np.float32)
    h0 = rng.normal(size=(2, 4)).astype(np.float32)
    for fn in (linear_scan, linear_scan_reference):
        for reverse in (False, True):
            got = fn(a, b, h0, reverse=reverse)
            want = fn(jnp.asarray(a), jnp.asarray(b), jnp.asarray(h0), reverse=reverse)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(ValueError, match="h0"):
        linear_scan(a, b, np.ones((3, 4), np.float32))


def test_gaussian_normalizer_refuses_wrong_channel_count():
    from jaxkit.operators import GaussianNormalizer

    norm = GaussianNormalizer.fit(np.random.default_rng(0).random((4, 2, 8)))
    with pytest.raises(
        ValueError, match=r"x: expected shape \(2, \*grid\) with 2 channels.*received \(3, 8\)"
    ):
        norm.encode(jnp.ones((3, 8)))
    with pytest.raises(ValueError, match=r"x: expected shape \(2, \*grid\)"):
        norm.decode(jnp.ones((3, 8)))
    assert norm.encode(jnp.ones((2, 16))).shape == (2, 16)  # another resolution of the same grid rank


def test_stacked_batches_refuses_mismatched_xs_ys():
    from jaxkit.stability import stacked_batches

    with pytest.raises(ValueError, match=r"ys: expected leading shape \(2, 10\).*xs \(2, 10, 1\).*\(2, 9\)"):
        stacked_batches(np.zeros((2, 10, 1)), np.zeros((2, 9)), None, 0)
    with pytest.raises(ValueError, match="xs: expected shape"):
        stacked_batches(np.zeros((10,)), np.zeros((2, 10)), None, 0)


def test_embedding_stability_refuses_a_plain_function():
    from jaxkit.stability import embedding_stability

    tokens = jnp.zeros((2, 4), jnp.int32)
    with pytest.raises(TypeError, match="model: expected a model with embed.*from_embeddings.*function"):
        embedding_stability(lambda t: t, tokens, jax.random.key(0), rho=0.5)


def test_endpoint_from_dict_names_missing_and_unknown_keys():
    from jaxkit.evaluation import endpoint_from_dict

    with pytest.raises(
        ValueError, match=r"d: .*missing keys \['method', 'comparator', 'test', 'direction'\]"
    ):
        endpoint_from_dict({"kind": "paired", "metric": "m"})
    with pytest.raises(ValueError, match=r"d: .*unknown keys \['notes'\]"):
        endpoint_from_dict({"kind": "tolerance", "tolerances": {"x": 0.1}, "notes": "x"})


def test_full_batch_refuses_different_leading_sizes():
    from jaxkit.train import full_batch

    data = {"x": np.ones((32, 2), np.float32), "y": np.ones((31,), np.float32)}
    with pytest.raises(
        ValueError, match=r"arrays\['y'\]: expected the leading \(sample\) size 32 of arrays\['x'\]"
    ):
        full_batch(data)


def test_checkpoint_manager_refuses_a_file_as_directory(tmp_path):
    from jaxkit.train import CheckpointManager

    user = tmp_path / "user.txt"
    user.write_text("keep me")
    with pytest.raises(ValueError, match="directory: expected a folder .* is a file"):
        CheckpointManager(user).save(1, {"w": jnp.ones(3)})
    assert user.is_file() and user.read_text() == "keep me"


def test_make_dataset_refuses_a_file_as_cache_dir(tmp_path):
    from jaxkit.pde import make_dataset

    user = tmp_path / "cache.txt"
    user.write_text("keep me")
    with pytest.raises(ValueError, match="cache_dir: expected a folder .* is a file"):
        make_dataset("burgers", n_train=1, n_test=0, resolution=256, cache_dir=user, progress=False)
    assert user.is_file() and user.read_text() == "keep me"


def test_load_ligand_empty_file_raises_structure_error(tmp_path):
    from jaxkit.docking import StructureError, load_ligand

    empty = tmp_path / "empty.sdf"
    empty.write_bytes(b"")
    with pytest.raises(StructureError, match="empty.sdf is empty"):
        load_ligand(empty)


def test_train_forecaster_names_the_window_entry_with_the_wrong_count():
    from jaxkit.forecast import AttentionNet, ar1_windows, make_forecaster, train_forecaster

    model = make_forecaster(
        n_assets=3, history=2, horizon=2, n_macro=2, n_signals=1, scale=np.full(3, 0.02),
        denoiser=AttentionNet(channels=8, layers=1, heads=2), diffusion_steps=20, key=jax.random.key(0),
    )  # fmt: skip
    win = ar1_windows(8, 2, 2, 0.5, np.eye(3), seed=0)
    win = dict(win, macro=np.zeros((8, 2)), signals=np.zeros((8, 3, 1)))
    win["target"] = win["target"][:7]
    with pytest.raises(
        ValueError, match=r"windows\['target'\]: expected 8 windows .*windows\['history'\].*7"
    ):
        train_forecaster(model, win, n_steps=1, batch_size=4, key=jax.random.key(0), progress=False)


def test_operators_mse_of_empty_arrays_is_refused_not_nan():
    """Fresh probe O21: mse of two (0, 3) arrays returned nan (relative_l2 refuses the same input)."""
    import jax.numpy as jnp

    from jaxkit.operators import mse

    with pytest.raises(ValueError, match="pred: expected at least one entry"):
        mse(jnp.zeros((0, 3)), jnp.zeros((0, 3)))
    assert float(mse(jnp.ones((2, 3)), jnp.zeros((2, 3)))) == 1.0


def test_atomic_writers_never_replace_a_users_file():
    """Fresh probes T28, M18: atomic_write_bytes and write_checked_bytes replaced an existing file of the user's
    without a word. Now an existing path needs overwrite=True, and write_checked_bytes replaces only its own
    file of the same kind even then."""
    import tempfile
    from pathlib import Path

    from jaxkit.train import atomic_write_bytes, read_checked_bytes, write_checked_bytes

    d = Path(tempfile.mkdtemp())
    user = d / "user.txt"
    user.write_text("precious")
    with pytest.raises(ValueError, match="path: .* exists; pass overwrite=True"):
        atomic_write_bytes(user, b"x")
    with pytest.raises(ValueError, match="path: .* exists; pass overwrite=True"):
        write_checked_bytes(user, b"x", kind="stage")
    with pytest.raises(ValueError, match="not a 'stage' file written by write_checked_bytes"):
        write_checked_bytes(user, b"x", kind="stage", overwrite=True)
    assert user.read_text() == "precious"
    blob = d / "blob.jkx"
    write_checked_bytes(blob, b"1", kind="stage")
    write_checked_bytes(blob, b"2", kind="stage", overwrite=True)
    assert read_checked_bytes(blob, kind="stage")[0] == b"2"
    with pytest.raises(ValueError, match="it holds a 'stage' file"):
        write_checked_bytes(blob, b"3", kind="manifest", overwrite=True)
    atomic_write_bytes(user, b"new", overwrite=True)
    assert user.read_text() == "new"
