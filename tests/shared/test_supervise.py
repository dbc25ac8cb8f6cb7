"""Process supervision shared by the spider and wreck-crawl (wreck/supervise.py)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from wreck import supervise

OBEYS_SIGTERM = ("import signal, sys\n"
                 "signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))\n"
                 "print('ready', flush=True)\n"
                 "signal.pause()\n")
IGNORES_SIGTERM = ("import signal, time\n"
                   "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                   "print('ready', flush=True)\n"
                   "time.sleep(600)\n")


def _start(code: str, **kwargs) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, bufsize=0, **kwargs)
    assert supervise.read_ready_line(proc.stdout, "ready", timeout=30) == ""
    return proc


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] == "Z"  # a zombie is gone for our purpose
    except FileNotFoundError:
        return True


def test_stop_lets_a_process_that_obeys_sigterm_exit_by_itself():
    proc = _start(OBEYS_SIGTERM)
    assert supervise.stop([proc], grace=30) == []
    assert proc.returncode == 3


def test_stop_kills_what_ignores_sigterm_once_the_grace_is_over():
    obeys, ignores = _start(OBEYS_SIGTERM), _start(IGNORES_SIGTERM)
    assert supervise.stop([ignores, obeys], grace=0.5) == [ignores]
    assert ignores.returncode == -signal.SIGKILL and obeys.returncode == 3


def test_wait_ended_returns_once_the_process_has_ended_and_not_before():
    proc = _start(OBEYS_SIGTERM)
    if not supervise.wait_ended(proc.pid, 0):
        proc.kill()
        proc.wait()
        pytest.skip("no pidfd here (Linux < 5.3): callers poll instead")
    assert proc.poll() is None  # the time was up, it runs on
    proc.terminate()
    assert supervise.wait_ended(proc.pid, 30)
    assert proc.poll() == 3  # it has ended: reaped at once


def test_stop_handles_multiprocessing_workers_and_what_has_already_exited():
    ctx = multiprocessing.get_context("spawn")
    worker = ctx.Process(target=time.sleep, args=(600,))
    worker.start()
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert supervise.stop([worker, done], grace=30) == []
    assert worker.exitcode == -signal.SIGTERM and not supervise.running(worker)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_parent_even_one_killed_with_9():
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from wreck import supervise\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],\n"
        "                         preexec_fn=supervise.own_session_dying_with_parent)\n"
        "print('ready', child.pid, flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE, bufsize=0)
    child = int(supervise.read_ready_line(parent.stdout, "ready", timeout=30))
    assert os.getsid(child) == child  # a session of its own: a terminal's Ctrl-C reaches only the parent
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _gone(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the child outlived its parent")


def test_restart_backoff_doubles_while_a_process_dies_young_and_resets_after_a_healthy_run():
    backoff = supervise.RestartBackoff(healthy_run_s=30, first_s=0.5, max_s=60)
    assert [backoff.after(1) for _ in range(3)] == [1, 2, 4]
    assert backoff.after(31) == 0.5
    assert max(backoff.after(0) for _ in range(20)) == 60


def test_the_ready_line_is_the_first_with_its_prefix():
    proc = subprocess.Popen([sys.executable, "-c", "print('starting'); print('listening on 127.0.0.1:7')"],
                            stdout=subprocess.PIPE, bufsize=0)
    assert supervise.read_ready_line(proc.stdout, "listening on ", timeout=30) == "127.0.0.1:7"
    proc.wait()


def test_a_process_that_ends_or_stays_silent_is_not_ready():
    quiet = subprocess.Popen([sys.executable, "-c", "print('no'); import sys; sys.exit(1)"],
                             stdout=subprocess.PIPE, bufsize=0)
    with pytest.raises(supervise.EndedBeforeReady):
        supervise.read_ready_line(quiet.stdout, "listening on ", timeout=30)
    quiet.wait()
    silent = _start(IGNORES_SIGTERM)
    try:
        with pytest.raises(supervise.NotReady):
            supervise.read_ready_line(silent.stdout, "listening on ", timeout=0.2)
    finally:
        supervise.stop([silent], grace=0)
