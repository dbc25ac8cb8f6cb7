"""wreck-dump: every output, errors, WARC read back with warcio, reading
while the server writes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Ack, AckResult, Record, Specific, http_enum
from wreck.storeserver.dump import app
from wreck.storeserver.store import ReadStore
from wreck.storeserver.warc import iso_date

from tests.store_helpers import Client, make_record, running_server, store_with

PAGE = Record(
    1, True, Specific.OK, http_enum(200), 120, "http://127.0.0.1:8080/article?id=1", None,
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\n"
    b"Transfer-Encoding: chunked\r\nX-Served-By: test\r\n\r\n"
    b"<html><head><title>T</title></head><body><nav><a href=/>Home</a> <a href=/a>About</a></nav>"
    b"<article><h1>The headline</h1><p>" + b"The main text of the article, long enough to count. " * 12
    + b"</p></article><footer>(c) footer</footer></body></html>",
)  # fmt: skip
REDIRECT = Record(2, True, Specific.REDIRECT, http_enum(301), 5, "http://127.0.0.1:8080/old", "http://127.0.0.1:8080/new",
                  b"HTTP/1.1 301 Moved Permanently\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n")  # fmt: skip
TIMEOUT = Record(3, False, Specific.TIMEOUT, 0, 30_000, "http://127.0.0.1:8080/slow", None, b"")
PDF = Record(4, True, Specific.OK, http_enum(200), 9, "http://127.0.0.1:8080/a.pdf", None,
             b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 9\r\n\r\n%PDF-\xff\xfe\x00\x01")  # fmt: skip
ALL = [PAGE, REDIRECT, TIMEOUT, PDF]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return store_with(tmp_path_factory.mktemp("store"), ALL)


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_body_headers_and_text(data):
    body = PAGE.document.split(b"\r\n\r\n", 1)[1]
    assert run("1", "--data", data).stdout_bytes == body
    assert run("1", "--data", data, "--body").stdout_bytes == body
    assert run("1", "--data", data, "--headers").stdout_bytes == PAGE.document[: PAGE.document.index(b"\r\n\r\n") + 4]
    text = run("1", "--data", data, "--text").stdout
    assert "The main text of the article" in text and "footer" not in text


def test_json_has_every_metadata_field(data):
    meta = json.loads(run("2", "--data", data, "--json").stdout)
    assert meta["doc_id"] == 2 and meta["url"] == REDIRECT.url and meta["redirect_to"] == REDIRECT.new_url
    assert (meta["success"], meta["outcome"], meta["status"]) == (True, "REDIRECT", 301)
    assert meta["fetch_ms"] == 5 and meta["body_len"] == 0
    assert meta["header_len"] == len(REDIRECT.document) and meta["stored_len"] > 0
    assert meta["stored_at"].endswith("Z") and meta["stored_at"] > "2023"
    failed = json.loads(run("3", "--data", data, "--json").stdout)
    assert (failed["success"], failed["outcome"], failed["status"], failed["header_len"], failed["body_len"]) == (
        False, "TIMEOUT", None, 0, 0)


def test_by_url_and_unknown_ids(data):
    assert run("--url", PDF.url, "--data", data).stdout_bytes == b"%PDF-\xff\xfe\x00\x01"
    missing = run("999", "--data", data)
    assert missing.exit_code == 1 and "no document with doc id 999" in missing.stderr
    nourl = run("--url", "http://127.0.0.1:8080/never", "--data", data)
    assert nourl.exit_code == 1 and "no document stored for URL" in nourl.stderr
    nostore = run("1", "--data", data / "nothing-here")
    assert nostore.exit_code == 1 and "no store" in nostore.stderr


def test_all_jsonl_streams_one_object_per_document(data):
    lines = [json.loads(line) for line in run("--all", "--jsonl", "--data", data).stdout.splitlines()]
    assert [x["doc_id"] for x in lines] == [1, 2, 3, 4]
    assert lines[0]["body"] == PAGE.document.split(b"\r\n\r\n", 1)[1].decode()
    assert lines[0]["headers"].startswith("HTTP/1.1 200 OK\r\n")
    assert lines[3]["body"] is None and lines[3]["body_base64"] == "JVBERi3//gAB"


@pytest.mark.parametrize("name", ["out.warc", "out.warc.gz"])
def test_warc_reads_back_with_warcio_field_by_field(data, tmp_path, name):
    path = tmp_path / name
    result = run("--all", "--warc", path, "--data", data)
    assert result.exit_code == 0 and "3 response records" in result.stderr and "1 without an HTTP response" in result.stderr
    store = ReadStore(data)
    with open(path, "rb") as fh:  # a record's payload is readable only while iterating
        records = [(rec, rec.content_stream().read()) for rec in ArchiveIterator(fh)]
    assert records[0][0].rec_type == "warcinfo"
    payloads = [payload for _, payload in records[1:]]
    responses = [rec for rec, _ in records[1:]]
    assert [r.rec_headers.get_header("WARC-Wreck-Doc-Id") for r in responses] == ["1", "2", "4"]
    for rec, payload, sent in zip(responses, payloads, (PAGE, REDIRECT, PDF)):
        meta, document = store.get(sent.doc_id)
        assert rec.rec_type == "response" and rec.rec_headers.protocol == "WARC/1.1"
        assert rec.rec_headers.get_header("WARC-Target-URI") == sent.url
        assert rec.rec_headers.get_header("WARC-Date") == iso_date(meta.stored_at)
        status_line = sent.document.split(b"\r\n", 1)[0].decode()
        assert f"{rec.http_headers.protocol} {rec.http_headers.statusline}" == status_line
        body = sent.document.split(b"\r\n\r\n", 1)[1]
        assert payload == body
        assert rec.http_headers.get_header("Content-Length") == str(len(body))
    page = responses[0].http_headers
    assert page.get_header("Content-Type") == "text/html; charset=utf-8" and page.get_header("X-Served-By") == "test"
    assert page.get_header("Content-Encoding") is None and page.get_header("X-Archive-Orig-Content-Encoding") == "gzip"
    assert page.get_header("X-Archive-Orig-Transfer-Encoding") == "chunked"
    assert responses[1].http_headers.get_header("Location") == "/new"
    store.close()  # LMDB allows one open environment per path and process


def test_dumping_while_the_server_writes_never_blocks_it(tmp_path):
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([make_record(i) for i in range(1, 51)])
        c.acks(50)
        # Another process holds a read snapshot open...
        hold = ("import sys; from storeserver.store import ReadStore; r = ReadStore(sys.argv[1]); "
                "t = r.env.begin(); print(len(list(r.iter_docs())), flush=True); sys.stdin.read()")  # fmt: skip
        reader = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert reader.stdout.readline() == b"50\n"
        c.send([make_record(i) for i in range(51, 101)])
        assert c.acks(50) == [Ack(i, AckResult.STORED) for i in range(51, 101)]  # ...and commits go on
        reader.stdin.close()
        reader.wait(30)
        stop = threading.Event()

        def write() -> None:
            i = 101
            while not stop.is_set() and i < 2000:
                c.send([make_record(j) for j in range(i, i + 20)])
                c.acks(20)
                i += 20

        writer = threading.Thread(target=write)
        writer.start()
        counts = []
        try:
            for _ in range(5):
                dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--all", "--jsonl", "--data", str(tmp_path)],
                                      capture_output=True, timeout=60)  # fmt: skip
                assert dump.returncode == 0, dump.stderr
                ids = [json.loads(line)["doc_id"] for line in io.BytesIO(dump.stdout)]
                assert ids == sorted(set(ids)) and ids[:100] == list(range(1, 101))
                counts.append(len(ids))
        finally:
            stop.set()
            writer.join(30)
        assert counts == sorted(counts)
