# The listener: a wreck.listener.Listener (caps, handshake, TCP_NODELAY,
# shutdown) whose RecordPeers each drive a protocol.StoreConnection
# (handshake, authentication, record decoding) and hand each decoded record
# to the Committer. Acks come back from the
# writer thread via call_soon_threadsafe and are written, per connection, in
# one write per commit. A protocol error closes that connection only, after
# an error frame and one log line; nothing else is touched.
#
# Flow control: while the writer's backlog is over its cap (a slow or full
# disk), every connection stops reading, so TCP pushes back on the spiders.
# Shutdown: stop accepting, stop reading, let the writer commit what is in
# hand, await the acks of every record it answered, close.
"""StoreServer: sockets, event loop, acks."""

from __future__ import annotations

import asyncio
import logging

from wreck.listener import Listener, Peer
from wreck.protocol import Ack, Notice, NoticeCode, Record, Role, State, StoreConnection

from wreck.plugins import DOCUMENT, Plugins

from . import settings as S
from .committer import Committer, Results
from .compress import Compressor
from .store import WriteStore

log = logging.getLogger("storeserver")


class RecordPeer(Peer):
    """One spider's record stream (wreck.listener owns its socket): records
    in, acks out once committed."""

    def __init__(self, listener: Listener, server: StoreServer) -> None:
        self.server = server
        self.pending = 0  # records handed to the writer, not yet acked
        self.peer_done = False  # the spider closed its sending side
        super().__init__(listener)

    def make_connection(self, nonce: bytes) -> StoreConnection:
        s = self.server.settings
        return StoreConnection(Role.SERVER, secret=s.secret, nonce=nonce, max_doc_len=s.max_doc_len)

    def welcome_settings(self) -> dict[str, str]:
        return self.server.settings.welcome()

    def on_event(self, event: object) -> None:
        if type(event) is Record:
            self.pending += 1
            self.server.submit(event, self)

    def on_peer_closed(self) -> None:
        self.peer_done = True  # acks may still be due: close once they are out
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self.peer_done and self.pending == 0 and not self.closed:
            self.close()

    # -- called by the server --------------------------------------------------

    def deliver(self, acks: list[Ack]) -> None:
        """Acks of committed records, in one write."""
        self.pending -= len(acks)
        if self.closed:
            return
        if self.conn.state is State.OPEN:
            self.write(b"".join(map(self.conn.send, acks)))
        # else the spider closed its side (CLOSED): the records are stored, but
        # the protocol has no more frames for it; it resends and gets DUPLICATE.
        self._close_if_done()

    def notice(self, notice: Notice) -> None:
        if self.conn.opened:
            self.send(notice)


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
        self.listener = Listener(log=log, max_connections=settings.max_connections,
                                 max_unauthenticated=settings.max_unauthenticated,
                                 handshake_timeout=settings.handshake_timeout_s)
        self.fatal: BaseException | None = None
        self.unanswered = 0  # records submitted whose commit result has not come back
        self._answered: asyncio.Event | None = None  # set while unanswered == 0
        self._stopped: asyncio.Event | None = None
        self.committer: Committer | None = None

    @property
    def connections(self) -> dict[RecordPeer, None]:
        """The live connections (an ordered set)."""
        return self.listener.connections

    async def start(self) -> tuple[str, int]:
        """Listen; returns the bound (host, port)."""
        loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._answered = asyncio.Event()
        self._answered.set()
        self.committer = Committer(
            self.store, self.compressor, window_s=self.settings.commit_window_ms / 1000,
            on_commit=lambda results: loop.call_soon_threadsafe(self._committed, results),
            on_full=lambda full, text: loop.call_soon_threadsafe(self._full, full, text),
            on_fatal=lambda exc: loop.call_soon_threadsafe(self._die, exc), plugins=self.plugins,
            dedup=self.settings.dedup, near_dups=self.settings.near_dups,
        )  # fmt: skip
        self.committer.start()
        return await self.listener.start(self.settings.host, self.settings.port,
                                         lambda listener: RecordPeer(listener, self))

    def submit(self, record: Record, conn: RecordPeer) -> None:
        self.unanswered += 1
        self._answered.clear()
        self.committer.submit(record, conn)
        if not self.listener.reading_paused and self.committer.backlog_bytes > self.settings.max_backlog_bytes:
            self.listener.pause_reading(True)

    def _committed(self, results: Results) -> None:
        by_conn: dict[RecordPeer, list[Ack]] = {}
        for conn, doc_id, result in results:
            by_conn.setdefault(conn, []).append(Ack(doc_id, result))
        for conn, acks in by_conn.items():
            try:
                conn.deliver(acks)
            except Exception:  # noqa: BLE001 - one connection's bug must not withhold the others' acks
                log.exception("cannot deliver %d acks to %s; closing that connection", len(acks), conn.peer)
                conn.close()
        self.unanswered -= len(results)
        if self.unanswered == 0:
            self._answered.set()
        listener = self.listener
        if (listener.reading_paused and not listener.stopping
                and self.committer.backlog_bytes < self.settings.max_backlog_bytes // 2):
            listener.pause_reading(False)

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
        """Stop accepting and reading, commit and ack what is in hand, close."""
        committed = False

        async def drain() -> None:
            nonlocal committed
            loop = asyncio.get_running_loop()
            committed = await loop.run_in_executor(None, self.committer.stop, timeout)
            if not committed:
                log.error("shutting down with records still uncommitted (the spiders will resend them)")
                return
            # The writer handed every result to the loop before stop() returned;
            # the acks are out once the last of those callbacks has run.
            try:
                await asyncio.wait_for(self._answered.wait(), timeout)
            except asyncio.TimeoutError:
                log.error("shutting down with %d acks unsent (the spiders will resend)", self.unanswered)

        await self.listener.shutdown(drain)
        if committed:
            self.store.close()
        self.plugins.close()
