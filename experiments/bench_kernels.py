"""Benchmark of the Pallas kernels (``kernels/``) against their XLA baselines.

``python -m experiments bench kernels``

* On a GPU/TPU: for each kernel over sizes up to a few GB, the compiled Pallas kernel vs the XLA reference
  (``einsum`` for spectral mixing; ``lax.associative_scan`` and ``lax.scan`` for the linear scan), forward and
  forward+backward, with achieved GB/s against a measured device-to-device copy bandwidth and the ratio to the
  XLA baseline. Every timed configuration is first checked against the reference (``max_rel_err`` column).
* On CPU: the interpret-mode correctness pass (forward and gradient of a random linear functional vs the reference,
  shapes not divisible by the blocks); it says that timings need a GPU.

``python -m experiments.bench_kernels --check`` runs only the compiled correctness pass (GPU/TPU) and exits non-zero
on a mismatch; ``kernels/gpu_check.sh`` runs that and then the bench.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from experiments import Bench, register_bench
from experiments._harness import Case, Impl, Workload, run_bench
from jaxkit.kernels.linear_scan import linear_scan, linear_scan_reference
from jaxkit.kernels.spectral_mix import spectral_mix, spectral_mix_reference

GOALS = "Targets: scan >= 70% of copy bandwidth and >= 1.5x lax.associative_scan; spectral mix >= XLA einsum."


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------


def _rand(rng: np.random.Generator, shape, cplx: bool, lo: float | None = None) -> jax.Array:
    if lo is not None:  # decays |a| in [lo, 1)
        r = rng.uniform(lo, 0.999, shape).astype(np.float32)
        if cplx:
            return jnp.asarray(r * np.exp(1j * rng.uniform(-np.pi, np.pi, shape)).astype(np.complex64))
        return jnp.asarray(r)
    x = rng.standard_normal(shape, dtype=np.float32)
    if cplx:
        return jnp.asarray(x + 1j * rng.standard_normal(shape, dtype=np.float32))
    return jnp.asarray(x)


def _rel_err(got: Any, want: Any) -> float:
    errs = []
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g, np.complex128), np.asarray(w, np.complex128)
        if not np.all(np.isfinite(g)):
            return float("inf")
        errs.append(float(np.max(np.abs(g - w)) / (np.max(np.abs(w)) + 1e-30)))
    return max(errs)


def _time(fn: Callable, *args, reps: int = 10, min_time: float = 0.05) -> float:
    """Median wall time (s) of a compiled call, after a warm-up; repeats within one timing to reach min_time."""
    jax.block_until_ready(fn(*args))
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    one = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(min_time / one))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            out = fn(*args)
        jax.block_until_ready(out)
        ts.append((time.perf_counter() - t0) / inner)
    return float(np.median(ts))


def _gb(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9


def copy_bandwidth(nbytes: int = 2 << 30) -> float:
    """Device-to-device bandwidth (GB/s, read + write) of an XLA elementwise negate over ``nbytes`` of float32."""
    x = jnp.ones((nbytes // 4,), jnp.float32)
    neg = jax.jit(lambda v: -v)
    t = _time(neg, x)
    del x
    return _gb(2 * nbytes, t)


def _nbytes(*arrays) -> int:
    return sum(int(a.size) * a.dtype.itemsize for a in arrays)


# ---------------------------------------------------------------------------------------------------------------
# correctness passes
# ---------------------------------------------------------------------------------------------------------------

_SCAN_CASES = [  # (shape, complex, reverse, block_t, block_d)
    ((2, 13, 10), False, False, 4, 4),
    ((2, 13, 10), True, True, 4, 4),
    ((3, 37, 20), True, False, None, None),
    ((1, 100, 7), False, True, 8, 2),
]
_MIX_CASES = [  # (B, I, O, modes, complex, (block_b, block_o, block_k))
    (3, 5, 7, (19,), True, (2, 4, 8)),
    (2, 3, 4, (3, 5), True, (None, None, None)),
    (5, 2, 9, (7,), False, (4, 2, 4)),
]


def _scan_check(shape, cplx, reverse, bt, bd, interpret: bool, rng) -> float:
    a = _rand(rng, shape, cplx, lo=0.5)
    b = _rand(rng, shape, cplx)
    c = _rand(rng, shape, cplx)
    h0 = _rand(rng, (shape[0], shape[2]), cplx)

    def run(fn):
        out, vjp = jax.vjp(fn, a, b, h0)
        return out, vjp(c)

    kern = functools.partial(linear_scan, reverse=reverse, interpret=interpret, block_t=bt, block_d=bd)
    ref = functools.partial(linear_scan_reference, reverse=reverse, method="sequential")
    return _rel_err(jax.jit(lambda: run(kern))(), jax.jit(lambda: run(ref))())


def _mix_check(bsz, ci, co, modes, cplx, blocks, interpret: bool, rng) -> float:
    x = _rand(rng, (bsz, ci, *modes), cplx)
    w = _rand(rng, (ci, co, *modes), cplx)
    c = _rand(rng, (bsz, co, *modes), cplx)

    def run(fn):
        out, vjp = jax.vjp(fn, x, w)
        return out, vjp(c)

    kern = functools.partial(
        spectral_mix, interpret=interpret, block_b=blocks[0], block_o=blocks[1], block_k=blocks[2]
    )
    return _rel_err(jax.jit(lambda: run(kern))(), jax.jit(lambda: run(spectral_mix_reference))())


def correctness_rows(interpret: bool, tol: float = 1e-5) -> list[dict]:
    """Forward + VJP of each kernel vs its reference over shapes the blocks do not divide."""
    rng = np.random.default_rng(0)
    rows = []
    mode = "interpret" if interpret else "compiled"
    for shape, cplx, reverse, bt, bd in _SCAN_CASES:
        t0 = time.perf_counter()
        err = _scan_check(shape, cplx, reverse, bt, bd, interpret, rng)
        rows.append(
            {
                "kernel": "linear_scan",
                "case": f"{mode} fwd+vjp {'c64' if cplx else 'f32'}{' reverse' if reverse else ''}",
                "shape": "x".join(map(str, shape)),
                "blocks": f"t={bt},d={bd}",
                "max_rel_err": f"{err:.2e}",
                "tol": f"{tol:.0e}",
                "ratio": round(err / tol, 3),
                "pass": bool(err <= tol),
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
    for bsz, ci, co, modes, cplx, blocks in _MIX_CASES:
        t0 = time.perf_counter()
        err = _mix_check(bsz, ci, co, modes, cplx, blocks, interpret, rng)
        rows.append(
            {
                "kernel": "spectral_mix",
                "case": f"{mode} fwd+vjp {'c64' if cplx else 'f32'}",
                "shape": f"B{bsz} I{ci} O{co} K{'x'.join(map(str, modes))}",
                "blocks": "b={},o={},k={}".format(*blocks),
                "max_rel_err": f"{err:.2e}",
                "tol": f"{tol:.0e}",
                "ratio": round(err / tol, 3),
                "pass": bool(err <= tol),
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------------------------
# GPU timings (harness workloads: each implementation in its own process)
# ---------------------------------------------------------------------------------------------------------------

SCAN_SIZE = (16, 8192, 1024)  # (B, T, D) float32, 0.5 GiB per array
MIX_SIZE = (256, 64, 64, 1024)  # (B, I, O, K) complex64, FNO-like width 64
T = "experiments.bench_kernels:"


def _scan_fn(impl: str):
    if impl == "pallas":
        return functools.partial(linear_scan, interpret=False, check_finite=False)  # the kernel alone, timed
    return functools.partial(
        linear_scan_reference,
        method="associative" if impl == "associative_scan" else "sequential",
        check_finite=False,
    )


def _mix_fn(impl: str):
    if impl == "pallas":
        return functools.partial(spectral_mix, interpret=False, check_finite=False)  # the kernel alone, timed
    prec = jax.lax.Precision.HIGHEST if impl.endswith("HIGHEST") else jax.lax.Precision.DEFAULT
    return functools.partial(spectral_mix_reference, precision=prec, check_finite=False)


def kernel_step(kernel: str, impl: str, grad: bool = False) -> Workload:
    """One forward (or forward + VJP) of ``kernel`` by ``impl`` on the GPU; the check compares with the
    reference and measures the device's copy bandwidth (an XLA negate over 2 GiB)."""
    rng = np.random.default_rng(1)
    if kernel == "linear_scan":
        args = (_rand(rng, SCAN_SIZE, False, lo=0.9), _rand(rng, SCAN_SIZE, False))
        fn, ref = _scan_fn(impl), _scan_fn("lax.scan")
        moved = (8 if grad else 3) * _nbytes(args[1])
    else:
        bsz, ci, co, k = MIX_SIZE
        args = (_rand(rng, (bsz, ci, k), True), _rand(rng, (ci, co, k), True))
        fn, ref = _mix_fn(impl), _mix_fn("einsum HIGHEST")
        moved = (3 if grad else 1) * (_nbytes(*args) + bsz * co * k * 8)
    if grad:
        c = _rand(rng, jax.eval_shape(ref, *args).shape, kernel != "linear_scan")

        def with_grad(f):
            return jax.grad(lambda *a: jnp.real(jnp.sum(c * f(*a))), argnums=(0, 1))

        fn, ref = with_grad(fn), with_grad(ref)
    f, r = jax.jit(fn), jax.jit(ref)

    def check():
        return {
            "max_rel_err": _rel_err(f(*args), r(*args)),
            "bytes_moved": moved,
            "copy_GBps": copy_bandwidth(),
        }

    return Workload(lambda: jax.block_until_ready(f(*args)), {"device": _device_name()}, check)


