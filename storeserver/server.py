# The listener: a wreck.listener.Listener (caps, handshake, TCP_NODELAY,
# shutdown) whose RecordPeers each drive a protocol.StoreConnection
# (handshake, authentication, record decoding) and hand each decoded record
# to the Committer. Acks come back from the
# writer thread via call_soon_threadsafe and are written, per connection, in
# one write per commit. A protocol error closes that connection only, after
# an error frame and one log line; nothing else is touched.
#
# Memory (issue 14, finding 4): one bound, --max-backlog-bytes, counts every
# record the store holds, queued for commit (bytes + RECORD_OVERHEAD each, so
# tiny records count) or still arriving: as soon as a record's header is in,
# its connection reserves the record's whole size before reading on. A
# connection whose record does not fit stops reading (TCP pushes back on that
# spider) and waits, first come first served, until commits free room;
# connections holding a reservation read on, so their records complete and
# the store never waits on itself. A spider that does not read its acks is
# paused the same way once its write buffer is full. Beyond the bound a
# connection holds at most one read (S.READ_CHUNK). A connection that holds
# memory for a record and sends none of it for --record-stall-timeout while
# others wait is closed, so no spider can hold the bound for ever.
# One crawl (docs/protocol.txt 6.1): the store keeps the crawl id of the
# first spider that names one (with the next commit, committer.py) and sends
# a spider of another crawl one ERROR frame (code crawl) right after its
# WELCOME, then closes: none of its records is read, so none is acked, not
# even as a duplicate of the kept crawl's document under the same doc id.
# Compression on the spiders (docs/protocol.txt 6.7): a spider that announced
# caps=zstd gets the store's committed dictionary in a DICT frame after its
# WELCOME (or as soon as the first one is committed); its frames are checked
# here (SpiderFrames.problem, the header only) and one that fails closes its
# connection with ERROR frame (code 11). A format 2 store gives no
# dictionary: its body hashes are not the spiders' SHA-256 (docs/storage.txt).
# Shutdown: stop accepting, stop reading, let the writer commit what is in
# hand, await the acks of every record it answered, close.
"""StoreServer: sockets, event loop, acks."""

from __future__ import annotations

import asyncio
import gc
import logging
import shutil
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from wreck.listener import Listener, Peer
from wreck.protocol import (
    AckResult, Dictionary, Error, ErrorCode, Notice, NoticeCode, Record, Role, State, StoreConnection,
)  # fmt: skip
from wreck.protocol.limits import MAX_DICT_LEN
from wreck.protocol.store import ZSTD_CAP, other_crawl

from wreck.plugins import DOCUMENT, Plugins

from . import settings as S
from .committer import Committer, Results
from . import layout as L
from .compress import Compressor, SpiderFrames
from .store import WriteStore

if TYPE_CHECKING:
    from .warcdir import WarcDir

log = logging.getLogger("storeserver")


