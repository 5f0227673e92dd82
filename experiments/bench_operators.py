"""Bench `operators`: one FNO/RNO training step (forward, backward, Adam update), jaxkit vs neuraloperator.

Same width, modes, layers, batch and resolution; relative-L2 loss; Adam (lr 1e-3, L2 weight decay 1e-4). The peer is
neuraloperator's ``FNO`` configured close to ours (no channel MLP, linear skip, grid positional embedding,
projection ratio 2; its ``n_modes = 2m`` keeps the same ``|q| < m`` modes as our ``modes = m``), in PyTorch eager
mode and under ``torch.compile`` (inductor), with threads = cores. Ours runs on one XLA device with threads =
cores, on one thread against one thread, and data-parallel over two XLA host devices of one thread each (the
batch split by ``jaxkit.train.data_mesh``/``shard_batch``: XLA's CPU backend hardly uses a second thread inside one
device's step). RNO (the default mix, and the global-branch ablation) is timed against our FNO: its overhead.
Every implementation runs in its own process (``experiments/_harness.py``).
"""

from __future__ import annotations

import sys

from experiments import Bench, register_bench
from experiments._harness import Case, Impl, Workload, run_bench, threads

CONFIGS = {
    "1D": dict(grid=(1024,), modes=(16,), width=64, batch=20),
    "2D": dict(grid=(64, 64), modes=(12, 12), width=32, batch=10),
}
N_LAYERS = 4
STEPS = dict(reps=5, warmup=2, min_time=0.0)  # timed steps per process (after the first call and warm-up)


def _data(cfg: dict):
    import numpy as np

    rng = np.random.default_rng(0)
    shape = (cfg["batch"], 1, *cfg["grid"])
    return rng.normal(size=shape).astype(np.float32), rng.normal(size=shape).astype(np.float32)


def jaxkit_step(dims: str, kind: str = "fno", devices: int = 1) -> Workload:
    """Our training step: ``jaxkit.train.make_train_step`` on the relative L2 loss of a vmapped FNO/RNO.

    ``devices > 1``: data-parallel over that many XLA host devices (``jaxkit.train.data_mesh``; the worker's
    ``XLA_FLAGS`` sets ``--xla_force_host_platform_device_count``): the same global batch and update, the batch
    split over the devices, gradients all-reduced (GSPMD) — how ``jaxkit.train`` uses several CPU cores."""
    import jax
    import jax.numpy as jnp

    from jaxkit.operators import FNO, RNO, count_params, fno_optimizer, relative_l2
    from jaxkit.train import make_train_step

    cfg = CONFIGS[dims]
    extra = (
        {} if kind in ("fno", "rno") else {"branch": kind.removeprefix("rno-")}
    )  # "rno-global": RNO ablation
    make = FNO if kind == "fno" else RNO
    model = make(
        1,
        1,
        cfg["modes"],
        cfg["width"],
        N_LAYERS,
        proj_hidden=2 * cfg["width"],
        key=jax.random.key(0),
        **extra,
    )
    opt = fno_optimizer(1e-3, 1e-4)
    import equinox as eqx

    state = {"m": model, "o": opt.init(eqx.filter(model, eqx.is_inexact_array))}
    step = make_train_step(lambda m, b, k: relative_l2(jax.vmap(m)(b[0]), b[1]), opt)
    batch = tuple(jnp.asarray(a) for a in _data(cfg))
    key = jax.random.key(1)
    if devices > 1:
        from jaxkit.train import data_mesh, replicate, shard_batch

        if jax.device_count() < devices:
            raise RuntimeError(f"devices: {devices} requested, {jax.device_count()} available (XLA_FLAGS)")
        mesh = data_mesh(devices)
        state = {"m": replicate(state["m"], mesh), "o": replicate(state["o"], mesh)}
        batch = shard_batch(batch, mesh)

    def run():
        state["m"], state["o"], loss, _ = step(state["m"], state["o"], batch, key)
        jax.block_until_ready(loss)

    return Workload(
        run, {"params": count_params(model), "backend": jax.default_backend(), "devices": devices}
    )


