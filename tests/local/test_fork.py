"""wreck-crawl forks its daemons after their imports (wreck/local/fork.py):
a forked daemon looks like `python -m MODULE ARGS` started afresh -- its
title, argv, environment and logging its own, its stdio the pipes its
parent reads, and of its parent's descriptors only the sockets handed to it
(so another daemon's port, or a lock, never lives on in it)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from wreck import inherited
from wreck.local import fork
from wreck.local.children import Child

# A daemon command: main() prints what it inherited as one JSON line, then
# waits for SIGTERM (the default action: it dies of it, as a daemon would).
PROBE = '''
import json, logging, os, signal, sys

def main():
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            fds[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass
    cmdline = open("/proc/self/cmdline", "rb").read().replace(b"\\0", b" ").decode()
    print("probe " + json.dumps({
        "argv": sys.argv[1:], "cmdline": cmdline, "env": os.environ.get("PROBE_ENV"),
        "parent_env": os.environ.get("PROBE_PARENT_ONLY"), "root_handlers": len(logging.getLogger().handlers),
        "sockets": sorted(fd for fd, target in fds.items() if target.startswith("socket:")),
        "inherited": os.environ.get("WRECK_LISTEN_FDS"),
        "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    }), flush=True)
    signal.pause()


if __name__ == "__main__":  # exec'd as python -m forkprobe
    main()
'''


@pytest.fixture
def probe(tmp_path, monkeypatch):
    (tmp_path / "forkprobe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PROBE_PARENT_ONLY", "yes")
    fork.preload(["forkprobe"])
    yield tmp_path
    sys.modules.pop("forkprobe", None)


def _alone_or_rerun(test: str) -> bool:
    """Whether this process runs no thread but the test's, as wreck-crawl does
    when it forks (fork.can_fork); if another test left one running, the test
    is run again, alone, in a fresh interpreter, which must pass: False."""
    if threading.active_count() == 1:
        return True
    assert not os.environ.get("WRECK_FORK_TEST_ALONE"), "a fresh interpreter runs a thread already"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{__file__}::{test}"],
                          env={**os.environ, "WRECK_FORK_TEST_ALONE": "1"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return False


def test_a_forked_daemon_looks_started_afresh_and_holds_only_its_own_sockets(probe):
    import logging

    if not _alone_or_rerun("test_a_forked_daemon_looks_started_afresh_and_holds_only_its_own_sockets"):
        return

    logging.getLogger().addHandler(logging.NullHandler())  # the parent's logging: not the child's
    mine = inherited.bind("127.0.0.1")
    mine_address = inherited.address(mine)
    other = inherited.bind("127.0.0.1")  # another daemon's port, bound before this one starts
    other_address = other.getsockname()
    env = {"PROBE_ENV": "given", "PATH": "/usr/bin:/bin"}
    old = signal.signal(signal.SIGTERM, lambda *_: None)  # as wreck-crawl's own handler
    try:
        child = Child("probe", "forkprobe", ["--flag", "value"], probe / "probe.log", env, socks=(mine,), fork=True)
    finally:
        signal.signal(signal.SIGTERM, old)
    try:
        assert child.forked
        child.start_copying()
        seen = json.loads(child.read_line("probe "))
        other.close()  # the parent lets go of the other port: nobody holds it any more
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(other_address, timeout=5).close()
    finally:
        child.stop(timeout=10)
    assert seen["argv"] == ["--flag", "value"]
    assert "-m forkprobe --flag value" in seen["cmdline"]  # what ps shows
    assert seen["env"] == "given" and seen["parent_env"] is None  # its environment, not wreck-crawl's
    assert seen["root_handlers"] == 0
    assert seen["sigterm_default"]
    assert len(seen["sockets"]) == 1 and seen["inherited"] == f"{mine_address}={seen['sockets'][0]}"
    assert child.returncode == -signal.SIGTERM


def test_with_a_thread_running_the_daemon_is_execd_instead(probe):
    release = threading.Event()
    busy = threading.Thread(target=release.wait)
    busy.start()
    try:
        child = Child("probe", "forkprobe", [], probe / "probe.log",
                      {"PROBE_ENV": "given", "PYTHONPATH": str(probe), "PATH": "/usr/bin:/bin"}, fork=True)
        assert not child.forked
        seen = json.loads(child.read_line("probe "))
        child.stop(timeout=10)
    finally:
        release.set()
        busy.join()
    assert seen["env"] == "given" and "-m forkprobe" in seen["cmdline"]
