# The spider's exact protocol exchange, against a fake urlserver and a fake
# store server written here from protocol/ objects (not the real servers):
# GET fills the window, a slow fetch is covered by WORKING, no DONE goes out
# before the store's ack, records are resent after a store drops, and a
# wrong secret ends the worker cleanly. When WORKING goes out is checked on
# virtual time (a clock that moves only when the test says), so a loaded
# machine cannot make it late.
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import types
import zlib

import pytest
import uvloop

from wreck.protocol import (
    Ack, AckResult, Assignment, Bye, Cancel, Committed, ControlConnection, Done, Error, ErrorCode, Get, NEED_DATA, ProtocolError, Record, Role, Specific,
    Status, StoreConnection, Working, http_enum,
)  # fmt: skip
from wreck.spider import urlclient
from wreck.spider.urlclient import UrlSession
from wreck.spider.worker import EXIT_REFUSED, Worker, WorkerOptions
from tests.spider_helpers import crawl_settings
from tests.web import HOSTILE_IP, HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec

SECRET = b"exchange-test-secret"
TIMEOUT_UPDATE_MS = 900
WAIT = 10.0  # seconds any single expected event may take before the test fails


@pytest.fixture(scope="module")
def web():
    spec = SiteSpec(hosts=1, pages_per_host=3, hostile_spec=HostileSpec(stall_seconds=10.0))
    with RunningWeb(spec, dns=False) as running:
        yield running


class FakeServer:
    """One protocol server: accepts spiders, queues the events they send."""

    def __init__(self, kind, settings: dict[str, str], secret: bytes = SECRET) -> None:
        self.kind, self.settings, self.secret = kind, settings, secret
        self.events: asyncio.Queue = asyncio.Queue()
        self.writers: list[asyncio.StreamWriter] = []
        self.conns: list = []
        self.accepted = 0
        self.log: list = []  # every event, including those next() skipped

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return "127.0.0.1:%d" % self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader, writer) -> None:
        self.accepted += 1
        conn = self.kind(Role.SERVER, secret=self.secret, nonce=os.urandom(32))
        self.conns.append(conn)
        self.writers.append(writer)
        writer.write(conn.hello())
        try:
            while data := await reader.read(65536):
                conn.receive_data(data)
                while (event := conn.next_event()) is not NEED_DATA:
                    if type(event).__name__ == "Auth":
                        writer.write(conn.welcome(self.settings))
                    elif type(event).__name__ != "ConnectionClosed":
                        self.log.append(event)
                        await self.events.put(event)
        except ProtocolError as exc:  # as a real server does: say why, then close
            writer.write(conn.send(Error(exc.code, str(exc))))
            if exc.code is not ErrorCode.AUTH:  # from the spider, a test failure
                await self.events.put(exc)
        finally:
            writer.close()

    def send(self, event) -> None:
        self.writers[-1].write(self.conns[-1].send(event))

    def drop(self) -> None:
        self.writers[-1].transport.abort()

    async def next(self, kind=None):
        while True:
            event = await asyncio.wait_for(self.events.get(), WAIT)
            assert not isinstance(event, Exception), event
            if kind is None or type(event) is kind:
                return event

    async def stop(self) -> None:
        for writer in self.writers:
            writer.transport.abort()
        self.server.close()


async def start_pair(**overrides):
    store = FakeServer(StoreConnection, {})
    store_address = await store.start()
    settings = crawl_settings((store_address,), timeout_update_ms=TIMEOUT_UPDATE_MS, **overrides)
    urlserver = FakeServer(ControlConnection, settings.to_wire())
    return urlserver, await urlserver.start(), store


def run_worker(address: str, secret: bytes = SECRET, concurrency: int = 4):
    worker = Worker(WorkerOptions(connect=address, secret=secret, name="test-box", concurrency=concurrency))
    return worker, asyncio.ensure_future(worker.run())


@contextlib.asynccontextmanager
async def spider_between_fakes(concurrency: int = 4, **settings):
    """A worker between a fake urlserver and a fake store; stops cleanly at the end."""
    urlserver, address, store = await start_pair(**settings)
    worker, task = run_worker(address, concurrency=concurrency)
    try:
        yield urlserver, store
    finally:
        worker.stop()
        assert await asyncio.wait_for(task, WAIT) == 0
        await urlserver.stop()
        await store.stop()


