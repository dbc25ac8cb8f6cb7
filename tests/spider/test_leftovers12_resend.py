"""libcurl's silent resend, measured (docs/operating.md, Politeness): when a
kept-alive connection is closed without a word after the server read a
request on it, libcurl sends that request again at once on a fresh
connection. It does so once: a fresh connection that fails the same way is
not resent on (only a reused one is), so a server that reads and closes
sees a hand-out twice, never more, and the spider reports a failure the
user can read. No libcurl option turns it off (curl's
CURLOPT_FORBID_RETRY_ON_REUSE is a proposal, curl PR 18417); the resend's
connect does pass through the slot's OPENSOCKETFUNCTION."""

from __future__ import annotations

import asyncio

import uvloop

from wreck.protocol import Status
from wreck.spider.fetch import Fetcher, FetchSettings
from wreck.spider.report import report
from tests.spider_helpers import crawl_settings


def test_a_server_that_closes_a_reused_connection_unanswered_is_asked_at_most_twice_and_the_failure_reported():
    asked: list[tuple[str, int]] = []  # (path, connection number) as the server read them

    async def run():
        connections = 0

        async def answer(reader, writer):
            nonlocal connections
            connections += 1
            number = connections
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    path = head.split(b" ", 2)[1].decode()
                    asked.append((path, number))
                    if path == "/die":
                        return  # read, then closed without a byte (finally)
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
                    await writer.drain()
            except asyncio.IncompleteReadError:
                return
            finally:
                writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        base = "http://127.0.0.1:%d" % server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        results = []
        waiting: list[asyncio.Future] = []
        fetcher = Fetcher(loop, FetchSettings.from_crawl(crawl_settings()), lambda r: waiting[-1].set_result(r))
        try:
            for path in ("/a", "/die"):  # /die on /a's kept-alive connection
                waiting.append(loop.create_future())
                fetcher.start(path, base + path, "127.0.0.1")
                results.append(await asyncio.wait_for(waiting[-1], 30))
        finally:
            fetcher.close()
            server.close()
        return results

    first, died = uvloop.run(run())
    assert (first.http_code, first.body) == (200, b"ok")
    assert [path for path, _ in asked] == ["/a", "/die", "/die"]  # one resend, never more
    assert asked[1][1] == asked[0][1] != asked[2][1]  # on the reused connection, then on a fresh one
    rep = report(died, 1)
    assert rep.outcome.status is Status.FETCH_ERROR, rep.outcome  # transient: retried after --retry-delay