def gpu_cases() -> list[Case]:
    out = []
    for kernel, peers in (
        ("linear_scan", ("associative_scan", "lax.scan")),
        ("spectral_mix", ("einsum HIGHEST", "einsum DEFAULT")),
    ):
        size = (
            "f32 B{} T{} D{}".format(*SCAN_SIZE)
            if kernel == "linear_scan"
            else "c64 B{} I{} O{} K{}".format(*MIX_SIZE)
        )
        for grad in (False, True):
            ps = peers if not grad else peers[:1]
            ours = Impl(
                f"Pallas {kernel}", T + "kernel_step", {"kernel": kernel, "impl": "pallas", "grad": grad}
            )
            peer_impls = tuple(
                Impl(f"XLA {p}", T + "kernel_step", {"kernel": kernel, "impl": p, "grad": grad}) for p in ps
            )
            goal = 1.5 if kernel == "linear_scan" and not grad else 1.0
            out.append(Case(f"{kernel} {'fwd+bwd' if grad else 'fwd'} {size}", ours, peer_impls, goal=goal))
    return out


def _bandwidth(summary: dict, peer: str) -> dict:
    rec = next((r for r in summary["runs"][summary["ours"]] if "error" not in r), None)
    if rec is None:
        return {}
    gbps = rec["info"]["bytes_moved"] / rec["step"]["median"] / 1e9
    return {
        "pallas_GB/s": round(gbps, 1),
        "%copy_bw": round(100 * gbps / rec["info"]["copy_GBps"], 1),
        "max_rel_err": f"{rec['info']['max_rel_err']:.1e}",
    }


