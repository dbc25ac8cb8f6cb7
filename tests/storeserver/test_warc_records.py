"""wreck-dump --warc writes the records an archivist expects (docs/warc.md):
request, response, revisit of both profiles, metadata, failed fetches, and
warcinfo; warcio reads them and `warcio check` passes; --since-last-export
writes each document once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.dump import app
from wreck.storeserver.warcrecords import payload_digest

from tests.store_helpers import Client, make_record, running_server

BASE = "http://127.0.0.1:8080"
UA = "WRECK-test/1.0 (+mailto:ops@example.org)"
BODY = b"<html><body><p>" + b"the same page twice, word for word. " * 20 + b"</p></body></html>"
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"e1\"\r\n\r\n"


def request(path: str, *extra: str) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1:8080", f"User-Agent: {UA}", "Accept: */*", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


FIRST = Record(1, True, Specific.OK, http_enum(200), 31, f"{BASE}/a", None, HEAD + BODY, request=request("/a"),
               ip="127.0.0.1", outlinks=(f"{BASE}/b", f"{BASE}/c"), hops="-")  # a seed
COPY = Record(2, True, Specific.OK, http_enum(200), 12, f"{BASE}/copy", None, HEAD + BODY, request=request("/copy"),
              ip="127.0.0.1", via=f"{BASE}/a", hops="L")
NOT_MODIFIED = Record(3, True, Specific.NOT_MODIFIED, http_enum(304), 4, f"{BASE}/a", None,
                      b"HTTP/1.1 304 Not Modified\r\nETag: \"e1\"\r\n\r\n",
                      request=request("/a", 'If-None-Match: "e1"'), ip="127.0.0.1")
SLOW = Record(4, False, Specific.TIMEOUT, http_enum(200), 30_000, f"{BASE}/slow", None,
              b"HTTP/2 200\r\ncontent-type: text/plain\r\n\r\npartial", request=request("/slow"),
              ip="127.0.0.1", truncated="time")
REFUSED = Record(5, False, Specific.CONNECT_FAILED, 0, 3, f"{BASE}/down", None, b"", ip="127.0.0.1",
                 via=f"{BASE}/moved", hops="LR")  # a redirect's target


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("store")
    with running_server(path) as (_, port):
        c = Client(port)
        for record in (FIRST, COPY, NOT_MODIFIED, SLOW, REFUSED):  # one commit each: the journal's order
            c.send([record])
            c.acks(1)
    return path


def export(data: Path, path: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--all", "--warc", str(path), "--data", str(data), *args])
    assert result.exit_code == 0, result.output
    return result.stderr


def export_beside_server(data: Path, path: Path, *args: str) -> str:
    """wreck-dump in its own process (LMDB: one environment per path and process)."""
    run = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--all", "--warc", str(path),
                          "--data", str(data), *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stderr


def read(path: Path) -> list:
    """(record, payload) of each record; a request's payload is its whole block."""
    with open(path, "rb") as fh:
        blocks = [rec.raw_stream.read() for rec in ArchiveIterator(fh, no_record_parse=True)]
    with open(path, "rb") as fh:
        return [(rec, block if rec.rec_type == "request" else rec.content_stream().read())
                for rec, block in zip(ArchiveIterator(fh), blocks)]


def warcio_check(path: Path) -> None:
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def by_doc(records, doc_id: int) -> dict:
    return {rec.rec_type: (rec, payload) for rec, payload in records
            if rec.rec_headers.get_header("WARC-Wreck-Doc-Id") == str(doc_id)}


