# One owner per data directory: a process that will write a directory takes
# an exclusive flock(2) on a lock file in it (NAME.lock: each kind of owner
# its own, as wreck-crawl's directory is also its storeserver's) and holds it
# until it exits. The file holds the owner's pid and command line, so a
# second start is refused naming them. The kernel drops a flock when its
# holder dies, however it dies, so a lock left by kill -9 never blocks a
# restart: the stale file is simply taken over and rewritten. The descriptor
# is close-on-exec (Python's default), so children do not inherit the lock.
"""An exclusive lock per data directory, naming its holder."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

from .private import FILE_MODE

HOLDER_MAX = 4096  # bytes of the holder's line read back: a pid and a command line
POLL_S = 0.1  # how often wait_free looks again


class DirLocked(Exception):
    """Another live process owns the directory; the message names it."""


class DirLock:
    """The lock `NAME.lock` in `directory`, held from `acquire` until the
    process exits (or `release`)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = Path(directory) / f"{name}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise DirLocked naming the holder's pid and command.
        OSError if the lock file cannot be opened (the directory is unusable)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, HOLDER_MAX, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            pid, _, cmd = holder.partition(" ")
            raise DirLocked(f"{self.path.parent} is in use by pid {pid or '?'} ({cmd or 'unknown command'}); "
                            f"stop it first (one process per data directory)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {_command()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the flock goes with the descriptor
            self._fd = None


def _command() -> str:
    """This process's command line as ps shows it (argv holds no secret: docs/protocol.txt 3.3)."""
    try:
        return Path("/proc/self/cmdline").read_bytes().rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return " ".join(sys.argv)


def holder(directory: Path, name: str) -> str | None:
    """'pid command' of the live holder of NAME.lock in `directory`, or None if it is free."""
    try:
        fd = os.open(Path(directory) / f"{name}.lock", os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # granted only if nobody holds it exclusively
        return None
    except BlockingIOError:
        return os.pread(fd, HOLDER_MAX, 0).decode("utf-8", "replace").strip() or "?"
    finally:
        os.close(fd)


def wait_free(directory: Path, name: str, timeout: float) -> str | None:
    """Wait up to `timeout` seconds for NAME.lock in `directory` to be free
    (the daemons of a killed wreck-crawl stop with a grace); its holder if
    it is still held then, else None."""
    deadline = time.monotonic() + timeout
    while (held := holder(directory, name)) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    return held


_held: list[DirLock] = []  # kept for the life of the process: dropping one would release its flock


def hold(directory: Path, name: str) -> DirLock:
    """Acquire `NAME.lock` in `directory` for the rest of this process's life."""
    lock = DirLock(directory, name)
    lock.acquire()
    _held.append(lock)
    return lock


def release_all() -> None:
    """Release every lock `hold` took (a command run twice in one process, as in tests)."""
    while _held:
        _held.pop().release()
