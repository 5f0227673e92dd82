"""Bench `scaling`: training steps/s of one process against two processes (JAX multi-controller on loopback).

The same global batch (strong scaling) trained by :func:`jaxkit.train.fit`: one process with one device against
two processes with one device each (``jax.distributed`` on 127.0.0.1, gloo collectives, each process pinned to its
own core), alternating one-process and two-process runs in fresh processes for ``pairs`` pairs; the speed-up is the
median over pairs of (two-process steps/s / one-process steps/s).

* ``fno``: FNO-1D (16 modes, width 64, 4 layers) on Burgers-sized inputs (1024 points), batch 20, Adam.
* ``docking``: the SigmaDock-style fragment score model (the default ``ModelConfig``: width 48, depth 3) on 16
  featurized complexes of PoseBusters' 1s3v (random cut sets), batch 16, the training recipe of
  ``python -m jaxkit.docking train``.

A step here is what :func:`jaxkit.train.fit` does per step (data, placement, compiled update, loss read back), timed
after ``warmup`` steps (compilation excluded).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments import Bench, register_bench

ROOT = Path(__file__).resolve().parent.parent
CASES = {"fno": dict(warmup=3, steps=20), "docking": dict(warmup=2, steps=10)}


def _fno(warmup: int, steps: int):
    import jax
    import numpy as np
    import optax

    from jaxkit.operators import FNO, relative_l2

    x = np.asarray(jax.random.normal(jax.random.key(1), (200, 1, 1024)), np.float32)
    y = np.cumsum(x, axis=-1) / 32.0
    model = FNO(1, 1, (16,), 64, 4, key=jax.random.key(0))

    def loss(m, b, k):
        return relative_l2(jax.vmap(m)(b[0]), b[1])

    from jaxkit.train import ArrayLoader

    return model, optax.adam(1e-3), loss, ArrayLoader((x, y), 20, key=jax.random.key(2))


def _docking(warmup: int, steps: int):
    import optax
    import posebusters

    from jaxkit.docking import ModelConfig, batch_loss, build_model, featurize_examples, load_complex_folder
    from jaxkit.train import ArrayLoader

    pb = Path(posebusters.__file__).parent / "datasets" / "pdb"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "1s3v"
        d.mkdir()
        (d / "1s3v_protein.pdb").write_bytes((pb / "1s3v" / "1s3v_protein_one_lig_removed.pdb").read_bytes())
        (d / "1s3v_ligand.sdf").write_bytes((pb / "1s3v" / "1s3v_ligand.sdf").read_bytes())
        examples, _ = load_complex_folder(tmp, on_error="skip")
    config = ModelConfig()
    data, _ = featurize_examples(examples, config.sizes(), augment=16, seed=0)
    import jax

    model = build_model(config, jax.random.key(0))
    process = model.process
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(2e-3, weight_decay=1e-4))
    return (
        model,
        opt,
        lambda m, b, k: batch_loss(m, process, b, k),
        ArrayLoader(data, 16, key=jax.random.key(1)),
    )


def worker(case: str, n_proc: int, pid: int, port: int, out: str) -> None:
    """One process of a run: train ``warmup + steps`` steps with :func:`jaxkit.train.fit`, record steps/s."""
    from jaxkit.train import initialize_distributed

    if n_proc > 1:
        initialize_distributed(f"127.0.0.1:{port}", n_proc, pid)
    import jax

    from jaxkit.train import fit, is_primary

    spec = CASES[case]
    model, opt, loss, loader = (_fno if case == "fno" else _docking)(**spec)
    stamps: list[float] = []
    t0 = time.perf_counter()
    fit(
        model,
        opt,
        loss,
        loader,
        n_steps=spec["warmup"] + spec["steps"],
        key=jax.random.key(3),
        log_every=1,
        progress=False,
        callback=lambda step, rec: stamps.append(time.perf_counter()),
    )
    timed = stamps[spec["warmup"] - 1 :]
    rec = {
        "steps_per_s": (len(timed) - 1) / (timed[-1] - timed[0]),
        "first_s": stamps[0] - t0,
        "devices": jax.device_count(),
        "processes": jax.process_count(),
        "load": os.getloadavg()[0],
        "affinity": sorted(os.sched_getaffinity(0)),
    }
    if is_primary():
        Path(out).write_text(json.dumps(rec))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(case: str, n_proc: int, cache: Path, timeout: float = 1800.0) -> dict:
    """A fresh run of ``n_proc`` processes (process ``i`` pinned to core ``i`` when there are two); process 0's
    record."""
    cores = sorted(os.sched_getaffinity(0))
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
        out = Path(tmp) / "rec.json"
        procs = []
        for i in range(n_proc):
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            if (
                n_proc == 1
            ):  # (two processes compile each run: a cache hit in one process only would leave the
                # other compiling while the first waits for gloo's connection, which times out)
                env["JAX_COMPILATION_CACHE_DIR"] = str(cache)
            if n_proc > 1:
                env.update(OMP_NUM_THREADS="1", XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")
            cmd = [
                sys.executable,
                "-m",
                "experiments.bench_scaling",
                case,
                str(n_proc),
                str(i),
                str(port),
                str(out),
            ]
            if n_proc > 1:
                cmd = ["taskset", "-c", str(cores[i % len(cores)])] + cmd
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True))
        try:
            errs = [p.communicate(timeout=timeout)[1] for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        if any(p.returncode for p in procs) or not out.exists():
            return {"error": "\n".join(errs)[-2000:]}
        return json.loads(out.read_text())


def run(ctx) -> list[dict]:
    pairs = int(ctx.config.get("pairs", 5))
    only = ctx.config.get("cases")
    rows, raw = [], {}
    for case in CASES:
        if only and not any(o in case for o in only):
            continue
        runs: dict[int, list[dict]] = {1: [], 2: []}
        for p in range(pairs):
            for n in (1, 2):
                rec = _launch(case, n, Path(ctx.out_dir) / "jax_cache")
                if "error" in rec:  # e.g. gloo's connect timeout when the machine is overloaded: one retry
                    print(f"  [{case}] retrying after: {rec['error'].strip().splitlines()[-1]}", flush=True)
                    rec = dict(_launch(case, n, Path(ctx.out_dir) / "jax_cache"), retried=True)
                runs[n].append(rec)
                msg = (
                    rec["error"].strip().splitlines()[-1]
                    if "error" in rec
                    else f"{rec['steps_per_s']:.3g} steps/s"
                )
                print(f"  [{case}] pair {p + 1}/{pairs} {n} process(es): {msg}", flush=True)
        ok = [(a, b) for a, b in zip(runs[1], runs[2]) if "error" not in a and "error" not in b]
        ratios = [b["steps_per_s"] / a["steps_per_s"] for a, b in ok]
        raw[case] = runs
        loads = [r["load"] for a, b in ok for r in (a, b)]
        rows.append(
            {
                "case": case,
                "1 process steps/s": round(statistics.median(a["steps_per_s"] for a, _ in ok), 3)
                if ok
                else "n/a",
                "2 processes steps/s": round(statistics.median(b["steps_per_s"] for _, b in ok), 3)
                if ok
                else "n/a",
                "speed-up": round(statistics.median(ratios), 3) if ratios else "n/a",
                "speed-up min–max": f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else "n/a",
                "pairs": len(ok),
                "first step s (1 / 2)": (
                    f"{runs[1][0]['first_s']:.1f} / {runs[2][0]['first_s']:.1f}"
                    if "error" not in runs[1][0] and "error" not in runs[2][0]
                    else "n/a"
                ),
                "load": round(statistics.median(loads), 1) if loads else "n/a",
            }
        )
    ctx.extra["raw"] = raw
    ctx.extra["note"] = (
        "Each run in fresh processes: `1 process` = one process, one XLA CPU device, all cores; `2 processes` = "
        "`jax.distributed` on 127.0.0.1 (gloo), one device per process, each process pinned to its own core "
        "(taskset; Eigen single-threaded), the global batch split in two (`jax.make_array_from_process_local_data`). "
        "Runs alternate for the given pairs; `speed-up` = median over pairs of (2-process steps/s / 1-process "
        "steps/s); `first step s` = start of `fit` to the end of step 1 in the first pair (compilation; later "
        "one-process runs read their compiled step from JAX's persistent compilation cache); `load` = 1-min load average "
        "at the end of each run (a load well above the core count means other jobs shared the machine, and the "
        "rates and their spread suffer). On a multi-core or multi-GPU node, run `python -m experiments bench "
        "scaling` again."
    )
    return rows


register_bench(
    Bench(
        name="scaling",
        description="training steps/s, 1 process vs 2 processes (jax.distributed on loopback): FNO and docking",
        run=run,
    )
)

if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
