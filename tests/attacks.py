# The resource attacks of issue 14 as clients: what the tests that check each
# bound run, and what bench/attack_memory.py runs to measure the daemons'
# memory under each. Each takes the port of a real daemon on loopback and a
# `tick` the caller runs while the attack is under way (to sample RSS).
#
#   silent(port)                 a connection that takes HELLO and says nothing (finding 6)
#   partial_records(...)         connections each one byte short of a large record (finding 4)
#   tiny_records(...)            tiny records sent as fast as the store takes them (finding 4)
#   status_flood(port, n)        n connections held open on the status listener (finding 8)
"""Attack clients for the resource findings of issue 14."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from wreck.protocol import Ack, Record, Specific, http_enum

from tests.daemon_helpers import HOST, IO_TIMEOUT
from tests.store_helpers import Client as StoreClient

Tick = Callable[[], None]
STALLED_TURNS = 200  # turns without progress (10 ms each) after which a sender gives up: the store holds it back


def silent(port: int) -> socket.socket:
    """A connection that reads the HELLO and then says nothing."""
    sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
    assert sock.recv(200).startswith(b"WRECK/1 HELLO ")
    return sock


def partial_records(port: int, secret: bytes, *, senders: int, size: int, tick: Tick = lambda: None) -> list[StoreClient]:
    """`senders` authenticated connections, each sending all but the last
    byte of a `size`-byte record as fast as the store reads; returns once
    all is sent or the store stopped reading (the clients stay open)."""
    clients = [StoreClient(port, secret=secret) for _ in range(senders)]
    records = [Record(i, True, Specific.OK, http_enum(200), 1, f"http://big.test/{i}", None,
                      b"HTTP/1.1 200 OK\r\n\r\n" + bytes([i % 256]) * size) for i in range(1, senders + 1)]  # fmt: skip
    wires = [c.conn.send(r) for c, r in zip(clients, records)]
    for c in clients:
        c.sock.setblocking(False)
    left = [memoryview(w)[:-1] for w in wires]  # one byte short of each record
    stalled = 0
    while any(left) and stalled < STALLED_TURNS:
        progress = False
        for i, c in enumerate(clients):
            if left[i]:
                try:
                    n = c.sock.send(left[i][: 1 << 20])
                    left[i], progress = left[i][n:], True
                except BlockingIOError:
                    pass
        tick()
        stalled = 0 if progress else stalled + 1
        if not progress:
            time.sleep(0.01)
    return clients


def tiny_records(port: int, secret: bytes, *, seconds: float, connections: int = 4, first_doc_id: int = 1,
                 tick: Tick = lambda: None) -> int:
    """Tiny records (a one-byte body) on `connections` connections as fast
    as the store takes them, for `seconds`, reading acks as they come;
    how many were acked."""
    clients = [StoreClient(port, secret=secret) for _ in range(connections)]
    for c in clients:
        c.sock.setblocking(False)
    doc_id, acked = first_doc_id, 0
    batch = 200  # records per send: a burst, as a spider flushing a loop turn's records
    deadline = time.monotonic() + seconds
    pending = [b""] * connections
    while time.monotonic() < deadline:
        for i, c in enumerate(clients):
            if not pending[i]:
                records = [Record(d, True, Specific.OK, http_enum(200), 1, f"http://t.test/{d}", None,
                                  b"HTTP/1.1 200 OK\r\n\r\nx") for d in range(doc_id, doc_id + batch)]  # fmt: skip
                doc_id += batch
                pending[i] = b"".join(map(c.conn.send, records))
            try:
                n = c.sock.send(pending[i])
                pending[i] = pending[i][n:]
            except BlockingIOError:
                pass
            try:
                c.conn.receive_data(c.sock.recv(1 << 20))
            except BlockingIOError:
                continue
            while type(c.conn.next_event()) is Ack:
                acked += 1
        tick()
    for c in clients:
        c.close()
    return acked


def status_flood(port: int, connections: int, *, tick: Tick = lambda: None) -> list[socket.socket]:
    """`connections` connections opened on the status listener and held,
    each having sent half a request (the listener must not wait on them)."""
    held = []
    for _ in range(connections):
        sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
        sock.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")  # never finished
        held.append(sock)
        if len(held) % 100 == 0:
            tick()
    return held
