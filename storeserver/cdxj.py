# CDXJ indexes of WARC files, in pywb's format, written by webrecorder's
# cdxj-indexer: one line per capture, `SURT-key timestamp {json}` with
# url, mime, status, digest, length, offset and filename (the WARC's base
# name), sorted as pywb and wabac.js binary-search them. Request records
# are read too (post_append), so a POST capture's method and body land in
# its line, as pywb needs to replay it.
#
# index_beside(WARC) writes WARC's index next to it (crawl-00001.warc.gz ->
# crawl-00001.cdxj): what `wreck-dump --cdxj` does for given files, and
# what a writer of rolling WARC files calls on each file it closes. Indexes
# are written under a temporary name and renamed when complete, so a crash
# never leaves a truncated index under the final name.
"""CDXJ indexes (pywb's format) of WARC files."""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable
from pathlib import Path

from cdxj_indexer.main import write_cdx_index

WARC_SUFFIXES = (".warc.gz", ".warc")
CDXJ_SUFFIX = ".cdxj"


class CdxjError(Exception):
    """A WARC could not be indexed (unreadable, not a WARC)."""


def cdxj_path(warc: Path) -> Path:
    """Where the index of `warc` goes: beside it, .warc(.gz) replaced by .cdxj."""
    name = warc.name
    for suffix in WARC_SUFFIXES:
        if name.endswith(suffix):
            return warc.with_name(name[: -len(suffix)] + CDXJ_SUFFIX)
    return warc.with_name(name + CDXJ_SUFFIX)


def check_warc(path: Path) -> None:
    """Raise CdxjError unless `path` opens with a WARC record (gzipped or not).

    warcio reads any other text as the old ARC format, record after
    record, so a wrong file would be indexed as garbage without this.
    """
    try:
        with open(path, "rb") as fh:
            start = fh.read(2)
            fh.seek(0)
            head = (gzip.GzipFile(fileobj=fh) if start == b"\x1f\x8b" else fh).read(5)
    except (OSError, EOFError, zlib.error) as exc:
        raise CdxjError(f"cannot read {path}: {exc}") from None
    if head != b"WARC/":
        raise CdxjError(f"cannot index {path}: not a WARC file (it does not open with a WARC/ record)")


def write_cdxj(warcs: Iterable[Path], out: Path) -> int:
    """Index `warcs` into one sorted CDXJ file `out`; returns its lines."""
    warcs = [str(w) for w in warcs]
    for warc in warcs:
        check_warc(Path(warc))
    part = out.with_name(out.name + ".part")
    try:
        with open(part, "w", encoding="utf-8") as fh:
            try:
                write_cdx_index(fh, warcs, {"sort": True, "post_append": True})
            except Exception as exc:  # the indexer's errors (warcio's, I/O) become ours here
                raise CdxjError(f"cannot index {', '.join(warcs)}: {exc}") from exc
        with open(part, "rb") as fh:
            lines = sum(1 for _ in fh)
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return lines


def index_beside(warc: Path) -> Path:
    """Write the CDXJ index of one WARC file beside it; returns the index's path."""
    warc = Path(warc)
    out = cdxj_path(warc)
    write_cdxj([warc], out)
    return out
