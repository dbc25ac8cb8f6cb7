# The urlserver's sockets: a wreck.listener.Listener (caps, handshake,
# TCP_NODELAY, shutdown) whose ControlPeers each drive a
# protocol.ControlConnection (server role), plus DNS tasks and one timer.
# Everything funnels into pump(): expire claims (CANCEL them), start DNS
# lookups, take assignments for spiders with credit (round robin), commit
# them to LMDB, and only then write them. The commit (its page writes and
# fsyncs) runs on the LMDB writer thread (db.py, WRITER) while the loop
# goes on reading and decoding the spiders' lines; their DONEs and WORKINGs
# wait for it (when_writable: one writer, and a URL's state is changed only
# in a transaction) and are applied, in order, once it has returned, while
# its meta page is synced; its assignments leave once that is done too. A pump runs when something can
# have changed what is due: after each loop turn that read events (a DONE,
# a GET's credit, a WORKING), a DNS answer, or the one timer, armed for the
# engine's next wakeup (a host's turn, a claim's deadline, a retry); nothing
# polls, so an idle crawl sleeps in epoll. Pumps batch themselves: the
# events that arrive while one commits are served by the next, in one
# commit, so no interval is needed to group them.
# With --exit-when-done the pump ends the crawl when the engine gives a
# finish reason (Crawl.finish_reason: done, a limit, deferred retries); a
# global limit ends even a continuous crawl. The spiders are sent BYE with
# the reason, and /status keeps it (an interrupted crawl says so).
# With --url-filter-cmd, a DONE with links waits in the FilterStage until the
# command has answered, while every other spider is served (filterstage.py).
# A spider that announced caps=committed is told, with the assignments a
# commit made durable, which of its DONEs that commit holds (COMMITTED,
# docs/protocol.txt 5.5.1): it may then leave their links out of later DONEs.
"""UrlServer: listener, spider connections, the pump."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from concurrent.futures import Future

from wreck import hostsfile
from wreck.listener import Listener, Peer
from wreck.protocol import (Bye, Cancel, Committed, ControlConnection, Done, ErrorCode, Get, Idle, Links,
                            LinksAck, LocalProtocolError, Role, Working, limits)
from wreck.protocol.handshake import CAP_COMMITTED
from wreck.protocol.iptokens import IpReturn, IpWant
from wreck.protocol.settings import CrawlSettings, split_host_port

from .crawl import Crawl, NotOwned
from .iptoken import TokenError
from .db import StateError
from .dns import Resolver
from .filterstage import FilterStage
from .timeline import History
from .settings import Settings
from .urlfilter import UrlFilter

log = logging.getLogger("urlserver")
IDLE_HINT_MS = 1000
# The timer fires this long after the engine's next due time, so that the
# due time has passed when it runs (loop timers round to the millisecond).
TIMER_SLACK_S = 0.001


class ControlPeer(Peer):
    """One spider's control connection (wreck.listener owns its socket):
    GET grants credit, WORKING extends claims, DONE goes to the engine."""

    def __init__(self, listener: Listener, server: UrlServer, number: int) -> None:
        self.server = server
        self.number = number
        self.idle_sent = False
        self.dones = 0  # DONEs received, for the dashboard's spiders table
        self.last_seen = time.time()  # when it last sent anything
        self.rate = 0.0  # DONEs per second over the last history interval
        self._mark = (self.last_seen, 0)
        super().__init__(listener)

    def make_connection(self, nonce: bytes) -> ControlConnection:
        return ControlConnection(Role.SERVER, secret=self.server.settings.secret, nonce=nonce)

    @property
    def name(self) -> str:
        return f"{self.conn.name}#{self.number}"

    def welcome_settings(self) -> dict[str, str]:
        return self.server.announce(self)

    def on_authenticated(self) -> None:
        if self.conn.auth_role == "partition":  # partitions (docs/partitions.md): another urlserver's link
            why = self.server.partition_problem(self.conn.name)
            if why:
                self.fail(ErrorCode.PARTITION, why)
            else:  # IP tokens: this connection now carries partition NAME's holdings (iptoken.py)
                self.server.holder_connected(int(self.conn.name), self)

    def on_event(self, event: object) -> None:
        server, kind = self.server, type(event)
        if kind is Links:  # partitions: a batch from another partition (docs/protocol.txt 5.10)
            server.when_writable(self._links, event, time.time())
        elif kind is IpWant or kind is IpReturn:  # partitions: about an address this one arbitrates
            server.when_writable(self._token, event, time.time())
        elif kind is Done:
            self.dones += 1
            stage = server.filter_stage
            if stage is not None and stage.wants(self, event):
                stage.hold(self, event)  # applied once the filter command has answered
            else:
                server.when_writable(server.apply_done, self, event, time.time())
        elif kind is Get:
            self.idle_sent = False
        elif kind is Working:
            server.when_writable(self._working, event.trans_ids, time.time())

    def _working(self, trans_ids, now: float) -> None:
        for trans_id in self.server.crawl.working(self, trans_ids, now):
            self.send(Cancel(trans_id))  # not held by this spider: the spec's SHOULD (5.4)

    def _token(self, message, now: float) -> None:
        if self.closed:
            return
        try:
            self.server.crawl.token_received(int(self.conn.name), message, now)
        except TokenError as exc:
            self.fail(ErrorCode.STATE, str(exc))

    def _links(self, batch: Links, now: float) -> None:
        """Apply a batch (or recognise a resend); its ACK leaves once the
        commit holding it is durable (UrlServer._pump)."""
        if self.closed:
            return
        try:
            self.server.crawl.apply_links(int(self.conn.name), batch, now)
        except NotOwned as exc:
            self.fail(ErrorCode.PARTITION, str(exc))
            return
        self.server.acks.append((self, batch.seq))

    def after_events(self) -> None:
        self.last_seen = time.time()
        self.server.request_pump()

    def mark(self, now: float) -> None:
        """A history sample was taken: its DONE rate since the previous one."""
        then, dones = self._mark
        if now > then:
            self.rate = (self.dones - dones) / (now - then)
        self._mark = (now, self.dones)

    def on_closed(self) -> None:
        server = self.server
        if not self.conn.opened or server.broken is not None:
            return  # never got in, so it holds no claims; or nothing more is written
        if self.conn.auth_role == "partition":  # its IP tokens come back after the lease (iptoken.py)
            server.holder_gone(int(self.conn.name), self)
        if server.filter_stage is not None and server.filter_stage.holds(self):
            server.filter_stage.hold(self, None)  # its claims go back after its held DONEs
            return
        server.when_writable(server.crawl.spider_gone, self, time.time())  # after its DONEs already read
        server.request_pump()


class UrlServer:
    """Owns the Crawl, the listener, DNS tasks and the pump timer."""

    def __init__(self, settings: Settings, crawl: Crawl) -> None:
        self.settings = settings
        self.crawl = crawl
        hosts = {}
        if settings.hosts_file:
            hosts = hostsfile.read(settings.hosts_file)  # checked at start by cli.py
        self.resolver = Resolver(
            nameserver=settings.dns, hosts=hosts, allow_net=settings.allow_net,
            timeout=settings.dns_timeout, tries=settings.dns_tries, min_ttl=settings.dns_min_ttl,
            max_ttl=settings.dns_max_ttl, negative_ttl=settings.dns_negative_ttl,
        )  # fmt: skip
        self.listener = Listener(log=log, max_connections=settings.max_connections,
                                 max_unauthenticated=settings.max_unauthenticated,
                                 handshake_timeout=settings.handshake_timeout)
        self.finished = asyncio.Event()
        self.samples: collections.deque = collections.deque(maxlen=120)
        self.history = History()  # the dashboard's last hour
        self.store_view = None  # storeview.StoreView with --store-http: the store's figures
        self._count = 0
        self._pump_pending = False
        self._pump_again = False  # a pump was asked while a commit was in flight
        # While a commit is in flight: the assignments it makes durable, and the
        # spiders' events that wait for it (applied in order once it is done).
        self._outgoing: dict[ControlPeer, list[bytes]] | None = None
        self._committing = False  # ... until the commit has returned (_writable), then until durable (_durable)
        self._held: list[tuple[object, tuple]] = []
        self.wakeups = 0  # pumps run, and of them those the timer asked for:
        self.timer_wakeups = 0  # tests count them to see that nothing polls
        self._timer: asyncio.TimerHandle | None = None
        self._rr = 0
        self._tasks: set[asyncio.Task] = set()
        self.stopping = False
        self.url_filter: UrlFilter | None = crawl.frontier.url_filter
        self.filter_stage: FilterStage | None = None
        if self.url_filter is not None and self.url_filter.command:
            self.filter_stage = FilterStage(self.url_filter, claimed_url=self._claimed_url,
                                            known=lambda url: crawl.frontier.lookup(url) is not None,
                                            apply=self._apply_held)
        # Set when the crawl state could not be written (see state_unwritable).
        self.broken: StateError | None = None
        self.finish_reason: str | None = None  # why the crawl ended ('interrupted' if stopped from outside)
        # partitions (docs/partitions.md): the links to the others, and ACKs due after the next commit
        self.peer_links = None
        self.acks: list[tuple[ControlPeer, int]] = []
        # DONEs applied since the last commit began, of spiders with caps=committed:
        # named in COMMITTED once the commit holding them is durable (5.5.1)
        self.committed: dict[ControlPeer, list[int]] = {}
        self.holders: dict[int, ControlPeer] = {}  # partition -> the connection it dialled here (IP tokens)
        if settings.partitions > 1:
            from .peerlink import PeerLinks

            self.peer_links = PeerLinks(self)

    @property
    def spiders(self) -> list[ControlPeer]:
        """Every live connection, in its handshake or past it, in accepting
        order, but other partitions' links (docs/partitions.md)."""
        return [p for p in self.listener.connections if p.conn.auth_role != "partition"]

    def announce(self, spider: ControlPeer) -> dict[str, str]:
        s = self.settings
        return CrawlSettings(
            store=s.store, timeout_update_ms=int(s.timeout_update * 1000),
            timeout_req_ms=int(s.timeout_req * 1000), max_doc_size=s.max_doc_size,
            user_agent=s.user_agent, allow_net=s.allow_net,
            connect_timeout_ms=int(s.connect_timeout * 1000), spider_id=str(spider.number),
            accept_type=s.accept_type, crawl_id=self.crawl.crawl_id,
            partitions=s.peers, partition=s.partition, cookies=not s.no_cookies, raw_again=True,
        ).to_wire()  # fmt: skip

    def partition_problem(self, name: str) -> str | None:
        """Why a client with AUTH role partition and `name` is not one of
        this crawl's other partitions (docs/protocol.txt 5.10), or None."""
        s = self.settings
        if s.partitions == 1:
            return "this urlserver is not partitioned (--partitions 1)"
        if not name.isdigit() or int(name) >= s.partitions or int(name) == s.partition:
            return f"{name!r} is not another partition of {s.partitions} (this is partition {s.partition})"
        return None

    # -- IP tokens (iptoken.py): their messages ride the partition links ---------------

    def holder_connected(self, partition: int, peer: ControlPeer) -> None:
        """`partition` dialled here: a connection it had before is dead to it."""
        if self.holders.get(partition) not in (None, peer):
            self.token_link(partition, dialled=False, up=False)
        self.holders[partition] = peer

    def holder_gone(self, partition: int, peer: ControlPeer) -> None:
        if self.holders.get(partition) is peer:
            del self.holders[partition]
            self.token_link(partition, dialled=False, up=False)

    def token_link(self, partition: int, *, dialled: bool, up: bool) -> None:
        """A connection to (`dialled`) or from `partition` opened or ended."""
        self.when_writable(lambda now: self.crawl.token_link(partition, dialled=dialled, up=up, now=now),
                           time.time())
        self.request_pump()

    def token_received(self, partition: int, message) -> None:
        """IPGRANT or IPRECALL from `partition`, on the link this one dialled (peerlink.py)."""
        self.when_writable(self.crawl.token_received, partition, message, time.time())
        self.request_pump()

    def _route_tokens(self, outgoing: dict[ControlPeer, list[bytes]]) -> None:
        """The engine's token messages: a holder's go out now; an owner's
        (grants and recalls) with `outgoing`, once the commit that keeps
        which tokens are out (Crawl.commit_soon) is durable."""
        for partition, message in self.crawl.token_messages():
            if type(message) is IpWant or type(message) is IpReturn:  # to the owner, on the link dialled there
                self.peer_links.send_token(partition, message)
            else:  # to the holder, on the link it dialled here
                peer = self.holders.get(partition)
                if peer is not None and not peer.closed:
                    outgoing.setdefault(peer, []).append(peer.conn.send(message))

    def links_acked(self, dest: int, seq: int) -> None:
        """Partition `dest` applied batch `seq` (peerlink.py)."""
        self.when_writable(self.crawl.links_acked, dest, seq)
        self.request_pump()

    async def start(self) -> tuple[str, int]:
        host, port = split_host_port(self.settings.listen, listen=True)

        def factory(listener: Listener) -> ControlPeer:
            self._count += 1
            return ControlPeer(listener, self, self._count)

        if self.url_filter is not None:
            await self.url_filter.start()  # the external command, if any
        address = await self.listener.start(host, port, factory)
        if self.peer_links is not None:
            self.peer_links.start()
        self.request_pump()
        return address

    async def stop(self) -> None:
        """Stop accepting, close every spider (its claims go back), commit."""
        self.stopping = True  # no pump after this: the caller closes the crawl next
        if self.finish_reason is None:
            self.finish_reason = "interrupted"
        if self._timer:
            self._timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self.peer_links is not None:
            self.peer_links.stop()
        # Held DONEs are applied (their answers awaited, bounded by the command's
        # timeout) before the connections close and give their claims back.
        await self.listener.shutdown(self.filter_stage.drain if self.filter_stage is not None else None)
        if self.url_filter is not None:
            await self.url_filter.aclose()
        if self._outgoing is not None:
            self._durable()  # waits for the commit in flight, applies the events held for it
        if self.broken is None:
            self.crawl.commit()

    def state_unwritable(self, exc: StateError) -> None:
        """LMDB refused a write (disk full, map full): stop for good.

        The open transaction is lost, never committed in part, and the
        assignments it made were never sent (they are written only after a
        commit), so the last commit is a consistent crawl state: a restart
        on the same --data resumes from it, requeueing its claims. Going on
        in memory would hand out work whose state cannot be kept, so the
        server hands out nothing more, closes its spiders (they hold their
        records and reconnect) and ends; the command exits 1.
        """
        if self.broken is not None:
            return
        self.broken = exc
        log.error("event=state_unwritable reason=%r: cannot write the crawl state under %s; handing out "
                  "nothing more and exiting. Free space there and start again with the same --data: "
                  "the crawl resumes from its last commit", str(exc), self.settings.data)
        if self._timer:
            self._timer.cancel()
        for spider in list(self.spiders):
            spider.close()
        self.finished.set()

    # -- the external URL filter (filterstage.py) ----------------------------------

    def _claimed_url(self, trans_id: int) -> str | None:
        claim = self.crawl.claims.get(trans_id)
        return None if claim is None else claim.url

    def _apply_held(self, spider: ControlPeer, done: Done | None, answers: dict[str, bool]) -> None:
        """A held DONE (None: its spider's end), now that the filter answered."""
        if self.broken is not None:
            return
        if done is None:
            self.when_writable(self.crawl.spider_gone, spider, time.time())
        else:
            self.when_writable(self._apply_filtered, spider, done, answers, time.time())
        self.request_pump()

    def _apply_filtered(self, spider: ControlPeer, done: Done, answers: dict[str, bool], now: float) -> None:
        with self.url_filter.answering(answers):
            self.apply_done(spider, done, now)

    def apply_done(self, spider: ControlPeer, done: Done, now: float) -> None:
        """A DONE to the engine; one whose links it recorded is named in
        COMMITTED after the next commit, to a spider that can read it (5.5.1)."""
        if self.crawl.done(spider, done, now) and CAP_COMMITTED in spider.conn.caps:
            self.committed.setdefault(spider, []).append(done.trans_id)

    # -- the pump ------------------------------------------------------------------

    def when_writable(self, apply, *args) -> None:
        """Apply a spider's event to the engine now, or, while a commit is
        running (the state is not writable: one LMDB writer), once it has
        returned, in the order received (_writable)."""
        if self._committing:
            self._held.append((apply, args))
            return
        try:
            apply(*args)
        except StateError as exc:
            self.state_unwritable(exc)

    @property
    def settled(self) -> bool:
        """No pump pending and no commit in flight: what the events so far asked is done."""
        return not self._pump_pending and self._outgoing is None

    def request_pump(self) -> None:
        """Pump once, after the events of this loop turn (however many asked)."""
        if not self._pump_pending:
            self._pump_pending = True
            asyncio.get_running_loop().call_soon(self.pump)

    def pump(self) -> None:
        self._pump_pending = False
        if self._outgoing is not None:  # a commit is in flight: _durable pumps again
            self._pump_again = True
            return
        self.wakeups += 1
        if self.broken is not None or self.stopping:
            return
        try:
            self._pump()
        except StateError as exc:
            self.state_unwritable(exc)

    def _pump(self) -> None:
        """Expire, assign, start DNS lookups, and start the commit; the rest
        (the assignments written, the timer armed) once it is durable."""
        crawl, now = self.crawl, time.time()
        if self._timer:  # this pump's commit arms it again once durable (_after_commit); till then
            self._timer.cancel()  # it would only fire into the commit in flight
            self._timer = None
        if self.filter_stage is not None:
            for spider, trans_ids in self.filter_stage.held():
                crawl.working(spider, trans_ids, now)  # in flight until applied: never expired
        for claim in crawl.expire(now):
            if isinstance(claim.spider, ControlPeer) and not claim.spider.closed:
                claim.spider.send(Cancel(claim.trans_id))
        outgoing = self._assign(now)
        for host in crawl.dns_requests():
            self._spawn(self._resolve(host))
        acks, self.acks = self.acks, []  # partitions: the batches this commit applies, ACKed once it is durable
        for peer, seq in acks:
            if not peer.closed:
                outgoing.setdefault(peer, []).append(peer.conn.send(LinksAck(seq)))
        committed, self.committed = self.committed, {}  # the DONEs this commit holds (5.5.1)
        for peer, ids in committed.items():
            if not peer.closed:
                chunks = outgoing.setdefault(peer, [])
                for start in range(0, len(ids), limits.MAX_WORKING_IDS):
                    chunks.append(peer.conn.send(Committed(tuple(ids[start:start + limits.MAX_WORKING_IDS]))))
        if self.peer_links is not None:
            self._route_tokens(outgoing)
        futures = crawl.commit_soon()  # durable before any assignment leaves
        if futures is None:  # nothing changed, so nothing was assigned either
            self._after_commit(outgoing, now)
            return
        committed, durable = futures
        self._outgoing, self._committing = outgoing, True  # the spiders' events wait meanwhile (when_writable)
        loop = asyncio.get_running_loop()
        committed.add_done_callback(lambda _: loop.call_soon_threadsafe(self._writable))
        durable.add_done_callback(lambda f: loop.call_soon_threadsafe(self._durable, f))

    def _writable(self) -> None:
        """The commit has returned (its meta page is being synced): the events
        that waited for it go into the next transaction meanwhile."""
        if not self._committing or self.broken is not None:
            return  # stop() took it over; or nothing more is applied
        self._committing = False
        held, self._held = self._held, []
        self._pump_again = self._pump_again or bool(held)
        try:
            self.crawl.settle()
        except StateError as exc:
            self.state_unwritable(exc)
            return
        for apply, args in held:
            self.when_writable(apply, *args)
            if self.broken is not None:
                return

    def _durable(self, durable: Future | None = None) -> None:
        """The commit is durable: its assignments leave, and the next pump runs if asked."""
        self._writable()  # (already run: the writer thread ends them in this order)
        outgoing, self._outgoing = self._outgoing, None
        if self.broken is not None or outgoing is None:
            return  # broken: nothing more is sent; None: stop() settled it already
        if durable is not None and durable.exception() is not None:
            self.state_unwritable(durable.exception())
            return
        again, self._pump_again = self._pump_again, False
        if self.stopping:
            return  # the spiders are being closed: their claims go back
        try:
            self._after_commit(outgoing, time.time())
        except StateError as exc:
            self.state_unwritable(exc)
            return
        if again:
            self.request_pump()

    def _after_commit(self, outgoing: dict[ControlPeer, list[bytes]], now: float) -> None:
        crawl = self.crawl
        for spider, chunks in outgoing.items():
            spider.write(b"".join(chunks))
        if crawl.forward is not None:
            crawl.forward.durable()  # partitions: the batches of this commit may leave now
        self._sample(now)
        reason = crawl.finish_reason(now, one_shot=self.settings.exit_when_done)
        if reason is not None:
            self._finish(reason)
            return
        self._idle_hints(now)
        self._arm_timer(now)

    def _assign(self, now: float) -> dict[ControlPeer, list[bytes]]:
        crawl = self.crawl
        ready = [s for s in self.listener.opened() if s.conn.credit > 0]
        out: dict[ControlPeer, list[bytes]] = {}
        if not ready:
            return out
        self._rr = (self._rr + 1) % len(ready)
        ready = ready[self._rr:] + ready[: self._rr]
        while ready:
            for spider in list(ready):
                assignment = crawl.take(spider, now, spider.conn.caps)
                if assignment is None:  # nothing due; another spider may still be handed
                    ready.remove(spider)  # the URLs of its chains (chains.py)
                    continue
                try:
                    out.setdefault(spider, []).append(spider.conn.send(assignment))
                except LocalProtocolError as exc:
                    crawl.unsendable(assignment.trans_id, str(exc), now)
                if spider.conn.credit <= 0:
                    ready.remove(spider)
        return out

    def _idle_hints(self, now: float) -> None:
        waiting = [s for s in self.listener.opened() if s.conn.credit > 0 and not s.idle_sent]
        if not waiting:
            return
        wake = self.crawl.next_wakeup()
        ms = IDLE_HINT_MS if wake is None else max(1, min(IDLE_HINT_MS, int((wake - now) * 1000)))
        for spider in waiting:
            spider.idle_sent = True
            spider.send(Idle(ms))

    def _arm_timer(self, now: float) -> None:
        if self._timer:
            self._timer.cancel()
            self._timer = None
        serving = any(s.conn.credit > 0 for s in self.listener.opened())
        wake = self.crawl.next_wakeup(serving=serving)
        if wake is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(0.0, wake - now) + TIMER_SLACK_S, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer = None
        self.timer_wakeups += 1
        self.request_pump()

    def _finish(self, reason: str) -> None:
        self.finish_reason = reason
        log.info("event=crawl_finished reason=%r counts=%s", reason, self.crawl.frontier.counts)
        for spider in list(self.spiders):
            if spider.opened:  # one still in its handshake cannot be sent BYE (docs/protocol.txt 3.1)
                spider.send(Bye("done"))
            spider.close()
        self.finished.set()

    def _sample(self, now: float) -> None:
        if not self.samples or now - self.samples[-1][0] >= 1.0:
            st = self.crawl.stats
            self.samples.append((now, st["handouts"], st["done"], st["discovered"]))
        self.take_history(now)

    def take_history(self, now: float) -> None:
        """A timeline sample if one is due (timeline.py), and the spiders' rates with it."""
        crawl = self.crawl
        fr = crawl.frontier
        if self.history.sample(now, pages=fr.board.fetched_total, bytes_=crawl.bytes_fetched,
                               frontier=fr.queued_total + fr.delayed_total,
                               errors=sum(crawl.errors_by_kind.values())):
            for spider in self.listener.opened():
                spider.mark(now)

    # -- DNS ------------------------------------------------------------------------

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, host) -> None:
        res = await self.resolver.resolve(host.name.strip("[]"))
        self.crawl.dns_result(host, res, time.time())
        self.request_pump()
