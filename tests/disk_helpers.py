# A disk made full on purpose, for the full-disk tests (a tmpfs they mount).
"""fill(mount) -> the ballast file that filled it."""

from __future__ import annotations

import errno
from pathlib import Path


def fill(mnt: Path) -> Path:
    """Write ballast until the disk is full; its path."""
    ballast = mnt / "ballast"
    chunk = b"\0" * (64 << 10)
    with open(ballast, "wb") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return ballast