def test_exact_exchange(web):
    fast = f"http://{HOSTILE_NAME}:{web.port}/target"
    # 1.5 s: longer than Timeout_Update, shorter than the low-speed window
    # (a quarter of Timeout_Req = 2 s), so it ends well after a WORKING
    slow = f"http://{HOSTILE_NAME}:{web.port}/slow-drip?interval=0.1&bytes=15"

    async def scenario():
        async with spider_between_fakes(timeout_req_ms=8000) as (urlserver, store):
            first = await urlserver.next()
            assert first == Get(4)  # the whole window at once
            urlserver.send(Assignment(1, 101, HOSTILE_IP, HOSTILE_NAME, fast))
            urlserver.send(Assignment(2, 102, HOSTILE_IP, HOSTILE_NAME, slow))
            # the fast page's record reaches the store; its ack is held back
            record = await store.next(Record)
            assert (record.doc_id, record.url, record.success, record.specific) == (101, fast, True, Specific.OK)
            assert record.http == http_enum(200) and record.new_url is None
            assert record.document.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\n\r\n" in record.document
            # the slow one is still in flight: a WORKING covers it (each
            # transaction is covered on its own schedule, so the first WORKING
            # may name only transaction 1; how soon is checked on virtual time
            # in test_working_covers_each_held_transaction_within_timeout_update)
            working = await urlserver.next(Working)
            while 2 not in working.trans_ids:
                working = await urlserver.next(Working)
            # no DONE while the store has not acked record 101
            seen = _drain(urlserver.events)
            assert not [e for e in seen if type(e) is Done]
            store.send(Ack(101, AckResult.STORED))
            done = await urlserver.next(Done)
            body = record.document.partition(b"\r\n\r\n")[2]
            digest = {"digest": "%08x" % zlib.crc32(body)}  # for recrawls (5.5)
            size = {"size": str(len(record.document))}  # for --max-bytes (5.5)
            assert done == Done(1, Status.FETCHED, 200, Specific.OK, done.ms, extra={**digest, **size})
            # the slow fetch completes; stored; acked; DONE
            record2 = await store.next(Record)
            assert record2.doc_id == 102 and record2.document.endswith(b"\r\n\r\n" + b"." * 15)
            store.send(Ack(102, AckResult.DUPLICATE))  # a duplicate ack releases DONE too
            done2 = await urlserver.next(Done)
            assert (done2.trans_id, done2.status, done2.specific) == (2, Status.FETCHED, Specific.OK)
            # with both slots free again, the window is refilled by GETs
            async with asyncio.timeout(WAIT):
                while sum(e.count for e in urlserver.log if type(e) is Get) < 6:
                    await asyncio.sleep(0.01)
            kinds = [type(e).__name__ for e in urlserver.log if type(e) is not Working]
            assert kinds == ["Get", "Done", "Get", "Done", "Get"]

    uvloop.run(scenario())


def test_the_spider_announces_its_capabilities_to_each_server():
    """docs/protocol.txt 3.1: caps= in the AUTH to the urlserver (what it
    honours: after=, nofetch=); to a store, zstd alone (6.7: it compresses
    with the store's dictionary)."""
    from wreck.spider.worker import CAPS

    async def scenario():
        async with spider_between_fakes() as (urlserver, store):
            await urlserver.next(Get)
            assert urlserver.conns[-1].caps == frozenset(CAPS) and "after" in CAPS
            async with asyncio.timeout(WAIT):
                while not store.conns or not store.conns[-1].opened:
                    await asyncio.sleep(0.01)
            assert store.conns[-1].caps == frozenset({"zstd"})

    uvloop.run(scenario())


