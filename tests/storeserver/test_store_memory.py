"""The store's memory bound (issue 14, finding 4): tiny records count with
their overhead, records still arriving count as soon as their header is in,
and a connection whose record does not fit stops reading until commits free
room, while big records already granted still complete."""

from __future__ import annotations

import threading
import time

from wreck.protocol import Ack, AckResult, Record, Specific, http_enum
from wreck.storeserver import settings as S
from wreck.storeserver.store import WriteStore

from tests.store_helpers import Client, running_server

WAIT_S = 15.0  # a bound on waiting for the server, never a condition of success


class GatedStore(WriteStore):
    """A store whose commits wait until the test opens the gate (a slow disk)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()

    def commit(self, batch, new_dict=None, **kw):
        self.gate.wait(WAIT_S)
        return super().commit(batch, new_dict, **kw)


def wait_for(predicate) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.01)


def peers(server) -> list:
    while True:
        try:
            return list(server.connections)
        except RuntimeError:  # changed during iteration (the server's thread)
            continue


def tiny(doc_id: int) -> Record:
    return Record(doc_id, True, Specific.OK, http_enum(200), 1, f"http://127.0.0.1/t/{doc_id}", None,
                  b"HTTP/1.1 200 OK\r\n\r\nx")  # fmt: skip


def test_tiny_records_sent_fast_are_bounded_by_their_number_too(tmp_path):
    bound = 1 << 20
    count = 5000  # about 250 KB on the wire: far under the bound by bytes alone
    store = GatedStore(tmp_path, map_size=S.DEFAULT_MAP_SIZE, max_growth=S.MAX_MAP_GROWTH)
    with running_server(tmp_path, store=store, max_backlog_bytes=bound) as (server, port):
        c = Client(port)
        c.send([tiny(i) for i in range(1, count + 1)])
        wait_for(lambda: server.unanswered == count or any(getattr(p, "waiting_room", False) for p in peers(server)))
        # The store took in no more records than the bound holds at 1 KiB each.
        assert server.unanswered * S.RECORD_OVERHEAD <= bound + S.RECORD_OVERHEAD
        store.gate.set()  # the disk catches up: every record is stored and acked
        assert c.acks(count) == [Ack(i, AckResult.STORED) for i in range(1, count + 1)]


def test_partial_records_count_and_big_records_still_complete(tmp_path):
    bound = 2 << 20
    size = 1 << 20
    senders = 8
    records = [Record(i, True, Specific.OK, http_enum(200), 1, f"http://127.0.0.1/big/{i}", None,
                      b"HTTP/1.1 200 OK\r\n\r\n" + bytes([i]) * size) for i in range(1, senders + 1)]  # fmt: skip
    with running_server(tmp_path, max_backlog_bytes=bound) as (server, port):
        clients = [Client(port, name=f"big-{i}") for i in range(senders)]
        wires = [c.conn.send(r) for c, r in zip(clients, records)]
        threads = [threading.Thread(target=c.send_raw, args=(w[:-1],), daemon=True) for c, w in zip(clients, wires)]
        for t in threads:
            t.start()
        # Each connection has either buffered all it was sent (one byte short
        # of its record) or been told to wait for room.
        want = len(wires[0]) - 1

        def settled() -> bool:
            ps = [p for p in peers(server) if p.opened]
            return len(ps) == senders and all(getattr(p, "waiting_room", False) or len(p.conn._buf) == want
                                              for p in ps)
        wait_for(settled)
        buffered = sum(len(p.conn._buf) for p in peers(server))
        assert buffered <= bound + senders * S.READ_CHUNK, f"{buffered} bytes of partial records buffered"
        for c, w, t in zip(clients, wires, threads):  # the last bytes: every record completes, none is stuck
            t.join(WAIT_S)
            c.send_raw(w[-1:])
        for c, r in zip(clients, records):
            assert c.acks(1) == [Ack(r.doc_id, AckResult.STORED)]
        assert server.held_bytes() == 0


def test_a_connection_that_stalls_mid_record_cannot_hold_the_memory_for_ever(tmp_path):
    bound = 2 << 20
    stalled = Record(1, True, Specific.OK, http_enum(200), 1, "http://127.0.0.1/stalled", None,
                     b"HTTP/1.1 200 OK\r\n\r\n" + b"s" * (1900 << 10))  # fmt: skip
    waiting = Record(2, True, Specific.OK, http_enum(200), 1, "http://127.0.0.1/waiting", None,
                     b"HTTP/1.1 200 OK\r\n\r\n" + b"w" * (1 << 20))  # fmt: skip
    with running_server(tmp_path, max_backlog_bytes=bound, record_stall_s=0.5) as (server, port):
        staller, spider = Client(port, name="staller"), Client(port, name="spider")
        wire = staller.conn.send(stalled)
        staller.send_raw(wire[: len(wire) // 2])  # granted its memory, then says no more
        wait_for(lambda: any(p.reserved and p.name == "staller" for p in peers(server)))
        spider.send([waiting])  # does not fit beside it: waits
        assert spider.acks(1) == [Ack(2, AckResult.STORED)]  # stored once the staller is closed
        said = staller.until_closed()
        assert "no byte of a record for 0.5 s while others wait for memory" in said[-1].reason
