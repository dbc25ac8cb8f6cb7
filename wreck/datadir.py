# Whether a --data directory can hold a crawl, asked before anything starts
# (wreck-crawl, urlserver, storeserver): a path that is a file, or under a
# file, or a directory this process cannot write, would otherwise fail deep
# inside LMDB or the settings file with a traceback. The nearest existing
# directory is asked, since a daemon creates the rest. Root writes anywhere,
# so for root only the file cases are caught here. A path that is no UTF-8
# is refused too: LMDB opens UTF-8 paths only, and the settings and the
# manifest keep paths as UTF-8 text (TOML, JSON).
"""The check of a --data directory before a start."""

from __future__ import annotations

import os
from pathlib import Path


def problem(data: str | os.PathLike[str], flag: str = "--data") -> str | None:
    """Why `data` cannot hold a crawl's state (one line naming `flag`), or None."""
    path = Path(data)
    try:
        os.fsdecode(path).encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes are surrogates in a str path (PEP 383)
        shown = os.fsdecode(path).encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
        return f"{flag} {shown}: the path is not UTF-8 text; give a directory whose name is"
    if path.exists() and not path.is_dir():
        return f"{flag} {path} is a file, not a directory"
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{flag} {path}: {existing} is a file, not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{flag} {path}: {existing} is not writable"
    return None