def test_a_record_only_assignment_is_stored_and_done_without_any_connection():
    """docs/protocol.txt 5.3 nofetch=: the spider connects nowhere (not even to
    an address it would admit), stores a record of what was tried, and sends
    DONE ERROR with the Specific of the failure once the store acked it."""
    connections = []

    async def scenario():
        listener = await asyncio.start_server(lambda r, w: connections.append(w.close()), "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/never"
        async with spider_between_fakes() as (urlserver, store):
            await urlserver.next(Get)
            urlserver.send(Assignment(1, 101, "127.0.0.1", "127.0.0.1", url,
                                      {"nofetch": "refused", "why": "forbidden%20address%20127.0.0.1%20(loopback)",
                                       "refused": "127.0.0.1"}))
            urlserver.send(Assignment(2, 102, "0.0.0.0", "nowhere.wreck.test", "http://nowhere.wreck.test/",
                                      {"nofetch": "dns", "why": "dns:%20NXDOMAIN"}))
            first, second = await store.next(Record), await store.next(Record)
            assert first == Record(101, False, Specific.FORBIDDEN_ADDRESS, 0, 0, url, None, b"",
                                   nofetch="forbidden address 127.0.0.1 (loopback)", refused=("127.0.0.1",))
            assert second == Record(102, False, Specific.DNS_FAILED, 0, 0, "http://nowhere.wreck.test/", None,
                                    b"", nofetch="dns: NXDOMAIN")
            assert not [e for e in _drain(urlserver.events) if type(e) is Done]  # not before the acks
            store.send(Ack(101, AckResult.STORED))
            store.send(Ack(102, AckResult.STORED))
            dones = {d.trans_id: d for d in (await urlserver.next(Done), await urlserver.next(Done))}
            assert dones[1] == Done(1, Status.ERROR, 0, Specific.FORBIDDEN_ADDRESS, 0,
                                    reason="forbidden address 127.0.0.1 (loopback)")
            assert dones[2] == Done(2, Status.ERROR, 0, Specific.DNS_FAILED, 0, reason="dns: NXDOMAIN")
        listener.close()
        assert connections == []

    uvloop.run(scenario())


class VirtualTime:
    """A clock that moves only when the test says so. sleep() parks its caller
    (the session's WORKING ticker) until run_until() passes its deadline; each
    sleeper then wakes `late` seconds after it, as on a loaded machine."""

    def __init__(self, late: float = 0.0) -> None:
        self.now, self.late = 0.0, late
        self.parked = asyncio.Event()
        self._sleeper: tuple[float, asyncio.Future] | None = None

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken = asyncio.get_running_loop().create_future()
        self._sleeper = (self.now + seconds + self.late, woken)
        self.parked.set()
        await woken

    async def run_until(self, t: float) -> None:
        """Let time pass up to `t`, running the sleeper at each of its wake-ups."""
        while True:
            await asyncio.wait_for(self.parked.wait(), WAIT)  # the ticker sleeps again
            wake, woken = self._sleeper
            if wake > t:
                self.now = t
                return
            self.now = wake
            self.parked.clear()
            woken.set_result(None)


class RecordingPeer:
    """Stands in for spider.peer.Peer: an open urlserver connection that
    records (virtual time, event) of everything the session sends."""

    def __init__(self, time: VirtualTime) -> None:
        self.time = time
        self.sent: list[tuple[float, object]] = []
        self.on_event = lambda event: None
        self.closed = asyncio.get_running_loop().create_future()
        self.conn = types.SimpleNamespace(credit=0)  # GETs are not what this test is about
        self.is_open = True

    def send(self, event) -> None:
        self.sent.append((self.time.now, event))


class SilentStore:
    """Stands in for spider.storeclient.StoreClient: takes records, never acks
    (a store whose disk is full), so their transactions stay held."""

    def __init__(self) -> None:
        self.unacked: dict[int, Record] = {}
        self.connected = True  # up, only silent
        self.on_up: set = set()

    def submit(self, record: Record, on_ack) -> None:
        self.unacked[record.doc_id] = record


@pytest.mark.parametrize("late", [0.0, 0.1], ids=["punctual", "loop-wakes-late"])
def test_working_covers_each_held_transaction_within_timeout_update(web, late):
    """docs/protocol.txt 5.4: every held transaction -- still fetching, or
    fetched and waiting for the store's ack -- is named by a WORKING before
    Timeout_Update passes since its assignment or its last WORKING, and no
    more often than every third of it; on virtual time, so the verdict does
    not depend on the machine's speed."""
    stall = f"http://{HOSTILE_NAME}:{web.port}/stall-after-headers"  # never finishes here
    fast = f"http://{HOSTILE_NAME}:{web.port}/target"  # fetched at once, then never acked
    tu = TIMEOUT_UPDATE_MS / 1000
    # just before, just after and between the ticker's ticks
    assigned = {1: (0.0, stall), 2: (0.31, stall), 3: (1.0, stall), 4: (1.4, fast)}
    end = 10 * tu

    async def scenario():
        time = VirtualTime(late)
        peer = RecordingPeer(time)
        store = SilentStore()
        session = UrlSession(peer, crawl_settings(timeout_update_ms=TIMEOUT_UPDATE_MS), [store], concurrency=8,
                             clock=time.clock, sleep=time.sleep)
        run = asyncio.ensure_future(session.run())
        await asyncio.sleep(0)  # the session takes the peer's events
        for trans_id, (at, url) in assigned.items():
            if at:  # before its first assignment the ticker sleeps on no clock (test below)
                await time.run_until(at)
            peer.on_event(Assignment(trans_id, 100 + trans_id, HOSTILE_IP, HOSTILE_NAME, url))
        async with asyncio.timeout(WAIT):  # the fast page is fetched and handed to the store (real time)
            while 104 not in store.unacked:
                await asyncio.sleep(0.01)
        await time.run_until(end)
        assert set(session.txns) == set(assigned)  # all still held at the end
        peer.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)
        return peer.sent

    sent = uvloop.run(scenario())
    assert not [event for _, event in sent if type(event) is Done]
    named: dict[int, list[float]] = {trans_id: [] for trans_id in assigned}
    for at, event in sent:
        if type(event) is Working:
            for trans_id in event.trans_ids:
                named[trans_id].append(at)
    for trans_id, (at, _) in assigned.items():
        reports = [at, *named[trans_id], end]
        gaps = [b - a for a, b in zip(reports, reports[1:])]
        assert max(gaps) < tu, (trans_id, reports)  # in time, up to the end
        assert min(gaps[1:-1]) >= tu / 3, (trans_id, reports)  # and not chattier than every third


