# One TCP connection to a server (the urlserver or a store server) driving
# one sans-I/O protocol object (ControlConnection or StoreConnection): an
# asyncio Protocol that feeds received bytes in, hands each event to its
# owner, and writes what the object returns. It runs the client side of the
# handshake (docs/protocol.txt 3) itself, so an owner sees only a ready peer
# (with the server's settings) or a typed failure. OS and protocol errors
# are turned into PeerError here and nowhere else.
"""Peer: asyncio transport <-> protocol connection, with the handshake."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

from wreck.protocol import NEED_DATA, ConnectionClosed, Error, ErrorCode, Hello, ProtocolError, Ready
from wreck.protocol.connection import Connection

LOG = logging.getLogger(__name__)

# Seconds a server has to accept the connection and complete the handshake.
HANDSHAKE_TIMEOUT_S = 10.0


class PeerError(Exception):
    """The connection failed or the peer broke the protocol; reconnect later."""

    code: ErrorCode | None = None  # the code of the peer's ERROR, when it sent one


class Refused(PeerError):
    """The peer refused us for a reason retrying will not fix (secret, version,
    a store of another crawl); `hint` says what the operator should check."""

    def __init__(self, text: str, hint: str = "check --secret-file / WRECK_SECRET") -> None:
        super().__init__(text)
        self.hint = hint


FATAL_CODES = (ErrorCode.AUTH, ErrorCode.VERSION, ErrorCode.CRAWL)


def refusal(what: str, error: Error) -> PeerError:
    """The failure an ERROR from the server means; Refused when retrying cannot help."""
    said = f"{error.code.name.lower()} {error.reason}".strip()
    if error.code is ErrorCode.AUTH:
        return Refused(f"{what} rejected this spider's shared secret (it said: {said})")
    if error.code is ErrorCode.VERSION:
        return Refused(f"{what} speaks another protocol version (it said: {said})")
    if error.code is ErrorCode.CRAWL:  # docs/protocol.txt 6.1: a store keeps one crawl's records
        return Refused(f"{what} holds another crawl and refused this spider (it said: {said})",
                       "give this crawl its own store (another --data)")
    failure = PeerError(f"{what} closed the connection: {said}")
    failure.code = error.code
    return failure


class Peer(asyncio.Protocol):
    """A connected, handshaken server connection; events go to `on_event`."""

    def __init__(self, conn: Connection, what: str) -> None:
        self.conn = conn
        self.what = what  # "urlserver 10.0.0.1:7001", for log lines
        self.on_event: Callable[[object], None] = lambda event: None
        self.transport: asyncio.Transport | None = None
        self.ready: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[PeerError | None] = asyncio.get_running_loop().create_future()
        # Writes of one loop turn go out as one send: many DONEs or records
        # finish together, and a syscall each would cost more than they do.
        self._out: list[bytes] = []
        # handshaken and not closed: read per DONE and per GET, so a plain
        # attribute (set with `ready`, cleared with `closed`)
        self.is_open = False

    # -- asyncio.Protocol ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            # Small protocol lines must not wait for Nagle's algorithm (RFC 896)
            # and the peer's delayed ACK; asyncio sets TCP_NODELAY only for
            # sockets made with protocol 6, which getaddrinfo need not give.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.conn.receive_data(data)
        self._drain()

    def eof_received(self) -> bool:
        self.conn.receive_data(b"")
        self._drain()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish(PeerError(f"{self.what}: connection lost ({exc or 'closed by peer'})"))

    # -- sending ---------------------------------------------------------------

    def send(self, event: object) -> int:
        """Encode and write `event` (LocalProtocolError if not allowed now); its octets."""
        data = self.conn.send(event)
        self.write(data)
        return len(data)

    def write(self, data: bytes) -> None:
        """Write pre-encoded protocol bytes (records encoded once, resent as is)."""
        if not self._out:
            asyncio.get_running_loop().call_soon(self._flush)
        self._out.append(data)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if out and self.transport is not None and not self.transport.is_closing():
            # one writev of the pieces: a turn's records are a megabyte or
            # more, not worth copying into one buffer first
            self.transport.writelines(out)

    def close(self) -> None:
        if self.transport is not None:
            self._flush()
            self.transport.close()

    # -- receiving -------------------------------------------------------------

    def _drain(self) -> None:
        conn = self.conn
        try:
            while not self.closed.done():
                event = conn.next_event()
                if event is NEED_DATA:
                    return
                kind = type(event)
                if kind is Hello:
                    self.write(conn.authenticate())
                elif kind is Ready:
                    self.ready.set_result(event.settings)
                    self.is_open = True
                elif kind is Error:
                    self._fail(refusal(self.what, event))
                elif kind is ConnectionClosed:
                    self._fail(PeerError(f"{self.what} closed the connection"))
                else:
                    self.on_event(event)
        except ProtocolError as exc:
            try:
                self.write(conn.send(Error(exc.code, str(exc))))
            except ProtocolError:
                pass
            if exc.code is ErrorCode.AUTH:
                self._fail(Refused(f"{self.what} failed to prove it holds the shared secret "
                                   f"(is it the crawl's server?): {exc}"))
            else:
                cls = Refused if exc.code in FATAL_CODES else PeerError
                self._fail(cls(f"{self.what}: protocol error: {exc}"))

    def _fail(self, error: PeerError) -> None:
        self._finish(error)
        self.close()

    def _finish(self, error: PeerError) -> None:
        self.is_open = False
        if not self.ready.done():
            self.ready.set_exception(error)
            self.ready.exception()  # retrieved: no "never retrieved" warning
        if not self.closed.done():
            self.closed.set_result(error)


async def open_peer(host: str, port: int, conn: Connection, what: str, *, unix: str | None = None,
                    on_event: Callable[[object], None] | None = None) -> tuple[Peer, dict[str, str]]:
    """Connect and handshake; (peer, server settings) or PeerError/Refused.
    With `unix`, over that Unix-domain socket instead of host:port. An
    `on_event` given gets the events that arrive with READY too (a store's
    DICT frame, docs/protocol.txt 6.7)."""
    loop = asyncio.get_running_loop()
    made: list[Peer] = []

    def factory() -> Peer:
        made.append(Peer(conn, what))
        if on_event is not None:
            made[0].on_event = on_event
        return made[0]

    try:
        try:
            async with asyncio.timeout(HANDSHAKE_TIMEOUT_S):
                if unix is not None:
                    await loop.create_unix_connection(factory, unix)
                else:
                    await loop.create_connection(factory, host, port)
                return made[0], await made[0].ready
        except BaseException:
            if made:
                made[0].close()
            raise
    except TimeoutError:  # an OSError too (Python 3.10+): first, or it read "cannot connect ()"
        raise PeerError(f"{what}: no handshake within {HANDSHAKE_TIMEOUT_S:g} s (is it a WRECK server's "
                        f"--listen address? an HTTP server, say, waits without a word)") from None
    except OSError as exc:
        raise PeerError(f"{what}: cannot connect ({exc.strerror or exc})") from None


class Backoff:
    """Delays between reconnects: doubling from `first` to `cap`, reset on success."""

    def __init__(self, first: float = 0.1, cap: float = 30.0) -> None:
        self.first, self.cap, self.next = first, cap, first

    def delay(self) -> float:
        current = self.next
        self.next = min(self.cap, current * 2)
        return current

    def reset(self) -> None:
        self.next = self.first
