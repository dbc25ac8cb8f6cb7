# The urlserver's sockets: an asyncio listener whose connections each drive
# a protocol.ControlConnection (server role), plus DNS tasks and one timer.
# Everything funnels into pump(): expire claims (CANCEL them), start DNS
# lookups, take assignments for spiders with credit (round robin), commit
# them to LMDB, and only then write them. The timer is set for the engine's
# next wakeup (a host's turn, a claim's deadline, a retry), so nothing polls.
"""UrlServer: listener, spider connections, the pump."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import socket
import time

from wreck.protocol import (
    Auth, Bye, Cancel, ConnectionClosed, ControlConnection, Done, Error, ErrorCode, Get,
    Idle, LocalProtocolError, NEED_DATA, RemoteProtocolError, Role, Working,
)  # fmt: skip
from wreck.protocol.settings import CrawlSettings, split_host_port

from .crawl import Crawl
from .db import StateError
from .dns import Resolver, parse_hosts
from .settings import Settings

log = logging.getLogger("urlserver")
IDLE_HINT_MS = 1000
# Pumps (each ends in an fsync'd commit, about 0.5 ms of CPU here) run at
# most this often: under load a pump then carries a batch of DONEs and
# assignments instead of one, and 10 ms is nothing next to a fetch.
PUMP_INTERVAL_S = 0.01


class SpiderConnection(asyncio.Protocol):
    """One spider's control connection."""

    def __init__(self, server: UrlServer, number: int) -> None:
        self.server = server
        self.number = number
        self.conn = ControlConnection(Role.SERVER, secret=server.settings.secret, nonce=os.urandom(32))
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_sent = False
        self.peer = "?"
        self._deadline: asyncio.TimerHandle | None = None

    @property
    def name(self) -> str:
        return f"{self.conn.name}#{self.number}"

    def connection_made(self, transport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.peer = _address(transport.get_extra_info("peername"))
        settings, spiders = self.server.settings, self.server.spiders
        busy = None
        if len(spiders) >= settings.max_connections:
            busy = f"more than {settings.max_connections} connections"
        elif sum(not s.conn.opened for s in spiders) >= settings.max_unauthenticated:
            busy = f"more than {settings.max_unauthenticated} connections in their handshake"
        if busy:
            log.warning("event=connection_refused peer=%s reason=%r", self.peer, busy)
            self.fail(ErrorCode.BUSY, busy)
            return
        spiders.append(self)
        transport.write(self.conn.hello())
        self._deadline = asyncio.get_running_loop().call_later(settings.handshake_timeout, self._handshake_deadline)

    def _handshake_deadline(self) -> None:
        if not self.closed and not self.conn.opened:
            why = f"no handshake within {self.server.settings.handshake_timeout:g} s"
            log.warning("event=handshake_timeout peer=%s", self.peer)
            self.fail(ErrorCode.UNAVAILABLE, why)  # docs/protocol.txt 3.1

    def data_received(self, data: bytes) -> None:
        self._feed(data)

    def eof_received(self) -> bool:
        self._feed(b"")
        return False

    def connection_lost(self, exc) -> None:
        self._gone()

    def _feed(self, data: bytes) -> None:
        server, conn = self.server, self.conn
        try:
            conn.receive_data(data)
            while (event := conn.next_event()) is not NEED_DATA:
                kind = type(event)
                if kind is Done:
                    server.crawl.done(self, event, time.time())
                elif kind is Get:
                    self.idle_sent = False
                elif kind is Working:
                    server.crawl.working(self, event.trans_ids, time.time())
                elif kind is Auth:
                    self.transport.write(conn.welcome(server.announce(self)))
                    self._deadline.cancel()
                    log.info("event=spider_connected spider=%s peer=%s", self.name, self.peer)
                elif kind is Error:
                    log.warning("event=spider_error spider=%s peer=%s code=%s reason=%r",
                                self.name, self.peer, event.code.name, event.reason)
                    self.close()
                    return
                elif kind is ConnectionClosed:
                    self.close()
                    return
        except RemoteProtocolError as exc:
            event = "auth_failed" if exc.code is ErrorCode.AUTH else "protocol_error"
            log.warning("event=%s spider=%s peer=%s code=%s reason=%r",
                        event, self.name, self.peer, exc.code.name, str(exc))
            self.fail(exc.code, str(exc))
            return
        except StateError as exc:
            server.state_unwritable(exc)
            return
        server.request_pump()

    def send(self, event) -> None:
        if not self.closed:
            self.transport.write(self.conn.send(event))

    def fail(self, code: ErrorCode, reason: str) -> None:
        try:
            self.transport.write(self.conn.send(Error(code, reason)))
        except LocalProtocolError:
            pass
        self.close()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self._gone()

    def _gone(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._deadline is not None:
            self._deadline.cancel()  # a closed connection is not kept alive by its timer
        if not self.conn.opened:  # never got in: it holds no claims and was no spider
            if self in self.server.spiders:
                self.server.spiders.remove(self)
            return
        server = self.server
        if self in server.spiders:
            server.spiders.remove(self)
        log.info("event=spider_gone spider=%s", self.name)
        if server.broken is not None:
            return
        try:
            server.crawl.spider_gone(self, time.time())
        except StateError as exc:
            server.state_unwritable(exc)
            return
        server.request_pump()


def _address(peername) -> str:
    """HOST:PORT of a peer, [HOST]:PORT for IPv6, '?' when unknown."""
    if not peername:
        return "?"
    host, port = peername[0], peername[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class UrlServer:
    """Owns the Crawl, the listener, DNS tasks and the pump timer."""

    def __init__(self, settings: Settings, crawl: Crawl) -> None:
        self.settings = settings
        self.crawl = crawl
        hosts = {}
        if settings.hosts_file:
            with open(settings.hosts_file, encoding="utf-8") as fh:
                hosts = parse_hosts(fh.read())
        self.resolver = Resolver(
            nameserver=settings.dns, hosts=hosts, allow_net=settings.allow_net,
            timeout=settings.dns_timeout, tries=settings.dns_tries, min_ttl=settings.dns_min_ttl,
            max_ttl=settings.dns_max_ttl, negative_ttl=settings.dns_negative_ttl,
        )  # fmt: skip
        self.spiders: list[SpiderConnection] = []
        self.finished = asyncio.Event()
        self.samples: collections.deque = collections.deque(maxlen=120)
        self._count = 0
        self._pump_pending = False
        self._last_pump = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._server: asyncio.base_events.Server | None = None
        self._rr = 0
        self._tasks: set[asyncio.Task] = set()
        # Set when the crawl state could not be written (see state_unwritable).
        self.broken: StateError | None = None

    def announce(self, spider: SpiderConnection) -> dict[str, str]:
        s = self.settings
        return CrawlSettings(
            store=s.store, timeout_update_ms=int(s.timeout_update * 1000),
            timeout_req_ms=int(s.timeout_req * 1000), max_doc_size=s.max_doc_size,
            user_agent=s.user_agent, allow_net=s.allow_net,
            connect_timeout_ms=int(s.connect_timeout * 1000), spider_id=str(spider.number),
            accept_type=s.accept_type,
        ).to_wire()  # fmt: skip

    async def start(self) -> tuple[str, int]:
        host, port = split_host_port(self.settings.listen, listen=True)
        loop = asyncio.get_running_loop()

        def factory():
            self._count += 1
            return SpiderConnection(self, self._count)

        self._server = await loop.create_server(factory, host, port, reuse_address=True)
        address = self._server.sockets[0].getsockname()[:2]
        log.info("event=listening address=%s:%d", *address)
        self.request_pump()
        return address

    async def stop(self) -> None:
        if self._timer:
            self._timer.cancel()
        if self._server:
            self._server.close()
        for spider in list(self.spiders):
            spider.close()
        for task in list(self._tasks):
            task.cancel()
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

    # -- the pump ------------------------------------------------------------------

    def request_pump(self) -> None:
        if not self._pump_pending:
            self._pump_pending = True
            wait = self._last_pump + PUMP_INTERVAL_S - time.monotonic()
            loop = asyncio.get_running_loop()
            if wait > 0:
                loop.call_later(wait, self.pump)
            else:
                loop.call_soon(self.pump)

    def pump(self) -> None:
        self._pump_pending = False
        self._last_pump = time.monotonic()
        if self.broken is not None:
            return
        try:
            self._pump()
        except StateError as exc:
            self.state_unwritable(exc)

    def _pump(self) -> None:
        crawl, now = self.crawl, time.time()
        for claim in crawl.expire(now):
            if isinstance(claim.spider, SpiderConnection) and not claim.spider.closed:
                claim.spider.send(Cancel(claim.trans_id))
        outgoing = self._assign(now)
        for host in crawl.dns_requests():
            self._spawn(self._resolve(host))
        crawl.commit()  # durable before any assignment leaves
        for spider, chunks in outgoing.items():
            if not spider.closed:
                spider.transport.write(b"".join(chunks))
        self._sample(now)
        if self.settings.exit_when_done and crawl.finished():
            self._finish()
            return
        self._idle_hints(now)
        self._arm_timer(now)

    def _assign(self, now: float) -> dict[SpiderConnection, list[bytes]]:
        crawl = self.crawl
        ready = [s for s in self.spiders if s.conn.opened and s.conn.credit > 0 and not s.closed]
        out: dict[SpiderConnection, list[bytes]] = {}
        if not ready:
            return out
        self._rr = (self._rr + 1) % len(ready)
        ready = ready[self._rr:] + ready[: self._rr]
        while ready:
            for spider in list(ready):
                assignment = crawl.take(spider, now)
                if assignment is None:
                    return out
                try:
                    out.setdefault(spider, []).append(spider.conn.send(assignment))
                except LocalProtocolError as exc:
                    crawl.unsendable(assignment.trans_id, str(exc), now)
                if spider.conn.credit <= 0:
                    ready.remove(spider)
        return out

    def _idle_hints(self, now: float) -> None:
        waiting = [s for s in self.spiders if s.conn.opened and s.conn.credit > 0 and not s.idle_sent]
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
        serving = any(s.conn.opened and s.conn.credit > 0 for s in self.spiders)
        wake = self.crawl.next_wakeup(serving=serving)
        if wake is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(0.0, wake - now) + 0.001, self.request_pump)

    def _finish(self) -> None:
        log.info("event=crawl_finished counts=%s", self.crawl.frontier.counts)
        for spider in list(self.spiders):
            spider.send(Bye("done"))
            spider.close()
        self.finished.set()

    def _sample(self, now: float) -> None:
        if not self.samples or now - self.samples[-1][0] >= 1.0:
            st = self.crawl.stats
            self.samples.append((now, st["handouts"], st["done"], st["discovered"]))

    # -- DNS ------------------------------------------------------------------------

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, host) -> None:
        res = await self.resolver.resolve(host.name.strip("[]"))
        self.crawl.dns_result(host, res, time.time())
        self.request_pump()
