# The listener: one asyncio Protocol object per spider connection drives a
# protocol.StoreConnection (handshake, authentication, record decoding) and
# hands each decoded record to the Committer. Acks come back from the
# writer thread via call_soon_threadsafe and are written, per connection, in
# one write per commit. A protocol error closes that connection only, after
# an error frame and one log line; nothing else is touched.
#
# Flow control: while the writer's backlog is over its cap (a slow or full
# disk), every connection stops reading, so TCP pushes back on the spiders.
# Shutdown: stop accepting, stop reading, let the writer commit what is in
# hand, send those acks, close.
"""StoreServer: sockets, event loop, acks."""

from __future__ import annotations

import asyncio
import logging
import os
import socket

from wreck.protocol import (
    NEED_DATA, Ack, Auth, ConnectionClosed, Error, ErrorCode, Notice, NoticeCode,
    Record, RemoteProtocolError, Role, State, StoreConnection,
)  # fmt: skip

from wreck.plugins import DOCUMENT, Plugins

from . import settings as S
from .committer import Committer, Results
from .compress import Compressor
from .store import WriteStore

log = logging.getLogger("storeserver")

_READ_SIZE = 256 * 1024  # bytes asked of the kernel per read


class SpiderConnection(asyncio.Protocol):
    """One spider connection: handshake, records in, acks out."""

    def __init__(self, server: StoreServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.conn: StoreConnection | None = None
        self.peer = "?"
        self.pending = 0  # records handed to the writer, not yet acked
        self.closed = False
        self.peer_done = False  # the spider closed its sending side
        self._timer: asyncio.TimerHandle | None = None

    # -- asyncio callbacks ---------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # DESIGN.md: never rely on asyncio for this
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        s = self.server.settings
        self.conn = StoreConnection(Role.SERVER, secret=s.secret, nonce=os.urandom(32), max_doc_len=s.max_doc_len)
        why = self.server.refusal()
        if why:
            log.warning("refusing connection from %s: %s", self.peer, why)
            self._fail(ErrorCode.UNAVAILABLE if self.server.stopping else ErrorCode.BUSY, why)
            return
        self.server.connections.add(self)
        transport.write(self.conn.hello())
        self._timer = asyncio.get_running_loop().call_later(s.handshake_timeout_s, self._handshake_timeout)
        if self.server.reading_paused:
            transport.pause_reading()

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.conn.receive_data(data)
        self._pump()

    def eof_received(self) -> bool:
        if not self.closed:
            self.conn.receive_data(b"")
            self._pump()
        return True  # keep our side open: acks may still be due

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)
        if self._timer is not None:
            self._timer.cancel()

    # -- protocol --------------------------------------------------------------

    def _pump(self) -> None:
        conn = self.conn
        try:
            while not self.closed:
                event = conn.next_event()
                kind = type(event)
                if kind is Record:
                    self.pending += 1
                    self.server.submit(event, self)
                elif event is NEED_DATA:
                    return
                elif kind is Auth:
                    self.transport.write(conn.welcome(self.server.settings.welcome()))
                    self._timer.cancel()
                    log.info("spider %s connected from %s", conn.name, self.peer)
                elif kind is ConnectionClosed:
                    self.peer_done = True
                    self._close_if_done()
                    return
                elif kind is Error:  # the spider gave up on the handshake
                    log.warning("spider at %s closed the connection: %s %s", self.peer, event.code.name, event.reason)
                    self._close()
                    return
        except RemoteProtocolError as exc:
            log.warning("closing connection from %s (%s): %s", self.peer, conn.name, exc)
            self._fail(exc.code, str(exc))

    def _handshake_timeout(self) -> None:
        if not self.closed and not self.conn.opened:
            why = f"no handshake within {self.server.settings.handshake_timeout_s:g} s"
            log.warning("closing connection from %s: %s", self.peer, why)
            self._fail(ErrorCode.UNAVAILABLE, why)  # docs/protocol.txt 3.1

    def _fail(self, code: ErrorCode, reason: str) -> None:
        try:
            self.transport.write(self.conn.send(Error(code, reason)))
        except Exception:  # noqa: BLE001 - the connection is going anyway
            pass
        self._close()

    def _close(self) -> None:
        self.closed = True
        self.server.connections.discard(self)
        self.transport.close()

    def _close_if_done(self) -> None:
        if self.peer_done and self.pending == 0 and not self.closed:
            self._close()

    # -- called by the server --------------------------------------------------

    def deliver(self, acks: list[Ack]) -> None:
        self.pending -= len(acks)
        if self.closed:
            return
        if self.conn.state is State.OPEN:
            self.transport.write(b"".join(map(self.conn.send, acks)))
        # else the spider closed its side (CLOSED): the records are stored, but
        # the protocol has no more frames for it; it resends and gets DUPLICATE.
        self._close_if_done()

    def notice(self, notice: Notice) -> None:
        if not self.closed and self.conn.opened:
            self.transport.write(self.conn.send(notice))


