# The spider's side of the control protocol, after the handshake: what a
# urlserver sends (assignments within the spider's credit, IDLE, CANCEL,
# BYE, ERROR).
"""Fuzz target: control protocol, client side (urlserver -> spider)."""

from __future__ import annotations

import sys

from wreck.protocol import Assignment, Bye, Cancel, Get, Idle

from ..protocol_helpers import open_pair
from .checks import decode_all, feed_checked
from .driver import main

CREDIT = 50  # granted before the input starts: assignments beyond it are a state error

_SAMPLES = (
    Assignment(7, 1000, "192.0.2.10", "example.com", "http://example.com/"),
    Assignment(8, 1001, "2001:db8::1", "[2001:db8::1]", "http://[2001:db8::1]:8080/robots.txt", {"body": "524288"}),
    Assignment(9, 4294967295, "127.0.0.2", "a.test", "https://a.test/p?q=%20", {"depth": "3"}),
    Idle(5000), Cancel(10), Bye("done"),
)


def _pair():
    server, client = open_pair()
    server.receive_data(client.send(Get(CREDIT)))
    server.next_event()
    return server, client


def _encoded(events) -> bytes:
    server, _ = _pair()
    return b"".join(server.send(e) for e in events)


SEEDS = [b"\x00" + _encoded([e]) for e in _SAMPLES] + [
    b"\x00" + _encoded(_SAMPLES[:5]), b"\x05" + _encoded(_SAMPLES), b"\x00ERROR busy try later\n",
]


def _roundtrip(event: object) -> object:
    server, client = _pair()
    events = decode_all(client, server.send(event))
    return events[0] if len(events) == 1 else events


def one_input(data: bytes) -> None:
    _, client = _pair()
    feed_checked(client, data, roundtrip=_roundtrip)


if __name__ == "__main__":
    sys.exit(main("control_client", one_input, SEEDS))
