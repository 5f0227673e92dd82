"""`--distributed` with a peer that never starts (issue 49): a line says what is awaited, then a clear error and
exit status 3 at the timeout (before: nothing for 300 s, then SIGABRT with a C++ stack)."""

import socket
import subprocess
import sys
import time


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_missing_peer_times_out_with_a_message(tmp_path):
    port = _free_port()
    code = (
        "from jaxkit.train import initialize_distributed\n"
        f"initialize_distributed('127.0.0.1:{port}', 2, 0, initialization_timeout=3)\n"
        "print('unreachable')\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=".")
    wall = time.perf_counter() - t0
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    err = proc.stderr
    assert err.index("waiting up to 3 s") < err.index("error: distributed start timed out")
    assert (
        f"127.0.0.1:{port}" in err
        and "Check failure stack trace" not in err
        and "unreachable" not in proc.stdout
    )
    assert wall < 60
