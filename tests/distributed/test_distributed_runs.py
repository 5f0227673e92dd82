"""The user-facing multi-process runs on loopback: ``python -m experiments run NAME --distributed`` and
``python -m jaxkit.docking train --distributed`` in 2 processes x 1 device give the metrics / parameters of 1
process x 2 devices, only process 0 writes the run folder, and the run folder written by the two processes
resumes in one process."""

import json
import shutil
import socket
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

# the rno_benchmarks experiment (FNO and RNO ensembles through jaxkit.train.fit_ensemble) at a test size
EXPERIMENT = textwrap.dedent(
    """
    import sys
    from experiments._cli import main
    from experiments._registry import EXPERIMENTS, discover

    discover()
    EXPERIMENTS["rno_benchmarks"].presets["quick"] = dict(
        datasets={"burgers": dict(options={"fine_resolution": 64}, res=16, sr=(2,), modes=(4,))},
        n_train=8, n_test=4, width=4, n_layers=1, proj_hidden=8, epochs=2, batch_size=4, lr=1e-3,
        weight_decay=1e-4, step_epochs=1, seeds=2, ablation_datasets=[],
    )
    sys.exit(main(["run", "rno_benchmarks", *sys.argv[1:]]))
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_all(cmds: list[tuple[list[str], dict]], timeout: float) -> list[int]:
    """Start every command at once (the two processes of a run must meet at the coordinator); their exit codes."""
    procs = [subprocess.Popen(cmd, env=env) for cmd, env in cmds]
    try:
        return [p.wait(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def _two_and_one(base: list[str], out: str, subprocess_env: dict) -> list[tuple[list[str], dict]]:
    """The two processes (1 device each) writing ``<out>2`` and one process with 2 devices writing ``<out>1``."""
    port = str(_free_port())
    flags = ["--distributed", "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id"]
    two = [(base + ["--out", f"{out}2", *flags, str(i)], subprocess_env) for i in range(2)]
    env2 = dict(
        subprocess_env, XLA_FLAGS=subprocess_env["XLA_FLAGS"] + " --xla_force_host_platform_device_count=2"
    )
    return two + [(base + ["--out", f"{out}1", "--distributed", "--num-processes", "1"], env2)]


@pytest.mark.slow
def test_experiment_two_processes_match_one_process_two_devices(tmp_path, subprocess_env, python):
    script = tmp_path / "run.py"
    script.write_text(EXPERIMENT)
    out = str(tmp_path / "run")
    assert _run_all(_two_and_one([python, str(script)], out, subprocess_env), 600) == [0, 0, 0]
    one, two = (json.loads(Path(f"{out}{n}/metrics.json").read_text()) for n in (1, 2))
    for kind in ("FNO", "RNO"):
        a, b = one["metrics"]["burgers"][kind], two["metrics"]["burgers"][kind]
        np.testing.assert_allclose(a["rel_l2_seeds"], b["rel_l2_seeds"], rtol=1e-5)
        np.testing.assert_allclose(a["mse"], b["mse"], rtol=1e-5)
    # process 0 alone wrote the folder; the lock is free again
    assert sorted(p.name for p in Path(f"{out}2").iterdir()) == sorted(
        p.name for p in Path(f"{out}1").iterdir()
    )
    assert len(two["invocations"]) == 1
    # the folder of the two-process run resumes in one process (same run identity, its stages reused)
    assert _run_all([([python, str(script), "--out", f"{out}2", "--resume"], subprocess_env)], 600) == [0]
    again = json.loads(Path(f"{out}2/metrics.json").read_text())
    assert (
        again["metrics"]["burgers"]["FNO"]["rel_l2_seeds"] == two["metrics"]["burgers"]["FNO"]["rel_l2_seeds"]
    )
    assert len(again["invocations"]) == 2


@pytest.mark.slow
def test_docking_train_two_processes_match_one_process_two_devices(tmp_path, subprocess_env, python):
    import posebusters

    from jaxkit.docking import load_model

    pb = Path(posebusters.__file__).parent / "datasets" / "pdb" / "1s3v"
    data = tmp_path / "data" / "1s3v"
    data.mkdir(parents=True)
    shutil.copy(pb / "1s3v_protein_one_lig_removed.pdb", data / "1s3v_protein.pdb")
    shutil.copy(pb / "1s3v_ligand.sdf", data / "1s3v_ligand.sdf")
    base = [python, "-m", "jaxkit.docking", "train", "--data", str(tmp_path / "data"), "--steps", "3"]
    base += ["--batch", "2", "--augment", "2", "--width", "8", "--depth", "1"]
    out = str(tmp_path / "model.jkc")
    cmds = _two_and_one(base, out, subprocess_env)
    assert _run_all(cmds, 600) == [0, 0, 0]
    (m1, _, info1), (m2, _, info2) = load_model(f"{out}1"), load_model(f"{out}2")
    assert info1["n_train"] == info2["n_train"] == 2
    np.testing.assert_allclose(info1["final_loss"], info2["final_loss"], rtol=1e-5)
    import equinox as eqx
    import jax

    for a, b in zip(
        jax.tree_util.tree_leaves(eqx.filter(m1, eqx.is_inexact_array)),
        jax.tree_util.tree_leaves(eqx.filter(m2, eqx.is_inexact_array)),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_distributed_flags_are_checked_before_anything_starts(capsys):
    from experiments._cli import main as experiments_main
    from jaxkit.docking._cli import main as docking_main

    assert experiments_main(["run", "rno_benchmarks", "--coordinator", "127.0.0.1:1"]) == 2
    assert "--coordinator needs --distributed" in capsys.readouterr().err
    assert experiments_main(["run", "rno_benchmarks", "--distributed", "--num-processes", "2"]) == 2
    assert "give all of --coordinator, --num-processes and --process-id" in capsys.readouterr().err
    assert docking_main(["train", "--ccd", "1", "--out", "m.jkc", "--process-id", "1"]) == 2
    assert "--process-id needs --distributed" in capsys.readouterr().err
