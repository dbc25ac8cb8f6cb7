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
# The package is written under a temporary name and renamed when complete.
"""WACZ 1.2.0 packages of WARC files."""

from __future__ import annotations

import datetime
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Iterable
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


def pages_of(crawl: Crawl) -> list[Page]:
    """The crawl's pages: every stored 200 text/html document."""
    return [Page(d.url, iso_date(d.meta.stored_at), d.title)
            for d in crawl.documents(status=200, content_type="text/html")]


def _sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return "sha256:" + digest.hexdigest(), size


def _resource(name: str, data: bytes) -> dict:
    return {"name": Path(name).name, "path": name, "hash": "sha256:" + hashlib.sha256(data).hexdigest(),
            "bytes": len(data)}


def write_wacz(warcs: Iterable[Path], pages: list[Page], out: Path, *, title: str,
               software: str = "WRECK") -> int:
    """Package `warcs` (their base names must differ) with their index and
    `pages` into `out`; returns the captures indexed."""
    warcs = [Path(w) for w in warcs]
    if len({w.name for w in warcs}) != len(warcs):
        raise ValueError("two WARC files share a name: archive/ would hold only one")
    out = Path(out)
    part = out.with_name(out.name + ".part")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    resources = []
    try:
        with tempfile.TemporaryDirectory(prefix="wreck-wacz-") as tmp:
            index = Path(tmp) / "index.cdxj"
            captures = write_cdxj(warcs, index)
            with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
                for warc in warcs:
                    name = "archive/" + warc.name
                    zf.write(warc, name, compress_type=zipfile.ZIP_STORED)
                    digest, size = _sha256(warc)
                    resources.append({"name": warc.name, "path": name, "hash": digest, "bytes": size})
                for name, data in ((INDEX_NAME, index.read_bytes()), (PAGES_NAME, _pages_jsonl(pages))):
                    zf.writestr(name, data)
                    resources.append(_resource(name, data))
                package = {"profile": PROFILE, "title": title, "created": now, "modified": now,
                           "software": software, "resources": resources}  # fmt: skip
                if pages:
                    package["home"] = {"url": pages[0].url, "ts": pages[0].ts}
                manifest = msgspec.json.format(msgspec.json.encode(package))
                zf.writestr("datapackage.json", manifest)
                digest = {"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(manifest).hexdigest()}
                zf.writestr("datapackage-digest.json", msgspec.json.format(msgspec.json.encode(digest)))
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return captures


def _pages_jsonl(pages: list[Page]) -> bytes:
    enc = msgspec.json.Encoder()
    return b"".join(enc.encode(line) + b"\n" for line in [PAGES_HEADER, *pages])


def write_store_wacz(crawl: Crawl, out: Path) -> tuple[int, int]:
    """Package a store: its WARC export, index and pages. Returns (captures indexed, pages)."""
    out = Path(out)
    stem = out.name.removesuffix(".wacz")
    with tempfile.TemporaryDirectory(prefix="wreck-wacz-", dir=out.parent) as tmp:
        warc = Path(tmp) / f"{stem}.warc.gz"
        write_warc_file(crawl.store, warc)
        pages = pages_of(crawl)
        captures = write_wacz([warc], pages, out, title=f"WRECK crawl {stem}", software="WRECK (wreck-dump --wacz)")
    return captures, len(pages)
