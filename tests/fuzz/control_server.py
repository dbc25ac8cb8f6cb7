# The urlserver's side of the control protocol, after the handshake: what a
# spider sends (GET, WORKING, DONE with its links and body blocks, ERROR).
"""Fuzz target: control protocol, server side (spider -> urlserver)."""

from __future__ import annotations

import sys

from wreck.protocol import Done, Get, Specific, Status, Working

from ..protocol_helpers import open_pair
from .checks import decode_all, feed_checked
from .driver import main

_SAMPLES = (
    Get(16), Get(10_000), Working((7, 8, 9223372036854775807)),
    Done(7, Status.FETCHED, 200, Specific.OK, 12, ("http://a.test/1", "https://b.test/x?y=1")),
    Done(8, Status.REDIRECTION, 301, Specific.REDIRECT, 4, (), "http://a.test/new", None, "moved"),
    Done(9, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 87, (), None, 120, "Service Unavailable (überlastet)"),
    Done(10, Status.FETCHED, 200, Specific.OK, 38, (), body=b"User-agent: *\nDisallow: /private/\n"),
    Done(11, Status.ERROR, 0, Specific.CONNECT_FAILED, 3, extra={"x_note": "abc"}),
)


def _encoded(events) -> bytes:
    _, client = open_pair()
    return b"".join(client.send(e) for e in events)


SEEDS = [b"\x00" + _encoded([e]) for e in _SAMPLES] + [
    b"\x00" + _encoded(_SAMPLES), b"\x03" + _encoded(_SAMPLES), b"\x00ERROR internal spider bug\n",
]


def _roundtrip(event: object) -> object:
    server, client = open_pair()
    events = decode_all(server, client.send(event))
    return events[0] if len(events) == 1 else events


def one_input(data: bytes) -> None:
    server, _ = open_pair()
    feed_checked(server, data, roundtrip=_roundtrip)


if __name__ == "__main__":
    sys.exit(main("control_server", one_input, SEEDS))
