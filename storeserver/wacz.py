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
# Two sources: the store's WARC export (write_store_wacz, `wreck-dump --all
# --wacz`), or the closed files a crawl wrote with --warc-dir
# (write_dir_wacz, `wreck-dump --wacz FILE --from-warc-dir DIR`), packaged
# as they are, byte for byte, with pages read from their records. A NAME.open
# file is left out (it is still being written, or a kill -9 left it: the
# store finishes and closes it at its next start, docs/warc.md), and so is a
# NAME.open.damaged one.
#
# The package is written under a temporary name and renamed when complete;
# the index and the pages are written to files first and streamed into the
# ZIP, so memory stays bounded whatever the crawl's size (but for the titles
# of pages that identical-payload revisits repeat, TITLES_KEPT).
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
from warcio.archiveiterator import ArchiveIterator

from wreck import htmlcharset
from wreck.mediatype import media_type

from .cdxj import WARC_SUFFIXES, write_cdxj
from .documents import MAX_PARSE_BYTES, Crawl
from .warc import iso_date, write_warc_file
from .warcdir import OPEN_SUFFIX
from .warcrecords import IDENTICAL_PROFILE

PROFILE = "wacz"  # WACZ 1.2.0, datapackage.json
PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
INDEX_NAME = "indexes/index.cdx"  # CDXJ lines; the spec's name, and the one pywb's importer looks for
PAGES_NAME = "pages/pages.jsonl"
HASH_CHUNK = 1024 * 1024  # bytes read at a time when hashing a WARC
# Titles of pages remembered (by payload digest) for the identical-payload
# revisits that repeat them later, each about 150 bytes: beyond this many
# pages, a revisit of a page not remembered is listed without its title.
TITLES_KEPT = 1_000_000


class Page(msgspec.Struct, omit_defaults=True):
    """One line of pages/pages.jsonl."""

    url: str
    ts: str  # RFC 3339, the WARC-Date of the page's record
    title: str = ""


def pages_of(crawl: Crawl) -> Iterator[Page]:
    """The crawl's pages: every stored 200 text/html document, in doc order."""
    for doc in crawl.documents(status=200, content_type="text/html"):
        yield Page(doc.url, iso_date(doc.meta.stored_at), doc.title)


class NoWarcFiles(Exception):
    """A --warc-dir directory holds no closed WARC file to package."""


def closed_warcs(directory: Path) -> tuple[list[Path], list[Path]]:
    """(the closed WARC files in `directory`, in name order: Heritrix's names
    sort by the time each was opened; the files left out: NAME.open, still
    written or left by a kill -9, and NAME.open.damaged)."""
    warcs, left = [], []
    for path in sorted(Path(directory).iterdir()):
        if path.name.endswith(WARC_SUFFIXES) and path.is_file():
            warcs.append(path)
        elif OPEN_SUFFIX in path.name:
            left.append(path)
    return warcs, left


def _title(body: bytes, content_type: str) -> str:
    """A page's <title> as Document.title reads it (storeserver/documents.py)."""
    from resiliparse.parse.html import HTMLTree  # loaded only when pages are read

    tree = HTMLTree.parse(htmlcharset.decode(body[:MAX_PARSE_BYTES], content_type or None)[1])
    return " ".join((tree.title or "").split())


def pages_in(warcs: Iterable[Path]) -> Iterator[Page]:
    """The pages of WARC files, as pages_of lists a store's: every 200
    text/html response, and every identical-payload revisit of one (with
    the title of the page it repeats), with its record's WARC-Date."""
    titles: dict[str, str] = {}  # payload digest -> title, for the revisits
    for path in warcs:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                http = rec.http_headers
                if rec.rec_type not in ("response", "revisit") or http is None or http.get_statuscode() != "200":
                    continue
                ctype = http.get_header("Content-Type") or ""
                if media_type(ctype.encode("latin-1")) != "text/html":
                    continue
                url, ts = rec.rec_headers.get_header("WARC-Target-URI"), rec.rec_headers.get_header("WARC-Date")
                digest = rec.rec_headers.get_header("WARC-Payload-Digest") or ""
                if rec.rec_type == "response":
                    title = _title(rec.content_stream().read(), ctype)
                    if len(titles) < TITLES_KEPT:
                        titles.setdefault(digest, title)
                elif rec.rec_headers.get_header("WARC-Profile") == IDENTICAL_PROFILE:
                    title = titles.get(digest, "")
                else:
                    continue
                yield Page(url, ts, title)  # WARC-Date (W3C-DTF, UTC) is RFC 3339


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


def write_dir_wacz(directory: Path, out: Path, *, title: str = "") -> tuple[int, int, list[Path]]:
    """Package the closed WARC files a crawl wrote with --warc-dir as they
    are; returns (captures indexed, pages, the files left out)."""
    warcs, left = closed_warcs(Path(directory))
    if not warcs:
        raise NoWarcFiles(f"no closed WARC file in {directory}" + (
            f" (left out, still being written: {', '.join(p.name for p in left)}; the store closes a file "
            "at --warc-size and when it stops)" if left else ""))  # fmt: skip
    name = title or f"WRECK crawl {Path(directory).resolve().name}"
    captures, pages = write_wacz(warcs, pages_in(warcs), out, title=name,
                                 software="WRECK (wreck-dump --wacz --from-warc-dir)")
    return captures, pages, left