class StoreServer:
    """A running storeserver: listener, connections, writer."""

    def __init__(self, settings: S.StoreSettings, *, store: WriteStore | None = None) -> None:
        self.settings = settings
        self.plugins = Plugins(settings.plugins, hooks=(DOCUMENT,))
        self.store = store or WriteStore(settings.data, map_size=settings.map_size, max_growth=S.MAX_MAP_GROWTH,
                                         near_distance=settings.near_dup_distance)
        if self.store.stale_readers_cleared:
            log.info("cleared %d stale LMDB readers", self.store.stale_readers_cleared)
        dict_id, dict_data = self.store.current_dict()
        self.compressor = Compressor(
            level=settings.zstd_level, dict_size=settings.dict_size, train_docs=settings.dict_train_docs,
            sample_bytes=S.DICT_SAMPLE_BYTES, dict_id=dict_id, dict_data=dict_data,
        )  # fmt: skip
        self.connections: set[SpiderConnection] = set()
        self.stopping = False
        self.reading_paused = False
        self.fatal: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._stopped: asyncio.Event | None = None
        self.committer: Committer | None = None

    def refusal(self) -> str | None:
        """Why a new connection is turned away now, or None to serve it."""
        s = self.settings
        if self.stopping:
            return "shutting down"
        if len(self.connections) >= s.max_connections:
            return f"more than {s.max_connections} connections"
        if sum(not c.conn.opened for c in self.connections) >= s.max_unauthenticated:
            return f"more than {s.max_unauthenticated} connections in their handshake"
        return None

    async def start(self) -> tuple[str, int]:
        """Listen; returns the bound (host, port)."""
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        loop = self._loop
        self.committer = Committer(
            self.store, self.compressor, window_s=self.settings.commit_window_ms / 1000,
            on_commit=lambda results: loop.call_soon_threadsafe(self._committed, results),
            on_full=lambda full, text: loop.call_soon_threadsafe(self._full, full, text),
            on_fatal=lambda exc: loop.call_soon_threadsafe(self._die, exc), plugins=self.plugins,
            dedup=self.settings.dedup, near_dups=self.settings.near_dups,
        )  # fmt: skip
        self.committer.start()
        self._server = await loop.create_server(
            lambda: SpiderConnection(self), self.settings.host, self.settings.port,
            reuse_address=True, backlog=512,
        )  # fmt: skip
        host, port = self._server.sockets[0].getsockname()[:2]
        return host, port

    def submit(self, record: Record, conn: SpiderConnection) -> None:
        self.committer.submit(record, conn)
        if not self.reading_paused and self.committer.backlog_bytes > self.settings.max_backlog_bytes:
            self._pause_reading(True)

    def _pause_reading(self, pause: bool) -> None:
        self.reading_paused = pause
        for c in self.connections:
            if not c.closed:
                (c.transport.pause_reading if pause else c.transport.resume_reading)()

    def _committed(self, results: Results) -> None:
        by_conn: dict[SpiderConnection, list[Ack]] = {}
        for conn, doc_id, result in results:
            by_conn.setdefault(conn, []).append(Ack(doc_id, result))
        for conn, acks in by_conn.items():
            try:
                conn.deliver(acks)
            except Exception:  # noqa: BLE001 - one connection's bug must not withhold the others' acks
                log.exception("cannot deliver %d acks to %s; closing that connection", len(acks), conn.peer)
                conn._close()
        if self.reading_paused and not self.stopping and self.committer.backlog_bytes < self.settings.max_backlog_bytes // 2:
            self._pause_reading(False)

    def _full(self, full: bool, text: str) -> None:
        notice = Notice(int(NoticeCode.FULL if full else NoticeCode.RESUMED), text)
        for c in list(self.connections):
            c.notice(notice)

    def _die(self, exc: BaseException) -> None:
        self.fatal = exc
        self._stopped.set()

    def request_stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    async def shutdown(self, *, timeout: float = 30.0) -> None:
        """Stop accepting, commit and ack what is in hand, close."""
        self.stopping = True
        self._server.close()
        self._pause_reading(True)
        loop = asyncio.get_running_loop()
        finished = await loop.run_in_executor(None, self.committer.stop, timeout)
        await asyncio.sleep(0)  # run the last _committed callbacks
        for _ in range(3):
            await asyncio.sleep(0)
        if not finished:
            log.error("shutting down with records still uncommitted (the spiders will resend them)")
        for c in list(self.connections):
            c._close()
        await self._server.wait_closed()
        if finished:
            self.store.close()
        self.plugins.close()
