"""One owner per data directory (wreck/dirlock.py): a second holder is
refused naming the first's pid and command line; a holder killed with -9
leaves a lock file that blocks nobody; each kind of owner has its own lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from wreck import dirlock

HOLD = "import sys; from pathlib import Path; from wreck import dirlock; dirlock.hold(Path(sys.argv[1]), 'x'); " \
       "print('held', flush=True); sys.stdin.read()"


@pytest.fixture
def holder(tmp_path):
    """Another process holding x.lock in tmp_path until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path), "--marker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "held\n"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_a_second_owner_is_refused_naming_the_holders_pid_and_command(tmp_path, holder):
    with pytest.raises(dirlock.DirLocked) as refused:
        dirlock.DirLock(tmp_path, "x").acquire()
    message = str(refused.value)
    assert f"{tmp_path} is in use by pid {holder.pid} ({sys.executable} -c " in message and "--marker)" in message
    assert "\n" not in message


def test_a_lock_left_by_kill_9_blocks_nobody(tmp_path, holder):
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / "x.lock").exists()
    lock = dirlock.DirLock(tmp_path, "x")
    lock.acquire()
    assert (tmp_path / "x.lock").read_text().startswith(f"{os.getpid()} ")
    lock.release()


def test_each_kind_of_owner_has_its_own_lock(tmp_path, holder):
    other = dirlock.DirLock(tmp_path, "y")
    other.acquire()  # wreck-crawl's crawl.lock and its store's storeserver.lock share a directory
    other.release()
    holder.stdin.close()
    holder.wait()
    mine = dirlock.DirLock(tmp_path, "x")
    mine.acquire()
    with pytest.raises(dirlock.DirLocked):
        dirlock.DirLock(tmp_path, "x").acquire()  # another open of the file: refused even in one process
    mine.release()
