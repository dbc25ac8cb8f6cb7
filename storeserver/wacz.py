# WACZ 1.2.0 packages (webrecorder's "Web Archive Collection Zipped"): a ZIP
# holding the WARC files under archive/, their CDXJ index under indexes/,
# the pages under pages/pages.jsonl, and datapackage.json listing every
# file with its sha256 and size, itself hashed in datapackage-digest.json.
#
# The ZIP is the standard library's (ZIP64 when large); the WARCs are
# STORED, never deflated again (they are gzipped record by record, and
# replay tools read a record by its offset, with an HTTP range request);
# the index is cdxj-indexer's (storeserver/cdxj.py), and the JSON files are
# msgspec's. The 1.2.0 manifest has profile "wacz" and a `home` page, and
# no wacz_version (removed in 1.2.0; py-wacz 0.6 still writes and
# validates 1.1.1 only, so tests/storeserver/test_wacz.py checks 1.2.0's
# rules itself). A page is a stored 200 text/html document, with the
# WARC-Date of its record as `ts`, so a replay tool opens that capture.
#
# The package is written under a temporary name and renamed when complete;
# the index and the pages are written to files first and streamed into the
# ZIP, so memory stays bounded whatever the crawl's size.
"""WACZ 1.2.0 packages of WARC files."""

from __future__ import annotations

import datetime
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from .cdxj import write_cdxj
from .documents import Crawl
from .warc import iso_date, write_warc_file

PROFILE = "wacz"  # WACZ 1.2.0, datapackage.json
PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
INDEX_NAME = "indexes/index.cdx"  # CDXJ lines; the spec's name, and the one pywb's importer looks for
PAGES_NAME = "pages/pages.jsonl"
HASH_CHUNK = 1024 * 1024  # bytes read at a time when hashing a WARC


class Page(msgspec.Struct, omit_defaults=True):
    """One line of pages/pages.jsonl."""

    url: str
    ts: str  # RFC 3339, the WARC-Date of the page's record
    title: str = ""


def pages_of(crawl: Crawl) -> Iterator[Page]:
    """The crawl's pages: every stored 200 text/html document, in doc order."""
    for doc in crawl.documents(status=200, content_type="text/html"):
        yield Page(doc.url, iso_date(doc.meta.stored_at), doc.title)


def _sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return "sha256:" + digest.hexdigest(), size


def _write_pages(pages: Iterable[Page], path: Path) -> tuple[int, Page | None]:
    """pages.jsonl written line by line (a crawl's pages need not fit in memory);
    returns (pages written, the first one)."""
    enc = msgspec.json.Encoder()
    count, first = 0, None
    with open(path, "wb") as fh:
        fh.write(enc.encode(PAGES_HEADER) + b"\n")
        for page in pages:
            fh.write(enc.encode(page) + b"\n")
            first = first or page
            count += 1
    return count, first


def write_wacz(warcs: Iterable[Path], pages: Iterable[Page], out: Path, *, title: str,
               software: str = "WRECK") -> tuple[int, int]:
    """Package `warcs` (their base names must differ) with their index and
    `pages` into `out`; returns (captures indexed, pages)."""
    warcs = [Path(w) for w in warcs]
    if len({w.name for w in warcs}) != len(warcs):
        raise ValueError("two WARC files share a name: archive/ would hold only one")
    out = Path(out)
    part = out.with_name(out.name + ".part")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources = []
    try:
        with tempfile.TemporaryDirectory(prefix="wreck-wacz-", dir=out.parent) as tmp:
            index, listed = Path(tmp) / "index.cdx", Path(tmp) / "pages.jsonl"
            captures = write_cdxj(warcs, index)
            count, home = _write_pages(pages, listed)
            with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
                entries = [(w, "archive/" + w.name, zipfile.ZIP_STORED) for w in warcs]
                entries += [(index, INDEX_NAME, zipfile.ZIP_DEFLATED), (listed, PAGES_NAME, zipfile.ZIP_DEFLATED)]
                for path, name, mode in entries:
                    zf.write(path, name, compress_type=mode)
                    digest, size = _sha256(path)
                    resources.append({"name": path.name, "path": name, "hash": digest, "bytes": size})
                package = {"profile": PROFILE, "title": title, "created": now, "modified": now,
                           "software": software, "resources": resources}  # fmt: skip
                if home is not None:
                    package["home"] = {"url": home.url, "ts": home.ts}
                manifest = msgspec.json.format(msgspec.json.encode(package))
                zf.writestr("datapackage.json", manifest)
                digest = {"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(manifest).hexdigest()}
                zf.writestr("datapackage-digest.json", msgspec.json.format(msgspec.json.encode(digest)))
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return captures, count


def write_store_wacz(crawl: Crawl, out: Path) -> tuple[int, int]:
    """Package a store: its WARC export, index and pages. Returns (captures indexed, pages)."""
    out = Path(out)
    stem = out.name.removesuffix(".wacz")
    with tempfile.TemporaryDirectory(prefix="wreck-wacz-", dir=out.parent) as tmp:
        warc = Path(tmp) / f"{stem}.warc.gz"
        write_warc_file(crawl.store, warc)
        return write_wacz([warc], pages_of(crawl), out, title=f"WRECK crawl {stem}", software="WRECK (wreck-dump --wacz)")
