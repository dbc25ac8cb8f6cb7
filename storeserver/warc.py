# The store as WARC/1.1 (warcio writes the records warcrecords.py builds):
# the captures of a range of the commit journal (docs/storage.txt), in
# commit order, each loaded with what the store knows of it (the spider's
# fetch fields, the dedup's duplicate mark, a 304's earlier document). Used
# by `wreck-dump --warc` (an export after the fact, or --since-last-export)
# and by the storeserver's --warc-dir writer (warcdir.py).
#
# Commit order puts every original before its revisits: dedup marks a body
# a duplicate only of a page committed earlier, and a 304 refers to a
# document of its URL committed before it.
"""WARC export of the store."""

from __future__ import annotations

import collections
import io
import itertools
import platform
import socket
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import BinaryIO

import deflate
from warcio.warcwriter import WARCWriter

from wreck.protocol import Specific

from .store import NotFound, ReadStore
from .warcrecords import Capture, Original, RecordMaker, iso_date, parse_head, warc_headers

__all__ = ["Capture", "iso_date", "parse_head", "warc_headers", "write_warc", "write_warc_file"]

CONFORMS_TO = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
# WRECK always obeys robots.txt (RFC 9309; urlserver/robotsrules.py).
ROBOTS_POLICY = "obey"
# Each record's gzip member is libdeflate's (the `deflate` package) at level
# 6: on the bench's HTML records it takes 0.46 CPU-ms a capture where zlib
# at warcio's level 9 took 1.05, for 0.5% fewer bytes (docs/warc.md, Cost;
# zlib 1 is 0.39 ms for 9% more bytes, ISA-L 0.11 to 0.20 ms for 5-7% more).
# A WARC's bytes are the archive's cost for good: the level keeps them as
# small as warcio's.
GZIP_LEVEL = 6
# An export compresses the records of EXPORT_BATCH captures at once, on
# this many threads (as the --warc-dir writer does).
EXPORT_BATCH = 48
EXPORT_GZIP_THREADS = 2


def software() -> str:
    try:
        version = metadata.version("wreck")
    except metadata.PackageNotFoundError:  # run from a source tree
        version = "dev"
    return f"WRECK/{version} (Python {platform.python_version()}; warcio {metadata.version('warcio')})"


def warcinfo_fields(*, operator: str, is_part_of: str, user_agent: str, description: str) -> dict[str, str]:
    """The warcinfo fields of a file (Heritrix's names); empty values are left out."""
    return {
        "software": software(), "format": "WARC File Format 1.1", "conformsTo": CONFORMS_TO,
        "hostname": socket.gethostname(), "operator": operator, "isPartOf": is_part_of,
        "http-header-user-agent": user_agent, "robots": ROBOTS_POLICY, "description": description,
    }  # fmt: skip


def crawl_key(store: ReadStore) -> str:
    """What makes record ids unique to this crawl: the store's creation time."""
    return str(store.meta_info().get("created", ""))


def user_agent_of(request: bytes) -> str:
    for line in request.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"user-agent":
            return value.strip().decode("latin-1")
    return ""


def load_capture(store: ReadStore, doc_id: int) -> Capture:
    """Doc `doc_id` with what the store knows about it, for the records."""
    meta, document = store.get(doc_id)
    duplicate = not_modified = None
    if meta.specific == Specific.NOT_MODIFIED:
        for earlier in reversed([d for d in store.doc_ids_for_url(meta.url) if d < meta.doc_id]):
            before = store.meta_of(earlier)
            if before.specific != Specific.NOT_MODIFIED:
                not_modified = Original(earlier, before.url, before.stored_at)
                break
    elif (first := store.duplicate_of(doc_id)) is not None:
        try:
            original = store.meta_of(first)
            duplicate = Original(first, original.url, original.stored_at)
        except NotFound:  # cannot happen in one store; written in full then
            pass
    return Capture(meta, document, store.fetch_info(doc_id), duplicate, not_modified)


