# Files only their owner may read. A crawl's data holds every page fetched,
# its frontier every URL, its logs URLs and peers: so each directory a
# daemon creates is 0700 and each file it creates 0600, whatever the umask
# (the mode given to mkdir/open is masked by it, hence the chmod after).
# What already exists is left as the operator made it. Shared by the store
# server, the urlserver and wreck-crawl; plain os calls, no sockets or clocks.
"""private_dir, private_file, private_open: 0700 directories, 0600 files."""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str | os.PathLike) -> Path:
    """Create `path` and its missing parents as 0700 directories; return it."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:  # made meanwhile by someone else: theirs
            continue
        os.chmod(directory, DIR_MODE)
    return path


def private_files(*paths: str | os.PathLike) -> None:
    """Set files just created by a library (LMDB's data.mdb, lock.mdb) to 0600."""
    for path in paths:
        try:
            os.chmod(path, FILE_MODE)
        except FileNotFoundError:
            pass


def private_open(path: str | os.PathLike, mode: str = "ab"):
    """open(path, mode) for writing; a file it creates is 0600."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    existed = os.path.exists(path)
    fd = os.open(path, flags, FILE_MODE)
    if not existed:
        os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, mode)