def neuralop_step(dims: str, compile: bool = False) -> Workload:
    """neuraloperator's FNO training step in PyTorch (eager, or ``torch.compile`` of the model)."""
    import torch
    from neuralop.models import FNO as TorchFNO

    torch.set_num_threads(threads())
    torch.manual_seed(0)
    cfg = CONFIGS[dims]
    model = TorchFNO(
        n_modes=tuple(2 * m for m in cfg["modes"]),
        in_channels=1,
        out_channels=1,
        hidden_channels=cfg["width"],
        n_layers=N_LAYERS,
        use_channel_mlp=False,
        fno_skip="linear",
        lifting_channel_ratio=1,
        projection_channel_ratio=2,
    )
    n_params = sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    fwd = torch.compile(model) if compile else model
    x, y = (torch.from_numpy(a) for a in _data(cfg))
    b = x.shape[0]

    def run():
        opt.zero_grad()
        out = fwd(x)
        loss = torch.mean(
            torch.linalg.norm((out - y).reshape(b, -1), dim=1) / torch.linalg.norm(y.reshape(b, -1), dim=1)
        )
        loss.backward()
        opt.step()

    return Workload(
        run, {"params": int(n_params), "torch_threads": torch.get_num_threads(), "compile": compile}
    )


def _op_classes(hlo_text: str) -> dict[str, tuple[str, str]]:
    """HLO instruction name -> (pass, kind) from XLA's optimized program: forward / backward / optimizer by the
    op_name metadata (``jvp(...)``, ``transpose(jvp(...))``, the rest), GEMM / FFT / elementwise by opcode."""
    import re

    out = {}
    for m in re.finditer(
        r"^\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(.*?op_name=\"([^\"]*)\"", hlo_text, re.M
    ):
        name, opcode, op = m.groups()
        phase = "backward" if "transpose(jvp" in op else "forward" if "jvp(" in op else "optimizer"
        kind = (
            "GEMM"
            if "ynn" in name or opcode == "dot"
            else "FFT"
            if opcode == "fft"
            else "GELU (erfc) + grad"
            if "erfc" in op or "exponential" in name or "select_select" in name
            else "copy/transpose"
            if "copy" in name or "transpose" in name
            else "elementwise/other"
        )
        out[name] = (phase, kind)
    return out


def profile_step(dims: str, kind: str, dump: str, steps: int = 10) -> list[dict]:
    """Where the time of one training step goes: a ``jax.profiler`` trace of ``steps`` steps, per-op durations
    summed by pass and kind (share of the summed op time), ops classified from XLA's optimized program (dumped to
    ``dump`` by ``--xla_dump_to``). Run with one thread (``--xla_cpu_multi_thread_eigen=false``) so that the shares
    do not depend on the machine's load."""
    import collections
    import glob
    import os
    import tempfile

    import jax

    work = jaxkit_step(dims, kind)
    for _ in range(3):
        work.step()
    hlo = max(glob.glob(f"{dump}/*jit_step*after_optimizations.txt"), key=os.path.getmtime)
    trace = tempfile.mkdtemp(prefix="trace-")
    jax.profiler.start_trace(trace)
    for _ in range(steps):
        work.step()
    jax.profiler.stop_trace()
    with open(hlo) as f:
        classes = _op_classes(f.read())
    data = jax.profiler.ProfileData.from_file(
        sorted(glob.glob(f"{trace}/**/*.xplane.pb", recursive=True))[-1]
    )
    agg: collections.Counter = collections.Counter()
    for plane in data.planes:
        for line in plane.lines:
            for ev in line.events:
                if ev.name in classes:
                    agg[classes[ev.name]] += ev.duration_ns
    total = sum(agg.values()) or 1
    return [
        {"case": f"{dims} {kind.upper()}", "pass": ph, "kind": kd, "share_%": round(100 * v / total, 1)}
        for (ph, kd), v in agg.most_common()
    ]


