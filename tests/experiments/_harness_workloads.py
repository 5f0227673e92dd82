"""Workloads for the harness tests (loaded by file path in the harness's worker processes)."""

import threading
import time

from experiments._harness import Workload


def _spin(n: int) -> int:
    s = 0
    for i in range(n):
        s += i
    return s


def busy(n: int = 200_000) -> Workload:
    """Ours: pure-Python work (holds the GIL), a few ms per call."""
    return Workload(lambda: _spin(n), {"threads_alive": threading.active_count()})


def greedy(n: int = 200_000) -> Workload:
    """A badly behaved peer: sleeps at setup and leaves a daemon thread burning CPU while holding the GIL
    (``sum(range(...))`` runs in C for tens of ms without releasing it)."""
    time.sleep(0.3)

    def burn() -> None:
        while True:
            sum(range(3_000_000))

    threading.Thread(target=burn, daemon=True).start()
    return Workload(lambda: time.sleep(0.002), {"threads_alive": threading.active_count()})


def naive_in_process(n: int = 200_000, reps: int = 16) -> float:
    """The failure mode the harness prevents: the greedy peer set up in our process, then ours timed (mean time
    per call: the peer's thread takes the GIL for tens of ms at a time, and which calls it lands in varies; a
    median of few calls could miss every stall, about one run in ten on a loaded machine)."""
    greedy(n)
    t0 = time.perf_counter()
    for _ in range(reps):
        _spin(n)
    return (time.perf_counter() - t0) / reps


if __name__ == "__main__":
    import sys

    print(naive_in_process(int(sys.argv[1])))