async def _held_session():
    """A UrlSession on virtual time whose store never acks, running: (time,
    peer, store, session, its run task)."""
    time = VirtualTime()
    peer = RecordingPeer(time)
    store = SilentStore()
    session = UrlSession(peer, crawl_settings(timeout_update_ms=TIMEOUT_UPDATE_MS), [store],
                         concurrency=8, clock=time.clock, sleep=time.sleep)
    run = asyncio.ensure_future(session.run())
    await asyncio.sleep(0)  # the session takes the peer's events
    return time, peer, store, session, run


def test_an_idle_session_arms_no_timer_until_it_holds_a_transaction(web):
    """Issue 16: a spider with nothing to fetch uses no CPU, so its WORKING
    ticker sleeps on no clock until an assignment comes, and again once
    every transaction it held has ended."""
    async def scenario():
        time, peer, _, session, run = await _held_session()
        for _ in range(20):
            await asyncio.sleep(0)
        idle = time.parked.is_set()
        peer.on_event(Assignment(1, 101, HOSTILE_IP, HOSTILE_NAME, f"http://{HOSTILE_NAME}:{web.port}/stall-after-headers"))
        await asyncio.wait_for(time.parked.wait(), WAIT)  # holding one: the ticker sleeps on the clock
        peer.on_event(Cancel(1))  # nothing held any more
        wake, woken = time._sleeper  # the ticker's next tick comes, names nothing ...
        time.now = wake
        time.parked.clear()
        woken.set_result(None)
        for _ in range(20):
            await asyncio.sleep(0)
        idle_again = not time.parked.is_set()  # ... and it does not sleep on the clock again
        peer.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)
        return idle, idle_again

    idle, idle_again = uvloop.run(scenario())
    assert not idle
    assert idle_again


