# WARC files written as the crawl goes (storeserver --warc-dir DIR): one
# thread follows the store's commit journal (docs/storage.txt) and appends
# each committed capture's records (warc.py) to the open file, off the
# store's hot path: acks never wait for it, it reads what is already durable.
#
# Files: PREFIX-YYYYMMDDhhmmssffffff-SERIAL-HOST.warc.gz, one gzip member per
# record, a warcinfo record first; named NAME.open while written, renamed
# to NAME once closed (at --warc-size, or at a clean stop), so every file
# without .open is complete.
#
# Exactly once, across kill -9: every ROUND_DOCS captures or POSITION_S
# seconds (and at each roll and stop) the file is flushed and fsynced, then
# the position (last journal sequence written, the open file's name and
# length) is committed to the store's meta. A
# restart truncates the .open file to the recorded length (dropping records
# written after it, which are then written again) and goes on from the
# recorded sequence; a file renamed but not yet recorded as closed is seen
# closed; an .open file the position never named holds nothing recorded
# and is removed; an .open file lost or shortened while the store was down
# is written again, from the capture before its first (kept in the position),
# into a new file. Every acknowledged document is committed to the journal,
# so it lands in exactly one record set of the closed files.
"""WarcDir: the --warc-dir writer thread."""

from __future__ import annotations

import datetime
import itertools
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
from warcio.warcwriter import WARCWriter

from wreck.private import private_dir, private_open

from . import layout as L
from .store import ReadStore, WriteStore
from .warc import MemberCompressor, crawl_key, load_capture, user_agent_of, warcinfo_fields
from .warcrecords import RecordMaker

log = logging.getLogger("storeserver.warc")

OPEN_SUFFIX = ".open"
# Captures written between two position commits, at most: each commit is an
# fsync of the file and an LMDB write transaction (which holds the store's
# writer lock through its own fsync), so committing after every store commit
# slowed acks by a quarter (bench/warc_bench.py). After a kill -9 at most
# this many, or POSITION_S seconds' worth, are written again (into the
# truncated file, so still once).
ROUND_DOCS = 500
POSITION_S = 1.0
# Captures whose records are compressed together (on GZIP_THREADS threads):
# about 2 MB of pages, enough to keep the threads busy, little to hold.
GZIP_BATCH = 48
GZIP_THREADS = 2
# The thread looks at the journal at least this often even without a wake-up
# (a commit made by another path, a missed wake-up): a bound, not a timer
# anything depends on.
IDLE_CHECK_S = 1.0
# After a failed write (the WARC disk full), retry with this backoff; the
# store goes on committing and acking meanwhile.
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 30.0


class WarcPosition(msgspec.Struct, array_like=True):
    """Where the writer stands, kept in the store's meta (META_WARC_POS)."""

    seq: int = 0  # the last journal sequence whose records are in a file, durably
    name: str = ""  # the open file's final name ('' when none is open)
    offset: int = 0  # that file's length once those records were written
    serial: int = 0  # the last file serial used
    first: int = 0  # the journal sequence before the open file's first capture


def file_name(prefix: str, serial: int, now: datetime.datetime, host: str) -> str:
    """PREFIX-YYYYMMDDhhmmssffffff-SERIAL-HOST.warc.gz, Heritrix's pattern."""
    return f"{prefix}-{now.strftime('%Y%m%d%H%M%S%f')}-{serial:05d}-{host}.warc.gz"


def host_part() -> str:
    """This host's name as a file name part (no '-' confusion with the fields is possible after SERIAL)."""
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


