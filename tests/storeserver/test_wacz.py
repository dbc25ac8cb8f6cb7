"""`wreck-dump --all --wacz` (the store's export) and `wreck-dump --wacz
--from-warc-dir` (the closed files a crawl wrote with --warc-dir): WACZ 1.2.0
packages, both checked against the spec's rules written out here (py-wacz
0.6 validates 1.1.1 only: it reads wacz_version, which 1.2.0 removed), and
their WARCs against warcio check."""

from __future__ import annotations

import datetime
import gzip
import hashlib
import io
import json
import subprocess
import sys
import time
import zipfile

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.dump import app
from wreck.storeserver.wacz import Page, write_wacz

from tests.store_helpers import TIMEOUT as WAIT_S, Client, make_record, running_server

HOME = Record(1, True, Specific.OK, http_enum(200), 9, "http://127.0.0.1:8080/", None,
              b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
              b"<html><head><title>Home page</title></head><body><a href=/page/2>next</a></body></html>")  # fmt: skip
IMAGE = Record(30, True, Specific.OK, http_enum(200), 4, "http://127.0.0.1:8080/a.png", None,
               b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n")
NOT_MODIFIED = Record(31, True, Specific.NOT_MODIFIED, http_enum(304), 3, HOME.url, None, b"HTTP/1.1 304 Not Modified\r\n\r\n")
TIMEOUT = Record(32, False, Specific.TIMEOUT, 0, 30_000, "http://127.0.0.1:8080/slow", None, b"")
COPY = Record(33, True, Specific.OK, http_enum(200), 5, "http://127.0.0.1:8080/copy", None, HOME.document)  # a revisit
RECORDS = [HOME, *(make_record(i) for i in range(2, 29)), make_record(29, status=404), IMAGE, NOT_MODIFIED, TIMEOUT, COPY]
PAGES = 29  # the 200 text/html documents: HOME, 2..28 and COPY
HALF = 16  # the --warc-dir crawl is stopped after this many records and resumed: two closed files


def _wreck_dump(*args) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stderr


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """A store and the --warc-dir files its storeserver wrote, over a stop and a restart."""
    tmp = tmp_path_factory.mktemp("crawl")
    for part in (RECORDS[:HALF], RECORDS[HALF:]):
        with running_server(tmp / "data", warc_dir=str(tmp / "warcs")) as (_, port):
            client = Client(port)
            client.send(part)
            assert len(client.acks(len(part))) == len(part)
            client.close()
    return tmp


@pytest.fixture(scope="module")
def store_wacz(crawled):
    out = crawled / "crawl.wacz"
    stderr = _wreck_dump("--all", "--wacz", out, "--data", crawled / "data")
    assert f"{len(RECORDS) - 1} captures indexed, {PAGES} pages" in stderr  # the timeout has no HTTP response
    return out


@pytest.fixture(scope="module")
def dir_wacz(crawled):
    out = crawled / "dir.wacz"
    stderr = _wreck_dump("--wacz", out, "--from-warc-dir", crawled / "warcs")
    assert f"{len(RECORDS) - 1} captures indexed, {PAGES} pages" in stderr and "left out" not in stderr
    return out


@pytest.fixture(params=["store_wacz", "dir_wacz"])
def wacz(request):
    """Each package: the store's export, and the --warc-dir files'."""
    return request.getfixturevalue(request.param)


def _archives(zf: zipfile.ZipFile) -> dict[str, bytes]:
    return {name: zf.read(name) for name in zf.namelist() if name.startswith("archive/")}


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rfc3339(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_the_package_has_the_layout_and_compression_of_wacz_1_2(wacz):
    with zipfile.ZipFile(wacz) as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
        archives = {name for name in names if name.startswith("archive/") and name.endswith(".warc.gz")}
        assert archives and names - archives == {"indexes/index.cdx", "pages/pages.jsonl", "datapackage.json",
                                                 "datapackage-digest.json"}  # fmt: skip
        # archive/ files MUST NOT be compressed again (random access by offset)
        assert {zf.getinfo(name).compress_type for name in archives} == {zipfile.ZIP_STORED}


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
        warcs = _archives(zf).values()
    assert header["format"] == "json-pages-1.0" and header["id"] == "pages"
    assert len(pages) == PAGES and pages[0] == {"url": HOME.url, "ts": pages[0]["ts"], "title": "Home page"}
    assert pages[-1] == {"url": COPY.url, "ts": pages[-1]["ts"], "title": "Home page"}  # a revisit: its original's
    dates = {r.rec_headers["WARC-Target-URI"]: r.rec_headers["WARC-Date"] for warc in warcs
             for r in ArchiveIterator(io.BytesIO(warc)) if r.http_headers and r.http_headers.get_statuscode() == "200"}  # fmt: skip
    assert all(dates[p["url"]] == p["ts"] and _rfc3339(p["ts"]) for p in pages)  # ts opens that capture
    assert not any("title" in p for p in pages[1:-1])  # make_record's pages have no <title>


def test_a_warc_dir_package_lists_the_same_pages_as_the_stores_export(store_wacz, dir_wacz):
    with zipfile.ZipFile(store_wacz) as exported, zipfile.ZipFile(dir_wacz) as packaged:
        assert packaged.read("pages/pages.jsonl") == exported.read("pages/pages.jsonl")
        assert len(_archives(packaged)) == 2  # one file per run of the storeserver, packaged as it is


def test_a_warc_dir_package_holds_the_closed_files_byte_for_byte(crawled, dir_wacz):
    with zipfile.ZipFile(dir_wacz) as zf:
        archives = _archives(zf)
    assert archives == {f"archive/{f.name}": f.read_bytes() for f in sorted((crawled / "warcs").iterdir())}


def test_the_index_is_sorted_cdxj_pointing_into_the_stored_warc(wacz):
    with zipfile.ZipFile(wacz) as zf:
        lines = zf.read("indexes/index.cdx").decode().splitlines()
        warcs = _archives(zf)
    assert lines == sorted(lines) and len(lines) == len(RECORDS) - 1  # the timeout has no HTTP response
    for line in lines:
        fields = json.loads(line.split(" ", 2)[2])
        warc = warcs["archive/" + fields["filename"]]
        member = gzip.decompress(warc[int(fields["offset"]): int(fields["offset"]) + int(fields["length"])])
        assert next(iter(ArchiveIterator(io.BytesIO(member)))).rec_headers["WARC-Target-URI"] == fields["url"]


def test_warcio_check_passes_on_the_packaged_warc(wacz, tmp_path):
    with zipfile.ZipFile(wacz) as zf:
        names = list(_archives(zf))
        zf.extractall(tmp_path, names)
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", *(str(tmp_path / n) for n in names)],
                           capture_output=True, text=True)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest pass" in check.stdout and "digest fail" not in check.stdout


def test_a_file_still_being_written_is_left_out_and_named(tmp_path):
    warcs = tmp_path / "warcs"
    with running_server(tmp_path / "data", warc_dir=str(warcs)) as (_, port):
        client = Client(port)
        client.send(RECORDS[:HALF])
        assert len(client.acks(HALF)) == HALF
    with running_server(tmp_path / "data", warc_dir=str(warcs)) as (server, port):  # the crawl goes on
        client = Client(port)
        client.send(RECORDS[HALF:])
        assert len(client.acks(len(RECORDS) - HALF)) == len(RECORDS) - HALF
        deadline = time.monotonic() + WAIT_S
        while server.warc.written < len(RECORDS) - HALF:  # the writer follows the commits
            assert time.monotonic() < deadline, "the WARC writer never wrote the second run's records"
            time.sleep(0.02)
        (closed,), (open_,) = sorted(warcs.glob("*.warc.gz")), sorted(warcs.glob("*.open"))
        result = CliRunner().invoke(app, ["--wacz", str(tmp_path / "now.wacz"), "--from-warc-dir", str(warcs)])
        assert result.exit_code == 0, result.output
        assert f"left out {open_.name}: not closed" in result.stderr
    with zipfile.ZipFile(tmp_path / "now.wacz") as zf:
        assert list(_archives(zf)) == [f"archive/{closed.name}"]
        pages = zf.read("pages/pages.jsonl").splitlines()[1:]
    assert len(pages) == HALF  # the first run's: HOME and 2..16


def test_a_directory_without_a_closed_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "WRECK-20260101000000000000-00001-h.warc.gz.open").write_bytes(b"")
    result = CliRunner().invoke(app, ["--wacz", str(tmp_path / "x.wacz"), "--from-warc-dir", str(tmp_path)])
    assert result.exit_code == 1 and "no closed WARC file in" in result.stderr and "still being written" in result.stderr
    assert not list(tmp_path.glob("x.wacz*"))


@pytest.mark.parametrize("args, message", [
    ([], "give --wacz FILE"),
    (["--wacz", "x.wacz", "--data", "d"], "--from-warc-dir and --data"),
    (["--wacz", "x.wacz", "--all"], "--from-warc-dir and --all"),
])  # fmt: skip
def test_from_warc_dir_refuses_what_it_does_not_use(tmp_path, args, message):
    result = CliRunner().invoke(app, ["--from-warc-dir", str(tmp_path), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_two_warcs_with_one_name_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match="share a name"):
        write_wacz([tmp_path / "a/x.warc.gz", tmp_path / "b/x.warc.gz"], [Page("http://a.test/", "2026-01-01T00:00:00Z")],
                   tmp_path / "x.wacz", title="x")  # fmt: skip
    assert not list(tmp_path.glob("x.wacz*"))
