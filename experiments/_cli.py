"""Command line of the experiment runner."""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import platform
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from ._context import (
    RunContext,
    RunFolderError,
    check_out_folder,
    claim_run_folder,
    run_folder_busy,
    run_identity,
    to_jsonable,
    write_json,
)
from ._registry import BENCHES, EXPERIMENTS, discover

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path("results")
BENCH_DOC = ROOT / "docs" / "benchmarks.md"
PUBLISHED = ROOT / "docs" / "results"  # committed copies of finished runs: docs/results/<name>/<preset>/
_PUBLISHED_FILES = ("metrics.json", "summary.md", "*.png")
_VERSIONED = ("jax", "jaxlib", "equinox", "optax", "diffrax", "flax", "numpy", "scipy")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in _VERSIONED:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    try:
        import jaxkit

        out["jaxkit"] = jaxkit.__version__
    except Exception:  # pragma: no cover
        pass
    return out


def _unknown(kind: str, name: str, valid: list[str]) -> int:
    listing = ", ".join(valid) if valid else "(none registered)"
    print(f"error: unknown {kind} {name!r}; valid {kind}s: {listing}", file=sys.stderr)
    return 2


def cmd_list(_: argparse.Namespace) -> int:
    if not EXPERIMENTS:
        print("No experiments registered.")
    else:
        print("| experiment | reproduces | presets |\n|---|---|---|")
        for name in sorted(EXPERIMENTS):
            e = EXPERIMENTS[name]
            print(f"| {name} | {e.reproduces} | {', '.join(e.presets)} |")
    if BENCHES:
        print("\n| bench | compares |\n|---|---|")
        for name in sorted(BENCHES):
            print(f"| {name} | {BENCHES[name].description} |")
    else:
        print("No benchmarks registered.")
    return 0


def command_line(name: str, preset: str, seed: int, out: Path | None = None) -> str:
    """The command that reproduces a run (recorded in its metrics.json)."""
    cmd = f"python -m experiments run {name} --preset {preset} --seed {seed}"
    return cmd + (f" --out {out}" if out is not None else "")


def _previous_invocations(path: Path) -> list[dict]:
    """Invocations recorded in an earlier ``metrics.json`` of the same run folder (resumed runs)."""
    try:
        prev = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    if isinstance(prev.get("invocations"), list):
        return list(prev["invocations"])
    if isinstance(prev.get("wall_time_s"), int | float):
        return [{"wall_time_s": prev["wall_time_s"], "finished": prev.get("finished")}]
    return []


def run_one(name: str, preset: str, seed: int, out: Path | None, resume: bool) -> dict[str, Any]:
    """Run one experiment into its run folder (default ``results/<name>/<preset>``), holding the folder's lock.

    Raises :class:`RunFolderError` if another process is writing the folder, or if ``resume`` and the folder
    belongs to another run (other experiment, preset, seed or config)."""
    exp = EXPERIMENTS[name]
    out_dir = Path(out) if out is not None else RESULTS / name / preset
    config = copy.deepcopy(exp.presets[preset])
    with _claim(out_dir, run_identity(name, preset, seed, config), resume=resume):
        ctx = RunContext(name=name, preset=preset, config=config, seed=seed, out_dir=out_dir, resume=resume)
        t0 = time.perf_counter()
        metrics = exp.run(ctx)
        wall = time.perf_counter() - t0
        if not _primary():  # multi-process run: process 0 writes the records
            return {"experiment": name, "metrics": metrics}
        finished = time.strftime("%Y-%m-%dT%H:%M:%S")
        invocations = _previous_invocations(out_dir / "metrics.json") if resume else []
        invocations.append({"wall_time_s": wall, "finished": finished})
        record = {
            "experiment": name,
            "reproduces": exp.reproduces,
            "preset": preset,
            "seed": seed,
            "config": exp.presets[preset],
            "versions": versions(),
            "wall_time_s": wall,
            "finished": finished,
            # every invocation that wrote this run folder (a --resume reuses the stages of the earlier ones)
            "invocations": invocations,
            "wall_time_total_s": sum(i["wall_time_s"] for i in invocations),
            "command": command_line(name, preset, seed, out),
            "anchors": [{"path": a.path, "value": a.value, "source": a.source} for a in exp.anchors],
            "metrics": metrics,
        }
        write_json(out_dir / "metrics.json", record)
        if not (out_dir / "summary.md").exists():
            (out_dir / "summary.md").write_text(
                f"# {name}\n\nPreset `{preset}`, seed {seed}, {wall:.1f} s.\n"
            )
    print(f"[{name}] done in {wall:.1f} s -> {out_dir / 'metrics.json'}")
    return record