class WarcDir:
    """Writes every committed capture into rolling WARC files in a directory."""

    def __init__(self, store: WriteStore, directory: Path, *, size: int, prefix: str,
                 operator: str, is_part_of: str) -> None:  # fmt: skip
        self.store = store
        self.dir = Path(directory)
        self.size = size
        self.prefix = prefix
        self.operator = operator
        self.is_part_of = is_part_of
        self.host = host_part()
        private_dir(self.dir)  # 0700, files 0600: the pages are as private as the store's (wreck/private.py)
        self.reader = ReadStore.beside(store)
        self.gzip = MemberCompressor(GZIP_THREADS)
        self.maker = RecordMaker(crawl_key(self.reader))
        self.pos = self._load_position()
        self.file = None  # the open file, positioned at its end
        self.writer: WARCWriter | None = None
        self.written = 0  # captures written since start (for tests and the log)
        self.done_seq = self.pos.seq  # the last journal sequence written to the file (maybe not yet durable)
        self.unsynced = 0  # captures written since the last position commit
        self.committed_at = time.monotonic()
        self.failed: str = ""  # the last write error, '' while writing works
        self._wake = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="store-warc", daemon=True)

    # -- for the server ---------------------------------------------------------

    def start(self) -> None:
        self._recover()
        self._thread.start()

    def wake(self) -> None:
        """New commits: look at the journal (called from the event loop)."""
        self._wake.set()

    def stop(self, timeout: float | None = None) -> bool:
        """Write what is committed, close the file, end the thread; False if
        it is still busy (or failing) after `timeout` seconds."""
        self._stop = True
        self._wake.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # -- the thread -------------------------------------------------------------

    def _run(self) -> None:
        delay = RETRY_FIRST_S
        recover = False
        while True:
            self._wake.wait(IDLE_CHECK_S)
            self._wake.clear()
            stopping = self._stop
            try:
                if recover:
                    self._recover()
                    recover = False
                while self._write_round():
                    self._commit_if_due(False)
                self._commit_if_due(stopping)
                if stopping:
                    self._close_file()
                    self.gzip.close()
                    return
                delay = RETRY_FIRST_S
            except OSError as exc:  # the WARC directory's disk: retry, never touch the store's acks
                if not self.failed:
                    log.error("cannot write WARC files in %s (%s): retrying; the store goes on", self.dir, exc)
                self.failed = str(exc)
                self._drop_file()
                if stopping:
                    log.error("stopping with WARC records unwritten; they are written at the next start")
                    return
                time.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
                recover = True

    def _write_round(self) -> bool:
        """Write up to ROUND_DOCS captures; True if there may be more. A
        batch's records are compressed while the next batch is built."""
        entries = list(itertools.islice(self.reader.iter_journal(self.done_seq), ROUND_DOCS))
        pending = None  # (the previous batch, its members coming)
        for start in range(0, len(entries), GZIP_BATCH):
            batch = []  # (seq, user agent, how many records)
            blobs = []  # the batch's records serialized
            for seq, doc_id in entries[start : start + GZIP_BATCH]:
                capture = load_capture(self.reader, doc_id)
                records = self.maker.records(capture)
                batch.append((seq, user_agent_of(capture.fetch.request) if capture.fetch else "", len(records)))
                blobs += [self.gzip.serialize(r) for r in records]
            if pending is not None:
                self._write_batch(*pending)
            pending = batch, self.gzip.submit(blobs)
        if pending is not None:
            self._write_batch(*pending)
        if entries and self.failed:
            log.warning("writing WARC files again in %s", self.dir)
            self.failed = ""
        return len(entries) == ROUND_DOCS

    def _write_batch(self, batch: list[tuple[int, str, int]], compressed: Callable[[], list[bytes]]) -> None:
        """Append a batch's members once compressed; close the file at its size."""
        members = iter(compressed())
        for seq, agent, records in batch:
            if self.file is None:
                self._open_file(agent)
            for _ in range(records):
                self.file.write(next(members))
            self.done_seq = seq
            self.written += 1
            self.unsynced += 1
            if self.file.tell() >= self.size:
                self._commit()
                self._close_file()

    def _commit_if_due(self, now: bool) -> None:
        if self.unsynced and (now or self.unsynced >= ROUND_DOCS
                              or time.monotonic() - self.committed_at >= POSITION_S):
            self._commit()

    def _open_file(self, user_agent: str) -> None:
        serial = self.pos.serial + 1
        name = file_name(self.prefix, serial, datetime.datetime.now(datetime.timezone.utc), self.host)
        self.file = private_open(self.dir / (name + OPEN_SUFFIX), "wb")
        self.writer = WARCWriter(self.file, gzip=True, warc_version="1.1")
        self.writer.write_record(self.maker.warcinfo(name, warcinfo_fields(
            operator=self.operator, is_part_of=self.is_part_of, user_agent=user_agent,
            description="written by storeserver --warc-dir as the crawl goes",
        )))  # fmt: skip
        self.pos = WarcPosition(self.pos.seq, name, 0, serial, self.done_seq)
        self._commit()  # from now on a restart finds this file by its name
        log.info("event=warc_open file=%s", name)

    def _commit(self) -> None:
        """The file durable first, then the position that counts on it."""
        seq = self.done_seq
        if self.file is not None:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.pos = WarcPosition(seq, self.pos.name, self.file.tell(), self.pos.serial, self.pos.first)
        else:
            self.pos = WarcPosition(seq, "", 0, self.pos.serial, seq)
        self.store.put_meta(L.META_WARC_POS, msgspec.msgpack.encode(self.pos))
        self.unsynced = 0
        self.committed_at = time.monotonic()

    def _close_file(self) -> None:
        """Rename NAME.open to NAME: the file is complete (its position is committed)."""
        if self.file is None:
            return
        name = self.pos.name
        self.file.close()
        self.file = self.writer = None
        os.rename(self.dir / (name + OPEN_SUFFIX), self.dir / name)
        _fsync_dir(self.dir)
        self._commit()
        log.info("event=warc_closed file=%s", name)

    def _drop_file(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass
        self.file = self.writer = None

    # -- position and recovery ------------------------------------------------------

    def _load_position(self) -> WarcPosition:
        raw = self.reader.meta_value(L.META_WARC_POS)
        return msgspec.msgpack.decode(raw, type=WarcPosition) if raw else WarcPosition()

    def _recover(self) -> None:
        """Make the directory agree with the committed position (see the opening comment)."""
        self.pos = self._load_position()
        self.done_seq, self.unsynced = self.pos.seq, 0
        name = self.pos.name
        if name:
            open_path = self.dir / (name + OPEN_SUFFIX)
            if open_path.exists():
                self.file = open(open_path, "r+b")
                size = os.fstat(self.file.fileno()).st_size
                if size < self.pos.offset:  # fsynced before the position: only a hand could shorten it
                    self._drop_file()
                    damaged = open_path.with_name(open_path.name + ".damaged")
                    os.rename(open_path, damaged)
                    self._write_again(f"{open_path.name} is shorter ({size} bytes) than its recorded length "
                                      f"{self.pos.offset}; kept as {damaged.name}")
                    return self._recover_strays("")
                if size != self.pos.offset:
                    log.warning("event=warc_truncate file=%s to=%d (records after the last position are "
                                "written again)", open_path.name, self.pos.offset)
                self.file.truncate(self.pos.offset)
                self.file.seek(self.pos.offset)
                self.writer = WARCWriter(self.file, gzip=True, warc_version="1.1")
            elif (self.dir / name).exists():  # renamed before the kill, recorded as open
                self.pos = WarcPosition(self.pos.seq, "", 0, self.pos.serial, self.pos.seq)
                self.store.put_meta(L.META_WARC_POS, msgspec.msgpack.encode(self.pos))
            else:
                self._write_again(f"{open_path.name} is gone")
                name = ""
        self._recover_strays(name)

    def _recover_strays(self, name: str) -> None:
        for stray in self.dir.glob(f"{self.prefix}-*.warc.gz{OPEN_SUFFIX}"):
            if stray.name != name + OPEN_SUFFIX:
                log.warning("event=warc_stray file=%s (opened, no record in it recorded): removed", stray.name)
                stray.unlink()

    def _write_again(self, what: str) -> None:
        """The open file was lost: its captures go into a new file, once."""
        log.error("event=warc_lost %s: its captures (journal after %d) are written again into a new file",
                  what, self.pos.first)
        self.pos = WarcPosition(self.pos.first, "", 0, self.pos.serial, self.pos.first)
        self.done_seq = self.pos.seq
        self.store.put_meta(L.META_WARC_POS, msgspec.msgpack.encode(self.pos))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
