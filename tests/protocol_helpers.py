"""Pairs of protocol endpoints joined by a fake link, after h11's tests."""

from __future__ import annotations

from wreck.protocol import NEED_DATA, ConnectionClosed, ControlConnection, Role, StoreConnection

SECRET = b"test-secret"
SERVER_NONCE = bytes([0x11]) * 32
CLIENT_NONCE = bytes([0x22]) * 32


def drain(conn) -> list:
    """Every event the connection can produce now."""
    events = []
    while True:
        event = conn.next_event()
        if event is NEED_DATA:
            return events
        events.append(event)
        if type(event) is ConnectionClosed:
            return events


def feed(conn, data: bytes, chunks: list[int] | None = None) -> list:
    """Feed `data` split at the given chunk sizes (None: whole), collect events."""
    events = []
    if not data:  # b"" would mean end of stream
        return drain(conn)
    if chunks is None:
        conn.receive_data(data)
        return drain(conn)
    pos = 0
    for size in chunks:
        conn.receive_data(data[pos : pos + size])
        events += drain(conn)
        pos += size
        if pos >= len(data):
            break
    if pos < len(data):  # what the chunk sizes did not cover
        conn.receive_data(data[pos:])
        events += drain(conn)
    return events


def bytewise(conn, data: bytes) -> list:
    return feed(conn, data, [1] * len(data))


def open_pair(kind=ControlConnection, settings=None, *, client_secret=SECRET, server_secret=SECRET):
    """A server and a client with the handshake done; returns (server, client)."""
    server = kind(Role.SERVER, secret=server_secret, nonce=SERVER_NONCE)
    client = kind(Role.CLIENT, secret=client_secret, nonce=CLIENT_NONCE, name="box-1")
    feed(client, server.hello())
    feed(server, client.authenticate())
    feed(client, server.welcome(settings if settings is not None else {"store": "127.0.0.1:7002"}))
    return server, client


def open_store_pair(**kw):
    return open_pair(StoreConnection, {}, **kw)
