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
import zlib
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from collections.abc import Iterable
from typing import BinaryIO

from warcio.warcwriter import WARCWriter

from wreck.protocol import Specific

from .store import NotFound, ReadStore
from .warcrecords import Capture, Original, RecordMaker, iso_date, parse_head, warc_headers

__all__ = ["Capture", "iso_date", "parse_head", "warc_headers", "write_warc", "write_warc_file"]

CONFORMS_TO = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
# WRECK always obeys robots.txt (RFC 9309; urlserver/robotsrules.py).
ROBOTS_POLICY = "obey"
# warcio's level for each record's gzip member; on HTML pages level 6 would
# save under a tenth of the time for 0.3% more bytes: not worth differing.
GZIP_LEVEL = 9
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
    members = MemberCompressor(EXPORT_GZIP_THREADS) if gzip else None
    try:
        journal = store.iter_journal(after, upto) if doc_ids is None else ((0, d) for d in doc_ids)
        while batch := list(itertools.islice(journal, EXPORT_BATCH)):
            blobs = []
            for _, doc_id in batch:
                for record in maker.records(load_capture(store, doc_id)):
                    blobs.append(record if members is None else members.serialize(record))
                    counts[record.rec_type] += 1
                counts["documents"] += 1
            if members is None:
                for record in blobs:
                    writer.write_record(record)
            else:
                out.writelines(members.members(blobs))
    finally:
        if members is not None:
            members.close()
    return counts


class MemberCompressor:
    """Records serialized by warcio, each compressed into its own gzip member
    as warcio's GzippingWrapper does (level 9), a batch's members compressed
    on `threads` threads at once: zlib releases the GIL, and compression is
    about half of writing a capture (bench/warc_bench.py)."""

    def __init__(self, threads: int) -> None:
        self._plain = WARCWriter(None, gzip=False, warc_version="1.1")
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="store-warc-gzip")

    def serialize(self, record) -> bytes:
        """The record's bytes as warcio writes them, uncompressed."""
        out = io.BytesIO()
        self._plain.out = out
        self._plain.write_record(record)
        return out.getvalue()

    def members(self, blobs: list[bytes]) -> list[bytes]:
        return list(self._pool.map(gzip_member, blobs))

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def gzip_member(data: bytes) -> bytes:
    """One gzip member, as warcio writes each record (level 9, gzip header)."""
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return z.compress(data) + z.flush()


def write_warc_file(store: ReadStore, path: Path, **options) -> Counts:
    with open(path, "wb") as fh:
        return write_warc(store, fh, gzip=path.name.endswith(".gz"), filename=path.name, **options)
