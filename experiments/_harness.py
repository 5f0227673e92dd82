"""One benchmark harness for every ``python -m experiments bench NAME``.

Rules (``DESIGN.md`` "Benchmarks"):

* every implementation (ours and each peer) runs in its **own fresh process** (``experiments/_worker.py``), which
  imports only what that implementation imports — a peer's imports, threads or sleeps never share a process with
  ours;
* processes alternate ``A B A B ...`` (ours, then each peer) for ``pairs >= 5`` pairs; the **per-pair ratio**
  ``peer time / our time`` (> 1: ours faster) is computed from processes that ran back to back, so slow drifts of
  the machine's load cancel; the table reports the median ratio and its spread (min–max over pairs);
* inside a process: the first call (compilation, autotuning, caches) and a few warm-up calls are timed apart and
  excluded; the step time of a process is the median over its timed calls;
* threads are pinned (CPU affinity to ``threads`` cores plus ``OMP/MKL/OPENBLAS_NUM_THREADS``; PyTorch peers call
  ``torch.set_num_threads``) and recorded, with the library versions and the load average before/after.

A *workload* is a function ``setup(**kwargs) -> Workload(step, info)`` in an ``experiments`` module that imports
only light modules at top level (heavy imports go inside ``setup``): ``step()`` runs one timed unit and blocks until
it is done; ``info`` records parameter counts, agreement checks, etc. The worker loads the module without running
``experiments/__init__.py`` (which imports jaxkit and JAX).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).resolve().parent / "_worker.py"
MIN_PAIRS = 5
_WATCHED = ("jax", "jaxlib", "torch", "neuralop", "scipy", "jaxlie", "pypfopt", "skfolio", "cvxpy", "jax_cfd")


class Workload(NamedTuple):
    """What a workload's ``setup`` returns: the timed ``step`` (blocks until done), facts to record, and an
    optional ``check()`` run after the timing (agreement with a reference; its dict is added to ``info``)."""

    step: Callable[[], Any]
    info: dict
    check: Callable[[], dict] | None = None


@dataclass(frozen=True)
class Impl:
    """One implementation: ``target`` = ``"experiments.module:setup_function"`` called with ``kwargs``."""

    label: str
    target: str
    kwargs: dict = field(default_factory=dict)
    threads: int | None = None  # None: all cores
    packages: tuple[str, ...] = ("jax", "jaxlib")  # versions recorded
    env: dict = field(default_factory=dict)
    units: int = 1  # work items per step (ratios compare time per unit)


@dataclass(frozen=True)
class Case:
    """``ours`` against each of ``peers``, timed by the same rules."""

    name: str
    ours: Impl
    peers: tuple[Impl, ...]
    config: str = ""
    reps: int = 10
    warmup: int = 2
    min_time: float = 0.5  # seconds of timed calls per process, at least
    goal: float | None = None  # ratio the docs compare against


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def threads() -> int:
    """Thread count a workload should use (set by the harness in the worker's environment)."""
    return int(os.environ.get("BENCH_THREADS", cores()))


# ----------------------------------------------------------------------------------------------------------------
# worker side
# ----------------------------------------------------------------------------------------------------------------
def _quantiles(xs: Sequence[float]) -> dict[str, float]:
    s = sorted(xs)
    q = statistics.quantiles(s, n=4) if len(s) > 1 else [s[0]] * 3
    return {"median": statistics.median(s), "min": s[0], "max": s[-1], "q25": q[0], "q75": q[2]}


def _versions(packages: Sequence[str]) -> dict[str, str]:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def _time_calls(step: Callable[[], Any], spec: dict) -> dict[str, Any]:
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(spec["warmup"]):
        step()
    warm = time.perf_counter() - t0
    wall, cpu = [], []
    start = time.perf_counter()
    while len(wall) < spec["reps"] or (
        time.perf_counter() - start < spec["min_time"] and len(wall) < 10 * spec["reps"]
    ):
        c0, t0 = time.process_time(), time.perf_counter()
        step()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {
        "first_s": first,
        "warmup_s": warm,
        "times_s": wall,
        "cpu_s": cpu,
        "step": _quantiles(wall),
        "cpu_per_step_s": statistics.median(cpu),
    }


def worker_main(spec_path: str) -> int:
    """Run one implementation (called by ``_worker.py`` in a fresh process) and write its record as JSON."""
    import importlib

    spec = json.loads(Path(spec_path).read_text())
    if spec.get("threads") and hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, allowed[: spec["threads"]])
    rec: dict[str, Any] = {"label": spec["label"], "pid": os.getpid(), "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    mod_name, fn_name = spec["target"].rsplit(":", 1)
    if mod_name.endswith(".py"):  # a file (tests): imported under a private name
        import importlib.util

        mspec = importlib.util.spec_from_file_location("_bench_workload", mod_name)
        module = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(module)
    else:
        module = importlib.import_module(mod_name)
    setup = getattr(module, fn_name)
    rec["import_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    work = setup(**spec["kwargs"])
    rec["setup_s"] = time.perf_counter() - t0
    rec.update(_time_calls(work.step, spec))
    rec["info"] = dict(work.info, **(work.check() if work.check else {}))
    rec["load_after"] = os.getloadavg()
    rec["affinity"] = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    rec["threads"] = threads()
    rec["thread_env"] = {
        k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "BENCH_THREADS")
    }
    rec["versions"] = _versions(spec["packages"])
    rec["modules"] = sorted(m for m in _WATCHED if m in sys.modules)
    Path(spec["out"]).write_text(json.dumps(rec, default=float))
    return 0


# ----------------------------------------------------------------------------------------------------------------
# parent side
# ----------------------------------------------------------------------------------------------------------------
def run_impl(impl: Impl, case: Case, timeout: float = 1800.0) -> dict[str, Any]:
    """Run ``impl`` once in a fresh process; returns its record (or ``{"error": ...}``)."""
    n_threads = impl.threads or cores()
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        spec = {
            "label": impl.label,
            "target": impl.target,
            "kwargs": impl.kwargs,
            "threads": n_threads,
            "packages": list(impl.packages),
            "reps": case.reps,
            "warmup": case.warmup,
            "min_time": case.min_time,
            "out": str(Path(tmp) / "record.json"),
        }
        spec_file = Path(tmp) / "spec.json"
        spec_file.write_text(json.dumps(spec))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BENCH_THREADS"):
            env[k] = str(n_threads)
        env.update(impl.env)
        proc = subprocess.run(
            [sys.executable, str(WORKER), str(spec_file)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out = Path(spec["out"])
        if proc.returncode != 0 or not out.exists():
            return {"label": impl.label, "error": (proc.stderr or proc.stdout)[-2000:]}
        return json.loads(out.read_text())


def run_case(case: Case, pairs: int = MIN_PAIRS, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Alternate ``ours, peer_1, ..., peer_k`` in fresh processes for ``pairs`` rounds; per-pair ratios."""
    impls = (case.ours, *case.peers)
    runs: dict[str, list[dict]] = {i.label: [] for i in impls}
    for p in range(pairs):
        for impl in impls:
            rec = run_impl(impl, case)
            runs[impl.label].append(rec)
            msg = (
                rec["error"].strip().splitlines()[-1]
                if "error" in rec
                else f"{1e3 * rec['step']['median']:.3g} ms"
            )
            log(f"  [{case.name}] pair {p + 1}/{pairs} {impl.label}: {msg}")
    ours = runs[case.ours.label]
    summary = {"case": case.name, "config": case.config, "ours": case.ours.label, "pairs": pairs, "peers": {}}
    for peer in case.peers:
        ratios = [
            (b["step"]["median"] / peer.units) / (a["step"]["median"] / case.ours.units)
            for a, b in zip(ours, runs[peer.label])
            if "error" not in a and "error" not in b
        ]
        summary["peers"][peer.label] = {"ratios": ratios, "ratio": _quantiles(ratios) if ratios else None}
    summary["runs"] = runs
    return summary


def _med(recs: list[dict], key: Callable[[dict], float]) -> float | None:
    vals = [key(r) for r in recs if "error" not in r]
    return statistics.median(vals) if vals else None


def _row(summary: dict, peer: str, case: Case) -> dict[str, Any]:
    ours, theirs = summary["runs"][summary["ours"]], summary["runs"][peer]
    r = summary["peers"][peer]["ratio"]
    err = next((x["error"].strip().splitlines()[-1] for x in ours + theirs if "error" in x), "")
    loads = [x["load_before"][0] for x in ours + theirs if "error" not in x]
    row = {
        "case": summary["case"],
        "ours": summary["ours"],
        "peer": peer,
        "ours_ms": _ms(_med(ours, lambda x: x["step"]["median"])),
        "peer_ms": _ms(_med(theirs, lambda x: x["step"]["median"])),
        "ratio": round(r["median"], 3) if r else "n/a",
        "ratio_min–max": f"{r['min']:.2f}–{r['max']:.2f}" if r else (err[:80] or "n/a"),
        "pairs": len(summary["peers"][peer]["ratios"]),
        "ours_first_s": _s(_med(ours, lambda x: x["first_s"])),
        "peer_first_s": _s(_med(theirs, lambda x: x["first_s"])),
        "threads": f"{_med(ours, lambda x: x['threads'])}/{_med(theirs, lambda x: x['threads'])}",
        "load": round(statistics.median(loads), 1) if loads else "n/a",
    }
    if case.goal is not None:
        row["goal"] = case.goal
    return row


def _ms(v: float | None) -> Any:
    return round(1e3 * v, 4 if v < 1e-3 else 2) if v is not None else "n/a"


def _s(v: float | None) -> Any:
    return round(v, 2) if v is not None else "n/a"


def plot(summaries: list[dict], cases: Sequence[Case], path: Path, title: str) -> Path:
    """One row per (case, peer): every per-pair ratio (dots), median (diamond), min–max (bar); log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(s, c, p) for s, c in zip(summaries, cases) for p in s["peers"] if s["peers"][p]["ratios"]]
    fig, ax = plt.subplots(figsize=(8.5, 0.55 * len(rows) + 1.4))
    for y, (s, c, p) in enumerate(rows):
        rs, q = s["peers"][p]["ratios"], s["peers"][p]["ratio"]
        ax.plot([q["min"], q["max"]], [y, y], color="0.6", lw=3, solid_capstyle="round", zorder=1)
        ax.scatter(rs, [y] * len(rs), s=14, color="tab:blue", alpha=0.7, zorder=2)
        ax.scatter([q["median"]], [y], marker="D", s=40, color="tab:red", zorder=3)
        if c.goal is not None:
            ax.plot([c.goal, c.goal], [y - 0.35, y + 0.35], color="tab:green", lw=1.5, zorder=1)
    ax.axvline(1.0, color="k", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [f"{s['case']}\nvs {p}" for s, _, p in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(
        "per-pair ratio  peer time / our time  (> 1: ours faster; dots = pairs, diamond = median, "
        "green = goal)",
        fontsize=7,
    )
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_bench(
    ctx: Any,
    cases: Sequence[Case],
    title: str,
    note: str = "",
    extra: Callable[[dict, str], dict] | None = None,
) -> list[dict]:
    """Run ``cases`` (``ctx.config['pairs']`` pairs, default 5), record everything, plot, return the table rows
    (``extra(summary, peer_label)`` adds columns, e.g. agreement between the implementations' outputs)."""
    pairs = int(ctx.config.get("pairs", MIN_PAIRS))
    only = ctx.config.get("cases")
    cases = [c for c in cases if not only or any(o in c.name for o in only)]
    summaries, rows = [], []
    for case in cases:
        s = run_case(case, pairs)
        summaries.append(s)
        # finished cases survive a run cut short (a lent GPU's time limit): raw records so far
        (Path(ctx.out_dir) / "partial.json").write_text(json.dumps(summaries, default=str))
        rows += [dict(_row(s, p, case), **(extra(s, p) if extra else {})) for p in s["peers"]]
    ctx.extra["raw"] = summaries
    ctx.extra["figure"] = str(plot(summaries, cases, Path(ctx.out_dir) / "ratios.png", title))
    versions = {}
    for s in summaries:
        for recs in s["runs"].values():
            for r in recs:
                versions.update(r.get("versions", {}))
    ctx.extra["note"] = (
        f"{note}\n\nHarness (`experiments/_harness.py`): each implementation in its own fresh process, ours and "
        f"the peers alternating for {pairs} pairs; `ratio` = median over pairs of (peer step time / our step time) "
        "from back-to-back processes (> 1: ours faster), `ratio_min–max` its spread; step time = median of the timed "
        "calls of a process, after its first call (`*_first_s`: compilation + first run) and warm-up calls. "
        "`threads` = threads pinned for ours/peer (CPU affinity + OMP/MKL; PyTorch `set_num_threads`); `load` = median "
        "1-min load average when the processes started (the machine is shared). Versions: "
        + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
        + ".\n"
    )
    return rows


__all__ = [
    "Case",
    "Impl",
    "MIN_PAIRS",
    "Workload",
    "cores",
    "plot",
    "run_bench",
    "run_case",
    "run_impl",
    "threads",
]
_ = asdict  # dataclass helpers kept importable for callers that record configurations
