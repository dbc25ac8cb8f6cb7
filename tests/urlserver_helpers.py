"""A scripted fake spider speaking the control protocol over loopback TCP,
and an in-process urlserver to point it at."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from pathlib import Path

import msgspec

from wreck.protocol import (
    NEED_DATA, Assignment, Bye, Cancel, Committed, ConnectionClosed, ControlConnection, Done, Get, Idle,
    Role, Specific, Status, Working,
)  # fmt: skip
from wreck.spider.sentlinks import SentLinks
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.server import UrlServer
from wreck.urlserver.dns import Resolution
from wreck.urlserver.settings import Settings


def fetched(a: Assignment, *links: str, body: bytes | None = None) -> Done:
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=tuple(links), body=body)


def not_found(a: Assignment) -> Done:
    return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)


def site_responder(pages: dict[str, tuple[str, ...]], robots: dict[str, bytes | None] | None = None):
    """Answer robots.txt from `robots` (None or missing: 404) and pages from `pages`."""
    robots = robots or {}

    def respond(a: Assignment):
        if a.url.endswith("/robots.txt"):
            body = robots.get(a.url)
            return fetched(a, body=body) if body is not None else not_found(a)
        if a.url in pages:
            return fetched(a, *pages[a.url])
        return not_found(a)

    return respond


class FakeSpider:
    """Connects, keeps `credit` credits granted, answers each assignment with
    respond(a) -> Done | None (None: stay silent, as a hung spider would)."""

    def __init__(self, address, *, respond, credit: int = 10, name: str = "fake",
                 secret: bytes = b"", answer_delay: float = 0.0, caps: tuple[str, ...] = ()) -> None:
        self.address, self.respond, self.credit, self.name = address, respond, credit, name
        self.caps = caps  # announced in its AUTH (docs/protocol.txt 3.1); none: an older spider
        self.committed: list[int] = []  # the DONEs COMMITTED named (5.5.1), with caps=committed
        # with caps=committed, the links COMMITTED made known are left out (known=), as a spider does
        self.sent_links = SentLinks() if "committed" in caps else None
        self.done_bytes = 0  # octets of the DONEs it sent
        self.secret, self.answer_delay = secret, answer_delay
        self.assignments: list[tuple[float, Assignment]] = []
        self.cancels: list[int] = []
        self.byes: list[str] = []
        self.settings: dict[str, str] = {}
        self.silent: set[int] = set()
        self._writer = None
        self._task = None

    async def start(self) -> None:
        reader, writer = await asyncio.open_connection(*self.address)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writer = writer
        self.conn = ControlConnection(Role.CLIENT, secret=self.secret, nonce=os.urandom(32), name=self.name,
                                      caps=self.caps)
        self._task = asyncio.ensure_future(self._run(reader))

    async def _run(self, reader) -> None:
        conn, writer = self.conn, self._writer
        while True:
            data = await reader.read(65536)
            conn.receive_data(data)
            while (event := conn.next_event()) is not NEED_DATA:
                kind = type(event).__name__
                if kind == "Hello":
                    writer.write(conn.authenticate())
                elif kind == "Ready":
                    self.settings = dict(event.settings)
                    writer.write(conn.send(Get(self.credit)))
                elif type(event) is Assignment:
                    self.assignments.append((time.time(), event))
                    asyncio.get_running_loop().call_later(self.answer_delay, self._answer, event)
                elif type(event) is Cancel:
                    self.cancels.append(event.trans_id)
                elif type(event) is Committed:
                    self.committed.extend(event.trans_ids)
                    self.sent_links.committed(event.trans_ids)
                elif type(event) is Bye:
                    self.byes.append(event.reason)
                elif type(event) in (Idle,):
                    pass
                elif type(event) is ConnectionClosed or kind == "Error":
                    writer.close()
                    return
            if not data:
                return

    def _answer(self, a: Assignment) -> None:
        if self._writer.is_closing() or self.conn.state.name != "OPEN":
            return
        done = self.respond(a)
        if done is None:
            self.silent.add(a.trans_id)
            return
        sent = self.sent_links
        if sent is not None and done.outlinks:
            links, known = sent.leave_out(done.outlinks)
            done = msgspec.structs.replace(done, outlinks=links, known=known)
            sent.sent(done.trans_id, links)
        data = self.conn.send(done)
        self.done_bytes += len(data)
        self._writer.write(data + self.conn.send(Get(1)))

    def working(self, *trans_ids: int) -> None:
        self._writer.write(self.conn.send(Working(trans_ids)))

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    def urls(self) -> list[str]:
        return [a.url for _, a in self.assignments]


def settings_for(tmp_path, **kw) -> Settings:
    base = dict(data=str(tmp_path / "data"), listen="127.0.0.1:0", http=None, delay=0.0,
                allow_net=("127.0.0.0/8",), timeout_update=5.0, sync=False)
    base.update(kw)
    return Settings(**base)


@contextlib.asynccontextmanager
async def running(settings: Settings, seeds=()):
    crawl = Crawl.open(settings)
    for url in seeds:
        crawl.add_seed(url)
    crawl.commit()
    server = UrlServer(settings, crawl)
    address = await server.start()
    try:
        yield server, address
    finally:
        await server.stop()
        crawl.close()


async def until(predicate, timeout: float = 10.0) -> None:
    """Wait until predicate() is true (polling the test's own state)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


def crawl_once(settings: Settings, seeds, respond, lookups=()) -> tuple[FakeSpider, dict]:
    """Run a crawl with --exit-when-done and one fake spider to its end;
    returns the spider and the final state of each URL in `lookups`."""

    async def main():
        async with running(settings, seeds) as (server, addr):
            spider = FakeSpider(addr, respond=respond)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await until(lambda: spider.byes)
            await spider.close()
            return spider, {u: server.crawl.frontier.lookup(u) for u in lookups}

    return asyncio.run(main())


class CountingDict(dict):
    """The engine's host table, counting how often it is walked (walks)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.walks = 0

    def values(self):
        self.walks += 1
        return super().values()

    def items(self):
        self.walks += 1
        return super().items()

    def __iter__(self):
        self.walks += 1
        return super().__iter__()


def crawl_engine(tmp_path, **kw):
    base = dict(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False,
                retry_delay=10.0, max_retries=2)
    base.update(kw)
    return Crawl.open(Settings(**base), clock=lambda: 0.0)


def take_resolving(c, now):
    """The next assignment for spider "s", answering the DNS lookups the
    engine asks for on the way (every name is 127.0.0.2); None if none."""
    a = c.take("s", now)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), now)
    return a or c.take("s", now)


def serve_robots(c, host_origin, now=0.0):
    host = c.frontier.origins[host_origin]
    a = take_resolving(c, now)
    assert a.url.endswith("/robots.txt")
    c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), now)
    return host


def markdown_table(path, heading: str, first_column: str | None = None) -> list[list[str]]:
    """The rows (cells stripped) of a markdown table under `## heading` in the
    file `path`: the first one, or the one whose first header cell is `first_column`."""
    text = Path(path).read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    for block in section.split("\n\n"):
        rows = [[cell.strip() for cell in line.strip("|").split("|")]
                for line in block.strip().splitlines() if line.startswith("|")]
        if rows and (first_column is None or rows[0][0] == first_column):
            return rows[2:]  # after the header and the rule
    raise AssertionError(f"no table {first_column!r} under {heading!r} in {path}")


def run_until_idle(c, now, answer):
    """Hand out and answer everything fetchable at `now` (DNS answered; every
    assignment, robots.txt included, answered by `answer`); the URLs handed out."""
    seen = []
    while True:
        a = take_resolving(c, now)
        if a is None:
            return seen
        seen.append(a.url)
        c.done("s", answer(a), now)
