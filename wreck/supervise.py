# Process supervision, shared by the spider (which keeps N worker processes
# running) and wreck-crawl (which starts the three daemons and stops them in
# order). Each piece works on a subprocess.Popen and on a
# multiprocessing.Process alike:
#
# - die_with_parent(): a child asks Linux to send it SIGTERM when its parent
#   dies (prctl PR_SET_PDEATHSIG, prctl(2)), so a supervisor killed with -9
#   leaves no orphan crawling. Elsewhere a no-op: stop() still applies.
# - stop(): SIGTERM to every process still running, one shared grace for all
#   of them to exit (a daemon drains its batch, a worker reports its last
#   DONE), then SIGKILL for those that would not.
# - RestartBackoff: how long to wait before restarting a process that died:
#   doubling while it keeps dying young, back to the first delay after a
#   healthy run, so a crash loop costs little CPU and a rare crash little time.
# - read_ready_line(): a child says it is ready (and where it listens) on a
#   stdout line; wait for it with a deadline, with poll() rather than
#   select() (select refuses descriptors past 1023, which a parent holding
#   many sockets reaches).
# - wait_ended(): wait for a process to end, or a deadline, on a pidfd
#   (Linux 5.3+), which wakes poll() when it ends: stop() and wreck-crawl's
#   watch wake at once, where Popen.wait(timeout) sleeps in steps of up to
#   50 ms between looks.
"""die_with_parent, stop, wait_ended, RestartBackoff, read_ready_line."""

from __future__ import annotations

import ctypes
import multiprocessing.process
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import BinaryIO, Union

PR_SET_PDEATHSIG = 1  # linux/prctl.h

Process = Union[subprocess.Popen, multiprocessing.process.BaseProcess]


class SupervisionError(Exception):
    """A supervised process did not do what it should."""


class NotReady(SupervisionError):
    """No ready line within the time allowed."""


class EndedBeforeReady(SupervisionError):
    """The process closed its stdout (it exited) before its ready line."""


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """In a child process: receive `sig` when the parent dies (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):  # not Linux: the parent's stop() still applies
        pass


def own_session_dying_with_parent() -> None:
    """A subprocess preexec_fn: a session of its own (a Ctrl-C at the
    terminal reaches the parent alone, which then stops its children in its
    own order), and die_with_parent()."""
    os.setsid()
    die_with_parent()


def running(proc: Process) -> bool:
    """Whether `proc` has not exited yet (reaping it if it has)."""
    return proc.poll() is None if isinstance(proc, subprocess.Popen) else proc.is_alive()


def wait_ended(pid: int, timeout: float) -> bool:
    """Wait until process `pid` (a child not yet reaped) ends, at most
    `timeout` seconds; False at once if there is no pidfd to wait on (not
    Linux 5.3+, or it was reaped): the caller then waits its own way."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)  # readable once the process has ended
        poller.poll(max(0.0, timeout) * 1000)
    finally:
        os.close(fd)
    return True


def _wait(proc: Process, timeout: float | None) -> None:
    if isinstance(proc, subprocess.Popen):
        if timeout is not None and proc.returncode is None and wait_ended(proc.pid, timeout):
            timeout = 0  # it has ended, or the time is up: wait() only reaps it
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    else:
        proc.join(timeout)


def stop(procs: Sequence[Process], grace: float) -> list[Process]:
    """SIGTERM every process of `procs` still running, give them `grace`
    seconds in all to exit, SIGKILL the rest; the list of those killed.
    Returns once every process has exited."""
    for proc in procs:
        if running(proc):
            proc.terminate()  # SIGTERM, for both kinds
    deadline = time.monotonic() + grace
    killed = []
    for proc in procs:
        _wait(proc, max(0.0, deadline - time.monotonic()))
        if running(proc):
            proc.kill()
            _wait(proc, None)  # SIGKILL cannot be refused: this ends
            killed.append(proc)
    return killed


class RestartBackoff:
    """The delay before restarting a process that died: `first_s` after a
    run longer than `healthy_run_s`, doubled for each short run in a row,
    at most `max_s`."""

    def __init__(self, *, healthy_run_s: float, first_s: float, max_s: float) -> None:
        self.healthy_run_s, self.first_s, self.max_s = healthy_run_s, first_s, max_s
        self.short_runs = 0

    def after(self, ran_s: float) -> float:
        """A process that ran `ran_s` seconds died: seconds to wait before restarting it."""
        self.short_runs = 0 if ran_s > self.healthy_run_s else self.short_runs + 1
        return min(self.max_s, self.first_s * 2**self.short_runs)


def read_ready_line(out: BinaryIO, prefix: str, timeout: float) -> str:
    """The rest of the first line of `out` that starts with `prefix`.

    `out` must be unbuffered (Popen bufsize=0): a line already read into a
    buffer would hide from poll(). Raises NotReady after `timeout` seconds,
    EndedBeforeReady if `out` ends first.
    """
    deadline = time.monotonic() + timeout
    poller = select.poll()
    poller.register(out, select.POLLIN)
    while (left := deadline - time.monotonic()) > 0:
        if not poller.poll(left * 1000):
            break
        line = out.readline().decode("utf-8", "replace")
        if not line:
            raise EndedBeforeReady(f"stdout ended before a line starting {prefix!r}")
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    raise NotReady(f"no line starting {prefix!r} within {timeout:.0f} s")
