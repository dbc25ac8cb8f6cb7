"""What the spider kept for the archive is stored with the document
(docs/storage.txt, fetch), every stored doc has a commit sequence (journal),
and a format 1 store is read but never written."""

from __future__ import annotations

import lmdb
import pytest

from wreck.protocol import AckResult
from wreck.storeserver import layout as L
from wreck.storeserver.store import ReadStore, StoreError, WriteStore, store_path

from tests.store_helpers import Client, make_record, running_server

REQUEST = b"GET /page/5 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nIf-None-Match: \"e\"\r\n\r\n"


def test_extension_fields_are_kept_and_the_journal_is_in_commit_order(tmp_path):
    kept = make_record(5).__replace__(request=REQUEST, ip="127.0.0.1", truncated="time",
                                      outlinks=("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"))
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([kept])
        c.acks(1)
        c.send([make_record(3), make_record(9)])  # doc ids arrive in any order
        c.acks(2)
        c.send([kept])  # a resend: a duplicate, no second journal entry
        assert c.acks(1)[0].result is AckResult.DUPLICATE
    store = ReadStore(tmp_path)
    try:
        info = store.fetch_info(5)
        assert info == L.FetchInfo(REQUEST, "127.0.0.1", "time", kept.outlinks)
        assert (info.via, info.hops) == ("", "")  # not sent: not known
        assert store.fetch_info(3) is None  # a spider that kept nothing
        assert list(store.iter_journal()) == [(1, 5), (2, 3), (3, 9)]
        assert list(store.iter_journal(after=1)) == [(2, 3), (3, 9)]
        assert store.last_seq() == 3 and "seq" not in store.meta_info()
    finally:
        store.close()


def test_a_format_1_store_is_read_in_doc_order_and_refused_by_the_writer_in_one_line(tmp_path):
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([make_record(2), make_record(1)])
        c.acks(2)
    env = lmdb.open(str(store_path(tmp_path)), max_dbs=16)  # as a format 1 store was left
    with env.begin(write=True) as txn:
        txn.drop(env.open_db(L.DB_JOURNAL, txn=txn), delete=True)
        txn.drop(env.open_db(L.DB_FETCH, txn=txn), delete=True)
        meta = env.open_db(L.DB_META, txn=txn)
        txn.put(L.META_FORMAT, b"1", db=meta)
        txn.delete(L.META_SEQ, db=meta)
    env.close()
    store = ReadStore(tmp_path)
    try:
        assert list(store.iter_journal()) == [(1, 1), (2, 2)] and store.fetch_info(1) is None
    finally:
        store.close()
    with pytest.raises(StoreError) as err:
        WriteStore(tmp_path, map_size=1 << 24, max_growth=1 << 24)
    assert "holds store format 1, this server writes 2" in str(err.value) and "\n" not in str(err.value)


def test_the_via_and_hop_path_are_kept_with_the_document(tmp_path):
    found = make_record(4).__replace__(via="http://127.0.0.1:8080/", hops="LL")
    seed = make_record(6).__replace__(hops="-")
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([found, seed])
        c.acks(2)
    store = ReadStore(tmp_path)
    try:
        assert (store.fetch_info(4).via, store.fetch_info(4).hops) == ("http://127.0.0.1:8080/", "LL")
        assert (store.fetch_info(6).via, store.fetch_info(6).hops) == ("", "-")
    finally:
        store.close()


def test_a_fetch_value_written_before_via_and_hops_still_reads():
    import msgspec
    import zstandard

    old = zstandard.ZstdCompressor().compress(msgspec.msgpack.encode([b"GET / HTTP/1.1\r\n\r\n", "1.2.3.4", "", []]))
    info = L.decode_fetch(old)
    assert (info.ip, info.via, info.hops) == ("1.2.3.4", "", "")