def test_every_capture_gets_its_records_linked_and_digested(data, tmp_path):
    path = tmp_path / "crawl.warc.gz"
    said = export(data, path, "--operator", "Archive Team <ops@example.org>", "--crawl-name", "test-crawl")
    assert "5 documents as" in said
    warcio_check(path)
    records = read(path)
    info, fields = records[0]
    assert info.rec_type == "warcinfo" and info.rec_headers.protocol == "WARC/1.1"
    for line in ("operator: Archive Team <ops@example.org>", "isPartOf: test-crawl", f"http-header-user-agent: {UA}",
                 "robots: obey", "format: WARC File Format 1.1", "conformsTo: http://iipc.github.io/"):
        assert line.encode() in fields
    assert b"software: WRECK/" in fields and b"hostname: " in fields

    first = by_doc(records, 1)
    assert set(first) == {"request", "response", "metadata"}
    response, body = first["response"]
    rid = response.rec_headers.get_header("WARC-Record-ID")
    assert body == BODY and response.rec_headers.get_header("WARC-IP-Address") == "127.0.0.1"
    assert response.rec_headers.get_header("WARC-Payload-Digest") == payload_digest(BODY)
    assert response.rec_headers.get_header("WARC-Block-Digest").startswith("sha1:")
    req, sent = first["request"]
    assert sent == FIRST.request and req.rec_headers.get_header("WARC-Concurrent-To") == rid
    assert req.rec_headers.get_header("Content-Type") == "application/http; msgtype=request"
    meta, lines = first["metadata"]
    assert meta.rec_headers.get_header("WARC-Concurrent-To") == rid
    assert meta.rec_headers.get_header("Content-Type") == "application/warc-fields"
    # a seed is marked as Heritrix marks it: a lone "seed:" label, no via, no hopsFromSeed
    assert lines == f"seed:\r\nfetchTimeMs: 31\r\noutlink: {BASE}/b L\r\noutlink: {BASE}/c L\r\n".encode()

    copy, empty = by_doc(records, 2)["revisit"]  # the same body under another URL
    assert empty == b""
    assert by_doc(records, 2)["metadata"][1] == f"via: {BASE}/a\r\nhopsFromSeed: L\r\nfetchTimeMs: 12\r\n".encode()
    assert copy.rec_headers.get_header("WARC-Profile").endswith("/revisit/identical-payload-digest")
    assert copy.rec_headers.get_header("WARC-Payload-Digest") == payload_digest(BODY)
    assert copy.rec_headers.get_header("WARC-Refers-To") == rid
    assert copy.rec_headers.get_header("WARC-Refers-To-Target-URI") == f"{BASE}/a"
    assert copy.rec_headers.get_header("WARC-Refers-To-Date") == response.rec_headers.get_header("WARC-Date")

    nm = by_doc(records, 3)
    revisit = nm["revisit"][0]
    assert revisit.rec_headers.get_header("WARC-Profile").endswith("/revisit/server-not-modified")
    assert revisit.rec_headers.get_header("WARC-Refers-To") == rid
    assert revisit.rec_headers.get_header("WARC-Refers-To-Date") == response.rec_headers.get_header("WARC-Date")
    assert b'If-None-Match: "e1"' in nm["request"][1]  # the conditional request, as sent

    slow, partial = by_doc(records, 4)["response"]
    assert partial == b"partial" and slow.rec_headers.get_header("WARC-Truncated") == "time"
    assert slow.rec_headers.get_header("WARC-Protocol") == "h2" and response.rec_headers.get_header("WARC-Protocol") is None

    down = by_doc(records, 5)
    assert set(down) == {"metadata"}
    assert down["metadata"][1] == (f"via: {BASE}/moved\r\nhopsFromSeed: LR\r\n".encode()
                                   + b"fetchStatus: CONNECT_FAILED\r\nfetchTimeMs: 3\r\nip: 127.0.0.1\r\n")


def test_an_export_written_twice_has_the_same_record_ids(data, tmp_path):
    ids = []
    for name in ("one.warc", "two.warc"):
        export(data, tmp_path / name)
        ids.append([r.rec_headers.get_header("WARC-Record-ID") for r, _ in read(tmp_path / name)[1:]])
    assert ids[0] == ids[1] and len(set(ids[0])) == len(ids[0])


def test_since_last_export_writes_each_document_once(tmp_path):
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([make_record(i) for i in (5, 1, 3)])
        c.acks(3)
        export_beside_server(tmp_path, tmp_path / "1.warc", "--since-last-export")
        c.send([make_record(i) for i in (2, 9)])
        c.acks(2)
        export_beside_server(tmp_path, tmp_path / "2.warc", "--since-last-export")
        said = export_beside_server(tmp_path, tmp_path / "3.warc", "--since-last-export")
    docs = [sorted(int(r.rec_headers.get_header("WARC-Wreck-Doc-Id")) for r, _ in read(tmp_path / f"{n}.warc")
                   if r.rec_type == "response") for n in (1, 2, 3)]
    assert docs == [[1, 3, 5], [2, 9], []] and "0 documents" in said


NOWHERE = Record(6, False, Specific.DNS_FAILED, 0, 0, "http://nowhere.wreck.test:8080/a", None, b"",
                 nofetch="dns: NXDOMAIN")
INTRANET = Record(7, False, Specific.FORBIDDEN_ADDRESS, 0, 0, "http://intranet.wreck.test/", None, b"",
                  nofetch="forbidden address 10.1.2.3 (private)", refused=("10.1.2.3", "fd00::7"))


def test_a_url_no_spider_connected_for_is_a_metadata_record_of_what_was_tried(tmp_path):
    """Issue 18: a DNS failure or a refused address (a record-only transaction,
    docs/protocol.txt 5.3 nofetch=) reaches the WARC: the host, the urlserver's
    reason, the addresses refused, and that no connection was attempted."""
    with running_server(tmp_path / "store") as (_, port):
        c = Client(port)
        c.send([NOWHERE, INTRANET])
        c.acks(2)
    path = tmp_path / "failed.warc.gz"
    export(tmp_path / "store", path)
    warcio_check(path)
    records = read(path)
    nowhere, intranet = by_doc(records, 6), by_doc(records, 7)
    assert set(nowhere) == set(intranet) == {"metadata"}  # no request, no response: nothing was sent
    meta, lines = nowhere["metadata"]
    assert meta.rec_headers.get_header("WARC-Target-URI") == NOWHERE.url
    assert meta.rec_headers.get_header("WARC-IP-Address") is None
    assert lines == (b"fetchStatus: DNS_FAILED\r\nfetchTimeMs: 0\r\nhost: nowhere.wreck.test\r\n"
                     b"reason: dns: NXDOMAIN\r\nconnectionAttempted: no\r\n")
    assert intranet["metadata"][1] == (
        b"fetchStatus: FORBIDDEN_ADDRESS\r\nfetchTimeMs: 0\r\nhost: intranet.wreck.test\r\n"
        b"reason: forbidden address 10.1.2.3 (private)\r\nrefusedAddress: 10.1.2.3\r\n"
        b"refusedAddress: fd00::7\r\nconnectionAttempted: no\r\n")
