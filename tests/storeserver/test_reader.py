"""The store's public read API (storeserver/reader.py): what wreck-crawl and
other programs may read (wreck-crawl's e2e tests read it while a server
writes, from another process)."""

from __future__ import annotations

import pytest

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.reader import Counters, StoreError, open_store, read_counters

from tests.store_helpers import Client, running_server

PAGE = Record(1, True, Specific.OK, http_enum(200), 12, "http://127.0.0.1:8080/a", None,
              b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>" + b"words " * 200 + b"</body></html>")
REVISIT = Record(2, True, Specific.NOT_MODIFIED, http_enum(304), 3, "http://127.0.0.1:8080/a", None,
                 b"HTTP/1.1 304 Not Modified\r\n\r\n")


def test_counters_count_documents_bytes_and_revisits(tmp_path):
    with running_server(tmp_path) as (_, port):  # in this process: LMDB allows one open per process
        c = Client(port)
        c.send([PAGE, REVISIT])
        assert [a.doc_id for a in c.acks(2)] == [1, 2]
    counters = read_counters(tmp_path)
    assert counters.docs == 1 and counters.not_modified == 1
    assert counters.raw_bytes == len(PAGE.document)
    assert 0 < counters.stored_bytes < counters.raw_bytes  # compressed
    assert read_counters(tmp_path) == counters
    store = open_store(tmp_path)
    try:
        assert store.current_doc_for_url(PAGE.url) == 1
        assert store.get(1)[1] == PAGE.document
    finally:
        store.close()


def test_no_store_yet_is_a_store_error(tmp_path):
    with pytest.raises(StoreError, match="no store"):
        read_counters(tmp_path / "nothing-here")
    with pytest.raises(StoreError):
        open_store(tmp_path / "nothing-here")
    assert Counters() == Counters(docs=0, raw_bytes=0, stored_bytes=0, not_modified=0)