class RecordPeer(Peer):
    """One spider's record stream (wreck.listener owns its socket): records
    in, acks out once committed."""

    def __init__(self, listener: Listener, server: StoreServer) -> None:
        self.server = server
        self.pending = 0  # records handed to the writer, not yet acked
        self.peer_done = False  # the spider closed its sending side
        self.reserved = 0  # memory granted to the record now arriving
        self.waiting_room = False  # paused until the record now arriving fits
        self.write_full = False  # paused until the spider reads its acks
        self.progress_at = 0.0  # loop time of the last bytes received
        self.frames_seen = False  # a record compressed by the spider came (6.7)
        super().__init__(listener)

    def make_connection(self, nonce: bytes) -> StoreConnection:
        s = self.server.settings
        return StoreConnection(Role.SERVER, secret=s.secret, nonce=nonce, max_doc_len=s.max_doc_len)

    def welcome_settings(self) -> dict[str, str]:
        return self.server.settings.welcome()

    def on_authenticated(self) -> None:
        refusal = self.server.check_crawl(self.conn.crawl_id, self)
        if refusal is not None:
            self.fail(refusal.code, refusal.reason)
        elif self.server.frames.offer is not None:
            self.offer(self.server.frames.offer)

    def offer(self, dictionary: Dictionary) -> None:
        """Give this spider the store's dictionary if it can compress (6.7)."""
        if ZSTD_CAP in self.conn.caps and not self.closed and self.conn.state is State.OPEN:
            self.send(dictionary)

    def on_event(self, event: object) -> None:
        if type(event) is Record:
            if event.packed is not None and (problem := self.server.frames.problem(event)) is not None:
                log.warning("event=frame_refused peer=%s name=%s doc=%d reason=%r", self.peer, self.name,
                            event.doc_id, problem)
                self.fail(ErrorCode.FRAME, f"record {event.doc_id}: {problem}")
                return
            if event.packed is not None:
                self.server.spider_frames += 1
                if not self.frames_seen:  # once per connection: an operator sees the work moved
                    self.frames_seen = True
                    log.info("event=spider_frames peer=%s name=%s dict=%d", self.peer, self.name, event.packed.dict_id)
            self.pending += 1
            self.server.submit(event, self)
            if self.server.over_bound():
                self.server.wait_for_room(self)  # the records after it stay undecoded

    def data_received(self, data: bytes) -> None:
        self.progress_at = self.server.now()
        super().data_received(data)

    def after_events(self) -> None:
        if not self.waiting_room:
            self.server.reserve(self)

    def on_closed(self) -> None:
        self.server.release(self)

    def pause_writing(self) -> None:
        self.write_full = True
        self.update_reading()

    def resume_writing(self) -> None:
        self.write_full = False
        self.update_reading()

    def update_reading(self) -> None:
        """Read while nothing holds this connection back."""
        if self.closed:
            return
        if self.waiting_room or self.write_full or self.listener.reading_paused:
            self.transport.pause_reading()
        else:
            self.transport.resume_reading()

    def on_peer_closed(self) -> None:
        self.peer_done = True  # acks may still be due: close once they are out
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self.peer_done and self.pending == 0 and not self.closed:
            self.close()

    # -- called by the server --------------------------------------------------

    def deliver(self, acks: list[tuple[int, AckResult]], refused: int = 0) -> None:
        """Acks of committed records ((doc_id, result) pairs), in one write;
        `refused` records whose frame did not decompress (6.7) close the
        connection after them."""
        self.pending -= len(acks) + refused
        if refused and not self.closed:
            if acks and self.conn.state is State.OPEN:
                self.write(self.conn.send_acks(acks))
            self.fail(ErrorCode.FRAME, f"{refused} record(s) whose zstd frame does not decompress to its doc_len")
            return
        if self.closed:
            return
        if self.conn.state is State.OPEN:
            self.write(self.conn.send_acks(acks))
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
        # The dictionaries spiders may compress with (6.7): the current one, if
        # spiders may, and the store keys bodies by SHA-256 as they do.
        self.frames = SpiderFrames(settings.zstd_level)
        self.spider_frames = 0  # records received as frames a spider compressed, since the start
        if dict_data is not None:
            self._spiders_may_use(dict_id, dict_data)
        self.listener = Listener(log=log, max_connections=settings.max_connections,
                                 max_unauthenticated=settings.max_unauthenticated,
                                 handshake_timeout=settings.handshake_timeout_s)
        self.fatal: BaseException | None = None
        self.crawl_id = self.store.crawl_id  # the crawl this store keeps ("" until a spider names one)
        self.unanswered = 0  # records submitted whose commit result has not come back
        self._answered: asyncio.Event | None = None  # set while unanswered == 0
        self._stopped: asyncio.Event | None = None
        self.committer: Committer | None = None
        self.warc: WarcDir | None = None  # --warc-dir: follows the commits, off the hot path
        self.partial_bytes = 0  # sum of the connections' reservations for records still arriving
        self._waiting: deque[RecordPeer] = deque()  # connections whose next record does not fit yet

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
            dedup=self.settings.dedup, near_dups=self.settings.near_dups, frames=self.frames,
            on_dict=lambda dict_id, data: loop.call_soon_threadsafe(self._dict_committed, dict_id, data),
        )  # fmt: skip
        if self.settings.warc_dir:
            s = self.settings
            from .warcdir import WarcDir  # here: warcio is for --warc-dir alone (issue 16: every start paid it)

            self.warc = WarcDir(self.store, Path(s.warc_dir), size=s.warc_size, prefix=s.warc_prefix,
                                operator=s.operator, is_part_of=s.crawl_name or Path(s.data).resolve().name)
            self.warc.start()  # first: it resumes after the last commit it wrote
        self.committer.start()
        self._loop = loop
        self._stall_check_s = min(5.0, self.settings.record_stall_s / 2)
        self._stall_timer: asyncio.TimerHandle | None = None  # armed only while a connection waits
        # What is loaded by now lives as long as the server: out of the
        # collector's generations, so a full collection, which the records'
        # churn sets off, no longer walks every module's objects again.
        gc.freeze()
        bound = await self.listener.start(self.settings.host, self.settings.port,
                                          lambda listener: RecordPeer(listener, self))
        if self.settings.unix:  # docs/protocol.txt 6.6: the same protocol, for spiders on this machine
            await self.listener.start_unix(self.settings.unix, lambda listener: RecordPeer(listener, self))
        return bound

    def now(self) -> float:
        return self._loop.time()

    def _spiders_may_use(self, dict_id: int, data: bytes) -> Dictionary | None:
        """Accept spiders' frames made with this committed dictionary; the DICT
        frame to give them, or None where spiders do not compress (6.7)."""
        if not self.settings.spider_compression or self.store.format < L.SHA256_BODIES_FROM:
            return None
        if len(data) > MAX_DICT_LEN:
            log.warning("dictionary %d is %d bytes, more than a DICT frame holds (%d): spiders send documents raw",
                        dict_id, len(data), MAX_DICT_LEN)
            return None
        return self.frames.add(dict_id, data)

    def _dict_committed(self, dict_id: int, data: bytes) -> None:
        """A trained dictionary is durable: give it to every spider that can compress."""
        offer = self._spiders_may_use(dict_id, data)
        if offer is None:
            return
        sent = 0
        for conn in list(self.connections):
            if ZSTD_CAP in conn.conn.caps and conn.opened:
                conn.offer(offer)
                sent += 1
        log.info("event=dict_offered dict=%d bytes=%d spiders=%d", dict_id, len(data), sent)

    def _arm_stall_check(self) -> None:
        """Check for stalled connections in a few seconds, while any waits for
        room: an idle store has no timer running (issue 16)."""
        if self._stall_timer is None and self._waiting:
            self._stall_timer = self._loop.call_later(self._stall_check_s, self._check_stalls)

    def check_crawl(self, crawl_id: str, conn: RecordPeer) -> Error | None:
        """The ERROR for a spider of another crawl than this store's, or None
        (adopting the spider's crawl if the store has none yet, 6.1)."""
        if not crawl_id or crawl_id == self.crawl_id:
            return None
        if not self.crawl_id:
            self.crawl_id = crawl_id
            self.committer.adopt(crawl_id)
            log.info("event=crawl_adopted crawl=%s peer=%s name=%s", crawl_id, conn.peer, conn.name)
            return None
        log.error("event=crawl_refused peer=%s name=%s crawl=%s kept=%s: a spider of another crawl; a store keeps "
                  "one crawl's records, give that crawl its own --data", conn.peer, conn.name, crawl_id,
                  self.crawl_id)
        return other_crawl(self.crawl_id, crawl_id, conn.name)

    def figures(self) -> dict:
        """What --http's /status answers: the store's committed counters and its disk's free bytes."""
        counts = dict(self.store.totals)  # a copy: the committer's thread adds to them
        return {"time": time.time(), "documents": counts["docs"], "bytes": counts["raw_bytes"],
                "compressed_bytes": counts["stored_bytes"], "not_modified": counts["not_modified"],
                "spider_compressed": self.spider_frames,
                "disk_free": shutil.disk_usage(self.settings.data).free}

    def _check_stalls(self) -> None:
        """Close connections that hold memory for a record and send nothing of
        it while others wait (every few seconds while some wait)."""
        self._stall_timer = None
        self._arm_stall_check()
        if not self._waiting:
            return
        limit = self.settings.record_stall_s
        now = self.now()
        for conn in list(self.connections):
            if conn.reserved and not conn.waiting_room and now - conn.progress_at >= limit:
                log.warning("event=record_stalled peer=%s name=%s held=%d", conn.peer, conn.name, conn.reserved)
                conn.fail(ErrorCode.UNAVAILABLE, f"no byte of a record for {limit:g} s while others wait for memory")

    def held_bytes(self) -> int:
        """The memory counted against --max-backlog-bytes now."""
        return self.committer.backlog_bytes + self.partial_bytes

    def submit(self, record: Record, conn: RecordPeer) -> None:
        self.unanswered += 1
        self._answered.clear()
        # The record moves from its connection's reservation to the queue
        # (record_cost); what follows it is reserved again in after_events.
        self.partial_bytes -= conn.reserved
        conn.reserved = 0
        self.committer.submit(record, conn)

    def reserve(self, conn: RecordPeer) -> None:
        """Grant `conn` the memory of the record now arriving, or pause it."""
        need = conn.conn.partial_record_bytes()
        if need:
            need += S.RECORD_OVERHEAD
        if need <= conn.reserved or conn.waiting_room:
            return
        if not self._grant(conn, need):
            self.wait_for_room(conn)

    def over_bound(self) -> bool:
        return self.held_bytes() > self.settings.max_backlog_bytes

    def wait_for_room(self, conn: RecordPeer) -> None:
        """Stop reading and decoding `conn` until its next record fits."""
        conn.waiting_room = conn.held = True
        self._waiting.append(conn)
        self._arm_stall_check()
        conn.update_reading()

    def _grant(self, conn: RecordPeer, need: int) -> bool:
        extra = need - conn.reserved
        held = self.held_bytes()
        # With nothing held, one record always fits, even one over the bound.
        if held + extra > self.settings.max_backlog_bytes and held > 0:
            return False
        conn.reserved = need
        self.partial_bytes += extra
        return True

    def release(self, conn: RecordPeer) -> None:
        """A connection closed: its reservation is free again."""
        self.partial_bytes -= conn.reserved
        conn.reserved = 0
        self._wake()

    def _wake(self) -> None:
        """Let waiting connections read again, in order, while they fit."""
        waiting = self._waiting
        while waiting:
            conn = waiting[0]
            if not conn.closed:
                # What is buffered (at most one read, S.READ_CHUNK) or the
                # record now arriving, whichever is larger.
                need = conn.conn.partial_record_bytes() + S.RECORD_OVERHEAD
                if not self._grant(conn, need):
                    return
            waiting.popleft()
            if not conn.closed:
                conn.waiting_room = False
                conn.progress_at = self.now()  # its stall clock starts when it may read again
                conn.update_reading()
                conn.resume_events()  # may wait again, at the back of the line

    def _committed(self, results: Results) -> None:
        by_conn: dict[RecordPeer, list[tuple[int, AckResult]]] = {}
        refused: dict[RecordPeer, int] = {}
        for conn, doc_id, result in results:
            acks = by_conn.get(conn)
            if acks is None:
                acks = by_conn[conn] = []
            if result is None:  # a spider's frame that did not decompress (6.7)
                refused[conn] = refused.get(conn, 0) + 1
            else:
                acks.append((doc_id, result))
        for conn, acks in by_conn.items():
            try:
                conn.deliver(acks, refused.get(conn, 0))
            except Exception:  # noqa: BLE001 - one connection's bug must not withhold the others' acks
                log.exception("cannot deliver %d acks to %s; closing that connection", len(acks), conn.peer)
                conn.close()
        if self.warc is not None:
            self.warc.wake()
        self.unanswered -= len(results)
        if self.unanswered == 0:
            self._answered.set()
        self._wake()

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

        if self._stall_timer is not None:
            self._stall_timer.cancel()  # nothing is read any more: nothing can stall
        await self.listener.shutdown(drain)
        if self.warc is not None:
            # after the last commit: the files then hold every acknowledged document
            if not await asyncio.get_running_loop().run_in_executor(None, self.warc.stop, timeout):
                log.error("stopping with WARC records unwritten; they are written at the next start")
                committed = False  # the thread still reads the store: leave it open
        if committed:
            self.store.close()
        self.plugins.close()