def test_an_assignment_after_another_starts_only_when_that_transfer_ends(web):
    """docs/protocol.txt 5.3 after=T: not while T's transfer is under way
    (nor while T waits for its own after=); at once when T is cancelled."""
    stall = f"http://{HOSTILE_NAME}:{web.port}/stall-after-headers"
    target = f"http://{HOSTILE_NAME}:{web.port}/target"

    async def scenario():
        time, peer, store, session, run = await _held_session()
        peer.on_event(Assignment(1, 101, HOSTILE_IP, HOSTILE_NAME, stall))
        peer.on_event(Assignment(2, 102, HOSTILE_IP, HOSTILE_NAME, target + "?2", {"after": "1"}))
        peer.on_event(Assignment(3, 103, HOSTILE_IP, HOSTILE_NAME, target + "?3", {"after": "2"}))
        early = [key for key in (1, 2, 3) if session.fetcher.fetching(key)]
        peer.on_event(Cancel(1))  # ends T: 2 starts, and 3 once 2's transfer has ended
        async with asyncio.timeout(WAIT):
            while not {102, 103} <= set(store.unacked):
                await asyncio.sleep(0.01)
        order = [r.target for r in web.log.records() if r.target in ("/target?2", "/target?3")]
        peer.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)
        return early, order

    early, order = uvloop.run(scenario())
    assert early == [1]  # 2 waits for 1, 3 for 2
    assert order == ["/target?2", "/target?3"]


def test_after_a_503_the_transaction_handed_after_it_waits_before_it_starts(web, monkeypatch):
    """A server that answers 503 asks the host to slow down: what was handed
    after that transaction does not follow it at once (urlclient.SLOWED_PAUSE_S,
    made an hour here: the cancel of the 503's transaction ends the wait)."""
    monkeypatch.setattr(urlclient, "SLOWED_PAUSE_S", 3600.0)
    busy = f"http://{HOSTILE_NAME}:{web.port}/status/503"
    target = f"http://{HOSTILE_NAME}:{web.port}/target?after503"

    async def scenario():
        time, peer, store, session, run = await _held_session()
        peer.on_event(Assignment(1, 101, HOSTILE_IP, HOSTILE_NAME, busy))
        peer.on_event(Assignment(2, 102, HOSTILE_IP, HOSTILE_NAME, target, {"after": "1"}))
        async with asyncio.timeout(WAIT):
            while 101 not in store.unacked:  # the 503 came back and was analysed
                await asyncio.sleep(0.01)
        waiting = not session.fetcher.fetching(2) and 102 not in store.unacked
        peer.on_event(Cancel(1))
        async with asyncio.timeout(WAIT):  # ... and it starts once that transaction is over
            while 102 not in store.unacked:
                await asyncio.sleep(0.01)
        peer.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)
        return waiting

    assert uvloop.run(scenario())


def _drain(queue: asyncio.Queue) -> list:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


def test_records_resent_after_store_drops_and_urlserver_reconnect(web):
    url = f"http://{HOSTILE_NAME}:{web.port}/redirect/relative"

    async def scenario():
        async with spider_between_fakes(concurrency=1) as (urlserver, store):
            await urlserver.next(Get)
            urlserver.send(Assignment(7, 70, HOSTILE_IP, HOSTILE_NAME, url))
            record = await store.next(Record)
            assert record.specific is Specific.REDIRECT
            assert record.new_url == f"http://{HOSTILE_NAME}:{web.port}/target"
            store.drop()  # the store goes away before acking
            again = await store.next(Record)  # reconnected and resent
            assert again == record and store.accepted == 2
            store.send(Ack(70, AckResult.STORED))
            done = await urlserver.next(Done)
            assert (done.status, done.specific, done.http_code, done.new_url) == (
                Status.REDIRECTION, Specific.REDIRECT, 302, record.new_url)
            assert await urlserver.next(Get) == Get(1)  # the window refilled
            urlserver.drop()  # the urlserver connection drops: the spider comes back
            get = await urlserver.next(Get)
            assert get == Get(1) and urlserver.accepted == 2

    uvloop.run(scenario())


def test_wrong_secret_ends_the_worker_cleanly():
    async def scenario():
        urlserver, address, store = await start_pair()
        worker, task = run_worker(address, secret=b"not-the-right-secret")
        try:
            return await asyncio.wait_for(task, WAIT)
        finally:
            await urlserver.stop()
            await store.stop()

    assert uvloop.run(scenario()) == EXIT_REFUSED


