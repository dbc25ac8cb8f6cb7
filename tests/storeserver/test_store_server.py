"""The store server through its real TCP listener: acks after commit,
splits at every byte, concurrent senders, duplicates, bad input, growth."""

from __future__ import annotations

import logging
import os
import socket
import threading

import msgspec
import pytest

from wreck.protocol import Ack, AckResult, ConnectionClosed, Error, ErrorCode, Record, Specific, http_enum
from wreck.protocol.record import RECORD_HEADER
from wreck.storeserver import settings as S
from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, make_record, running_server


def stored(data, doc_id):
    store = ReadStore(data)
    try:
        return store.get(doc_id)
    finally:
        store.close()


def test_records_are_acked_and_read_back_intact(tmp_path):
    recs = [make_record(i, size=100 * i) for i in range(1, 51)]
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        assert c.settings["max_doc_len"].isdigit()
        c.send(recs)
        assert c.acks(50) == [Ack(r.doc_id, AckResult.STORED) for r in recs]
    store = ReadStore(tmp_path)
    for r in recs:
        meta, document = store.get(r.doc_id)
        assert document == r.document
        assert (meta.url, meta.new_url, meta.success, meta.http, meta.ms) == (r.url, None, True, http_enum(200), r.ms)
        assert document[: meta.head_len].endswith(b"\r\n\r\n")
    assert [m.doc_id for m, _ in store.iter_docs()] == [r.doc_id for r in recs]


def _pair(n: int) -> list[Record]:
    """A page and a failed fetch (no document), same sizes for every n."""
    return [make_record(n, size=64, url=f"http://127.0.0.1/page/{n:06d}"),
            Record(n + 1, False, Specific.TIMEOUT, 0, 30000, f"http://127.0.0.1/slow/{n:06d}", None, b"")]  # fmt: skip