class Counts(collections.Counter):
    """Records written by type, and documents."""

    def summary(self) -> str:
        kinds = ", ".join(f"{self[k]} {k}" for k in ("request", "response", "revisit", "metadata") if self[k])
        return f"{self['documents']} documents as {sum(v for k, v in self.items() if k != 'documents')} records ({kinds})"


def first_user_agent(store: ReadStore, after: int, upto: int | None, *, look: int = 50) -> str:
    """The User-Agent of the first requests kept in the range (warcinfo's)."""
    for n, (_, doc_id) in enumerate(store.iter_journal(after, upto)):
        info = store.fetch_info(doc_id)
        if info is not None and info.request:
            return user_agent_of(info.request)
        if n >= look:
            break
    return ""


def write_warc(store: ReadStore, out: BinaryIO, *, gzip: bool, filename: str = "wreck.warc",
               operator: str = "", is_part_of: str = "", after: int = 0, upto: int | None = None,
               doc_ids: Iterable[int] | None = None) -> Counts:
    """Write the captures committed after journal sequence `after` (up to
    `upto`), or those of `doc_ids` when given (wreck-dump's filters), behind
    one warcinfo record; returns the counts."""
    writer = WARCWriter(out, gzip=gzip, warc_version="1.1")
    maker = RecordMaker(crawl_key(store))
    writer.write_record(maker.warcinfo(filename, warcinfo_fields(
        operator=operator, is_part_of=is_part_of, user_agent=first_user_agent(store, after, upto),
        description="exported by wreck-dump --warc",
    )))  # fmt: skip
    counts = Counts()
    if not gzip:
        for _, doc_id in store.iter_journal(after, upto) if doc_ids is None else ((0, d) for d in doc_ids):
            for record in maker.records(load_capture(store, doc_id)):
                writer.write_record(record)
                counts[record.rec_type] += 1
            counts["documents"] += 1
        return counts
    members = MemberCompressor(EXPORT_GZIP_THREADS)
    try:
        journal = store.iter_journal(after, upto) if doc_ids is None else ((0, d) for d in doc_ids)
        pending = None  # the previous batch's members, compressing while this batch is built
        while batch := list(itertools.islice(journal, EXPORT_BATCH)):
            blobs = []
            for _, doc_id in batch:
                for record in maker.records(load_capture(store, doc_id)):
                    blobs.append(members.serialize(record))
                    counts[record.rec_type] += 1
                counts["documents"] += 1
            if pending is not None:
                out.writelines(pending())
            pending = members.submit(blobs)
        if pending is not None:
            out.writelines(pending())
    finally:
        members.close()
    return counts


class MemberCompressor:
    """Records serialized by warcio, each compressed into its own gzip member
    (gzip_member). A batch is cut into one slice per thread, compressed at
    once (libdeflate releases the GIL) while the caller builds the next
    batch: one task per thread and batch, not one per record, whose handing
    over cost as much as a record's compression (bench/warc_bench.py)."""

    def __init__(self, threads: int) -> None:
        self._plain = WARCWriter(None, gzip=False, warc_version="1.1")
        self._threads = threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="store-warc-gzip")

    def serialize(self, record) -> bytes:
        """The record's bytes as warcio writes them, uncompressed."""
        out = io.BytesIO()
        self._plain.out = out
        self._plain.write_record(record)
        return out.getvalue()

    def submit(self, blobs: list[bytes]) -> Callable[[], list[bytes]]:
        """Start compressing `blobs`; the function returned waits for their
        members and returns them in order."""
        step = -(-len(blobs) // self._threads) or 1
        futures = [self._pool.submit(_members, blobs[i : i + step]) for i in range(0, len(blobs), step)]
        return lambda: [member for future in futures for member in future.result()]

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _members(blobs: list[bytes]) -> list[bytes]:
    return [gzip_member(blob) for blob in blobs]


def gzip_member(data: bytes) -> bytes:
    """One gzip member (RFC 1952), a record's bytes compressed alone."""
    return deflate.gzip_compress(data, GZIP_LEVEL)


def write_warc_file(store: ReadStore, path: Path, **options) -> Counts:
    with open(path, "wb") as fh:
        return write_warc(store, fh, gzip=path.name.endswith(".gz"), filename=path.name, **options)
