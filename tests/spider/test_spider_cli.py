# The spider command: bad arguments fail clearly, SIGTERM stops the
# supervisor and every worker (no orphans), a refused worker stops it all.
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

SPIDER = [sys.executable, "-m", "wreck.spider.cli"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children(pid: int) -> list[int]:
    try:
        text = open(f"/proc/{pid}/task/{pid}/children").read()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_bad_connect_argument_is_a_clear_error():
    out = subprocess.run([*SPIDER, "--connect", "nonsense"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "HOST:PORT" in out.stderr and "Traceback" not in out.stderr


def test_sigterm_stops_every_worker():
    env = {**os.environ, "WRECK_SECRET": ""}
    proc = subprocess.Popen([*SPIDER, "--connect", f"127.0.0.1:{free_port()}", "--procs", "2"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 20
        while len(workers := children(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        # the workers are the supervisor's children (forked)
        assert len(workers) >= 2
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 30  # a loaded machine starts workers slowly
        while not any("cannot connect" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        reader.join(10)
        stderr = "".join(lines)
        assert "cannot connect" in stderr and "Traceback" not in stderr
        deadline = time.monotonic() + 5
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [w for w in workers if alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
