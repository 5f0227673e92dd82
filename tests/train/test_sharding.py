"""Data parallelism on 8 host devices (subprocess) equals the single-device step; multi-process on loopback."""

import json
import socket
import subprocess
import textwrap

import pytest

STEP_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx
    from jaxkit.train import data_mesh
    from jaxkit.train import fit
    from jaxkit.train import full_batch
    from jaxkit.train import make_train_step
    from jaxkit.train import replicate
    from jaxkit.train import shard_batch

    assert jax.device_count() == 8, jax.devices()
    kx, km = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (32, 5))
    y = jnp.tanh(x @ jnp.arange(1.0, 6.0))[:, None]
    model = eqx.nn.MLP(5, 1, 32, 2, key=km)
    opt = optax.adam(1e-2)
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    step = make_train_step(loss, opt)
    params = eqx.filter(model, eqx.is_inexact_array)
    batch = {"x": x, "y": y}

    single, _, l1, _ = step(model, opt.init(params), batch, jax.random.key(1))

    mesh = data_mesh()
    sb = shard_batch(batch, mesh)
    assert len(sb["x"].sharding.device_set) == 8
    assert sb["x"].addressable_shards[0].data.shape == (4, 5)
    sharded, _, l8, _ = step(replicate(model, mesh), replicate(opt.init(params), mesh), sb, jax.random.key(1))

    diffs = [float(jnp.max(jnp.abs(a - b))) for a, b in
             zip(jax.tree_util.tree_leaves(eqx.filter(single, eqx.is_array)),
                 jax.tree_util.tree_leaves(eqx.filter(sharded, eqx.is_array)))]
    # the whole fit loop on the mesh, 5 steps
    r1 = fit(model, opt, loss, full_batch(batch), n_steps=5, key=jax.random.key(1), progress=False)
    r8 = fit(model, opt, loss, full_batch(batch), n_steps=5, key=jax.random.key(1), progress=False, mesh=mesh)
    fit_diff = max(float(jnp.max(jnp.abs(a - b))) for a, b in
                   zip(jax.tree_util.tree_leaves(eqx.filter(r1.model, eqx.is_array)),
                       jax.tree_util.tree_leaves(eqx.filter(r8.model, eqx.is_array))))
    # an FNO (its forward concatenates grid coordinates, an unsharded array, to the sharded batch)
    from jaxkit.operators import FNO, relative_l2
    fno = FNO(1, 1, 4, 8, 2, key=jax.random.key(3))
    fb = (jax.random.normal(jax.random.key(4), (8, 1, 16)), jax.random.normal(jax.random.key(5), (8, 1, 16)))
    fopt = optax.adam(1e-2)
    fstep = make_train_step(lambda m, b, k: relative_l2(jax.vmap(m)(b[0]), b[1]), fopt)
    fparams = eqx.filter(fno, eqx.is_inexact_array)
    f1, _, fl1, _ = fstep(fno, fopt.init(fparams), fb, jax.random.key(1))
    f8, _, fl8, _ = fstep(replicate(fno, mesh), replicate(fopt.init(fparams), mesh), shard_batch(fb, mesh),
                          jax.random.key(1))
    fno_diff = max(float(jnp.max(jnp.abs(a - b))) for a, b in
                   zip(jax.tree_util.tree_leaves(eqx.filter(f1, eqx.is_array)),
                       jax.tree_util.tree_leaves(eqx.filter(f8, eqx.is_array))))
    try:
        shard_batch({"x": x[:30]}, mesh)
        err = None
    except ValueError as e:
        err = str(e)
    json.dump({"max_diff": max(diffs), "loss_diff": abs(float(l1) - float(l8)), "fit_diff": fit_diff,
               "fno_diff": fno_diff, "fno_loss_diff": abs(float(fl1) - float(fl8)), "error": err}, open(sys.argv[1], "w"))
    """
)


def test_eight_device_step_matches_single_device(tmp_path, subprocess_env, python):
    script = tmp_path / "dp.py"
    script.write_text(STEP_SCRIPT)
    env = dict(
        subprocess_env, XLA_FLAGS=subprocess_env["XLA_FLAGS"] + " --xla_force_host_platform_device_count=8"
    )
    out = tmp_path / "out.json"
    subprocess.run([python, str(script), str(out)], check=True, env=env, timeout=300)
    res = json.loads(out.read_text())
    assert res["max_diff"] < 1e-5, res
    assert res["loss_diff"] < 1e-6, res
    assert res["fit_diff"] < 1e-5, res
    assert res["fno_diff"] < 1e-5 and res["fno_loss_diff"] < 1e-6, res
    assert res["error"] is not None and "not divisible" in res["error"] and "30" in res["error"], res


MP_SCRIPT = textwrap.dedent(
    """
    import json, sys
    pid, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    import jax
    from jaxkit.train import initialize_distributed
    initialize_distributed(f"127.0.0.1:{port}", num_processes=2, process_id=pid)
    import jax.numpy as jnp, numpy as np, optax, equinox as eqx
    from jaxkit.train import data_mesh
    from jaxkit.train import make_train_step
    from jaxkit.train import replicate
    from jaxkit.train import shard_batch

    assert jax.process_count() == 2 and jax.device_count() == 4
    kx, km = jax.random.split(jax.random.key(0))
    x = np.asarray(jax.random.normal(kx, (16, 3)))
    y = np.tanh(x.sum(1, keepdims=True))
    model = eqx.nn.MLP(3, 1, 8, 1, key=km)
    opt = optax.sgd(0.1)
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    step = make_train_step(loss, opt)
    mesh = data_mesh()
    local = {"x": x[pid * 8:(pid + 1) * 8], "y": y[pid * 8:(pid + 1) * 8]}     # this process's half
    params = eqx.filter(model, eqx.is_inexact_array)
    new, _, l, _ = step(replicate(model, mesh), replicate(opt.init(params), mesh), shard_batch(local, mesh),
                        jax.random.key(1))
    from jax.experimental import multihost_utils
    w = np.asarray(multihost_utils.process_allgather(new.layers[0].weight, tiled=True))
    json.dump({"loss": float(l), "w": w.tolist()}, open(out, "w"))
    """
)

REF_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx
    from jaxkit.train import make_train_step
    kx, km = jax.random.split(jax.random.key(0))
    x = np.asarray(jax.random.normal(kx, (16, 3)))
    y = np.tanh(x.sum(1, keepdims=True))
    model = eqx.nn.MLP(3, 1, 8, 1, key=km)
    opt = optax.sgd(0.1)
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b["x"]) - b["y"]) ** 2)
    new, _, l, _ = make_train_step(loss, opt)(model, opt.init(eqx.filter(model, eqx.is_inexact_array)),
                                              {"x": x, "y": y}, jax.random.key(1))
    json.dump({"loss": float(l), "w": np.asarray(new.layers[0].weight).tolist()}, open(sys.argv[1], "w"))
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_step_matches_single_process(tmp_path, subprocess_env, python):
    import numpy as np

    (tmp_path / "mp.py").write_text(MP_SCRIPT)
    (tmp_path / "ref.py").write_text(REF_SCRIPT)
    env = dict(
        subprocess_env, XLA_FLAGS=subprocess_env["XLA_FLAGS"] + " --xla_force_host_platform_device_count=2"
    )
    port = _free_port()
    procs = [
        subprocess.Popen(
            [python, str(tmp_path / "mp.py"), str(i), str(port), str(tmp_path / f"p{i}.json")], env=env
        )
        for i in range(2)
    ]
    try:
        codes = [p.wait(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert codes == [0, 0], codes
    subprocess.run(
        [python, str(tmp_path / "ref.py"), str(tmp_path / "ref.json")],
        check=True,
        env=subprocess_env,
        timeout=240,
    )
    ref = json.loads((tmp_path / "ref.json").read_text())
    for i in range(2):
        got = json.loads((tmp_path / f"p{i}.json").read_text())
        assert abs(got["loss"] - ref["loss"]) < 1e-6
        np.testing.assert_allclose(np.array(got["w"]), np.array(ref["w"]), atol=1e-6)


@pytest.mark.parametrize("n", [0, 99])
def test_data_mesh_rejects_bad_device_count(n):
    from jaxkit.train import data_mesh

    with pytest.raises(ValueError, match="n_devices"):
        data_mesh(n)
