"""A store keeps one crawl (docs/protocol.txt 6.1): the first crawl id a
spider names is kept with the first records committed after it, across
restarts; a spider of another crawl gets its WELCOME, then one ERROR frame
of code crawl naming both ids, and the connection closes with none of its
records read, so nothing of it is acked, not even as a duplicate of the
kept crawl's document under the same doc id."""

from __future__ import annotations

import contextlib
import logging

from wreck.protocol import Ack, AckResult, ConnectionClosed, Error, ErrorCode, Ready
from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, make_record, running_server

CRAWL_A = "aa" * 16
CRAWL_B = "bb" * 16


def _kept(data) -> str | None:
    store = ReadStore(data)
    try:
        return store.meta_info().get("crawl_id")
    finally:
        store.close()


def test_the_first_crawl_is_kept_and_a_spider_of_another_is_refused_with_one_error_frame(tmp_path, caplog):
    page = make_record(1, url="http://a.example/")
    with running_server(tmp_path) as (_, port):
        a = Client(port, crawl_id=CRAWL_A)
        a.send([page])
        assert a.acks(1) == [Ack(1, AckResult.STORED)]
    assert _kept(tmp_path) == CRAWL_A
    with caplog.at_level(logging.ERROR, "storeserver"), running_server(tmp_path) as (server, port):
        b = Client(port, crawl_id=CRAWL_B, name="box-b", handshake=False)
        assert type(b.handshake()) is Ready  # the store proves the secret before it refuses
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the store may have closed already
            b.send([page])  # the same doc id and URL: once acked as a duplicate, never stored
        events = b.until_closed()
        assert [type(e) for e in events] in ([Error, ConnectionClosed], [Error])
        assert events[0].code is ErrorCode.CRAWL
        assert CRAWL_A in events[0].reason and CRAWL_B in events[0].reason and "box-b" in events[0].reason
        assert not any(type(e) is Ack for e in b.events + events)
        again = Client(port, crawl_id=CRAWL_A)  # crawl A's spiders still get in
        again.send([make_record(2, url="http://a.example/2")])
        assert again.acks(1) == [Ack(2, AckResult.STORED)]
    assert "event=crawl_refused" in caplog.text and CRAWL_B in caplog.text
    assert _kept(tmp_path) == CRAWL_A
    store = ReadStore(tmp_path)
    try:
        assert store.meta_info()["docs"] == 2 and store.get(1)[1] == page.document
    finally:
        store.close()


def test_a_store_without_a_crawl_adopts_the_first_one_named_and_spiders_naming_none_are_not_checked(tmp_path):
    with running_server(tmp_path) as (_, port):
        old = Client(port)  # a store made before crawl ids: it holds records, but no crawl
        old.send([make_record(1)])
        assert old.acks(1) == [Ack(1, AckResult.STORED)]
    assert _kept(tmp_path) is None
    with running_server(tmp_path) as (_, port):
        a = Client(port, crawl_id=CRAWL_A)
        a.send([make_record(2)])
        assert a.acks(1) == [Ack(2, AckResult.STORED)]
        b = Client(port, crawl_id=CRAWL_B, handshake=False)
        b.handshake()
        assert [e.code for e in b.until_closed() if type(e) is Error] == [ErrorCode.CRAWL]
        anonymous = Client(port)
        anonymous.send([make_record(3)])
        assert anonymous.acks(1) == [Ack(3, AckResult.STORED)]
    assert _kept(tmp_path) == CRAWL_A
