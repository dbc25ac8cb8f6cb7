# Child processes for wreck-crawl: each daemon is started in its own session
# (so a Ctrl-C at the terminal reaches wreck-crawl alone, which then stops
# the children in a safe order) and dying with its parent (so a wreck-crawl
# killed with -9 leaves no orphan crawling): wreck/supervise.py does both,
# and the stop with a grace. A child announces where it listens on its first
# stdout lines; its stderr, and its stdout after those, go to a log file
# through pipes that a thread per pipe copies into a RotatingLog (so the log
# stays bounded; logfile.py): the threads only read and append, and the
# pipes are enlarged where Linux allows, so a child never waits on wreck-crawl.
# What a child must not show on its command line (the run's secret) reaches
# it in its environment, which only its own user can read. wreck-crawl's
# daemons are forked from it after their imports (fork.py); then the copying
# threads start only once every daemon is forked (start_copying()).
"""Start, watch and stop the daemons of a local crawl."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from wreck import inherited, supervise

from . import fork as forking
from .logfile import RotatingLog

READY_TIMEOUT_S = 30.0  # a daemon that has not said where it listens by then is broken
STOP_TIMEOUT_S = 30.0  # SIGTERM first; SIGKILL only after this (the store drains its batch)
DRAIN_TIMEOUT_S = 5.0  # for the last stdout lines of a child that has exited
LOG_TAIL_BYTES = 2000
LAST_WORDS_CHARS = 300  # of a dead child's last log line, quoted on wreck-crawl's stderr
PIPE_BYTES = 1 << 20  # a child's stderr pipe (64 KiB by default): slack while the copier is descheduled
COPY_CHUNK = 64 << 10  # one read of stderr; lines may be split across a rotation, never lost


class ChildFailed(Exception):
    """A daemon did not start or died; the message carries its log's tail."""


class Child:
    """One daemon started as `python -m MODULE ARGS`, its stderr in `log`."""

    def __init__(self, name: str, module: str, args: list[str], log: Path,
                 env: dict[str, str] | None = None, *, log_file: RotatingLog | None = None,
                 socks: Sequence[socket.socket] = (), fork: bool = False) -> None:
        """Start the child; `socks` are listening sockets bound for it, which
        it serves instead of binding its --listen/--http (wreck/inherited.py).
        With `fork`, a daemon command whose imports are done (fork.preload)
        is forked from this process while no other thread runs, and its
        stderr is copied once start_copying() is called; otherwise (or with
        a thread running) `python -m MODULE` is exec'd and copied at once."""
        self.name, self.log = name, log
        self._log_file = log_file or RotatingLog(log)  # 0600: logs name URLs and peers
        self._drainer: threading.Thread | None = None
        self._kept: str | None = None
        self.forked = fork and forking.can_fork()
        if socks:
            env = {**(os.environ if env is None else env), **inherited.environ(list(socks))}
        try:
            if self.forked:
                self.proc = forking.fork_daemon(module, args, dict(os.environ if env is None else env),
                                                keep=[s.fileno() for s in socks])
            else:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", module, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, preexec_fn=supervise.own_session_dying_with_parent,
                    bufsize=0,  # unbuffered, as supervise.read_ready_line needs
                    pass_fds=[s.fileno() for s in socks],
                )  # fmt: skip
        finally:
            inherited.hand_over(list(socks))  # the child's now: a dead child's port then refuses
        _enlarge(self.proc.stderr)
        self._stderr = threading.Thread(target=self._copy_stderr, name=f"{name}-stderr", daemon=True)
        if not self.forked:
            self._stderr.start()

    def start_copying(self) -> None:
        """Copy the child's stderr to its log from now on (at once without `fork`)."""
        if self._stderr.ident is None:
            self._stderr.start()

    def _copy_stderr(self) -> None:
        read = self.proc.stderr.read
        while chunk := read(COPY_CHUNK):  # empty at EOF: the child (and any child of its own) is gone
            self._log_file.write(chunk)

    def read_line(self, prefix: str, timeout: float = READY_TIMEOUT_S) -> str:
        """The rest of the first stdout line that starts with `prefix`."""
        try:
            return supervise.read_ready_line(self.proc.stdout, prefix, timeout)
        except supervise.EndedBeforeReady:
            raise ChildFailed(f"{self.name} exited ({self.proc.wait()}) before starting: {self.last_words()}") from None
        except supervise.NotReady:
            raise ChildFailed(f"{self.name} did not start within {timeout:.0f} s: {self.last_words()}") from None

    def drain(self, keep: str | None = None) -> None:
        """After start-up, copy anything else on stdout to the log, so a
        full pipe never blocks the child; the last line that starts with
        `keep` is kept for `kept()`."""

        def copy() -> None:
            for line in self.proc.stdout:
                self._log_file.write(line)
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
        """The end of the log (after the child's last stderr is copied, if it has exited)."""
        if self.proc.poll() is not None and self._stderr.ident is not None:
            self._stderr.join(DRAIN_TIMEOUT_S)
        try:
            with open(self.log, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - LOG_TAIL_BYTES))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def last_words(self) -> str:
        """The last line of the child's log (the error it died of, as a
        daemon says it: one line), and where the rest is: a user is shown
        this, not a traceback."""
        lines = [line.strip() for line in self.tail().splitlines() if line.strip()]
        last = lines[-1] if lines else "no last words"
        if len(last) > LAST_WORDS_CHARS:
            last = last[:LAST_WORDS_CHARS] + "..."
        return f"{last} (its log: {self.log})"

    def running(self) -> bool:
        return supervise.running(self.proc)

    @property
    def returncode(self) -> int | None:
        """The child's exit code (-N: signal N), None while it runs."""
        return self.proc.poll()

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, wait, SIGKILL if it will not go; its exit code, once
        its last stderr is in its log (wreck-crawl may then exit at once)."""
        supervise.stop([self.proc], timeout)
        if self._stderr.ident is not None:
            self._stderr.join(DRAIN_TIMEOUT_S)  # ends at the pipe's EOF: the child (and any child of its own) gone
        return self.proc.returncode


def _enlarge(pipe) -> None:
    """Give `pipe` PIPE_BYTES of buffer where Linux allows (F_SETPIPE_SZ), else leave it."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # not Linux, or above /proc/sys/fs/pipe-max-size for an unprivileged user: the default stands
