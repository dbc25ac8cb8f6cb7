# A disk made full on purpose, for the full-disk tests (a tmpfs they mount).
"""small_tmpfs(path, size) mounts one; fill(mount) fills it, returning the ballast file."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

BALLAST = "ballast"
# Room for a data directory's half-dozen small files even where tmpfs gives
# each a 2 MiB huge page (shmem_enabled=force, which no mount option
# overrides), and still little to fill.
SMALL_DISK = "64m"


@contextlib.contextmanager
def small_tmpfs(mnt: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `mnt` for the test's duration, or a skip
    with the reason. Huge pages off where the kernel lets a mount say so: a
    tmpfs backed by 2 MiB pages charges each small file 2 MiB. The ballast
    file is made now, while there is room for it."""
    if os.geteuid() != 0:
        pytest.skip("filling a real disk needs root to mount a tmpfs")
    mnt.mkdir()
    for options in (f"size={size},huge=never", f"size={size}"):  # huge= is older than THP-less kernels
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], capture_output=True)
        if done.returncode == 0:
            break
    else:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        (mnt / BALLAST).touch()
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def free_bytes(mnt: Path) -> int:
    st = os.statvfs(mnt)
    return st.f_bavail * st.f_frsize


def _usage(mnt: Path) -> str:
    return subprocess.run(["du", "-ab", str(mnt)], capture_output=True, text=True).stdout


def fill(mnt: Path) -> Path:
    """Write ballast until the disk is full; its path."""
    ballast = mnt / BALLAST
    assert ballast.exists(), f"small_tmpfs() makes the ballast file; what fills {mnt}:\n{_usage(mnt)}"
    chunk = b"\0" * (64 << 10)
    # Unbuffered: a buffered file keeps what ENOSPC refused and raises it
    # again when closed; the kernel takes each write whole, in part, or not.
    with open(ballast, "ab", buffering=0) as fh:
        try:
            while fh.write(chunk):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    assert ballast.stat().st_size > 0, f"the disk was full before the ballast; what filled it:\n{_usage(mnt)}"
    return ballast
