# A daemon's log in a local crawl, kept to a size bound: wreck-crawl copies
# each child's stderr (and late stdout) from a pipe into it. When a write
# would take the file past MAX_BYTES it is renamed NAME.log.1 (NAME.log.1 to
# .2, and so on; the oldest beyond BACKUPS is dropped) and a fresh NAME.log
# begun, as logging.handlers.RotatingFileHandler does, but on bytes, 0600,
# and never raising: a write that fails (a full disk) is dropped and counted,
# so the copier keeps draining the pipe and a child never blocks on its
# stderr (a crawl that completes is not failed by its log). docs/operating.md
# ("Crawl with one command") says where the logs are and how they rotate.
"""A size-bounded, rotated, private log file that never raises on write."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from wreck.private import private_open

MAX_BYTES = 16 << 20  # one file; a day of a busy crawl's warnings fits in a few
BACKUPS = 3  # NAME.log.1 .. NAME.log.3: at most 4 x MAX_BYTES per daemon


class RotatingLog:
    """Append bytes to `path`, rotating it past `max_bytes`, keeping `backups` old files."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> None:
        self.path, self.max_bytes, self.backups = Path(path), max_bytes, backups
        self.dropped = 0  # bytes not written (the disk was full or the file unwritable)
        self._lock = threading.Lock()  # a child's stdout and stderr are copied by two threads
        self._file = None
        self._size = 0
        try:
            self._open()  # the file exists from the start, as an empty log says the child was quiet
        except OSError:
            pass  # tried again at the first write

    def write(self, data: bytes) -> None:
        """Append `data` (rotating first if it would pass the bound); a failure drops it."""
        with self._lock:
            try:
                if self._file is None:
                    self._open()
                if self._size and self._size + len(data) > self.max_bytes:
                    self._rotate()
                self._file.write(data)
                self._file.flush()  # the tail shown when a child fails is read from the file
                self._size += len(data)
            except OSError:
                self.dropped += len(data)
                self._close()  # reopened on the next write: the space may have come back

    def close(self) -> None:
        with self._lock:
            self._close()

    def _open(self) -> None:
        self._file = private_open(self.path, "ab")
        self._size = self._file.tell()

    def _close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def _rotate(self) -> None:
        self._close()
        for n in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{n + 1}"))
        if self.backups:
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        else:
            os.unlink(self.path)
        self._open()
