"""fit and fit_ensemble across processes on loopback (JAX multi-controller, gloo collectives): 2 processes x 1
device give the parameters of 1 process x 2 devices, and an ensemble run whose members are split over the two
processes, interrupted after a checkpoint, resumes in ONE process to the parameters of an uninterrupted run."""

import json
import os
import socket
import subprocess
import textwrap

import numpy as np

SCRIPT = textwrap.dedent(
    """
    import json, sys
    mode, port, pid, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    from jaxkit.train import initialize_distributed
    if mode == "two":
        initialize_distributed(f"127.0.0.1:{port}", 2, pid)
    else:
        initialize_distributed(None, 1)
    import jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx
    from jaxkit.train import ArrayLoader, ensemble_mesh, fit, fit_ensemble, init_ensemble, to_host

    assert jax.device_count() == 2 and jax.process_count() == (2 if mode == "two" else 1)
    kx, km = jax.random.split(jax.random.key(0))
    x = np.asarray(jax.random.normal(kx, (32, 3)))
    y = np.tanh(x @ np.array([1.0, -2.0, 0.5]))[:, None]
    loss = lambda m, b, k: jnp.mean((jax.vmap(m)(b[0]) - b[1]) ** 2)
    flat = lambda t: [to_host(a).ravel().tolist() for a in jax.tree_util.tree_leaves(eqx.filter(t, eqx.is_array))]
    res = {}

    # data parallel over every device of every process (the default mesh of a distributed run)
    r = fit(eqx.nn.MLP(3, 1, 8, 1, key=km), optax.adam(1e-2), loss, ArrayLoader((x, y), 8, key=jax.random.key(2)),
            n_steps=6, key=jax.random.key(1), progress=False)
    res["fit"] = flat(r.model)
    res["fit_loss"] = [h["loss"] for h in r.history]

    # ensemble, members split over the processes (mesh axis "member"), checkpoint at step 3, stopped at step 4
    models = init_ensemble(lambda k: eqx.nn.MLP(3, 1, 8, 1, key=k), jax.random.split(jax.random.key(3), 2))
    keys = jax.random.split(jax.random.key(4), 2)
    data = ArrayLoader((x, y), 8, key=jax.random.key(5))
    kw = dict(n_steps=6, keys=keys, checkpoint_every=3, progress=False, mesh=ensemble_mesh(2, 1))

    class Stop(Exception):
        pass

    def stop(step, rec):
        if step == 4:
            raise Stop

    if mode == "two":
        try:
            fit_ensemble(models, optax.adam(1e-2), loss, data, checkpoint_dir=out + "/ens", callback=stop, **kw)
        except Stop:
            pass
    else:  # resume the two-process run here; and the same run uninterrupted
        resumed = fit_ensemble(models, optax.adam(1e-2), loss, data, checkpoint_dir=out + "/ens", resume=True,
                               **kw)
        whole = fit_ensemble(models, optax.adam(1e-2), loss, data, checkpoint_dir=out + "/whole", **kw)
        res.update(resumed_from=resumed.resumed_from, resumed=flat(resumed.model), whole=flat(whole.model),
                   resumed_loss=[h["member_loss"] for h in resumed.history],
                   whole_loss=[h["member_loss"] for h in whole.history])
    json.dump(res, open(f"{out}/{mode}{pid}.json", "w"))
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(procs: list[subprocess.Popen], timeout: float) -> list[int]:
    try:
        return [p.wait(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_two_processes_match_one_and_resume_into_one(tmp_path, subprocess_env, python):
    script = tmp_path / "mp.py"
    script.write_text(SCRIPT)
    port = str(_free_port())
    procs = [
        subprocess.Popen([python, str(script), "two", port, str(i), str(tmp_path)], env=subprocess_env)
        for i in range(2)
    ]
    assert _wait(procs, 600) == [0, 0]
    env = dict(
        subprocess_env, XLA_FLAGS=subprocess_env["XLA_FLAGS"] + " --xla_force_host_platform_device_count=2"
    )
    assert _wait(
        [subprocess.Popen([python, str(script), "one", port, "0", str(tmp_path)], env=env)], 240
    ) == [0]
    two = [json.loads((tmp_path / f"two{i}.json").read_text()) for i in range(2)]
    one = json.loads((tmp_path / "one0.json").read_text())
    for t in two:  # both processes hold the same (replicated) result
        for a, b in zip(t["fit"], one["fit"], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(t["fit_loss"], one["fit_loss"], rtol=1e-5, atol=1e-7)
    assert len(one["fit_loss"]) == 6
    assert one["resumed_from"] == 3  # the checkpoint the two processes wrote, read by one
    for a, b in zip(one["resumed"], one["whole"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(one["resumed_loss"], one["whole_loss"], rtol=1e-5, atol=1e-7)
    assert len(one["whole_loss"]) == 6 and len(one["whole_loss"][0]) == 2
    ckpts = sorted(os.listdir(tmp_path / "ens"))
    assert ckpts == ["ckpt_000000003", "ckpt_000000006"], ckpts
