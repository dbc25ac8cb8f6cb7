# One urlserver connection's worth of work (a session). It keeps the
# concurrency window full: credits outstanding + transactions held (being
# fetched, or waiting for the store's ack) never exceed the window, and a
# GET goes out once a refill batch is free. Each assignment starts a fetch;
# each result is analysed in a batch after the loop has served its sockets
# (report.report: outcome, outlinks, record; libcurl is served again every
# SERVE_EVERY_S within a batch, between pages and between a page's parse
# and its link walk), stored, and only when the store
# has acked it is DONE sent. A ticker sends WORKING for every transaction
# held longer than a third of Timeout_Update since its last report; with no
# transaction held it sleeps until the next assignment (no idle timer).
# An assignment with after=T (docs/protocol.txt 5.3) waits until transaction
# T's transfer has ended (its result came, or it was cancelled) and starts
# then, at once: the urlserver hands a busy host's next URLs ahead this way
# at --delay 0, so the next request follows a response without waiting for
# the store's ack and the urlserver's commit (issue 16). After a 429 or 5xx
# answer (the server asks the host to slow down) the followers wait
# SLOWED_PAUSE_S first: the urlserver slows the host once the DONE is in,
# and hands nothing more ahead meanwhile.
# A DONE leaves out the links that earlier DONEs of this connection carried
# and the urlserver's COMMITTED named (sentlinks.py, docs/protocol.txt
# 5.5.1): a page's menus go to the urlserver once a connection.
# CANCEL aborts a fetch (no DONE). When the connection drops, the session
# ends: fetches are aborted (the urlserver requeues them), records already
# handed to a store stay there until acked. Records held for a store shard
# that is down are spared from the window up to SHARD_BACKLOG_WINDOWS, so the
# other shards' work goes on meanwhile.
# A body spider/htmlguard.py calls heavy, and any sitemap (up to a million
# elements, spider/sitemaps.py), is analysed on the session's one
# parse thread instead (lexbor releases the GIL), so a pathological page
# never holds up the loop: WORKING keeps covering it and other pages' DONEs
# go out meanwhile.
"""UrlSession: assignments in, fetches, store, DONE out."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Awaitable, Callable

import msgspec

from wreck.protocol import (
    AckResult, Assignment, Bye, Cancel, Committed, Done, Get, Idle, LocalProtocolError, ProtocolError,
    Specific, Status, Working, limits,
)  # fmt: skip
from wreck.protocol.settings import CrawlSettings
from wreck.protocol.textfields import decode_reason

from . import htmlguard, nofetch
from .fetch import PLAIN, Fetcher, FetchResult, FetchSettings, Request
from .peer import Peer
from .report import Report, report
from .sentlinks import SentLinks
from .storeclient import StoreClient

LOG = logging.getLogger(__name__)

# Results analysed per loop turn before yielding to sockets again: a few ms.
# Measured: lexbor releases the GIL while parsing (76 us/page alone, 37 on
# two threads), but workers already take one CPU each, so a parse thread
# would only add hand-off cost; batching after the socket work is cheaper.
# A time slice (2 or 10 ms) instead cost 15-20 % more CPU per page over the
# whole crawl (more loop turns, smaller writes to the store and urlserver:
# make bench, 2026-11-24); a host's next request does not wait for these
# analyses anyway, it starts as its transfer's result arrives (after=).
PARSE_BATCH = 32
# Within a batch, libcurl is served at least this often (Fetcher.serve_ready:
# one poll() of its sockets), between two pages and in the middle of one
# (after its parse: report()'s `between`): a response that arrives while
# other hosts' pages are analysed is collected, and its host's next request
# (after=) leaves after at most half a page's analysis, not the whole
# batch's (a documentation page: 0.6 ms to parse, as much again for a long
# one's links; issue 16, bench/realdocs.py's per-host gap).
# One poll() of a few hundred fds costs a few us: under 1 % of this.
SERVE_EVERY_S = 0.001
# Wait after a 429/5xx answer before a transaction handed after it starts
# (after=): at least the urlserver's first slow-down (politeness.py
# SLOWDOWN_FLOOR), so a busy server gets no burst of the host's next URLs.
SLOWED_PAUSE_S = 0.5
# Threads analysing heavy bodies per session: one. The worker already has a
# CPU of its own; the thread only keeps the loop free, and queues pages
# each bounded by htmlguard.MAX_PARSE_TAGS.
PARSE_THREADS = 1
# Ask for more URLs once this fraction of the window is free (fewer GETs).
REFILL_FRACTION = 8
# A store shard that is down (killed, unreachable) holds its records here
# until it is back (storeclient.py resends them), their claims kept alive
# by WORKING. Up to this many windows of them per down shard are not
# counted against the window, so fetching for the other shards goes on
# (issue 19: a shard's loss holds only that shard); past it they count
# again, so memory stays bounded: at most (1 + this x down shards) windows
# of records are held.
SHARD_BACKLOG_WINDOWS = 1
# An assignment whose store shard is down when it arrives is parked, not
# fetched: its claim kept alive by WORKING, fetched once the shard is back.
# An assignment is a URL and a few fields (not a page), so many windows of
# them fit; past this bound per down shard they are fetched and held as
# records (above), so the window still bounds what the spider holds.
SHARD_PARK_WINDOWS = 16


class _Txn:
    __slots__ = ("assignment", "reported")

    def __init__(self, assignment: Assignment, now: float) -> None:
        self.assignment = assignment
        self.reported = now  # last time the urlserver heard of it


class UrlSession:
    """Runs one handshaken urlserver peer until its connection closes."""

    def __init__(self, peer: Peer, settings: CrawlSettings, stores: list[StoreClient], *, concurrency: int,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        """`clock` and `sleep` time the WORKING schedule; a test passes virtual ones."""
        self.peer = peer
        self.clock, self.sleep = clock, sleep
        self.settings = settings
        self.stores = stores
        self.window = max(1, concurrency)
        self.refill = max(1, self.window // REFILL_FRACTION)
        self.txns: dict[int, _Txn] = {}
        # shard -> trans ids parked while that store is down, in arrival order
        self.parked: dict[int, dict[int, None]] = {}
        self.results: deque[FetchResult] = deque()
        self._parse_scheduled = False
        self._served = 0.0  # when the batch under way last served libcurl (perf_counter)
        self._between = self._serve_due  # report()'s hook, bound once rather than once a page
        self.loop = asyncio.get_running_loop()
        self.fetcher = Fetcher(self.loop, FetchSettings.from_crawl(settings), self._on_result)
        self.parser = ThreadPoolExecutor(PARSE_THREADS, thread_name_prefix="wreck-parse")
        self.done_count = 0
        self.sent_links = SentLinks()  # links COMMITTED made known on this connection (5.5.1)
        self.done_bytes = 0  # octets of the DONEs sent, for the figures at the session's end
        self._behind: dict[int, list[Assignment]] = {}  # T -> assignments waiting for T's transfer (after=T)
        self._waits_for: dict[int, int] = {}  # a waiting assignment's trans_id -> the T it waits for
        self._busy = asyncio.Event()  # set while transactions are held: the WORKING ticker runs
        self.bye: str | None = None  # the urlserver's BYE reason: its close is then a normal end

    async def run(self) -> BaseException | None:
        """Serve until the connection closes; returns its PeerError (or None)."""
        self.peer.on_event = self._on_event
        ticker = self.loop.create_task(self._working_ticker())
        for store in self.stores:
            store.on_up.add(self._refill)
        try:
            self._refill()
            return await self.peer.closed
        finally:
            ticker.cancel()
            for store in self.stores:
                store.on_up.discard(self._refill)
            self.fetcher.close()
            # a parse under way finishes on its own (a thread cannot be
            # stopped); its result finds no transaction and is dropped
            self.parser.shutdown(wait=False, cancel_futures=True)
            self.txns.clear()
            self.parked.clear()
            self.results.clear()
            self._behind.clear()
            self._waits_for.clear()
            LOG.info("event=session_end dones=%d done_bytes=%d links_left_out=%d", self.done_count,
                     self.done_bytes, self.sent_links.left_out)

    # -- urlserver events ------------------------------------------------------

    def _on_event(self, event: object) -> None:
        kind = type(event)
        if kind is Assignment:
            self._start(event)
        elif kind is Cancel:
            if self.txns.pop(event.trans_id, None) is not None:
                for parked in self.parked.values():
                    parked.pop(event.trans_id, None)
                self._cancel(event.trans_id)
                self._refill()
        elif kind is Committed:
            self.sent_links.committed(event.trans_ids)
        elif kind is Bye:
            self.bye = event.reason
            LOG.info("urlserver says goodbye (%s)", event.reason)
        elif kind is not Idle:
            LOG.warning("unexpected %s from the urlserver", kind.__name__)

    def _start(self, a: Assignment) -> None:
        if a.trans_id in self.txns:
            LOG.warning("urlserver reused transaction id %d; ignoring the repeat", a.trans_id)
            return
        self.txns[a.trans_id] = _Txn(a, self.clock())
        self._busy.set()
        shard = a.doc_id % len(self.stores)
        if not self.stores[shard].connected:
            parked = self.parked.setdefault(shard, {})
            if len(parked) < self.window * SHARD_PARK_WINDOWS:
                parked[a.trans_id] = None
                return
        self._begin(a)

    def _begin(self, a: Assignment) -> None:
        """Fetch `a` now, or once the transfer it follows (after=) ends; a
        parked transfer counts as not ended, so a host never gets two at once."""
        after = _after(a.extra) if a.extra else None
        if after is not None and (self.fetcher.fetching(after) or after in self._waits_for or after in self._behind
                                  or any(after in parked for parked in self.parked.values())):
            self._behind.setdefault(after, []).append(a)  # started when `after`'s transfer ends
            self._waits_for[a.trans_id] = after
            return
        self._fetch(a)

    def _fetch(self, a: Assignment) -> None:
        immediate = self.fetcher.start(a.trans_id, a.url, a.host_ip, _request(a.extra) if a.extra else PLAIN)
        if immediate is not None:
            self._on_result(immediate)

    def _transfer_ended(self, trans_id: int) -> None:
        """Start what waited for `trans_id`'s transfer (after=), at once."""
        for a in self._behind.pop(trans_id, ()):
            del self._waits_for[a.trans_id]
            if a.trans_id in self.txns:
                self._fetch(a)

    def _cancel(self, trans_id: int) -> None:
        before = self._waits_for.pop(trans_id, None)
        if before is None:  # fetching, or done fetching: its followers may go
            self.fetcher.cancel(trans_id)
            self._transfer_ended(trans_id)
            return
        self._behind[before].remove(next(a for a in self._behind[before] if a.trans_id == trans_id))
        followers = self._behind.pop(trans_id, [])  # they now wait for what it waited for
        self._behind[before].extend(followers)
        for a in followers:
            self._waits_for[a.trans_id] = before

    # -- results -> store -> DONE ---------------------------------------------

    def _on_result(self, result: FetchResult) -> None:
        code = result.http_code
        if code == 429 or 500 <= code < 600:  # the host asks us to slow down: see the top
            self._behind.setdefault(result.key, [])  # what comes after it meanwhile waits too
            self.loop.call_later(SLOWED_PAUSE_S, self._transfer_ended, result.key)
        elif result.key in self._behind:
            self._transfer_ended(result.key)
        self.results.append(result)
        if not self._parse_scheduled:
            self._parse_scheduled = True
            self.loop.call_soon(self._analyse_batch)

    def _analyse_batch(self) -> None:
        self._parse_scheduled = False
        results = self.results
        self._served = time.perf_counter()
        for _ in range(min(PARSE_BATCH, len(results))):
            self._analyse(results.popleft())
            self._serve_due()
        if results and not self._parse_scheduled:
            self._parse_scheduled = True
            self.loop.call_soon(self._analyse_batch)

    def _serve_due(self) -> None:
        """Serve libcurl if SERVE_EVERY_S passed since it last was, within a batch."""
        if (now := time.perf_counter()) - self._served >= SERVE_EVERY_S:
            self._served = now
            self.fetcher.serve_ready()  # may add results, and schedule their batch

    def _analyse(self, result: FetchResult) -> None:
        txn = self.txns.get(result.key)
        if txn is None:  # cancelled meanwhile
            return
        a = txn.assignment
        kind = a.extra.get("kind")
        tags = htmlguard.count(result.body)  # once, for heavy() here and bound() in report()
        if htmlguard.heavy(result.body, tags) or kind == "sitemap":  # a gzipped one: 1M elements
            try:
                future = self.loop.run_in_executor(self.parser, report, result, a.doc_id, kind, a.extra, tags)
            except RuntimeError:  # the session is ending: the urlserver requeues it
                return
            future.add_done_callback(lambda f: f.cancelled() or self._reported(result, f.exception() or f.result(), txn))
            return
        try:
            rep = report(result, a.doc_id, kind, a.extra, tags, between=self._between)
        except Exception as exc:
            rep = exc
        self._reported(result, rep, txn)

    def _reported(self, result: FetchResult, rep: Report | BaseException, txn: _Txn) -> None:
        """Store the analysed result; its DONE goes out when the store acks."""
        if self.txns.get(result.key) is not txn:  # cancelled meanwhile, or the session ended
            return
        a = txn.assignment
        if isinstance(rep, BaseException):  # a bug must cost one URL, not the worker
            LOG.error("analysing %s failed", a.url, exc_info=rep)
            self._send_done(a.trans_id, Done(a.trans_id, Status.FETCH_ERROR, 0, Specific.INTERNAL, result.ms,
                                             reason="spider bug while analysing the response"))
            return
        o = rep.outcome
        done = Done(a.trans_id, o.status, o.http_code, o.specific, rep.record.ms, rep.outlinks,
                    o.new_url, o.retry_after, o.reason[: limits.MAX_REASON_LEN],
                    extra=rep.extra, body=_wanted_body(a, result.body or result.partial))  # fmt: skip
        store = self.stores[a.doc_id % len(self.stores)]
        try:
            store.submit(rep.record, lambda ack: self._acked(a.trans_id, done, ack))
        except LocalProtocolError as exc:
            LOG.error("record for %s cannot be sent: %s", a.url, exc)
            self._send_done(a.trans_id, Done(a.trans_id, Status.FETCH_ERROR, o.http_code, Specific.INTERNAL,
                                             result.ms, reason="record not encodable"))

    def _acked(self, trans_id: int, done: Done, result: AckResult) -> None:
        if result is AckResult.REFUSED:  # nothing stored (docs/protocol.txt 6.5): never report it fetched
            done = Done(trans_id, Status.FETCH_ERROR, 0, Specific.INTERNAL, done.ms,
                        reason="the store refused the record: its doc id holds another URL there")
        self._send_done(trans_id, done)

    def _send_done(self, trans_id: int, done: Done) -> None:
        txn = self.txns.pop(trans_id, None)
        if txn is None or not self.peer.is_open:
            return  # cancelled, or this session is over: the urlserver requeued it
        # a plain page's links only: a feed's or a sitemap's are sent whole (5.5.1), one
        # found by its content type on a page's assignment (feed=) too
        plain = done.outlinks and "kind" not in txn.assignment.extra and "feed" not in done.extra
        if plain:
            links, known = self.sent_links.leave_out(done.outlinks)
            if known:
                done = msgspec.structs.replace(done, outlinks=links, known=known)
        try:
            size = self.peer.send(done)
        except LocalProtocolError as exc:  # e.g. an outlink the wire refuses
            LOG.error("DONE %d cannot be sent as is (%s); sending it without links", trans_id, exc)
            plain = False
            size = self.peer.send(Done(done.trans_id, done.status, done.http_code, done.specific, done.ms))
        if plain:
            self.sent_links.sent(trans_id, done.outlinks)
        self.done_bytes += size or 0
        self.done_count += 1
        self._refill()

    # -- window and WORKING ----------------------------------------------------

    def resize(self, concurrency: int) -> None:
        """A new window (the worker's share among urlserver partitions,
        docs/partitions.md); more credit is asked for at once if it grew."""
        self.window = max(1, concurrency)
        self.refill = max(1, self.window // REFILL_FRACTION)
        if self.peer.on_event == self._on_event:  # running: run() asks for the first credit itself
            self._refill()

    def _held(self) -> int:
        """Transactions and records counted against the window: parked ones
        and a down shard's backlog up to its bound are spared."""
        # one pass over the stores: this runs for every DONE and GET
        unacked = spared = 0
        for store in self.stores:
            pending = len(store.unacked)
            unacked += pending
            if not store.connected:
                spared += min(pending, self.window * SHARD_BACKLOG_WINDOWS)
        if self.parked:
            spared += sum(len(parked) for parked in self.parked.values())
        return max(len(self.txns), unacked) - spared

    def _unpark(self) -> None:
        """Fetch parked assignments of shards back up, as the window allows."""
        room = self.window - self._held()
        for shard in [shard for shard in self.parked if self.stores[shard].connected]:
            parked = self.parked[shard]
            while parked and room > 0:
                trans_id = next(iter(parked))
                del parked[trans_id]
                txn = self.txns.get(trans_id)
                if txn is not None:
                    room -= 1
                    self._begin(txn.assignment)
            if not parked:
                del self.parked[shard]

    def _refill(self) -> None:
        if not self.peer.is_open:
            return
        if self.parked:
            self._unpark()
        held = self._held()
        want = self.window - held - self.peer.conn.credit
        if want >= self.refill or (want > 0 and held == 0 and self.peer.conn.credit == 0):
            self.peer.send(Get(min(want, limits.MAX_GET)))

    async def _working_ticker(self) -> None:
        # docs/protocol.txt 5.4: a WORKING before Timeout_Update, at about half
        # of it. Ticking every third and naming what went a third unreported,
        # no transaction waits more than two thirds, plus the loop's lateness.
        interval = self.settings.timeout_update_ms / 3000
        while True:
            if not self.txns:  # nothing to report: sleep until an assignment comes
                self._busy.clear()
                await self._busy.wait()
            await self.sleep(interval)
            if not self.peer.is_open:
                return
            self._refill()  # a store shard went down meanwhile: its backlog frees the window
            now = self.clock()
            due = [tid for tid, t in self.txns.items() if now - t.reported >= interval]
            for start in range(0, len(due), limits.MAX_WORKING_IDS):
                chunk = due[start : start + limits.MAX_WORKING_IDS]
                self.peer.send(Working(tuple(chunk)))
                for tid in chunk:
                    self.txns[tid].reported = now


def _request(extra: dict[str, str]) -> Request:
    """How to fetch, from the assignment's extensions (docs/protocol.txt 5.3)."""
    try:
        etag = decode_reason(extra["etag"]) if "etag" in extra else None
        modified = decode_reason(extra["last_modified"]) if "last_modified" in extra else None
    except ProtocolError:  # a validator we cannot send: fetch unconditionally
        etag = modified = None
    # the urlserver's own fetches (robots.txt: body=; feeds, sitemaps: kind=) are never filtered
    return Request(etag, modified, head=extra.get("head") == "1",
                   filter_type="body" not in extra and "kind" not in extra, keep_partial="body" in extra,
                   nofetch=nofetch.parse(extra), raw=extra.get("raw") == "1")


def _after(extra: dict[str, str]) -> int | None:
    """The transaction an assignment waits for (after=T, docs/protocol.txt 5.3), or None."""
    text = extra.get("after")
    if text is None or not (text.isascii() and text.isdigit() and len(text) < 20):
        return None
    return int(text)


def _wanted_body(a: Assignment, body: bytes) -> bytes | None:
    """The body the urlserver asked for with body=N (robots.txt), or None;
    of a body cut at Max_Doc_Size, its first bytes (docs/protocol.txt 5.3)."""
    wanted = a.extra.get("body")
    if wanted is None:
        return None
    size = int(wanted) if wanted.isascii() and wanted.isdigit() and len(wanted) < 10 else 0
    return body[: min(size, limits.MAX_DONE_BODY)]
