"""wreck.listener, the base of both daemons' listeners, over loopback TCP
with a minimal daemon: TCP_NODELAY on the accepted socket, the connection
and handshake caps, the handshake deadline, one log vocabulary, and a
shutdown that drains before it closes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket

from wreck import listener as listener_module
from wreck.listener import LOG_EVENTS, Listener, Peer
from wreck.protocol import (
    NEED_DATA, ConnectionClosed, ControlConnection, Error, ErrorCode, Get, Hello, Ready, Role,
)  # fmt: skip

log = logging.getLogger("wreck.test.listener")


class EchoPeer(Peer):
    """A daemon of the least kind: records what it sees."""

    def __init__(self, listener: Listener, seen: list) -> None:
        self.seen = seen
        super().__init__(listener)

    def make_connection(self, nonce: bytes) -> ControlConnection:
        return ControlConnection(Role.SERVER, secret=b"", nonce=nonce)

    def welcome_settings(self) -> dict[str, str]:
        sock = self.transport.get_extra_info("socket")
        self.seen.append(("nodelay", sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
        return {"store": "127.0.0.1:1"}

    def on_event(self, event: object) -> None:
        self.seen.append(event)

    def on_closed(self) -> None:
        self.seen.append(("closed", self.name))


@contextlib.asynccontextmanager
async def serving(**kw):
    limits = dict(max_connections=4, max_unauthenticated=2, handshake_timeout=30.0)
    limits.update(kw)
    listener = Listener(log=log, **limits)
    seen: list = []
    address = await listener.start("127.0.0.1", 0, lambda lst: EchoPeer(lst, seen))
    try:
        yield listener, address, seen
    finally:
        await listener.shutdown()


class Client:
    """A spider's end of a control connection, over loopback TCP."""

    def __init__(self, name: str = "client") -> None:
        self.conn = ControlConnection(Role.CLIENT, secret=b"", nonce=os.urandom(32), name=name)
        self.events: list = []

    async def connect(self, address) -> None:
        self.reader, self.writer = await asyncio.open_connection(*address)

    async def next(self) -> object:
        """The next event from the server (ConnectionClosed at its end)."""
        while (event := self.conn.next_event()) is NEED_DATA:
            self.conn.receive_data(await self.reader.read(65536))
        self.events.append(event)
        return event

    async def handshake(self) -> object:
        """Hello, then AUTH; returns Ready, or the Error the server sent."""
        event = await self.next()
        if type(event) is not Hello:
            return event
        self.writer.write(self.conn.authenticate())
        return await self.next()

    def close(self) -> None:
        self.writer.close()


def test_every_accepted_socket_gets_tcp_nodelay():
    async def main():
        async with serving() as (_, address, seen):
            client = Client()
            await client.connect(address)
            assert type(await client.handshake()) is Ready
            client.close()
            return seen

    seen = asyncio.run(main())
    assert ("nodelay", 1) in [s for s in seen if isinstance(s, tuple)]


def test_beyond_the_handshake_cap_the_oldest_is_evicted_and_beyond_the_connection_cap_a_peer_is_told_busy():
    async def main():
        async with serving(max_connections=2, max_unauthenticated=1) as (listener, address, _):
            first = Client("first")
            await first.connect(address)
            assert type(await first.next()) is Hello  # in its handshake: holds the one place
            second = Client("second")
            await second.connect(address)
            assert type(await second.next()) is Hello  # gets the place ...
            evicted = await first.next()  # ... of the oldest, which is told why and closed
            assert type(await first.next()) is ConnectionClosed
            second.writer.write(second.conn.authenticate())
            assert type(await second.next()) is Ready
            third = Client("third")
            await third.connect(address)
            assert type(await third.handshake()) is Ready  # the handshake place is free again
            fourth = Client("fourth")
            await fourth.connect(address)
            busy_connections = await fourth.next()  # every place held by an authenticated spider
            assert [p.name for p in listener.opened()] == ["second", "third"]
            for c in (second, third):
                c.close()
            return evicted, busy_connections

    evicted, busy_connections = asyncio.run(main())
    assert type(evicted) is Error and evicted.code is ErrorCode.BUSY
    assert evicted.reason == "evicted: more than 1 connections from 127.0.0.1 in their handshake"
    assert type(busy_connections) is Error and busy_connections.code is ErrorCode.BUSY
    assert busy_connections.reason == "more than 2 connections"


async def _silent(address, source: str) -> tuple:
    reader, writer = await asyncio.open_connection(*address, local_addr=(source, 0))
    assert (await reader.readline()).startswith(b"WRECK/1 HELLO ")
    return reader, writer


def test_silent_connections_from_one_address_never_keep_real_spiders_out():
    # Issue 14, finding 6: 64 or 128 silent connections, reopened as they
    # timed out, kept 20 of 20 spiders out. Here many more silent connections
    # than there are handshake places, from the spiders' own address and from
    # another, and every real spider still gets in.
    async def main():
        async with serving(max_connections=200, max_unauthenticated=8) as (listener, address, _):
            silent = [await _silent(address, "127.0.0.2") for _ in range(40)]
            silent += [await _silent(address, "127.0.0.1") for _ in range(40)]
            answers, spiders = [], []
            for i in range(20):
                spiders.append(spider := Client(f"spider-{i}"))
                await spider.connect(address)
                answers.append(await spider.handshake())
                silent.append(await _silent(address, "127.0.0.1"))  # reopened as fast as they go
            # One address never holds more than half the places, nor evicts another's.
            waiting = listener._handshaking_from
            assert all(len(peers) <= 4 for peers in waiting.values())
            for _, writer in silent:
                writer.close()
            return answers, len(listener.opened())

    answers, opened = asyncio.run(main())
    assert [type(a) for a in answers] == [Ready] * 20
    assert opened == 20