def cases() -> list[Case]:
    out = []
    peer_pk = ("torch", "neuraloperator")
    for dims, cfg in CONFIGS.items():
        conf = f"width {cfg['width']}, modes {cfg['modes']}, {N_LAYERS} layers, batch {cfg['batch']}, grid {cfg['grid']}"
        tgt = "experiments.bench_operators:"
        fno = Impl(
            "jaxkit FNO", tgt + "jaxkit_step", {"dims": dims, "kind": "fno"}, packages=("jax", "jaxlib")
        )
        rno = Impl(
            "jaxkit RNO", tgt + "jaxkit_step", {"dims": dims, "kind": "rno"}, packages=("jax", "jaxlib")
        )
        eager = Impl(
            "neuraloperator FNO (torch eager)", tgt + "neuralop_step", {"dims": dims}, packages=peer_pk
        )
        comp = Impl(
            "neuraloperator FNO (torch.compile)",
            tgt + "neuralop_step",
            {"dims": dims, "compile": True},
            packages=peer_pk,
        )
        out.append(Case(f"{dims} FNO training step", fno, (eager, comp), config=conf, goal=1.5, **STEPS))
        dp = Impl(
            "jaxkit FNO, data-parallel on 2 host devices",
            tgt + "jaxkit_step",
            {"dims": dims, "kind": "fno", "devices": 2},
            packages=("jax", "jaxlib"),
            threads=2,
            env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2 --xla_cpu_multi_thread_eigen=false"},
        )
        out.append(
            Case(
                f"{dims} FNO training step, ours data-parallel (2 devices x 1 thread)",
                dp,
                (eager,),
                config=conf,
                goal=1.5,
                **STEPS,
            )
        )
        fno1 = Impl(**{**fno.__dict__, "threads": 1, "label": "jaxkit FNO, 1 thread"})
        eager1 = Impl(
            **{**eager.__dict__, "threads": 1, "label": "neuraloperator FNO (torch eager), 1 thread"}
        )
        out.append(
            Case(f"{dims} FNO training step, 1 thread each", fno1, (eager1,), config=conf, goal=1.5, **STEPS)
        )
        out.append(
            Case(f"{dims} RNO overhead (peer = our FNO)", rno, (fno,), config=conf, goal=1 / 1.3, **STEPS)
        )
        rno_g = Impl(
            "jaxkit RNO, global branch only",
            tgt + "jaxkit_step",
            {"dims": dims, "kind": "rno-global"},
            packages=("jax", "jaxlib"),
        )
        out.append(
            Case(
                f"{dims} RNO global-branch overhead (peer = our FNO)",
                rno_g,
                (fno,),
                config=conf,
                goal=1 / 1.3,
                **STEPS,
            )
        )
    return out


def run(ctx) -> list[dict]:
    note = (
        "Target: jaxkit FNO >= 1.5x neuraloperator's per training step (green marks); RNO's overhead over "
        "our FNO <= 30%, i.e. ratio (FNO time / RNO time) >= 0.77. Configurations: "
        + "; ".join(f"{d}: {c}" for d, c in CONFIGS.items())
        + ". Where the time goes: see the profile section below."
    )
    return run_bench(ctx, cases(), "FNO/RNO training step: peer time / jaxkit time per pair", note)


register_bench(
    Bench(
        name="operators",
        description="FNO/RNO training step: jaxkit vs neuraloperator (PyTorch CPU, "
        "eager and torch.compile), each in its own process",
        run=run,
    )
)


if __name__ == "__main__":  # python -m experiments.bench_operators --profile  (one thread, see profile_step)
    import os

    if "--profile" in sys.argv:
        import tempfile

        dump = tempfile.mkdtemp(prefix="hlo-")
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
            f" --xla_dump_to={dump} --xla_dump_hlo_as_text"
        )
        from experiments._cli import markdown_table

        print(markdown_table([r for d in CONFIGS for k in ("fno", "rno") for r in profile_step(d, k, dump)]))
