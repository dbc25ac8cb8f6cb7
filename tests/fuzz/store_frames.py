# The spider's side of the store protocol, after the handshake: ACK, NOTICE
# and ERROR frames from the store.
"""Fuzz target: store protocol, client side (frames, store -> spider)."""

from __future__ import annotations

import sys

from wreck.protocol import Ack, AckResult, Error, ErrorCode, Notice

from ..protocol_helpers import open_store_pair
from .checks import decode_all, feed_checked
from .driver import main

_SAMPLES = (
    Ack(1000, AckResult.STORED), Ack(1002, AckResult.DUPLICATE), Ack(4294967295, AckResult.STORED),
    Notice(1, "disk full; acks held"), Notice(2, "space again"),
)


def _encoded(frames) -> bytes:
    server, _ = open_store_pair()
    return b"".join(server.send(f) for f in frames)


SEEDS = [b"\x00" + _encoded([f]) for f in _SAMPLES] + [
    b"\x00" + _encoded(_SAMPLES), b"\x01" + _encoded(_SAMPLES),
    b"\x00" + _encoded([Error(ErrorCode.LIMIT, "record 1003: document of 300000000 bytes exceeds 268435456")]),
]


def _roundtrip(event: object) -> object:
    server, client = open_store_pair()
    events = decode_all(client, server.send(event))
    return events[0] if len(events) == 1 else events


def one_input(data: bytes) -> None:
    _, client = open_store_pair()
    feed_checked(client, data, roundtrip=_roundtrip)


if __name__ == "__main__":
    sys.exit(main("store_frames", one_input, SEEDS))