def _primary() -> bool:
    from jaxkit.train import is_primary

    return is_primary()


@contextlib.contextmanager
def _claim(out_dir: Path, identity: dict, *, resume: bool):
    """:func:`claim_run_folder` for one run of one or several processes sharing a filesystem (``--distributed``):
    process 0 holds the lock and writes ``run.json``, the others learn its outcome, and the folder is released
    only after every process has finished (a barrier)."""
    import jax

    if jax.process_count() == 1:
        with claim_run_folder(out_dir, identity, resume=resume):
            yield
        return
    import numpy as np
    from jax.experimental import multihost_utils

    with contextlib.ExitStack() as stack:
        error = None
        if _primary():
            try:
                stack.enter_context(claim_run_folder(out_dir, identity, resume=resume))
            except RunFolderError as e:
                error = e
        if not int(multihost_utils.broadcast_one_to_all(np.int32(error is None))):
            raise error or RunFolderError(
                f"run folder {out_dir}: process 0 could not claim it (see its error)"
            )
        yield
        multihost_utils.sync_global_devices(f"experiments_run_done_{out_dir}")


_FLAGS = {"coordinator": "--coordinator", "n_processes": "--num-processes", "process_id": "--process-id"}


def _start_distributed(args: argparse.Namespace) -> str | None:
    """``--distributed``: ``jax.distributed.initialize`` (auto-detected cluster, or the explicit coordinator),
    before any JAX computation. Returns an error message for inconsistent flags."""
    given = [f for f in ("coordinator", "n_processes", "process_id") if getattr(args, f, None) is not None]
    if not getattr(args, "distributed", False):
        return f"{_FLAGS[given[0]]} needs --distributed" if given else None
    if given and args.n_processes != 1 and len(given) < 3:
        return "--distributed: give all of --coordinator, --num-processes and --process-id, or none (auto-detect)"
    from jaxkit.train import initialize_distributed

    initialize_distributed(args.coordinator, args.n_processes, args.process_id)
    return None


def _run_child(name: str, preset: str, seed: int, out: Path | None, resume: bool) -> str | None:
    """Run one experiment of ``run all`` in a fresh Python process; returns why it failed, or None.

    One process per experiment bounds the memory of the suite by its largest experiment: in a single process
    the compiled XLA executables of every experiment accumulate until LLVM cannot map more memory (the main job
    died that way, a segmentation fault after ``LLVM compilation error: Cannot allocate memory``)."""
    sys.stdout.flush()
    sys.stderr.flush()
    rc = subprocess.run(_child_cmd(name, preset, seed, out, resume), check=False).returncode
    return _child_problem(rc, "its error is printed above")


def _child_cmd(name: str, preset: str, seed: int, out: Path | None, resume: bool) -> list[str]:
    cmd = [sys.executable, "-m", "experiments", "run", name, "--preset", preset, "--seed", str(seed)]
    if out is not None:
        cmd += ["--out", str(out)]
    if resume:
        cmd.append("--resume")
    return cmd


def _child_problem(rc: int, where: str) -> str | None:
    if rc == 0:
        return None
    if rc < 0:
        return f"killed by signal {signal.Signals(-rc).name} (exit {rc})"
    return f"exit status {rc} ({where})"


# Wall seconds of each experiment's quick preset (2026-12-06, 2 cores, one at a time): `run all --jobs N` starts the
# longest first so that the processes finish together; an experiment not listed (a new one) starts first.
_QUICK_SECONDS = {
    "ssm_expressivity": 408, "sigmadock": 406, "rno_benchmarks": 337, "lno_suite": 207, "pde_datasets": 136,
    "stable": 107, "sparse_parity": 104, "grokking": 77, "docking_real": 58, "next_token": 49,
    "stable_ablation": 33, "saddle_to_saddle": 29, "stability_ablation": 24, "stability_sweep": 20,
}  # fmt: skip


def _tail(path: Path, n: int = 40) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in lines[-n:])


def _start_child(name: str, args: argparse.Namespace, out: Path | None, logs: Path) -> tuple:
    log = (logs / f"{name}.log").open("w")
    cmd = _child_cmd(name, args.preset, args.seed, out, args.resume)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    print(f"  started {name}", flush=True)
    return proc, log, time.perf_counter()