def test_a_spider_in_its_handshake_is_not_evicted_by_another_address():
    async def main():
        async with serving(max_connections=200, max_unauthenticated=8) as (_, address, _seen):
            spider = Client("spider")
            await spider.connect(address)
            assert type(await spider.next()) is Hello  # then it is slow to answer
            silent = [await _silent(address, "127.0.0.2") for _ in range(40)]
            spider.writer.write(spider.conn.authenticate())
            answer = await spider.next()
            for _, writer in silent:
                writer.close()
            return answer

    assert type(asyncio.run(main())) is Ready


def test_a_silent_peer_is_closed_at_the_handshake_deadline_and_others_are_served(caplog):
    caplog.set_level(logging.INFO, log.name)

    async def main():
        async with serving(handshake_timeout=0.2) as (_, address, seen):
            silent = Client()
            await silent.connect(address)
            assert type(await silent.next()) is Hello
            told = await silent.next()  # no AUTH: the deadline passes
            assert type(await silent.next()) is ConnectionClosed
            good = Client("good")
            await good.connect(address)
            assert type(await good.handshake()) is Ready
            good.writer.write(good.conn.send(Get(3)))
            while not any(type(s) is Get for s in seen):
                await asyncio.sleep(0.005)  # polling for the state, not timing it
            good.close()
            return told, seen

    told, seen = asyncio.run(main())
    assert type(told) is Error and told.code is ErrorCode.UNAVAILABLE and told.reason == "no handshake within 0.2 s"
    assert Get(3) in seen
    events = [r.getMessage().split()[0] for r in caplog.records]
    assert "event=handshake_timeout" in events and "event=peer_connected" in events
    assert {e.removeprefix("event=") for e in events} <= set(LOG_EVENTS)


def test_a_protocol_error_is_answered_logged_and_closes_that_connection_only(caplog):
    caplog.set_level(logging.INFO, log.name)

    async def main():
        async with serving() as (listener, address, _):
            bad, good = Client("bad"), Client("good")
            for c in (bad, good):
                await c.connect(address)
                assert type(await c.handshake()) is Ready
            bad.writer.write(b"NONSENSE\n")
            told = await bad.next()
            assert type(await bad.next()) is ConnectionClosed
            names = [p.name for p in listener.opened()]
            good.close()
            return told, names

    told, names = asyncio.run(main())
    assert type(told) is Error and told.code is ErrorCode.SYNTAX
    assert names == ["good"]
    [line] = [r.getMessage() for r in caplog.records if "event=protocol_error" in r.getMessage()]
    assert line.startswith("event=protocol_error peer=127.0.0.1:") and " name=bad code=SYNTAX reason=" in line


def test_shutdown_drains_with_connections_open_and_reading_stopped_then_closes_them_all():
    async def main():
        listener = Listener(log=log, max_connections=4, max_unauthenticated=2, handshake_timeout=30.0)
        seen: list = []
        address = await listener.start("127.0.0.1", 0, lambda lst: EchoPeer(lst, seen))
        clients = [Client(f"c{i}") for i in range(3)]
        for c in clients:
            await c.connect(address)
            assert type(await c.handshake()) is Ready
        during = {}

        async def drain():
            during["stopping"], during["paused"] = listener.stopping, listener.reading_paused
            during["open"] = [p.name for p in listener.opened()]
            refused = Client()
            with contextlib.suppress(OSError):
                await refused.connect(address)  # the listening socket is closed
                during["late"] = await refused.next()

        await listener.shutdown(drain)
        ends = [type(await c.next()) for c in clients]
        return during, ends, listener.connections, seen

    during, ends, left, seen = asyncio.run(main())
    assert during["stopping"] and during["paused"] and during["open"] == ["c0", "c1", "c2"]
    assert "late" not in during or (type(during["late"]) is Error and during["late"].reason == "shutting down")
    assert ends == [ConnectionClosed] * 3
    assert left == {}
    assert sorted(s for s in seen if isinstance(s, tuple) and s[0] == "closed") == [
        ("closed", "c0"), ("closed", "c1"), ("closed", "c2")]


def test_log_lines_about_peers_without_the_secret_are_limited_per_address(caplog):
    # Issue 14, finding 10: 5,000 bad handshakes made 1.1 MB of log.
    caplog.set_level(logging.INFO, log.name)
    now = [0.0]

    async def bad_handshakes(n: int) -> None:
        for _ in range(n):
            reader, writer = await asyncio.open_connection(*address[0])
            await reader.readline()  # HELLO
            writer.write(b"NOT A HANDSHAKE\n")
            await reader.read()  # the ERROR line, then the close
            writer.close()

    address = []

    async def main():
        async with serving(max_connections=300, max_unauthenticated=300, clock=lambda: now[0]) as (_, addr, _s):
            address.append(addr)
            await bad_handshakes(200)
            first = [r.getMessage() for r in caplog.records if "peer=127.0.0.1:" in r.getMessage()]
            now[0] += listener_module.LOG_WINDOW_S  # a new window: one more line, with the count left out
            await bad_handshakes(1)
            return first

    first = asyncio.run(main())
    assert len(first) == listener_module.LOG_LINES_PER_ADDRESS
    assert all("event=protocol_error" in line for line in first)
    last = [r.getMessage() for r in caplog.records if "peer=127.0.0.1:" in r.getMessage()][-1]
    assert last.endswith(f"suppressed={200 - listener_module.LOG_LINES_PER_ADDRESS}")