def _device_name() -> str:
    d = jax.devices()[0]
    return f"{d.platform.upper()} {getattr(d, 'device_kind', '')}".strip()


def run(ctx) -> list[dict]:
    plat = jax.default_backend()
    ctx.extra["device"] = _device_name()
    if plat == "cpu":
        rows = correctness_rows(interpret=True)
        ok = all(r["pass"] for r in rows)
        ctx.extra["note"] = (
            "\nCPU run: the Pallas kernels ran through the interpreter (`interpret=True`), which checks correctness "
            "only (`ratio` = max relative error of forward + VJP / tolerance; <= 1 passes). "
            f"All passed: {ok}. The GPU timings (Pallas vs XLA einsum / associative_scan / lax.scan, GB/s vs "
            "copy bandwidth) need a GPU: see [kernels on GPU](#kernels-on-gpu); "
            "`bash kernels/gpu_check.sh` runs them. " + GOALS + "\n"
        )
        return rows
    correctness = correctness_rows(interpret=False)
    bad = [r for r in correctness if not r["pass"]]
    note = (
        "`pallas_GB/s` counts the minimum traffic (scan: read a, b, write h; mix: read x, w, write out; fwd+bwd "
        "about 8x / 3x that), `%copy_bw` against an XLA negate over 2 GiB on the same device. Compiled correctness "
        f"pass: {len(correctness) - len(bad)}/{len(correctness)} cases within 1e-5 relative error"
        f"{'; FAILED: ' + str(bad) if bad else ''}. " + GOALS
    )
    return run_bench(
        ctx,
        gpu_cases(),
        f"Pallas kernels on {_device_name()}: XLA time / Pallas time per pair",
        note,
        extra=_bandwidth,
    )


register_bench(
    Bench(
        name="kernels",
        description="Pallas spectral_mix and linear_scan vs XLA (einsum; associative_scan, lax.scan)",
        run=run,
    )
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--check", action="store_true", help="compiled correctness pass only (GPU/TPU); exit 1 on failure"
    )
    args = p.parse_args(argv)
    if args.check:
        interp = jax.default_backend() == "cpu"
        rows = correctness_rows(interpret=interp)
        for r in rows:
            print(r)
        ok = all(r["pass"] for r in rows)
        print(
            f"{'interpret' if interp else 'compiled'} correctness on {_device_name()}: {'PASS' if ok else 'FAIL'}"
        )
        return 0 if ok else 1
    p.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