def test_cancel_and_garbage_from_the_urlserver(web):
    stall = f"http://{HOSTILE_NAME}:{web.port}/stall-after-headers"

    async def scenario():
        async with spider_between_fakes(concurrency=2) as (urlserver, store):
            assert await urlserver.next(Get) == Get(2)
            urlserver.send(Assignment(5, 50, HOSTILE_IP, HOSTILE_NAME, stall))
            await urlserver.next(Working)  # the fetch is under way
            urlserver.send(Cancel(5))
            assert await urlserver.next(Get) == Get(1)  # its slot is free again
            assert store.events.empty()  # no record, and no DONE for a cancelled fetch
            urlserver.writers[-1].write(b"this is not the protocol\n")
            await urlserver.next(Get)  # a clean reconnect, not a crash
            assert urlserver.accepted == 2
            assert not [e for e in urlserver.log if type(e) is Done]

    uvloop.run(scenario())


def test_a_body_transaction_returns_the_robots_body_on_done(web):
    robots = f"http://h0.wreck.test:{web.port}/robots.txt"
    page = f"http://h0.wreck.test:{web.port}/"
    host = web.site.hosts["h0.wreck.test"]
    ip = host.ip

    async def scenario():
        async with spider_between_fakes(concurrency=2) as (urlserver, store):
            await urlserver.next(Get)
            urlserver.send(Assignment(1, 201, ip, "h0.wreck.test", robots, {"body": "10"}))
            urlserver.send(Assignment(2, 202, ip, "h0.wreck.test", page))
            for _ in range(2):
                record = await store.next(Record)
                store.send(Ack(record.doc_id, AckResult.STORED))
            dones = {}
            for _ in range(2):
                done = await urlserver.next(Done)
                dones[done.trans_id] = done
            # host 0 serves the allow-all variant, a 200 with the plan's text
            assert dones[1].status is Status.FETCHED
            assert dones[1].body == host.robots.text().encode()[:10]
            assert dones[2].body is None  # only asked-for bodies travel on DONE

    uvloop.run(scenario())


def test_after_the_urlservers_goodbye_the_worker_logs_no_warning(caplog):
    """A finished crawl: BYE, the connection closes and the urlserver is gone.
    The worker keeps trying (a next crawl may come) but says so at INFO."""

    async def scenario():
        urlserver, address, store = await start_pair()
        worker, task = run_worker(address)
        try:
            await urlserver.next(Get)
            urlserver.send(Bye("done"))
            await urlserver.stop()  # closes the connection and stops listening
            deadline = time.monotonic() + WAIT
            while not any("cannot connect" in r.getMessage() for r in caplog.records):
                assert time.monotonic() < deadline, "the worker never tried to reconnect"
                await asyncio.sleep(0.05)
        finally:
            worker.stop()
            await asyncio.wait_for(task, WAIT)
            await store.stop()

    with caplog.at_level(logging.INFO, logger="wreck.spider"):
        uvloop.run(scenario())
    assert any("finished (done)" in r.getMessage() for r in caplog.records)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_deeply_nested_page_does_not_hold_up_the_others(web):
    """Issue 14, finding 2: 200,000 nested <div>s (3 KB gzipped) once took
    minutes of the worker's event loop. Now the other pages' DONEs go out
    meanwhile, and the deep page is stored with the links of the part parsed
    and the cut as its reason."""
    deep = f"http://{HOSTILE_NAME}:{web.port}/nested-html?depth=200000"
    goods = [f"http://{HOSTILE_NAME}:{web.port}{p}" for p in ("/target", "/meta-refresh", "/doc.pdf")]

    async def scenario():
        async with spider_between_fakes(concurrency=4, max_doc_size=4 << 20) as (urlserver, store):
            await urlserver.next(Get)
            urlserver.send(Assignment(1, 101, HOSTILE_IP, HOSTILE_NAME, deep))
            for trans_id, url in enumerate(goods, 2):
                urlserver.send(Assignment(trans_id, 100 + trans_id, HOSTILE_IP, HOSTILE_NAME, url))
            stored = {}

            async def ack_every_record():
                while True:
                    record = await store.next(Record)
                    stored[record.doc_id] = record
                    store.send(Ack(record.doc_id, AckResult.STORED))

            acker = asyncio.ensure_future(ack_every_record())
            dones = {}
            try:
                while len(dones) < 4:
                    done = await urlserver.next(Done)
                    dones[done.trans_id] = done
            finally:
                acker.cancel()
            assert len(stored[101].document) > 1_000_000  # the deep page is stored whole
            return dones

    dones = uvloop.run(scenario())
    assert {t: dones[t].status for t in (2, 3, 4)} == {2: Status.FETCHED, 3: Status.REDIRECTION, 4: Status.FETCHED}
    assert dones[1].status is Status.FETCHED and "links taken from the first" in dones[1].reason


