"""A store shard that is down holds only its own work (issue 19): the
session parks the assignments destined to it (not fetched, their claims kept
alive by WORKING), keeps asking for and fetching work for the other shards,
and fetches the parked ones once the shard is back up. The stores and the
urlserver connection are stand-ins; the fetches are real, against the local
test web."""

from __future__ import annotations

import asyncio
import types

import pytest
import uvloop

from wreck.protocol import AckResult, Assignment, Get, Record, Working
from wreck.spider.urlclient import SHARD_PARK_WINDOWS, UrlSession
from tests.spider_helpers import crawl_settings
from tests.web import HOSTILE_IP, HOSTILE_NAME, RunningWeb, SiteSpec

WAIT = 10.0  # seconds any single expected event may take before the test fails
TIMEOUT_UPDATE_MS = 300  # WORKING every 0.1 s: the test sees them soon
WINDOW = 4


@pytest.fixture(scope="module")
def web():
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=3), dns=False) as running:
        yield running


class Shard:
    """Stands in for StoreClient: acks every record at once while up."""

    def __init__(self, up: bool) -> None:
        self.connected = up
        self.unacked: dict[int, tuple] = {}
        self.stored: list[int] = []
        self.on_up: set = set()

    def submit(self, record: Record, on_ack) -> None:
        self.unacked[record.doc_id] = (record, on_ack)
        if self.connected:
            self._ack_all()

    def _ack_all(self) -> None:
        for doc_id, (_, on_ack) in list(self.unacked.items()):
            del self.unacked[doc_id]
            self.stored.append(doc_id)
            on_ack(AckResult.STORED)

    def come_back(self) -> None:
        self.connected = True
        self._ack_all()
        for callback in list(self.on_up):
            callback()


class Urlserver:
    """Stands in for the urlserver's Peer: records what the session sends."""

    def __init__(self) -> None:
        self.sent: list = []
        self.on_event = lambda event: None
        self.closed = asyncio.get_running_loop().create_future()
        self.conn = types.SimpleNamespace(credit=0)
        self.is_open = True

    def send(self, event) -> None:
        self.sent.append(event)
        if type(event) is Get:
            self.conn.credit += event.count

    def assign(self, trans_id: int, doc_id: int, url: str) -> None:
        self.conn.credit -= 1
        self.on_event(Assignment(trans_id, doc_id, HOSTILE_IP, HOSTILE_NAME, url))

    def asked(self) -> int:
        return sum(e.count for e in self.sent if type(e) is Get)


async def _until(predicate) -> None:
    async with asyncio.timeout(WAIT):
        while not predicate():
            await asyncio.sleep(0.01)


def test_a_down_shard_parks_its_assignments_and_the_others_go_on(web):
    url = f"http://{HOSTILE_NAME}:{web.port}/target"

    async def scenario():
        urlserver = Urlserver()
        up, down = Shard(up=True), Shard(up=False)
        session = UrlSession(urlserver, crawl_settings(timeout_update_ms=TIMEOUT_UPDATE_MS), [up, down],
                             concurrency=WINDOW)
        run = asyncio.ensure_future(session.run())
        await _until(lambda: urlserver.asked() >= WINDOW)
        # 3 windows' worth of work for the down shard (odd doc ids), each
        # followed by one for the shard that is up (even doc ids)
        trans_id = 0
        for n in range(3 * WINDOW):
            trans_id += 1
            urlserver.assign(trans_id, 2 * n + 1, url)  # down shard: parked
            await _until(lambda: urlserver.conn.credit > 0)  # the window is not spent on it
            trans_id += 1
            urlserver.assign(trans_id, 2 * n + 2, url)  # up shard: fetched and stored
            await _until(lambda: len(up.stored) == n + 1)
        assert up.stored == [2 * n + 2 for n in range(3 * WINDOW)] and not down.unacked
        parked = [t for t in session.txns if t % 2 == 1]
        assert len(parked) == 3 * WINDOW  # every claim of the down shard held, none fetched
        # their claims are kept alive while parked
        await _until(lambda: {t for e in urlserver.sent if type(e) is Working for t in e.trans_ids} >= set(parked))
        down.come_back()
        await _until(lambda: len(down.stored) == 3 * WINDOW)  # fetched and stored once the shard is back
        assert sorted(down.stored) == [2 * n + 1 for n in range(3 * WINDOW)] and not session.txns
        urlserver.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)

    uvloop.run(scenario())


def test_parking_is_bounded_then_records_are_held_then_the_window_stops_asking(web):
    url = f"http://{HOSTILE_NAME}:{web.port}/target"

    async def scenario():
        urlserver = Urlserver()
        down = Shard(up=False)
        session = UrlSession(urlserver, crawl_settings(timeout_update_ms=TIMEOUT_UPDATE_MS), [down],
                             concurrency=WINDOW)
        run = asyncio.ensure_future(session.run())
        await _until(lambda: urlserver.asked() >= WINDOW)
        bound = WINDOW * SHARD_PARK_WINDOWS
        n = 0
        while urlserver.conn.credit > 0:  # take all the spider asks for
            n += 1
            urlserver.assign(n, n, url)
            await asyncio.sleep(0)
            if urlserver.conn.credit == 0:
                await asyncio.sleep(0.2)  # a refill may follow the fetches
        await _until(lambda: len(down.unacked) + sum(map(len, session.parked.values())) == n)
        # parked up to the bound, then one window of fetched records, then the window is full
        assert sum(map(len, session.parked.values())) == bound
        assert len(down.unacked) <= 2 * WINDOW and n <= bound + 2 * WINDOW
        urlserver.closed.set_result(None)
        await asyncio.wait_for(run, WAIT)

    uvloop.run(scenario())
