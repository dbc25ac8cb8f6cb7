# The store server's side of the store protocol, after the handshake: fetch
# records, a 20-octet header and three length-prefixed fields. A small
# max_doc_len makes the limit checks reachable with short inputs.
"""Fuzz target: store protocol, server side (records, spider -> store)."""

from __future__ import annotations

import sys

from wreck.protocol import Record, Role, Specific, StoreConnection, http_enum

from ..protocol_helpers import CLIENT_NONCE, SECRET, SERVER_NONCE, feed
from .checks import decode_all, feed_checked
from .driver import main

MAX_DOC_LEN = 4096


def _pair():
    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE, max_doc_len=MAX_DOC_LEN)
    client = StoreConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1")
    feed(client, server.hello())
    feed(server, client.authenticate())
    feed(client, server.welcome({"max_doc_len": str(MAX_DOC_LEN)}))
    return server, client


_SAMPLES = (
    Record(1000, True, Specific.OK, http_enum(200), 123, "http://example.com/", None,
           b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>Hello</p>\n"),
    Record(1002, False, Specific.REDIRECT, http_enum(301), 45, "http://example.com/", "https://example.com/",
           b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://example.com/\r\n\r\n"),
    Record(4294967295, False, Specific.TIMEOUT, 0, 4294967295, "http://a.test/slow", None, b""),
)


def _encoded(records) -> bytes:
    _, client = _pair()
    return b"".join(client.send(r) for r in records)


SEEDS = [b"\x00" + _encoded([r]) for r in _SAMPLES] + [b"\x00" + _encoded(_SAMPLES), b"\x07" + _encoded(_SAMPLES)]


def _roundtrip(event: object) -> object:
    server, client = _pair()
    events = decode_all(server, client.send(event))
    return events[0] if len(events) == 1 else events


def one_input(data: bytes) -> None:
    server, _ = _pair()
    feed_checked(server, data, roundtrip=_roundtrip)


if __name__ == "__main__":
    sys.exit(main("store_records", one_input, SEEDS))
