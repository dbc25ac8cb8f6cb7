# What every WRECK daemon's listener does the same way, in the manner of h11
# and trio: this module owns the sockets and their lifecycle, the daemon owns
# what the events mean. A Listener runs an asyncio server and keeps the live
# connections; each accepted socket gets a Peer (a subclass the daemon
# writes) that drives one sans-I/O protocol connection in the server role
# (wreck.protocol.ControlConnection or StoreConnection). For every daemon the
# base:
#   - sets TCP_NODELAY on each accepted TCP socket: asyncio sets it only on
#     sockets created with protocol IPPROTO_TCP, and an accepted socket may
#     not be one; without it each small request/answer exchange pays a
#     Nagle/delayed-ACK stall of about 40 ms;
#   - bounds the connections still in their handshake, overall
#     (--max-unauthenticated) and per source address (half of that), and
#     when a bound is reached evicts the OLDEST such connection with
#     "ERROR busy" rather than refusing the new one: a handshake takes one
#     round trip, so silent connections reopened as they time out are the
#     ones evicted and a real spider gets in (issue 14, finding 6); one
#     address can never hold the slots of the others;
#   - refuses a connection beyond --max-connections, once no connection in
#     its handshake is left to evict, with "ERROR busy" (docs/protocol.txt
#     3.1 and 10, Table 15), or with "ERROR unavailable" when shutting down;
#   - closes a connection whose handshake is not complete in time, after
#     "ERROR unavailable" (docs/protocol.txt 3.1);
#   - draws each connection's nonce (NONCE_BYTES from os.urandom, 3.2);
#   - answers the AUTH with the daemon's settings, sends an error frame then
#     closes on a RemoteProtocolError (that connection only);
#   - logs in one vocabulary for both daemons (LOG_EVENTS below), and
#     about peers that have not authenticated at most LOG_LINES_PER_ADDRESS
#     lines per LOG_WINDOW_S per source address (the next line says how
#     many were suppressed): without the secret, 5,000 bad handshakes made
#     1.1 MB of log (issue 14, finding 10);
#   - shuts down in order: stop accepting, stop reading, let the daemon
#     drain (its own awaitable), close every connection and await each one's
#     connection_lost.
"""Listener and Peer: the shared base of the daemons' TCP (and Unix-domain) listeners."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
import time
from collections.abc import Awaitable, Callable
from typing import Any

from wreck import inherited
from wreck.cannotlisten import listening
from wreck.loglimit import LOG_ADDRESSES, LOG_LINES_PER_ADDRESS, LOG_WINDOW_S, LogLimiter  # noqa: F401 (re-exported)
from wreck.protocol import (
    NEED_DATA, NONCE_BYTES, Auth, ConnectionClosed, Error, ErrorCode, LocalProtocolError,
    RemoteProtocolError,
)  # fmt: skip

# Every event name the base logs, with its keys (always in this order):
#   listening        address
#   connection_refused peer reason
#   connection_evicted peer reason          (the oldest in its handshake made room)
#   handshake_timeout peer
#   peer_connected   peer name
#   auth_failed      peer name code reason   (wrong or missing secret)
#   protocol_error   peer name code reason   (the peer broke the protocol)
#   peer_error       peer name code reason   (the peer sent an ERROR frame)
#   peer_gone        peer name               (an authenticated peer left)
LOG_EVENTS = ("listening", "connection_refused", "connection_evicted", "handshake_timeout", "peer_connected", "auth_failed",
              "protocol_error", "peer_error", "peer_gone")  # fmt: skip

# One source address may hold at most this share of the handshake slots, so
# an address that opens many silent connections only ever evicts its own.
PER_ADDRESS_SHARE = 2

# Log lines about unauthenticated peers are bounded per source address and
# window (wreck/loglimit.py): an operator sees that an address misbehaves,
# not each of its attempts.

ACCEPT_BACKLOG = 512  # pending accepts the kernel holds: a crawl's spiders reconnect at once after a restart
CLOSE_WAIT_S = 5.0  # at shutdown, for closed transports to report connection_lost (a stuck peer's buffer)


def new_nonce() -> bytes:
    """A fresh server nonce (docs/protocol.txt 3.2)."""
    return os.urandom(NONCE_BYTES)


def peer_host(peername: Any) -> str:
    """The source address of a peer alone (its port dropped), '?' if unknown."""
    if not peername or not isinstance(peername, tuple):
        return "?"
    return peername[0]


def peer_address(peername: Any) -> str:
    """HOST:PORT of a peer, [HOST]:PORT for IPv6, '?' when unknown (a Unix socket)."""
    if not peername or not isinstance(peername, tuple):
        return "?"
    host, port = peername[0], peername[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Peer(asyncio.Protocol):
    """One accepted connection. The daemon subclasses it and implements:

    - make_connection(nonce) -> the sans-I/O connection (server role);
    - welcome_settings() -> the settings its WELCOME carries;
    - on_event(event) for every other event of the OPEN connection;
    and may override on_authenticated(), after_events(), on_peer_closed()
    and on_closed().
    A subclass sets its own attributes before calling Peer.__init__, which
    calls make_connection().
    """

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.conn = self.make_connection(new_nonce())
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        self.host = "?"  # the source address, without the port
        self.closed = False
        self.lost = asyncio.get_running_loop().create_future()  # done at connection_lost
        # Set by the daemon to stop decoding (bytes stay buffered in self.conn)
        # until it calls resume_events(): a record store out of memory budget.
        self.held = False
        self._deadline: asyncio.TimerHandle | None = None

    # -- what the daemon implements ---------------------------------------------

    def make_connection(self, nonce: bytes):
        """The protocol connection this peer drives (server role)."""
        raise NotImplementedError

    def welcome_settings(self) -> dict[str, str]:
        """The settings sent in the WELCOME, once the peer authenticated."""
        raise NotImplementedError

    def on_event(self, event: object) -> None:
        """One event of the OPEN connection (not Auth, Error or ConnectionClosed)."""
        raise NotImplementedError

    def on_authenticated(self) -> None:
        """Called once the peer proved the secret and the WELCOME is written;
        the daemon may still refuse it here with fail() (an OPEN-state error)."""

    def after_events(self) -> None:
        """Called after each batch of received bytes was turned into events."""

    def on_peer_closed(self) -> None:
        """The peer closed its sending side. By default, close ours too."""
        self.close()

    def on_closed(self) -> None:
        """Called once, when the connection is closed for whatever reason."""

    # -- for the daemon -----------------------------------------------------------

    @property
    def name(self) -> str:
        """The peer's name (its client name once it authenticated)."""
        return self.conn.name

    @property
    def opened(self) -> bool:
        """The handshake completed."""
        return self.conn.opened

    def write(self, data: bytes) -> None:
        """Write bytes already encoded by self.conn, unless closed."""
        if not self.closed:
            self.transport.write(data)

    def send(self, event: object) -> None:
        """Encode and write one event, unless closed."""
        if not self.closed:
            self.transport.write(self.conn.send(event))

    def fail(self, code: ErrorCode, reason: str) -> None:
        """Send an error frame (if the protocol still allows one), then close."""
        if not self.closed:
            try:
                self.transport.write(self.conn.send(Error(code, reason)))
            except LocalProtocolError:
                pass  # the connection is past the point where an ERROR may be sent
        self.close()

    def resume_events(self) -> None:
        """Clear `held` and decode the events already buffered."""
        self.held = False
        if not self.closed:
            self._process()

    def close(self) -> None:
        """Close this connection (buffered bytes are still flushed)."""
        if self.transport is not None:
            self.transport.close()
        self._gone()

    # -- asyncio callbacks ----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # see the comment at the top
        peername = transport.get_extra_info("peername")
        self.peer, self.host = peer_address(peername), peer_host(peername)
        listener = self.listener
        refusal = listener.admit(self)
        if refusal is not None:
            code, why = refusal
            listener.warn_unauthenticated(self.host, "event=connection_refused peer=%s reason=%r", self.peer, why)
            self.fail(code, why)
            return
        listener.connections[self] = None
        listener.handshaking(self, True)
        transport.write(self.conn.hello())
        self._deadline = asyncio.get_running_loop().call_later(listener.handshake_timeout, self._handshake_deadline)
        if listener.reading_paused:
            transport.pause_reading()

    def data_received(self, data: bytes) -> None:
        if not self.closed:
            self._feed(data)

    def eof_received(self) -> bool:
        if not self.closed:
            self._feed(b"")
        return True  # our side stays open until the daemon closes it (answers may be due)

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone()
        if not self.lost.done():
            self.lost.set_result(None)

    # -- internals ----------------------------------------------------------------------

    def _handshake_deadline(self) -> None:
        if not self.closed and not self.conn.opened:
            self.listener.warn_unauthenticated(self.host, "event=handshake_timeout peer=%s", self.peer)
            self.fail(ErrorCode.UNAVAILABLE, f"no handshake within {self.listener.handshake_timeout:g} s")

    def _feed(self, data: bytes) -> None:
        self.conn.receive_data(data)
        self._process()

    def _process(self) -> None:
        conn, log = self.conn, self.listener.log
        try:
            while not self.closed and not self.held and (event := conn.next_event()) is not NEED_DATA:
                kind = type(event)
                if kind is Auth:
                    self.transport.write(conn.welcome(self.welcome_settings()))
                    self._deadline.cancel()
                    self.listener.handshaking(self, False)
                    log.info("event=peer_connected peer=%s name=%s", self.peer, self.name)
                    self.on_authenticated()
                elif kind is Error:
                    self._warn("event=peer_error peer=%s name=%s code=%s reason=%r",
                               self.peer, self.name, event.code.name, event.reason)
                    self.close()
                elif kind is ConnectionClosed:
                    self.on_peer_closed()
                    return
                else:
                    self.on_event(event)
        except RemoteProtocolError as exc:
            what = "auth_failed" if exc.code is ErrorCode.AUTH else "protocol_error"
            self._warn("event=%s peer=%s name=%s code=%s reason=%r", what, self.peer, self.name,
                       exc.code.name, str(exc))
            self.fail(exc.code, str(exc))
            return
        if not self.closed:
            self.after_events()

    def _warn(self, fmt: str, *args: object) -> None:
        if self.conn.opened:
            self.listener.log.warning(fmt, *args)
        else:
            self.listener.warn_unauthenticated(self.host, fmt, *args)

    def _gone(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._deadline is not None:
            self._deadline.cancel()  # a closed connection is not kept alive by its timer
        self.listener.handshaking(self, False)
        registered = self.listener.connections.pop(self, False) is None
        if registered and self.conn.opened:
            self.listener.log.info("event=peer_gone peer=%s name=%s", self.peer, self.name)
        if registered:
            self.on_closed()


class Listener:
    """An asyncio server and its live Peers: caps, pause, orderly shutdown."""

    def __init__(self, *, log: logging.Logger, max_connections: int, max_unauthenticated: int,
                 handshake_timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.log = log
        self.clock = clock
        self._log_limiter = LogLimiter(log, clock=lambda: self.clock())
        self.max_connections = max_connections
        self.max_unauthenticated = max_unauthenticated
        self.handshake_timeout = handshake_timeout
        self.max_unauthenticated_per_address = max(1, max_unauthenticated // PER_ADDRESS_SHARE)
        # Live connections in accepting order (a dict as an ordered set), handshake or not.
        self.connections: dict[Peer, None] = {}
        # Those still in their handshake, oldest first: all, and per source address.
        self._handshaking: dict[Peer, None] = {}
        self._handshaking_from: dict[str, dict[Peer, None]] = {}
        self.stopping = False
        self.reading_paused = False
        self._server: asyncio.base_events.Server | None = None
        self._unix: list[tuple[asyncio.base_events.Server, str]] = []  # start_unix's servers and paths

    def admit(self, peer: Peer) -> tuple[ErrorCode, str] | None:
        """Make room for a new connection (evicting the oldest one still in
        its handshake where a bound is reached); the error it gets instead,
        or None to serve it."""
        if self.stopping:
            return ErrorCode.UNAVAILABLE, "shutting down"
        same = self._handshaking_from.get(peer.host, {})
        if len(same) >= self.max_unauthenticated_per_address:
            self._evict(next(iter(same)), f"more than {self.max_unauthenticated_per_address} connections "
                                          f"from {peer.host} in their handshake")
        elif len(self._handshaking) >= self.max_unauthenticated:
            self._evict(next(iter(self._handshaking)),
                        f"more than {self.max_unauthenticated} connections in their handshake")
        if len(self.connections) >= self.max_connections:
            if not self._handshaking:
                return ErrorCode.BUSY, f"more than {self.max_connections} connections"
            self._evict(next(iter(self._handshaking)), f"more than {self.max_connections} connections")
        return None

    def warn_unauthenticated(self, host: str, fmt: str, *args: object) -> None:
        """Log a warning about a peer without the secret, rate-limited per address (wreck/loglimit.py)."""
        self._log_limiter.warn(host, fmt, *args)

    def _evict(self, peer: Peer, why: str) -> None:
        self.warn_unauthenticated(peer.host, "event=connection_evicted peer=%s reason=%r", peer.peer, why)
        peer.fail(ErrorCode.BUSY, f"evicted: {why}")

    def handshaking(self, peer: Peer, still: bool) -> None:
        """Track `peer` as in its handshake (still=True) or no longer."""
        from_host = self._handshaking_from.setdefault(peer.host, {})
        if still:
            self._handshaking[peer] = None
            from_host[peer] = None
            return
        self._handshaking.pop(peer, None)
        from_host.pop(peer, None)
        if not from_host:
            del self._handshaking_from[peer.host]

    def opened(self) -> list[Peer]:
        """The live connections past their handshake, in accepting order."""
        return [p for p in self.connections if p.conn.opened and not p.closed]

    async def start(self, host: str | None, port: int, peer_factory: Callable[[Listener], Peer]) -> tuple[str, int]:
        """Listen on host:port; returns the bound (host, port)."""
        loop = asyncio.get_running_loop()
        sock = inherited.take(host or "", port)  # bound by wreck-crawl, which started us at once with our peers
        where = {"sock": sock} if sock is not None else {"host": host, "port": port, "reuse_address": True}
        with listening("--listen", host, port):
            self._server = await loop.create_server(lambda: peer_factory(self), **where, backlog=ACCEPT_BACKLOG)
        address = self._server.sockets[0].getsockname()[:2]
        self.log.info("event=listening address=%s", peer_address(address))
        return address

    async def start_unix(self, path: str, peer_factory: Callable[[Listener], Peer]) -> None:
        """Also listen on a Unix-domain socket at `path`, readable and writable
        by this user only (0600). A socket file left by a killed server is
        replaced; any other file there is an error."""
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        loop = asyncio.get_running_loop()
        server = await loop.create_unix_server(lambda: peer_factory(self), path, backlog=ACCEPT_BACKLOG)
        os.chmod(path, 0o600)
        self._unix.append((server, path))
        self.log.info("event=listening address=unix:%s", path)

    def pause_reading(self, pause: bool) -> None:
        """Stop (or resume) reading from every connection: TCP pushes back on the peers."""
        self.reading_paused = pause
        for peer in self.connections:
            if not peer.closed:
                (peer.transport.pause_reading if pause else peer.transport.resume_reading)()

    def stop_accepting(self) -> None:
        """Close the listening socket; connections still arriving are refused as 'shutting down'."""
        self.stopping = True
        if self._server is not None:
            self._server.close()
        for server, path in self._unix:
            server.close()
            with contextlib.suppress(OSError):
                os.unlink(path)  # no stale socket file for the next start or a spider to find

    async def shutdown(self, drain: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop accepting and reading, await `drain` (the daemon answers what is
        in hand), then close every connection and await each one's end."""
        self.stop_accepting()
        self.pause_reading(True)
        if drain is not None:
            await drain()
        await self.close_all()
        if self._server is not None:
            await self._server.wait_closed()
        for server, _ in self._unix:
            await server.wait_closed()

    async def close_all(self) -> None:
        """Close every connection and await connection_lost for each (bounded)."""
        peers = list(self.connections)
        for peer in peers:
            peer.close()
        waits = [peer.lost for peer in peers if not peer.lost.done()]
        if waits:
            _, late = await asyncio.wait(waits, timeout=CLOSE_WAIT_S)
            for peer in peers:
                if peer.lost in late:
                    peer.transport.abort()  # a peer not reading holds its buffer: drop it