def _report_child(name: str, rc: int, t0: float, logs: Path, count: str) -> str | None:
    """One line for a finished child (a failure with its log's last lines, on stderr); returns its problem."""
    minutes = (time.perf_counter() - t0) / 60
    problem = _child_problem(rc, f"see {logs / (name + '.log')}")
    if problem is None:
        print(f"[{count}] {name} passed in {minutes:.1f} min", flush=True)
    else:
        print(
            f"[{count}] {name} FAILED after {minutes:.1f} min: {problem}; its last lines:\n"
            + _tail(logs / f"{name}.log"),
            file=sys.stderr,
            flush=True,
        )
    return problem


def _stop_children(running: dict) -> None:
    """Ctrl-C: SIGINT to every running child (each stops at a stage and resumes with ``--resume``)."""
    for proc, _log, _ in running.values():
        proc.send_signal(signal.SIGINT)
    for proc, log, _ in running.values():
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _run_pool(
    names: list[str], args: argparse.Namespace, outs: dict[str, Path | None], jobs: int
) -> list[str]:
    """``run all --jobs N``: every experiment in its own process (as :func:`_run_child`), ``N`` at a time, the
    longest first. Each one's output goes to a log file (their progress bars would interleave); one line per
    start and finish, a line a minute naming what still runs, and a failure's last log lines. Returns the
    failures. Ctrl-C stops every running experiment (each resumes with ``--resume``)."""
    import tempfile

    order = sorted(names, key=lambda n: -_QUICK_SECONDS.get(n, float("inf")))
    logs = Path(tempfile.mkdtemp(prefix="jaxkit_run_all_"))
    print(
        f"Running {len(order)} experiments ({args.preset}), {jobs} at a time, longest first; each one's output "
        f"goes to {logs}/NAME.log",
        flush=True,
    )
    pending, running, failed, done = list(order), {}, [], 0
    t_start = last_note = time.perf_counter()
    try:
        while pending or running:
            while pending and len(running) < jobs:
                name = pending.pop(0)
                running[name] = _start_child(name, args, outs[name], logs)
            time.sleep(0.5)
            for name, (proc, log, t0) in list(running.items()):
                rc = proc.poll()
                if rc is not None:
                    log.close()
                    del running[name]
                    done += 1
                    problem = _report_child(name, rc, t0, logs, f"{done}/{len(order)}")
                    failed += [f"{name}: {problem}"] if problem else []
            if running and time.perf_counter() - last_note >= 60:
                last_note = time.perf_counter()
                now = ", ".join(f"{n} ({(last_note - t0) / 60:.1f} min)" for n, (_, _, t0) in running.items())
                print(
                    f"  ... {(last_note - t_start) / 60:.1f} min: running {now}; {len(pending)} waiting",
                    flush=True,
                )
    except KeyboardInterrupt:
        _stop_children(running)
        raise
    return failed


def _check_run_args(args: argparse.Namespace, names: list[str]) -> tuple[dict[str, Path | None], str | None]:
    """Every preset and ``--out`` checked before any work: the run folder of each experiment, or an error."""
    for name in names:
        presets = list(EXPERIMENTS[name].presets)
        if args.preset not in presets:
            return (
                {},
                f"experiment {name!r} has no preset {args.preset!r}; valid presets: {', '.join(presets)}",
            )
    outs = {
        name: Path(args.out) / name
        if (args.out and len(names) > 1)
        else (Path(args.out) if args.out else None)
        for name in names
    }
    try:  # every --out before any work (each is checked again when its run claims it)
        for out in [Path(args.out)] if args.out else []:
            if out.exists() and not out.is_dir():
                raise RunFolderError(
                    f"--out {out} is an existing file, not a folder; choose a new or empty folder"
                )
        for out in outs.values():
            if out is not None:
                check_out_folder(out)
    except RunFolderError as e:
        return {}, str(e)
    return outs, None


def _run_in_process(name: str, args: argparse.Namespace, out: Path | None, alone: bool) -> str | None:
    """One experiment in this process; returns why it failed (``run all`` goes on), or None. Alone, an
    experiment's exception propagates; a run-folder guard is one clear line either way."""
    try:
        run_one(name, args.preset, args.seed, out, args.resume)
    except RunFolderError as e:  # a guard, not a crash: one clear line
        print(f"error: {e}", file=sys.stderr)
        return f"{name}: {e}"
    except Exception as e:  # keep going in `run all`, report at the end
        if alone:
            raise
        import traceback

        traceback.print_exc()
        return f"{name}: {type(e).__name__}: {e}"
    return None


