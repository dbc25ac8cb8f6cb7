# The queues' bounds at a clean stop, for a fast next start.
#
# Opening a frontier needs each origin's queue head and tail
# (politeness.Origin). LMDB holds them as the first and last key of the
# origin's range in the queue table, but finding them costs two B-tree
# probes an origin: at 100 million URLs on a million hosts, with the page
# cache cold, most of a minute of random reads (bench/results/
# 2026-11-24-s9-lead.md). So a clean stop also writes them to queues.bounds
# beside LMDB's files: HEADER (magic, byte order, LMDB's last transaction
# id, entries), then four u64 an origin (host id, first, head, tail) in the
# hosts table's key order; `first` is the first entry still in LMDB, below
# the head when popped entries wait to be deleted (frontier.py, SWEEP_RUN).
# A file of another layout (the last WRECK's: three words, WRECKQB1) is
# not trusted. The next open uses an entry only if the stamp is still
# LMDB's last transaction (nothing committed since: a kill -9 after more
# work leaves a stale file), the entry count is the hosts table's, and the
# entry names the host the table has at that place; anything else is
# probed. The open removes the file, used or not. It is a speed-up only: a
# missing, stale or foreign one costs the probes, nothing else.
#
# The probes (after a kill -9, or of a state saved without the file) run
# on PROBE_THREADS threads, each in its own read transaction: from a cold
# page cache they are random reads, and several in flight overlap their
# waits (py-lmdb releases the GIL in a lookup). Each thread takes a run of
# host ids in order, and one B-tree search a host finds both bounds: the
# search for the next id's first key lands on the next host's head, and
# one step back from there is this host's last key (its tail).
"""queuebounds: save(path, stamp, rows) at a clean stop; take(path, stamp, count)
at the next start; probe(db, hosts) for the hosts the file did not give."""

from __future__ import annotations

import operator
import os
import struct
import sys
from array import array
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from . import db as d

MAGIC = b"WRECKQB2"
HEADER = struct.Struct("<8s8sQQ")  # magic, byte order, LMDB transaction id, entries
ORDER = sys.byteorder.encode().ljust(8, b"\0")  # the words are native u64
FIELDS = 4  # host id, first, head, tail
NO_HOST = (1 << 64) - 1  # a row no host id (u32) matches: probed at the next start
# Probing threads. Measured from a cold page cache (3M URLs, 30,000 hosts):
# one thread 5.6-7.1 s, eight 0.8-1.1 s, 32 no better than eight
# (bench/results/2026-11-24-s9-lead.md).
PROBE_THREADS = 8
_ID = operator.attrgetter("id")
PROBES_INLINE = 2_000  # fewer hosts are probed on the calling thread: a pool would cost more than it saves


def save(path: str, stamp: int, rows: Iterable[tuple[int, int, int, int]]) -> None:
    """Write `rows` (host id, first, head, tail), in the hosts table's key order,
    stamped with LMDB's last transaction `stamp`: atomically, mode 0600.
    OSError if it cannot be written."""
    words = array("Q")
    for row in rows:
        words.extend(row)
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(HEADER.pack(MAGIC, ORDER, stamp, len(words) // FIELDS))
        words.tofile(fh)
    os.replace(tmp, path)


def take(path: str, stamp: int, count: int) -> array | None:
    """The words of the file at `path` (FIELDS an origin) if it was saved at
    LMDB's transaction `stamp` with `count` entries; None otherwise. The file
    is removed either way: it describes one moment, the clean stop, and is
    not trusted for any later start (say, of a data.mdb restored from a copy)."""
    try:
        return _read(path, stamp, count)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _read(path: str, stamp: int, count: int) -> array | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER.size)
            if len(head) < HEADER.size:
                return None
            magic, order, saved, entries = HEADER.unpack(head)
            if (magic, order, saved, entries) != (MAGIC, ORDER, stamp, count):
                return None
            words = array("Q")
            words.fromfile(fh, entries * FIELDS)
    except (OSError, EOFError):  # EOFError: shorter than its header says
        return None
    return words


def probe(database: d.Db, hosts: list) -> None:
    """Set each Origin of `hosts` to its queue's bounds in LMDB (its head
    and tail stay as they are where its queue is empty)."""
    hosts = sorted(hosts, key=_ID)
    if len(hosts) <= PROBES_INLINE:
        return _probe(database, hosts)
    step = -(-len(hosts) // PROBE_THREADS)
    with ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="queue-bounds") as pool:
        for _ in pool.map(_probe, [database] * PROBE_THREADS, [hosts[i:i + step] for i in range(0, len(hosts), step)]):
            pass  # any error is raised here, on the opening thread


def _probe(database: d.Db, hosts: list) -> None:
    """Probe `hosts`, in id order (see the top)."""
    unpack = d.QKEY.unpack
    with database.begin() as txn:
        cursor = txn.cursor(db=database.queue)
        first = None  # the first key at or after the next host's prefix, when the last search found it
        for host in hosts:
            prefix = d.queue_prefix(host.id)
            if first is None or first[:len(prefix)] < prefix:  # not found for this host by the last one
                first = cursor.key() if cursor.set_range(prefix) else b""
            if not first.startswith(prefix):
                continue  # an empty queue (`first` is a later host's, or b"" past the last)
            host.head = unpack(first)[1]
            if cursor.set_range(d.queue_prefix(host.id + 1)):
                first = cursor.key()
                cursor.prev()
                host.tail = unpack(cursor.key())[1] + 1
            else:
                cursor.last()
                host.tail = unpack(cursor.key())[1] + 1
                first = b""  # no key past this host
