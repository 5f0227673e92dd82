"""Checkpoints: round trip, damage detection naming the file, no loss of earlier checkpoints, SIGKILL + resume."""

import json
import os
import signal
import subprocess
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxkit.train import CheckpointError, CheckpointManager, load_checkpoint, save_checkpoint


def _tree():
    params = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3, jnp.float32)}
    opt_state = optax.adam(1e-3).init(params)
    return {"params": params, "opt_state": opt_state, "key": jax.random.key(7)}


def test_round_trip_preserves_values_dtypes_and_keys(tmp_path):
    tree = _tree()
    path = save_checkpoint(tmp_path / "c.jkc", tree, {"step": 3, "history": [{"loss": 0.5}]})
    like = jax.tree_util.tree_map(jnp.zeros_like, {k: v for k, v in tree.items() if k != "key"})
    like["key"] = jax.random.key(0)
    loaded, meta = load_checkpoint(path, like)
    assert meta == {"step": 3, "history": [{"loss": 0.5}]}
    for a, b in zip(jax.tree_util.tree_leaves(tree["params"]), jax.tree_util.tree_leaves(loaded["params"])):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert a.dtype == b.dtype
    np.testing.assert_array_equal(
        np.asarray(jax.random.key_data(loaded["key"])), np.asarray(jax.random.key_data(tree["key"]))
    )
    np.testing.assert_array_equal(jax.random.normal(loaded["key"], (4,)), jax.random.normal(tree["key"], (4,)))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_damaged_checkpoint_raises_naming_file_and_keeps_older(tmp_path, damage):
    mgr = CheckpointManager(tmp_path, keep=3)
    tree = _tree()
    mgr.save(10, tree)
    p20 = mgr.save(20, tree)
    raw = p20.read_bytes()
    if damage == "truncate":
        p20.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        b = bytearray(raw)
        b[-10] ^= 0xFF
        p20.write_bytes(bytes(b))
    else:
        p20.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match=str(p20.name)):
        mgr.restore(tree)
    # the earlier checkpoint is still there and intact
    assert mgr.steps() == [10, 20]
    restored, meta = mgr.restore(tree, step=10)
    assert meta["step"] == 10
    np.testing.assert_array_equal(restored["params"]["w"], tree["params"]["w"])


def test_structure_mismatch_is_reported(tmp_path):
    p = save_checkpoint(tmp_path / "c.jkc", {"a": jnp.ones(3)})
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(p, {"a": jnp.ones(4)})
    with pytest.raises(CheckpointError, match="arrays"):
        load_checkpoint(p, {"a": jnp.ones(3), "b": jnp.ones(1)})


def test_manager_prunes_only_after_writing(tmp_path):
    mgr = CheckpointManager(tmp_path, keep=2)
    for s in (1, 2, 3, 4):
        mgr.save(s, {"x": jnp.full(2, float(s))})
    assert mgr.steps() == [3, 4]
    assert not list(tmp_path.glob("*.tmp"))


TRAIN_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    import jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx
    from jaxkit.train import ArrayLoader, fit

    ckpt_dir, out, slow = sys.argv[1], sys.argv[2], float(sys.argv[3])
    kx, ky, km = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, (64, 3))
    y = jnp.sin(x @ jnp.array([1.0, -2.0, 0.5]))[:, None]
    model = eqx.nn.MLP(3, 1, 16, 2, key=km)
    loader = ArrayLoader({"x": x, "y": y}, 8, key=jax.random.key(1))

    def loss(m, b, k):
        noise = 0.01 * jax.random.normal(k, b["y"].shape)   # uses the per-step key
        return jnp.mean((jax.vmap(m)(b["x"]) - b["y"] - noise) ** 2)

    def eval_fn(m):
        return {"val_loss": jnp.mean((jax.vmap(m)(x) - y) ** 2)}

    res = fit(model, optax.adam(3e-3), loss, loader, n_steps=60, key=jax.random.key(2), eval_fn=eval_fn,
              eval_every=10, log_every=5, checkpoint_dir=ckpt_dir, checkpoint_every=5, resume=True,
              progress=False, callback=lambda s, r: time.sleep(slow))
    leaves = [np.asarray(l).tolist() for l in jax.tree_util.tree_leaves(eqx.filter(res.model, eqx.is_array))]
    json.dump({"leaves": leaves, "history": res.history, "resumed_from": res.resumed_from}, open(out, "w"))
    """
)


def test_sigkill_then_resume_is_bit_identical(tmp_path, subprocess_env, python):
    script = tmp_path / "train.py"
    script.write_text(TRAIN_SCRIPT)
    # uninterrupted reference run
    ref_out = tmp_path / "ref.json"
    subprocess.run([python, str(script), str(tmp_path / "ref_ckpt"), str(ref_out), "0"], check=True,
                   env=subprocess_env, timeout=300)
    # interrupted run: SIGKILL once a mid-run checkpoint exists
    ck = tmp_path / "ckpt"
    out = tmp_path / "run.json"
    proc = subprocess.Popen([python, str(script), str(ck), str(out), "0.05"], env=subprocess_env)
    mgr = CheckpointManager(ck)
    deadline = time.time() + 240
    while time.time() < deadline:
        steps = mgr.steps()
        if steps and steps[-1] >= 20:
            break
        if proc.poll() is not None:
            pytest.fail("training subprocess ended before it could be killed")
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    killed_at = mgr.steps()[-1]
    assert 20 <= killed_at < 60
    # resume to the end
    subprocess.run([python, str(script), str(ck), str(out), "0"], check=True, env=subprocess_env, timeout=300)
    ref, got = json.loads(ref_out.read_text()), json.loads(out.read_text())
    assert got["resumed_from"] is not None and got["resumed_from"] >= 20
    assert ref["resumed_from"] is None
    assert got["history"] == ref["history"]          # exact float equality of every logged metric
    assert got["leaves"] == ref["leaves"]            # bit-identical final parameters
