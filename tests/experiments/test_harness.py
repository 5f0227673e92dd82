"""The benchmark harness isolates implementations: a peer that sleeps and burns CPU in its own process cannot
change our timing, whereas the same peer inside our process does (the failure of the old in-process benches)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from experiments._harness import Case, Impl, run_case

WL = str(Path(__file__).resolve().parent / "_harness_workloads.py")
N = 200_000


def _min_times(recs, key="times_s"):
    return [min(r[key]) for r in recs]


def test_a_peer_that_sleeps_and_burns_cpu_in_process_cannot_change_our_timing(subprocess_env):
    ours = Impl("ours", f"{WL}:busy", {"n": N}, threads=1, packages=())
    benign = Impl("benign peer", f"{WL}:busy", {"n": N}, threads=1, packages=())
    greedy = Impl("greedy peer", f"{WL}:greedy", {"n": N}, threads=1, packages=())
    case = Case("isolation", ours, (benign, greedy), reps=5, warmup=0, min_time=0.0)
    s = run_case(case, pairs=2, log=lambda _: None)
    runs = s["runs"]
    for label in ("ours", "benign peer", "greedy peer"):
        assert all("error" not in r for r in runs[label]), runs[label]
    # fresh processes, A B C A B C ...: no two records share a pid; ours never sees the peer's thread
    pids = [r["pid"] for recs in runs.values() for r in recs]
    assert len(set(pids)) == len(pids) == 6
    assert all(r["info"]["threads_alive"] == 1 for r in runs["ours"])
    assert all(r["info"]["threads_alive"] == 2 for r in runs["greedy peer"])
    assert all(
        r["first_s"] >= 0 and len(r["times_s"]) >= 5 and r["affinity"] and r["threads"] == 1
        for r in runs["ours"]
    )
    assert s["peers"]["greedy peer"]["ratio"] is not None and len(s["peers"]["benign peer"]["ratios"]) == 2
    # timing: ours' median step next to the greedy peer is that of a clean process...
    ours_med = max(r["step"]["median"] for r in runs["ours"])
    # ...whereas the same greedy peer inside our process slows ours down (GIL taken by its thread): two threads
    # sharing the GIL give each about half, so ~2x expected; 1.5x leaves room for a loaded machine (1.94x seen)
    env = dict(subprocess_env, OMP_NUM_THREADS="1")
    naive = subprocess.run([sys.executable, WL, str(N)], env=env, capture_output=True, text=True, timeout=120)
    in_process = float(naive.stdout.strip().splitlines()[-1])
    assert in_process > 1.5 * ours_med, (in_process, ours_med)
    # ours' own work per call is measured as process CPU time, so a thread burning CPU beside it would at least
    # double it; CPU time of a ~7 ms call still varies by up to ~1.5x on a loaded machine (caches, frequency)
    cpu = _min_times(runs["ours"], "cpu_s")
    assert max(cpu) < 1.8 * min(cpu), cpu


def test_records_are_json_and_ratios_are_peer_over_ours():
    ours = Impl("ours", f"{WL}:busy", {"n": 4 * N}, threads=1, packages=("numpy",))
    faster = Impl("quarter", f"{WL}:busy", {"n": N}, threads=1, packages=())
    s = run_case(Case("ratio", ours, (faster,), reps=3, warmup=0, min_time=0.0), pairs=2, log=lambda _: None)
    json.dumps(s, default=float)
    r = s["peers"]["quarter"]["ratio"]
    assert 0.1 < r["median"] < 0.6  # the peer does a quarter of the work: ratio ~ 0.25
    assert s["runs"]["ours"][0]["versions"]["numpy"]
    assert os.getpid() not in [x["pid"] for x in s["runs"]["ours"]]
