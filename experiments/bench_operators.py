"""Bench `operators`: training-step throughput of our FNO vs neuraloperator's FNO (PyTorch, CPU), and RNO vs our FNO.

Same width, modes, layers, batch and resolution; one Adam step on the relative-L2 loss (forward, backward, update),
timed as the median over repetitions after warm-up (compilation excluded). neuraloperator's FNO is configured
close to ours: no channel MLP, linear skip, grid positional embedding, projection ratio 2; ``n_modes = 2m`` in
its convention keeps the same ``|q| < m`` modes as our ``modes = m`` (plus one). Parameter counts are reported.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from experiments import Bench, register_bench
from jaxkit.operators import FNO, RNO, count_params, fno_optimizer, relative_l2
from jaxkit.train import make_train_step

CASES = [
    dict(name="1D (Burgers-like)", grid=(1024,), modes=(16,), width=64, batch=20),
    dict(name="2D (Darcy-like)", grid=(64, 64), modes=(12, 12), width=32, batch=10),
]


def _median_time(fn, reps: int, min_time: float = 1.0) -> float:
    times = []
    t_start = time.perf_counter()
    while len(times) < reps or (time.perf_counter() - t_start < min_time and len(times) < 50):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ours_step_time(model: Any, x: np.ndarray, y: np.ndarray, reps: int) -> float:
    opt = fno_optimizer(1e-3, 1e-4)
    import equinox as eqx

    opt_state = opt.init(eqx.filter(model, eqx.is_inexact_array))

    def loss(m, batch, key):
        xb, yb = batch
        return relative_l2(jax.vmap(m)(xb), yb)

    step = make_train_step(loss, opt)
    batch = (jnp.asarray(x), jnp.asarray(y))
    key = jax.random.PRNGKey(0)
    state = {"m": model, "o": opt_state}

    def run():
        m, o, lval, _ = step(state["m"], state["o"], batch, key)
        jax.block_until_ready(lval)
        state["m"], state["o"] = m, o

    for _ in range(3):
        run()
    return _median_time(run, reps)


def _torch_step_time(case: dict, x: np.ndarray, y: np.ndarray, reps: int) -> tuple[float, int]:
    import torch
    from neuralop.models import FNO as TorchFNO

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    model = TorchFNO(n_modes=tuple(2 * m for m in case["modes"]), in_channels=1, out_channels=1,
                     hidden_channels=case["width"], n_layers=4, use_channel_mlp=False, fno_skip="linear",
                     lifting_channel_ratio=1, projection_channel_ratio=2)
    n_params = sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def run():
        opt.zero_grad()
        out = model(xt)
        b = out.shape[0]
        loss = torch.mean(torch.linalg.norm((out - yt).reshape(b, -1), dim=1) / torch.linalg.norm(yt.reshape(b, -1), dim=1))
        loss.backward()
        opt.step()

    for _ in range(3):
        run()
    return _median_time(run, reps), int(n_params)


def run(ctx) -> list[dict]:
    rows = []
    reps = 10
    rng = np.random.default_rng(0)
    try:
        import neuralop  # noqa: F401
        import torch  # noqa: F401

        have_peer = True
    except Exception as e:  # pragma: no cover - peer not installed
        have_peer = False
        ctx.extra["note"] = f"neuraloperator/torch not importable ({e}); peer rows skipped."
    for case in CASES:
        x = rng.normal(size=(case["batch"], 1, *case["grid"])).astype(np.float32)
        y = rng.normal(size=(case["batch"], 1, *case["grid"])).astype(np.float32)
        key = jax.random.PRNGKey(0)
        proj = 2 * case["width"]
        fno = FNO(1, 1, case["modes"], case["width"], 4, proj_hidden=proj, key=key)
        rno = RNO(1, 1, case["modes"], case["width"], 4, proj_hidden=proj, key=key)
        t_fno = _ours_step_time(fno, x, y, reps)
        t_rno = _ours_step_time(rno, x, y, reps)
        common = f"width {case['width']}, modes {case['modes']}, 4 layers, batch {case['batch']}, grid {case['grid']}"
        if have_peer:
            t_peer, p_peer = _torch_step_time(case, x, y, reps)
            rows.append({"case": case["name"], "comparison": "jaxkit FNO vs neuraloperator FNO (torch CPU)",
                         "config": common, "ours_ms": 1e3 * t_fno, "peer_ms": 1e3 * t_peer,
                         "ours_params": count_params(fno), "peer_params": p_peer, "ratio": t_peer / t_fno})
        rows.append({"case": case["name"], "comparison": "jaxkit RNO vs jaxkit FNO (cost of the Riesz channels)",
                     "config": common, "ours_ms": 1e3 * t_rno, "peer_ms": 1e3 * t_fno,
                     "ours_params": count_params(rno), "peer_params": count_params(fno), "ratio": t_fno / t_rno})
    import torch as _t

    ctx.extra.setdefault(
        "note",
        "ratio = peer time / our time per training step (> 1: ours faster). Goal: jaxkit FNO >= 1.5x "
        f"neuraloperator's. For the RNO row the 'peer' is our FNO, so ratio < 1 is the RNO overhead. torch "
        f"{_t.__version__}, jax {jax.__version__}, {os.cpu_count()} CPU threads; the machine is shared, so timings "
        "are noisy; ratios from one process, measured back to back.",
    )
    return rows


register_bench(Bench(name="operators", description="FNO/RNO training-step throughput: jaxkit vs neuraloperator (torch CPU)",
                     run=run))