# -- links left out of DONEs (docs/protocol.txt 5.5.1, spider/sentlinks.py) --


def test_a_worker_leaves_out_only_links_of_dones_committed_on_its_connection(web):
    host = web.site.hosts["h0.wreck.test"]
    page = f"http://h0.wreck.test:{web.port}/"

    async def fetch(urlserver, store, trans_id: int) -> Done:
        urlserver.send(Assignment(trans_id, 100 + trans_id, host.ip, "h0.wreck.test", page))
        record = await store.next(Record)
        assert record.specific is Specific.OK
        store.send(Ack(record.doc_id, AckResult.STORED))
        return await urlserver.next(Done)

    async def scenario():
        async with spider_between_fakes(concurrency=1) as (urlserver, store):
            await urlserver.next(Get)
            assert "committed" in urlserver.conns[-1].caps
            first = await fetch(urlserver, store, 1)
            links = first.outlinks
            assert links and first.known == 0 and first.status is Status.FETCHED
            # DONE 1 was ignored (no COMMITTED names it): every link goes again
            second = await fetch(urlserver, store, 2)
            assert (second.outlinks, second.known) == (links, 0)
            urlserver.send(Committed((2,)))  # DONE 2's commit is durable
            third = await fetch(urlserver, store, 3)
            assert (third.outlinks, third.known) == ((), len(links))
            # a new connection (a urlserver restarted from an older commit) knows nothing
            assert await urlserver.next(Get) == Get(1)  # the window refilled
            urlserver.drop()
            await urlserver.next(Get)
            assert urlserver.accepted == 2
            fourth = await fetch(urlserver, store, 4)
            assert (fourth.outlinks, fourth.known) == (links, 0)

    uvloop.run(scenario())


def test_a_feed_assignment_sends_every_link_whatever_was_committed(web):
    """docs/protocol.txt 5.5.1: a feed's or a sitemap's links are never left
    out; the page is not a feed, so its links come back as a page's, whole."""
    host = web.site.hosts["h0.wreck.test"]
    page = f"http://h0.wreck.test:{web.port}/"

    async def scenario():
        async with spider_between_fakes(concurrency=1) as (urlserver, store):
            await urlserver.next(Get)
            dones = []
            for trans_id, extra in ((1, {}), (2, {"kind": "feed"})):
                urlserver.send(Assignment(trans_id, 100 + trans_id, host.ip, "h0.wreck.test", page, extra))
                record = await store.next(Record)
                store.send(Ack(record.doc_id, AckResult.STORED))
                dones.append(await urlserver.next(Done))
                urlserver.send(Committed((trans_id,)))  # arrives before the next assignment
            assert dones[0].outlinks and dones[1].known == 0 and set(dones[1].outlinks) >= set(dones[0].outlinks)

    uvloop.run(scenario())


def test_a_feed_found_by_its_content_type_sends_every_link_whatever_was_committed(web):
    """A page's assignment whose answer is a feed (a blog's <a href=/feed>,
    tests/web/edges2.py's /blog/feed): its DONE says feed=, so its links go
    whole (5.5.1). Leaving the committed ones out made a DONE the protocol
    refuses (known= with feed=), sent without links: the feed's new stories
    were lost and it was never polled."""
    feed = f"http://{HOSTILE_NAME}:{web.port}/feed.rss"

    async def scenario():
        async with spider_between_fakes(concurrency=1) as (urlserver, store):
            await urlserver.next(Get)
            dones = []
            for trans_id in (1, 2):
                urlserver.send(Assignment(trans_id, 100 + trans_id, HOSTILE_IP, HOSTILE_NAME, feed))
                record = await store.next(Record)
                store.send(Ack(record.doc_id, AckResult.STORED))
                dones.append(await urlserver.next(Done))
                urlserver.send(Committed((trans_id,)))  # arrives before the next assignment
            return dones

    first, second = uvloop.run(scenario())
    assert first.extra.get("feed") == second.extra.get("feed") == "rss"
    assert second.known == 0 and first.outlinks and set(second.outlinks) >= set(first.outlinks)
