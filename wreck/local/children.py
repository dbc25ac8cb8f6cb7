# Child processes for wreck-crawl: each daemon is started in its own session
# (so a Ctrl-C at the terminal reaches wreck-crawl alone, which then stops
# the children in a safe order) and with PR_SET_PDEATHSIG (so a wreck-crawl
# killed with -9 leaves no orphan crawling). A child announces where it
# listens on its first stdout lines; its stderr goes to a log file.
"""Start, watch and stop the daemons of a local crawl."""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from wreck.private import private_open

PR_SET_PDEATHSIG = 1
READY_TIMEOUT_S = 30.0  # a daemon that has not said where it listens by then is broken
STOP_TIMEOUT_S = 30.0  # SIGTERM first; SIGKILL only after this (the store drains its batch)
LOG_TAIL_BYTES = 2000
DRAIN_TIMEOUT_S = 5.0  # for the last stdout lines of a child that has exited


class ChildFailed(Exception):
    """A daemon did not start or died; the message carries its log's tail."""


def _die_with_parent() -> None:
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: stop() still applies
        pass


class Child:
    """One daemon started as `python -m MODULE ARGS`, its stderr in `log`."""

    def __init__(self, name: str, module: str, args: list[str], log: Path) -> None:
        self.name, self.log = name, log
        self._log_file = private_open(log, "ab")  # 0600: logs name URLs and peers
        self._drainer: threading.Thread | None = None
        self._kept: str | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=self._log_file, preexec_fn=_die_with_parent,
            bufsize=0,  # unbuffered: a line already read into a buffer would hide from select()
        )  # fmt: skip

    def read_line(self, prefix: str, timeout: float = READY_TIMEOUT_S) -> str:
        """The rest of the first stdout line that starts with `prefix`."""
        deadline = time.monotonic() + timeout
        out = self.proc.stdout
        # poll, not select: select() refuses descriptors past 1023, which a
        # parent holding many sockets (the chaos driver's test web) reaches.
        poller = select.poll()
        poller.register(out, select.POLLIN)
        while (left := deadline - time.monotonic()) > 0:
            if not poller.poll(left * 1000):
                break
            line = out.readline().decode("utf-8", "replace")
            if not line:
                raise ChildFailed(f"{self.name} exited ({self.proc.wait()}) before starting:\n{self.tail()}")
            if line.startswith(prefix):
                return line[len(prefix) :].strip()
        raise ChildFailed(f"{self.name} did not start within {timeout:.0f} s:\n{self.tail()}")

    def drain(self, keep: str | None = None) -> None:
        """After start-up, copy anything else on stdout to the log, so a
        full pipe never blocks the child; the last line that starts with
        `keep` is kept for `kept()`."""

        def copy() -> None:
            for line in self.proc.stdout:
                self._log_file.write(line)
                self._log_file.flush()
                if keep is not None and line.startswith(keep.encode()):
                    self._kept = line[len(keep) :].decode("utf-8", "replace").strip()

        self._drainer = threading.Thread(target=copy, name=f"{self.name}-stdout", daemon=True)
        self._drainer.start()

    def kept(self, timeout: float = DRAIN_TIMEOUT_S) -> str | None:
        """After the child exited: the rest of the last line drain() kept, if any."""
        if self._drainer is not None:
            self._drainer.join(timeout)  # the pipe ends with the child (and any child of its own)
        return self._kept

    def tail(self) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - LOG_TAIL_BYTES))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, wait, SIGKILL if it will not go; its exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
