# Starting a daemon of a local crawl by forking wreck-crawl itself, after it
# has imported the daemons' commands and what their runs import (each cli's
# PRELOAD): one interpreter start and one set of imports for the whole crawl
# instead of one per daemon (about 0.2 CPU-s each, issue 16). The child is a
# multiprocessing "fork" Process (its bootstrap ends the child with
# os._exit after joining its threads, as the spider's workers end), made to
# look like `python -m MODULE ARGS` started afresh:
#   - the stop signals are blocked across the fork and put back to Python's
#     defaults in the child before they are unblocked (wreck-crawl's own
#     handlers would set *its* stop flag from the daemon);
#   - a session of its own, dying with wreck-crawl (wreck/supervise.py);
#   - stdin /dev/null, stdout and stderr the pipes wreck-crawl reads;
#   - every other descriptor inherited from wreck-crawl (another daemon's
#     listening socket or pipe, the data directory's lock) is pointed at
#     /dev/null, keeping only the sockets handed to it (wreck/inherited.py):
#     so a dead daemon's port refuses connections and no lock outlives its
#     owner, as with exec's close_fds; the numbers stay taken, so a Python
#     object of wreck-crawl's that still names one never closes a daemon's;
#   - its own environment, logging from scratch, sys.argv, and the process
#     title `python -m MODULE ARGS` (setproctitle: what ps, the tests and
#     bench/ read to tell the daemons apart).
# Forking is safe only while wreck-crawl runs no other thread (a lock held
# by one would stay held in the child): run.py starts every daemon before
# any of its threads; with a thread running, the daemon is exec'd instead.
"""preload(), can_fork(), fork_daemon(): a daemon as a forked child of wreck-crawl."""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from wreck import supervise

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # wreck-crawl's (run.py)
POLL_S = 0.05  # a join's look at the child where there is no pidfd (as Popen.wait's steps)
_CONTEXT = multiprocessing.get_context("fork")


def preload(modules: Sequence[str]) -> None:
    """Import each daemon command in `modules` and what its run imports
    (the command's PRELOAD), so that forked daemons find them imported."""
    for name in modules:
        module = importlib.import_module(name)
        for more in getattr(module, "PRELOAD", ()):
            importlib.import_module(more)


def can_fork() -> bool:
    """Whether a fork is safe now: no thread but this one runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


class Forked:
    """A forked daemon as wreck-crawl sees a subprocess.Popen (pid, stdout,
    stderr: unbuffered pipes, poll(), wait(), returncode), and as
    wreck/supervise.py drives a multiprocessing process (is_alive(), join(),
    terminate(), kill())."""

    def __init__(self, process: multiprocessing.process.BaseProcess, stdout, stderr) -> None:
        self.process, self.stdout, self.stderr = process, stdout, stderr
        self.pid = process.pid
        self.is_alive = process.is_alive
        self.terminate, self.kill = process.terminate, process.kill

    def join(self, timeout: float | None = None) -> None:
        """Wait for the child to exit, at most `timeout` seconds (None: for
        ever). Not multiprocessing's join(timeout): its sentinel pipe is
        among the descriptors the child released, so it reads as ended at
        once and the join then blocks in waitpid() with no bound."""
        if timeout is not None:
            if self.process.exitcode is None and not supervise.wait_ended(self.pid, timeout):
                deadline = time.monotonic() + timeout  # no pidfd: look now and then
                while self.process.exitcode is None and time.monotonic() < deadline:
                    time.sleep(POLL_S)
            if self.process.exitcode is None:
                return
        self.process.join()

    @property
    def returncode(self) -> int | None:
        """The exit code, -N for a signal N, or None while it runs (reaping it if it has ended)."""
        return self.process.exitcode

    def poll(self) -> int | None:
        return self.process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired(self.process.name, timeout)
        return self.process.exitcode


def fork_daemon(module: str, args: list[str], env: dict[str, str], *, keep: Sequence[int] = ()) -> Forked:
    """Start `module`'s main() with `args` in a forked child, with `env` as
    its environment and `keep` (listening sockets) its only descriptors
    beside its stdio; its stdout and stderr are pipes read here."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    proc = _CONTEXT.Process(target=_child, args=(module, list(args), dict(env), out_w, err_w, tuple(keep)),
                            name=module, daemon=False)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        proc.start()
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(out_w)  # the child's now: EOF here when it (and any child of its own) is gone
    os.close(err_w)
    return Forked(proc, os.fdopen(out_r, "rb", buffering=0), os.fdopen(err_r, "rb", buffering=0))


def _child(module: str, args: list[str], env: dict[str, str], stdout: int, stderr: int, keep: tuple[int, ...]) -> None:
    """In the child: become `python -m module args`, then run its main()."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    supervise.own_session_dying_with_parent()
    _title(module, args)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    for fd in _open_fds():
        if fd > 2 and fd not in keep and fd != null:
            try:
                os.dup2(null, fd)  # released, yet the number stays taken (see the opening comment)
            except OSError:
                pass  # closed meanwhile (the listing's own descriptor)
    _std_streams()
    os.environ.clear()
    os.environ.update(env)
    root = logging.getLogger()
    for handler in list(root.handlers):  # the daemon configures its own
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    sys.argv = [module, *args]
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    importlib.import_module(module).main()


def _std_streams() -> None:
    """sys.stdout and sys.stderr anew on descriptors 1 and 2, as Python
    makes them for pipes (the parent's may be a terminal's, or not on 1 and
    2 at all under a test's capture): stdout block-buffered (a daemon
    flushes the lines its parent waits for), stderr line-buffered."""
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    sys.stdout = sys.__stdout__ = open(1, "w", encoding=encoding, closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, encoding=encoding, errors="backslashreplace",
                                       closefd=False)


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: every descriptor up to the limit
        return list(range(3, os.sysconf("SC_OPEN_MAX")))


def _title(module: str, args: list[str]) -> None:
    """The process title an exec'd daemon would have (ps, /proc/PID/cmdline)."""
    try:
        from setproctitle import setproctitle
    except ImportError:  # pragma: no cover - a dependency; without it ps shows wreck-crawl's line
        return
    title = " ".join([sys.executable, "-m", module, *args])
    # a path that is no UTF-8 (--data $'\xff') is in args as surrogates, which a title cannot hold
    setproctitle(title.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