def test_a_record_stream_split_at_every_byte_boundary(tmp_path):
    with running_server(tmp_path) as (_, port):
        length = len(b"".join(Client(port).conn.send(r) for r in _pair(0)))
        for cut in range(1, length):
            c = Client(port)
            recs = _pair(10_000 + 2 * cut)
            data = b"".join(c.conn.send(r) for r in recs)
            c.send_raw(data[:cut])
            c.send_raw(data[cut:])
            assert c.acks(2) == [Ack(r.doc_id, AckResult.STORED) for r in recs]
            c.close()
        # And one record fed a byte at a time.
        c = Client(port)
        r = make_record(5, size=200)
        for byte in c.conn.send(r):
            c.send_raw(bytes([byte]))
        assert c.acks(1) == [Ack(5, AckResult.STORED)]
    store = ReadStore(tmp_path)
    assert store.get(5)[1] == r.document
    assert len(list(store.iter_docs(with_documents=False))) == 2 * (length - 1) + 1
    for cut in (1, 20, length // 2, length - 1):
        page, failed = _pair(10_000 + 2 * cut)
        assert store.get(page.doc_id)[1] == page.document
        meta, document = store.get(failed.doc_id)
        assert document == b"" and meta.head_len == 0 and meta.specific == Specific.TIMEOUT


def _send_at_once(port: int, records: dict[int, list[Record]], *, burst: int) -> dict[int, list[Ack]]:
    """Each sender k's records on a connection of its own, all senders at
    once, `burst` records a write (like a spider); the acks each got."""
    results: dict[int, list[Ack]] = {}

    def send(k: int) -> None:
        c = Client(port, name=f"box-{k}")
        for i in range(0, len(records[k]), burst):
            c.send(records[k][i : i + burst])
        results[k] = c.acks(len(records[k]))
        c.close()

    threads = [threading.Thread(target=send, args=(k,)) for k in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_concurrent_senders_each_get_their_own_acks(tmp_path):
    senders, per = 8, 150
    records = {k: [make_record(k * 1000 + i, size=500 + i * 10) for i in range(per)] for k in range(senders)}
    with running_server(tmp_path) as (_, port):
        results = _send_at_once(port, records, burst=10)
    for k in range(senders):
        assert [a.doc_id for a in results[k]] == [k * 1000 + i for i in range(per)]
        assert {a.result for a in results[k]} == {AckResult.STORED}
    store = ReadStore(tmp_path)
    assert store.meta_info()["docs"] == senders * per
    assert store.get(3 * 1000 + 77)[1] == make_record(3077, size=500 + 770).document


def test_senders_interleaving_reads_each_store_their_own_bytes(tmp_path):
    # Documents longer than one read (S.READ_CHUNK), and short ones, from
    # senders writing at once: each stored byte for byte, none with another's
    # bytes (a receive buffer shared between connections must not mix them).
    senders, per = 4, 12
    sizes = [S.READ_CHUNK * 3 // 2, 300, S.READ_CHUNK + 7, 5000]
    records = {k: [_unique(k * 100 + i, sizes[i % len(sizes)]) for i in range(per)] for k in range(senders)}
    with running_server(tmp_path) as (_, port):
        results = _send_at_once(port, records, burst=3)
    store = ReadStore(tmp_path)
    for k in range(senders):
        assert results[k] == [Ack(r.doc_id, AckResult.STORED) for r in records[k]]
        for r in records[k]:
            assert store.get(r.doc_id)[1] == r.document


def _unique(doc_id: int, size: int) -> Record:
    """A page of about `size` bytes that no other doc id's page resembles."""
    r = make_record(doc_id, size=64)
    filler = (f"<!-- {doc_id:08d} -->" * (size // 17 + 1)).encode()[:size]
    return msgspec.structs.replace(r, document=r.document + filler)


def test_a_duplicate_doc_id_is_stored_once_and_acked_again(tmp_path):
    original = make_record(42)
    resent = make_record(42, size=5000)  # different bytes: the first record stands
    with running_server(tmp_path) as (_, port):
        a, b = Client(port), Client(port)
        a.send([original])
        assert a.acks(1) == [Ack(42, AckResult.STORED)]
        b.send([resent, resent])
        assert b.acks(2) == [Ack(42, AckResult.DUPLICATE)] * 2
        a.send([make_record(43), make_record(43)])  # twice in one batch
        assert a.acks(2) == [Ack(43, AckResult.STORED), Ack(43, AckResult.DUPLICATE)]
    store = ReadStore(tmp_path)
    assert store.get(42)[1] == original.document
    assert store.doc_ids_for_url(original.url) == [42]
    assert store.meta_info()["docs"] == 2


def test_a_store_of_another_crawl_refuses_its_records_instead_of_calling_them_duplicates(tmp_path, caplog):
    # Issue 14, finding 7: crawl B's pages were acked as duplicates of crawl
    # A's (same doc ids, other URLs) and never stored.
    crawl_a = [make_record(i, url=f"http://a.example/{i}") for i in (1, 2, 3)]
    crawl_b = [make_record(i, url=f"http://b.example/{i}") for i in (1, 2, 3, 4)]
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send(crawl_a)
        assert c.acks(3) == [Ack(i, AckResult.STORED) for i in (1, 2, 3)]
    with caplog.at_level(logging.ERROR, "storeserver"), running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send(crawl_b)
        acks = sorted(c.acks(4), key=lambda a: a.doc_id)
        assert acks == [Ack(1, AckResult.REFUSED), Ack(2, AckResult.REFUSED), Ack(3, AckResult.REFUSED),
                        Ack(4, AckResult.STORED)]
        c.send(crawl_a[:1])  # crawl A's own resend is still a duplicate
        assert c.acks(1) == [Ack(1, AckResult.DUPLICATE)]
    assert "give this crawl its own --data" in caplog.text
    store = ReadStore(tmp_path)
    assert [store.get(i)[0].url for i in (1, 2, 3, 4)] == [r.url for r in crawl_a] + [crawl_b[3].url]
    assert store.doc_ids_for_url("http://b.example/1") == []


def _header(**over):
    fields = dict(doc_id=9, success=1, specific=0, http=http_enum(200), pad=0, ms=1, url_len=8, new_len=0, doc_len=0)
    fields.update(over)
    return RECORD_HEADER.pack(*fields.values())


@pytest.mark.parametrize("bad, code", [
    (_header(success=7) + b"http://h", ErrorCode.SYNTAX),
    (_header(pad=2) + b"http://h", ErrorCode.SYNTAX),  # a flag bit the spec does not name
    (_header(url_len=0), ErrorCode.LIMIT),
    (_header(doc_len=4096) + b"http://h" + b"x" * 10, ErrorCode.LIMIT),  # over max_doc_len=2000
    (_header() + b"http:// h", ErrorCode.SYNTAX),
])  # fmt: skip
def test_bad_input_closes_that_connection_only(tmp_path, caplog, bad, code):
    caplog.set_level(logging.WARNING, "storeserver")
    with running_server(tmp_path, max_doc_len=2000) as (_, port):
        good, evil = Client(port, name="good"), Client(port, name="evil")
        good.send([make_record(1, size=100)])
        assert good.acks(1)[0].result is AckResult.STORED
        evil.send([make_record(2, size=100)])
        evil.acks(1)
        evil.send_raw(bad)
        events = evil.until_closed()
        assert type(events[0]) is Error and events[0].code is code
        good.send([make_record(3, size=100)])  # the other connection is untouched
        assert good.acks(1) == [Ack(3, AckResult.STORED)]
    lines = [r.getMessage() for r in caplog.records if "event=protocol_error" in r.getMessage()]
    assert len(lines) == 1 and "name=evil" in lines[0]
    assert stored(tmp_path, 1)[1] == make_record(1, size=100).document
    assert stored(tmp_path, 2)[1] == make_record(2, size=100).document


def test_wrong_secret_is_refused_before_any_record(tmp_path):
    secret = b"a-shared-secret-of-some-length"
    with running_server(tmp_path, secret=secret) as (_, port):
        intruder = Client(port, secret=b"not-the-secret-at-all", handshake=False)
        answer = intruder.handshake()
        assert type(answer) is Error and answer.code is ErrorCode.AUTH
        friend = Client(port, secret=secret)
        friend.send([make_record(1)])
        assert friend.acks(1) == [Ack(1, AckResult.STORED)]
    assert len(list(ReadStore(tmp_path).iter_docs())) == 1


def test_silent_connections_time_out_and_the_cap_is_enforced(tmp_path):
    # Two servers: the short handshake deadline only for the silent
    # connection, so the good clients below never race it on a slow machine.
    with running_server(tmp_path / "short", handshake_timeout_s=0.3) as (_, port):
        silent = socket.create_connection(("127.0.0.1", port), timeout=10)
        said = b""
        while chunk := silent.recv(4096):  # until the server closes
            said += chunk
        assert said.startswith(b"WRECK/1 HELLO storeserver ") and b"\nERROR unavailable no handshake" in said
    with running_server(tmp_path / "capped", max_connections=2) as (_, port):
        a, _occupies_second_slot = Client(port), Client(port)
        third = Client(port, handshake=False)
        answer = third.handshake()
        assert type(answer) is Error and answer.code is ErrorCode.BUSY
        a.send([make_record(1)])
        assert a.acks(1) == [Ack(1, AckResult.STORED)]


def test_a_full_map_grows_and_no_acked_record_is_lost(tmp_path):
    recs = [Record(i, True, Specific.OK, http_enum(200), 1, f"http://127.0.0.1/r/{i}", None,
                   b"HTTP/1.1 200 OK\r\n\r\n" + os.urandom(20_000)) for i in range(1, 201)]  # fmt: skip
    with running_server(tmp_path, map_size=256 * 1024) as (server, port):
        c = Client(port)
        c.send(recs)
        assert [a.doc_id for a in c.acks(200)] == list(range(1, 201))
        assert server.store.map_size >= 4 << 20
    store = ReadStore(tmp_path)
    assert all(store.get(r.doc_id)[1] == r.document for r in recs)


def test_a_spider_that_half_closes_does_not_hold_back_anyone_elses_acks(tmp_path):
    # Found by tests/test_bad_peers.py: acks for a spider that had shut its
    # sending side raised inside the commit callback, so the acks of every
    # other connection in the same commit never left and the half-closed
    # connection was never closed. A wide commit window puts both in one batch.
    with running_server(tmp_path, commit_window_ms=300) as (_, port):
        leaver, good = Client(port, name="leaver"), Client(port, name="good")
        leaver.send([make_record(1)])
        leaver.sock.shutdown(socket.SHUT_WR)
        good.send([make_record(2)])
        assert good.acks(1) == [Ack(2, AckResult.STORED)]
        assert leaver.until_closed()[-1] == ConnectionClosed()  # closed once its record is in
        good.send([make_record(1)])  # the leaver's record was stored all the same
        assert good.acks(1) == [Ack(1, AckResult.DUPLICATE)]


def test_an_idle_store_has_no_timer_running(tmp_path):
    """Issue 16: a store with nothing to do uses no CPU. Records in and acked,
    its loop holds no timer (the stall check runs only while a connection
    waits for memory) and its writer threads sleep on their queues."""
    with running_server(tmp_path) as (server, port):
        client = Client(port)
        client.send([make_record(i) for i in range(1, 4)])
        assert [a.doc_id for a in client.acks(3)] == [1, 2, 3]
        scheduled = server._loop.call_soon_threadsafe  # the loop runs in its own thread: ask it
        timers: list = []
        done = threading.Event()
        scheduled(lambda: (timers.extend(h for h in getattr(server._loop, "_scheduled", ()) if not h.cancelled()),
                           done.set()))
        assert done.wait(5)
        assert server._stall_timer is None
        assert timers == []