def cmd_run(args: argparse.Namespace) -> int:
    names = sorted(EXPERIMENTS) if args.name == "all" else [args.name]
    if args.name != "all" and args.name not in EXPERIMENTS:
        return _unknown("experiment", args.name, sorted(EXPERIMENTS))
    if not names:
        print("No experiments registered; nothing to run.")
        return 0
    outs, error = _check_run_args(args, names)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    failed = []
    isolate = len(names) > 1 and not getattr(args, "distributed", False)
    jobs = getattr(args, "jobs", 1)
    if jobs > 1 and not isolate:
        print("error: --jobs runs several experiments at once: use it with `run all` (without --distributed)",
              file=sys.stderr)  # fmt: skip
        return 2
    if jobs > 1:
        failed, names = _run_pool(names, args, outs, jobs), []  # every experiment ran in the pool
    for name in names:
        if isolate:  # `run all`: each experiment in its own process (see _run_child)
            problem = _run_child(name, args.preset, args.seed, outs[name], args.resume)
            problem = problem and f"{name}: {problem}"
        else:
            problem = _run_in_process(name, args, outs[name], alone=len(names) == 1)
            if problem and len(names) == 1:
                return 2
        if problem:
            failed.append(problem)
    if failed:
        print("Failed experiments:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def markdown_table(rows: list[dict]) -> str:
    if not rows:
        return "(no rows)\n"
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def write_bench_section(name: str, text: str, doc: Path = BENCH_DOC) -> None:
    """Replace (or append) the section between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->``."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    body = doc.read_text() if doc.exists() else "# Benchmarks\n"
    block = f"{start}\n{text.rstrip()}\n{end}"
    if start in body and end in body:
        pre, rest = body.split(start, 1)
        _, post = rest.split(end, 1)
        body = pre + block + post
    else:
        body = body.rstrip() + "\n\n" + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(body)


def _bench_section(name: str, description: str, table: str, ctx: RunContext, figure: str | None) -> str:
    import os

    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    fig = f"![{name}: per-pair ratios](benchmarks/{name}.png)\n\n" if figure else ""
    return (
        f"## {name}\n\n{description}\n\nMeasured {time.strftime('%Y-%m-%d %H:%M')} with "
        f"`python -m experiments bench {name}` ({platform.machine()}, {ctx.extra.get('device', 'CPU')}, "
        f"{os.cpu_count()} cores; load average at the end {load}).\n\n{fig}{table}\n{ctx.extra.get('note', '')}"
    )


def _import_bench_only(args: argparse.Namespace) -> bool:
    """``bench NAME`` imports only ``experiments/bench_NAME.py`` (a GPU machine needs jax, not RDKit or Vina);
    every other command, and an unknown name, imports every experiment module."""
    import importlib.util

    name = getattr(args, "name", None)
    if args.cmd != "bench" or not name or name == "all":
        return False
    module = f"experiments.bench_{name}"
    if importlib.util.find_spec(module) is None:
        return False
    importlib.import_module(module)
    return True


def cmd_bench(args: argparse.Namespace) -> int:
    """Run benchmarks through the harness (``experiments/_harness.py``); rewrite their docs sections and figures."""
    import shutil

    if args.name != "all" and args.name not in BENCHES:
        return _unknown("bench", args.name, sorted(BENCHES))
    names = sorted(BENCHES) if args.name == "all" else [args.name]
    if not names:
        print("No benchmarks registered.")
        return 0
    write_docs = not args.no_docs and args.pairs >= 5 and not args.cases
    for name in names:
        b = BENCHES[name]
        config = {"pairs": args.pairs, "cases": args.cases}
        ctx = RunContext(
            name=f"bench-{name}",
            preset="bench",
            config=config,
            seed=args.seed,
            out_dir=RESULTS / f"bench_{name}",
            extra={"write_docs": write_docs},
        )
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        rows = b.run(ctx)
        table = markdown_table(rows)
        print(f"\n## bench {name}: {b.description}\n\n{table}")
        write_json(
            ctx.out_dir / "bench.json",
            {
                "bench": name,
                "versions": versions(),
                "config": config,
                "rows": rows,
                "raw": ctx.extra.get("raw"),
            },
        )
        figure = ctx.extra.get("figure")
        if write_docs:
            if figure:
                dst = BENCH_DOC.parent / "benchmarks" / f"{name}.png"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(figure, dst)
            write_bench_section(name, _bench_section(name, b.description, table, ctx, figure))
        elif not args.no_docs:
            print("docs/benchmarks.md not rewritten: it needs >= 5 pairs and all cases (--pairs, --cases)")
    return 0


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}/{k}" if prefix else str(k)))
    else:
        out[prefix] = d
    return out


_REPORT_HEADER = "# jaxkit results report"


def _report_refusal(root: Path, report: Path, *, explicit: bool) -> str | None:
    """Why ``report`` cannot be written, or None: an explicit ``--results`` that is not a folder, or a ``report``
    that exists and is not a report this command wrote (a user's own file)."""
    if explicit and not root.is_dir():  # an explicit --results must be a results folder
        what = "is a file, not a folder" if root.exists() else "does not exist"
        return f"error: --results {root} {what}; give the folder that holds the runs"
    if report.exists() and not report.is_file():
        return f"error: --results {root}: {report} exists and is not a file"
    if report.is_file() and not report.read_text(errors="replace").startswith(_REPORT_HEADER):
        return (
            f"error: --results {root}: {report} exists and was not written by this command (it does not start "
            f"with {_REPORT_HEADER!r}); move it away or give another folder"
        )
    return None


def cmd_report(args: argparse.Namespace) -> int:
    root = Path(args.results if args.results is not None else RESULTS)
    report = root / "REPORT.md"
    refusal = _report_refusal(root, report, explicit=args.results is not None)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    files = sorted(root.glob("**/metrics.json")) if root.exists() else []
    lines = [_REPORT_HEADER, ""]
    if not files:
        lines.append(f"No results found under `{root}/*/metrics.json`. Run `python -m experiments run all`.")
    else:
        lines += [
            "| experiment | preset | seed | metric | ours | anchor | source |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in files:
            try:
                rec = json.loads(f.read_text())
            except json.JSONDecodeError as e:
                lines.append(f"| {f.parent.name} | | | (unreadable metrics.json: {e}) | | | |")
                continue
            flat = _flatten(rec.get("metrics", {}))
            anchors = rec.get("anchors", [])
            shown = set()
            for a in anchors:
                ours = flat.get(a["path"], "n/a")
                shown.add(a["path"])
                lines.append(
                    f"| {rec.get('experiment', f.parent.name)} | {rec.get('preset', '')} | "
                    f"{rec.get('seed', '')} | {a['path']} | {_fmt(ours)} | {_fmt(a['value'])} | {a['source']} |"
                )
            if not anchors:
                for k, v in list(flat.items())[:20]:
                    if isinstance(v, int | float) and k not in shown:
                        lines.append(
                            f"| {rec.get('experiment', f.parent.name)} | {rec.get('preset', '')} | "
                            f"{rec.get('seed', '')} | {k} | {_fmt(v)} | | |"
                        )
    text = "\n".join(lines) + "\n"
    root.mkdir(parents=True, exist_ok=True)
    report.write_text(text)
    print(text)
    print(f"wrote {root / 'REPORT.md'}")
    # the docs' Reproductions pages, from the committed runs in docs/results/ (see experiments/_report.py)
    from . import _report

    written = _report.write_pages(reproduces={n: e.reproduces for n, e in EXPERIMENTS.items()})
    print(f"wrote {len(written)} Reproductions pages from {_report.PUBLISHED} into {_report.PAGES}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Copy a finished run's metrics.json, summary.md and figures into ``docs/results/<name>/<preset>/``."""
    import shutil

    src = Path(args.results) / args.name / args.preset if args.src is None else Path(args.src)
    if not (src / "metrics.json").exists():
        print(f"error: {src / 'metrics.json'} does not exist; run the experiment first", file=sys.stderr)
        return 2
    busy = run_folder_busy(src)
    if busy is not None:
        print(
            f"error: {src} is being written by a run in progress ({busy}); publish it when it has finished",
            file=sys.stderr,
        )
        return 2
    rec = json.loads((src / "metrics.json").read_text())
    if rec.get("experiment") != args.name or rec.get("preset") != args.preset:
        print(
            f"error: {src} holds experiment {rec.get('experiment')!r} preset {rec.get('preset')!r}, "
            f"not {args.name!r} {args.preset!r}",
            file=sys.stderr,
        )
        return 2
    dst = PUBLISHED / args.name / args.preset
    dst.mkdir(parents=True, exist_ok=True)
    copied = []
    for pattern in _PUBLISHED_FILES:
        for f in sorted(src.glob(pattern)):
            shutil.copy2(f, dst / f.name)
            copied.append(f.name)
    print(f"published {', '.join(copied)} -> {dst}")
    return 0


def _int_at_least(minimum: int, below: int | None = None):
    """An argparse ``type``: an integer in ``[minimum, below)``; argparse names the flag in the error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, received {text!r}") from None
        if value < minimum or (below is not None and value >= below):
            bound = f" and < {below}" if below is not None else ""
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}{bound}, received {value}")
        return value

    return parse


_SEED = _int_at_least(0, 2**32)


def _folder(text: str) -> str:
    """An argparse ``type``: a folder path, not empty (``--out ""`` ran into the default folder without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a folder path, received {text!r}")
    return text


class _Parser(argparse.ArgumentParser):
    """Command-line errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> None:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def add_distributed_flags(p: argparse.ArgumentParser) -> None:
    """``--distributed [--coordinator HOST:PORT --num-processes N --process-id I]`` (see docs: Scaling out)."""
    g = p.add_argument_group("multi-process (JAX multi-controller)")
    g.add_argument(
        "--distributed",
        action="store_true",
        help="run as one of several processes (jax.distributed.initialize; auto-detected under SLURM, Open MPI "
        "and on TPU pods) and split training batches over every device of every process",
    )
    g.add_argument("--coordinator", default=None, metavar="HOST:PORT", help="address of process 0")
    g.add_argument("--num-processes", dest="n_processes", type=_int_at_least(1), default=None, metavar="N")
    g.add_argument("--process-id", type=_int_at_least(0), default=None, metavar="I")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m experiments", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list experiments and benchmarks")
    p_run = sub.add_parser("run", help="run an experiment (or all)")
    p_run.add_argument("name")
    p_run.add_argument("--preset", default="quick")
    p_run.add_argument("--seed", type=_SEED, default=0)
    p_run.add_argument(
        "--out",
        type=_folder,
        default=None,
        help="run folder (default results/NAME/PRESET; with `run all`, one subfolder per experiment): a new or "
        "empty folder, or a run folder, which is started over (only what its runs wrote is removed; a folder "
        "holding anything else is refused) unless --resume",
    )
    p_run.add_argument("--resume", action="store_true", help="continue the run in --out from its last stage")
    p_run.add_argument(
        "--jobs",
        type=_int_at_least(1),
        default=1,
        metavar="N",
        help="with `run all`: run N experiments at a time, each in its own process, its output in a log file "
        "(default 1; the timings an experiment records are then measured beside another run)",
    )
    add_distributed_flags(p_run)
    p_bench = sub.add_parser("bench", help="run a side-by-side benchmark (or all)")
    p_bench.add_argument("name")
    p_bench.add_argument("--seed", type=_SEED, default=0)
    p_bench.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    p_bench.add_argument(
        "--pairs",
        type=_int_at_least(1),
        default=5,
        help="alternating ours/peer process pairs (>= 5 for docs)",
    )
    p_bench.add_argument(
        "--cases", nargs="*", default=None, help="only cases whose name contains one of these"
    )
    p_report = sub.add_parser("report", help="collect results/*/metrics.json into results/REPORT.md")
    p_report.add_argument(
        "--results",
        type=_folder,
        default=None,
        help=f"folder of the runs (default {RESULTS}; created if absent)",
    )
    p_pub = sub.add_parser(
        "publish", help="copy results/NAME/PRESET/{metrics.json,summary.md,*.png} to docs/results/"
    )
    p_pub.add_argument("name")
    p_pub.add_argument("--preset", default="paper")
    p_pub.add_argument("--results", type=_folder, default=str(RESULTS))
    p_pub.add_argument("--src", default=None, help="run folder (default results/NAME/PRESET)")
    args = parser.parse_args(argv)
    if args.cmd == "run" and args.out and args.name != "all":  # before --distributed waits for its peers
        try:
            check_out_folder(Path(args.out))
        except RunFolderError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    problem = _start_distributed(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if not _import_bench_only(args):
        discover()
    cmds = {
        "list": cmd_list,
        "run": cmd_run,
        "bench": cmd_bench,
        "report": cmd_report,
        "publish": cmd_publish,
    }
    return cmds[args.cmd](args)


__all__ = ["main", "markdown_table", "to_jsonable", "versions", "write_bench_section"]
