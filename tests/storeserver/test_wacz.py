"""`wreck-dump --all --wacz`: a WACZ 1.2.0 package, checked against the
spec's rules written out here (py-wacz 0.6 validates 1.1.1 only: it reads
wacz_version, which 1.2.0 removed), and its WARC against warcio check."""

from __future__ import annotations

import datetime
import gzip
import hashlib
import io
import json
import subprocess
import sys
import zipfile

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.dump import app
from wreck.storeserver.wacz import Page, write_wacz

from tests.store_helpers import filled_store, make_record

HOME = Record(1, True, Specific.OK, http_enum(200), 9, "http://127.0.0.1:8080/", None,
              b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
              b"<html><head><title>Home page</title></head><body><a href=/page/2>next</a></body></html>")  # fmt: skip
IMAGE = Record(30, True, Specific.OK, http_enum(200), 4, "http://127.0.0.1:8080/a.png", None,
               b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n")
NOT_MODIFIED = Record(31, True, Specific.NOT_MODIFIED, http_enum(304), 3, HOME.url, None, b"HTTP/1.1 304 Not Modified\r\n\r\n")
TIMEOUT = Record(32, False, Specific.TIMEOUT, 0, 30_000, "http://127.0.0.1:8080/slow", None, b"")
RECORDS = [HOME, *(make_record(i) for i in range(2, 29)), make_record(29, status=404), IMAGE, NOT_MODIFIED, TIMEOUT]
PAGES = 28  # the 200 text/html documents: HOME and 2..28


@pytest.fixture(scope="module")
def wacz(tmp_path_factory):
    path = filled_store(tmp_path_factory.mktemp("store"), RECORDS)
    out = path / "crawl.wacz"
    result = CliRunner().invoke(app, ["--all", "--wacz", str(out), "--data", str(path)])
    assert result.exit_code == 0, result.output
    assert f"{len(RECORDS) - 1} captures indexed, {PAGES} pages" in result.stderr  # the timeout has no HTTP response
    return out


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rfc3339(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_package_has_the_layout_and_compression_of_wacz_1_2(wacz):
    with zipfile.ZipFile(wacz) as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
        assert names == {"archive/crawl.warc.gz", "indexes/index.cdx", "pages/pages.jsonl",
                         "datapackage.json", "datapackage-digest.json"}  # fmt: skip
        # archive/ files MUST NOT be compressed again (random access by offset)
        assert zf.getinfo("archive/crawl.warc.gz").compress_type == zipfile.ZIP_STORED


def test_datapackage_lists_every_file_with_its_sha256_and_size_and_is_itself_hashed(wacz):
    with zipfile.ZipFile(wacz) as zf:
        manifest = zf.read("datapackage.json")
        package = json.loads(manifest)
        assert package["profile"] == "wacz" and "wacz_version" not in package  # 1.2.0
        assert package["title"] and package["software"].startswith("WRECK")
        assert _rfc3339(package["created"]).tzinfo is not None
        listed = {r["path"]: r for r in package["resources"]}
        assert set(listed) == set(zf.namelist()) - {"datapackage.json", "datapackage-digest.json"}
        for path, resource in listed.items():
            data = zf.read(path)
            assert resource["hash"] == _sha256(data) and resource["bytes"] == len(data), path
            assert resource["name"] == path.rsplit("/", 1)[1]
        digest = json.loads(zf.read("datapackage-digest.json"))
        assert digest == {"path": "datapackage.json", "hash": _sha256(manifest)}
        assert package["home"]["url"] == HOME.url and _rfc3339(package["home"]["ts"])


def test_pages_are_the_html_captures_with_their_warc_date_and_title(wacz):
    with zipfile.ZipFile(wacz) as zf:
        header, *pages = [json.loads(line) for line in zf.read("pages/pages.jsonl").splitlines()]
        warc = zf.read("archive/crawl.warc.gz")
    assert header["format"] == "json-pages-1.0" and header["id"] == "pages"
    assert len(pages) == PAGES and pages[0] == {"url": HOME.url, "ts": pages[0]["ts"], "title": "Home page"}
    dates = {r.rec_headers["WARC-Target-URI"]: r.rec_headers["WARC-Date"]
             for r in ArchiveIterator(io.BytesIO(warc)) if r.rec_type == "response"}
    assert all(dates[p["url"]] == p["ts"] and _rfc3339(p["ts"]) for p in pages)  # ts opens that capture


def test_the_index_is_sorted_cdxj_pointing_into_the_stored_warc(wacz):
    with zipfile.ZipFile(wacz) as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
        warc = zf.read("archive/crawl.warc.gz")
    assert lines == sorted(lines) and len(lines) == len(RECORDS) - 1  # the timeout has no HTTP response
    for line in lines:
        fields = json.loads(line.split(" ", 2)[2])
        assert fields["filename"] == "crawl.warc.gz"
        member = gzip.decompress(warc[int(fields["offset"]): int(fields["offset"]) + int(fields["length"])])
        assert next(iter(ArchiveIterator(io.BytesIO(member)))).rec_headers["WARC-Target-URI"] == fields["url"]


def test_warcio_check_passes_on_the_packaged_warc(wacz, tmp_path):
    with zipfile.ZipFile(wacz) as zf:
        zf.extract("archive/crawl.warc.gz", tmp_path)
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", str(tmp_path / "archive/crawl.warc.gz")],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest pass" in check.stdout and "digest fail" not in check.stdout


def test_two_warcs_with_one_name_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match="share a name"):
        write_wacz([tmp_path / "a/x.warc.gz", tmp_path / "b/x.warc.gz"], [Page("http://a.test/", "2026-01-01T00:00:00Z")],
                   tmp_path / "x.wacz", title="x")  # fmt: skip
    assert not list(tmp_path.glob("x.wacz*"))
