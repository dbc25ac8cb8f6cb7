"""The research reading API (storeserver/documents.py, re-exported by
storeserver/reader.py): documents with their metadata and decoded text,
filters, lookup by URL, and a notebook reading while the store is written."""

from __future__ import annotations

import base64
import datetime
import hashlib
import subprocess
import sys

import pytest

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.reader import Document, NotFound, StoreError, open_crawl, read_counters

from tests.store_helpers import Client, filled_store, make_record, running_server

HOST = "http://127.0.0.1:8080"
LATIN1 = Record(1, True, Specific.OK, http_enum(200), 20, f"{HOST}/caf%C3%A9", None,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=ISO-8859-1\r\n\r\n"
                b"<html><head><title>Le  caf\xe9\n du coin</title></head><body><nav>Accueil | Plan</nav><article><p>"
                + "Un caf\xe9 cr\xe8me co\xfbte deux euros au comptoir, et trois en terrasse. ".encode("latin-1") * 8
                + b"</p></article></body></html>", hops="-")  # fmt: skip
PLAIN = Record(2, True, Specific.OK, http_enum(200), 5, "http://other.test/notes.txt", None,
               b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nplain words \xe2\x9c\x93",
               via=LATIN1.url, hops="LR")
MISSING = Record(3, True, Specific.HTTP_ERROR, http_enum(404), 4, f"{HOST}/gone", None,
                 b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<html><title>Gone</title></html>")
IMAGE = Record(4, True, Specific.OK, http_enum(200), 4, f"{HOST}/a.png", None,
               b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n")
TIMEOUT = Record(5, False, Specific.TIMEOUT, 0, 30_000, f"{HOST}/slow", None, b"")
NOT_MODIFIED = Record(6, True, Specific.NOT_MODIFIED, http_enum(304), 3, LATIN1.url, None,
                      b"HTTP/1.1 304 Not Modified\r\n\r\n")
ALL = [LATIN1, PLAIN, MISSING, IMAGE, TIMEOUT, NOT_MODIFIED]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return filled_store(tmp_path_factory.mktemp("store"), ALL)


def test_every_document_with_its_metadata_title_and_decoded_text(data):
    with open_crawl(data) as crawl:
        docs = list(crawl)
    # the 304 only confirms the first capture: left out, so the count is the store's
    assert [d.doc_id for d in docs] == [1, 2, 3, 4, 5] and len(docs) == read_counters(data).docs
    page = docs[0]
    assert isinstance(page, Document) and page.url == LATIN1.url
    assert (page.status, page.content_type, page.outcome, page.ok) == (200, "text/html", "OK", True)
    assert page.title == "Le café du coin"  # decoded as Latin-1 (the HTTP charset), whitespace collapsed
    assert "Un café crème coûte deux euros" in page.text and "Accueil" not in page.text  # main content only
    assert page.encoding == "cp1252"  # WHATWG: ISO-8859-1 is read as windows-1252
    body = LATIN1.document.split(b"\r\n\r\n", 1)[1]
    assert page.body == body and page.headers.startswith(b"HTTP/1.1 200 OK\r\n")
    assert page.digest == "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
    now = datetime.datetime.now(datetime.timezone.utc)
    assert page.fetched_at.tzinfo is not None and now - datetime.timedelta(minutes=10) < page.fetched_at <= now
    assert page.outlinks is None  # this store keeps no outlinks
    row = page.as_dict()
    assert row["title"] == page.title and row["digest"] == page.digest and "body" not in row
    assert page.as_dict(body=True)["body"] == body
    plain, missing, image, timeout = docs[1:]
    assert plain.text == "plain words ✓" and plain.title == "" and plain.host == "other.test"
    # where each was found: a seed (no via, the empty path), a link's redirect target, and not known
    assert (page.via, page.hops) == (None, "") and (plain.via, plain.hops) == (LATIN1.url, "LR")
    assert (missing.via, missing.hops) == (None, None) and plain.as_dict()["hops"] == "LR"
    assert (missing.status, missing.title) == (404, "Gone")
    assert (image.content_type, image.title, image.text) == ("image/png", "", "")
    assert (timeout.status, timeout.outcome, timeout.ok, timeout.body, timeout.content_type) == (0, "TIMEOUT", False, b"", "")


def test_filters_by_status_type_and_host(data):
    with open_crawl(data) as crawl:
        ids = lambda **kw: [d.doc_id for d in crawl.documents(**kw)]  # noqa: E731
        assert ids(status=200) == [1, 2, 4]
        assert ids(status={404, 0}) == [3, 5]
        assert ids(content_type="text/html") == [1, 3]
        assert ids(content_type="image/") == [4]
        assert ids(host="OTHER.test") == [2]
        assert ids(host="127.0.0.1", status=200, content_type="text/html") == [1]
        assert ids(revisits=True, status=304) == [6]


def test_lookup_by_url_is_normalised_and_skips_304_records(data):
    with open_crawl(data) as crawl:
        # another spelling of the same URL: case of scheme and host, default port, fragment, a raw é
        found = crawl.get("HTTP://127.0.0.1:8080/café#menu")
        assert found is not None and found.doc_id == 1  # the 304 (doc 6) is not its content
        assert [d.doc_id for d in crawl.captures(LATIN1.url)] == [1, 6]
        assert crawl.get(f"{HOST}/never") is None
        with pytest.raises(NotFound):
            crawl.get_id(999)


def test_no_store_is_a_store_error(tmp_path):
    with pytest.raises(StoreError, match="no store"):
        open_crawl(tmp_path / "nothing-here")


# A notebook in another process: one Crawl kept open while the store grows.
NOTEBOOK = """
import sys
from wreck.storeserver.reader import open_crawl
crawl = open_crawl(sys.argv[1])
seen = 0
for line in sys.stdin:
    last = crawl.get(line.strip())
    new = [d.doc_id for d in crawl.documents(after=seen)]
    seen = new[-1] if new else seen
    print(len(list(crawl)), last.doc_id if last else None, len(new), flush=True)
crawl.close()
"""


def test_a_notebook_reads_while_the_store_is_written_and_sees_each_new_batch(tmp_path):
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        notebook = None
        try:
            for first, last in ((1, 20), (21, 60), (61, 200), (201, 201)):
                c.send([make_record(i) for i in range(first, last + 1)])
                c.acks(last - first + 1)
                if notebook is None:  # opened once the store exists, then kept open
                    notebook = subprocess.Popen([sys.executable, "-c", NOTEBOOK, str(tmp_path)],
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
                notebook.stdin.write(make_record(last).url.replace("http://", "HTTP://") + "#top\n")
                notebook.stdin.flush()
                # every committed document, the newest found by another spelling of
                # its URL, and only the batch committed since the last look
                assert notebook.stdout.readline().split() == [str(last), str(last), str(last - first + 1)]
        finally:
            if notebook is not None:
                notebook.stdin.close()
                assert notebook.wait(30) == 0
