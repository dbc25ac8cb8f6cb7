# What every target asserts about a decoder fed arbitrary bytes: it returns
# events or NEED_DATA, or raises RemoteProtocolError and then lets exactly an
# ERROR be sent, bounded by the peer's line limit; it never holds more than
# a line's worth of bytes while no message is under way; and every event it
# accepts, encoded again by a conforming sender, decodes to the same event
# (a receiver that accepts what no sender may send is guessing, spec 1.2).
"""Invariants shared by the fuzz targets."""

from __future__ import annotations

from collections.abc import Callable

from wreck.protocol import NEED_DATA, ConnectionClosed, Error, ErrorCode, RemoteProtocolError, Role, State, StoreConnection, limits
from wreck.protocol.connection import Connection

from ..protocol_helpers import drain, feed


class InvariantBroken(AssertionError):
    """A decoder did something no input may make it do."""


def chunk_sizes(first: int, length: int) -> list[int] | None:
    """Split an input the way its first byte says: 0 whole, else chunks of that many bytes (1-255)."""
    return None if first == 0 else [first] * (length // first + 1)


def feed_checked(
    conn: Connection, data: bytes, *, roundtrip: Callable[[object], object] | None = None,
    respond: Callable[[object], object] | None = None,
) -> list:  # fmt: skip
    """Feed `data` (split per its first byte), then end of stream; check every invariant; the events.

    `roundtrip(event)` re-encodes and decodes an event; `respond(event)` lets
    the owner answer it (the handshake's next step) before decoding goes on.
    """
    if not data:
        return []
    chunks = chunk_sizes(data[0], len(data) - 1)
    body = data[1:]
    events: list = []
    pos = 0
    try:
        for size in chunks or [len(body)]:
            piece = body[pos : pos + size]
            pos += size
            if piece:
                conn.receive_data(piece)
            while (event := conn.next_event()) is not NEED_DATA:
                events.append(event)
                if respond is not None:
                    respond(event)
                if roundtrip is not None and type(event) not in (Error, ConnectionClosed):
                    again = roundtrip(event)
                    if again != event:
                        raise InvariantBroken(f"{event!r} re-encoded decodes as {again!r}")
                if type(event) in (Error, ConnectionClosed) or conn.state is State.CLOSED:
                    return events
            _check_buffer(conn)
            if pos >= len(body):
                break
        if conn.state is not State.CLOSED:
            conn.receive_data(b"")
            events += drain(conn)
    except RemoteProtocolError as exc:
        _check_error_path(conn, exc)
    return events


def _check_buffer(conn: Connection) -> None:
    """While no message is half-read, at most a line's worth may wait."""
    if not conn._mid_message() and len(conn._buf) > limits.MAX_LINE:
        raise InvariantBroken(f"{len(conn._buf)} bytes buffered between messages in {conn.state.name}")


def _check_error_path(conn: Connection, exc: RemoteProtocolError) -> None:
    if conn.state is not State.ERROR:
        raise InvariantBroken(f"RemoteProtocolError left the connection in {conn.state.name}")
    if not isinstance(exc.code, ErrorCode):
        raise InvariantBroken(f"error code {exc.code!r} is not an ErrorCode")
    if isinstance(conn, StoreConnection) and conn.opened and conn.our_role is Role.CLIENT:
        out = b""  # a spider has no way to tell a store (spec 8): it just closes
    else:
        out = conn.send(Error(exc.code, str(exc)))
    bound = limits.MAX_LINE if conn.opened else limits.MAX_HANDSHAKE_LINE
    binary_frame = isinstance(conn, StoreConnection) and conn.opened  # store, OPEN: an ERROR frame
    if out and not binary_frame:
        if len(out) > bound or not out.endswith(b"\n") or out.count(b"\n") != 1:
            raise InvariantBroken(f"ERROR line of {len(out)} bytes breaks the line rules: {out[:80]!r}")
    try:
        after = conn.next_event()
    except RemoteProtocolError:
        return  # still in the error state (nothing was sent)
    if after is not NEED_DATA and type(after) is not ConnectionClosed:
        raise InvariantBroken(f"after its ERROR the connection decoded {after!r}")


def decode_all(conn: Connection, data: bytes) -> list:
    """Events of `data` fed whole (no end of stream), for round trips."""
    return feed(conn, data)
