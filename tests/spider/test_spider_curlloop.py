"""A worker's connections as libcurl keeps them (spider/curlloop.py keeps a
kept-alive connection's socket in its epoll set between transfers): one
host's URLs fetched one after the other reuse the connection while the
server keeps it, and still arrive whole when the server closes it after an
answer, or while it is idle between two; a connection the server closed
while idle no longer wakes the worker. The server is a socket in a thread
that answers request N when told to, then does what its script says, so
each response finds libcurl waiting for it; nothing sleeps."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading

import uvloop

from wreck.spider.fetch import Fetcher, FetchResult, FetchSettings
from tests.spider_helpers import crawl_settings

WAIT_S = 30.0  # for a thread or the kernel; never reached when things work
SETTINGS = dataclasses.replace(FetchSettings.from_crawl(crawl_settings()), timeout_req_ms=20_000)
BODY = b"<html><body>" + b"x" * 40_000 + b"</body></html>"  # more than libcurl's default 16 KiB buffer
KEEP, CLOSE, IDLE_CLOSE = "keep", "close", "idle-close"  # what the server does after an answer


class ScriptedServer:
    """Answers request N on whatever connection it comes, then keeps the
    connection, closes it saying so (Connection: close), or closes it
    without saying so once the answer is out (an idle keep-alive timeout)."""

    def __init__(self, script: list[str]) -> None:
        self.script = script
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.got = [threading.Event() for _ in script]
        self.go = [threading.Event() for _ in script]
        self.idle_closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        served = 0
        while served < len(self.script):
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            then = KEEP
            with conn:
                buffered = b""
                while served < len(self.script):
                    while b"\r\n\r\n" not in buffered:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        buffered += chunk
                    if b"\r\n\r\n" not in buffered:
                        break  # the client gave this connection up: the next comes on another
                    buffered = buffered.split(b"\r\n\r\n", 1)[1]
                    then = self.script[served]
                    self.got[served].set()
                    if not self.go[served].wait(WAIT_S):
                        return
                    served += 1
                    close = b"Connection: close\r\n" if then == CLOSE else b""
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n%s\r\n"
                                 % (len(BODY), close) + BODY)
                    if then != KEEP:
                        break
            if then == IDLE_CLOSE:
                self.idle_closed.set()  # closed now: its FIN is in the client's socket

    def close(self) -> None:
        self.sock.close()


def fetch_in_turn(server: ScriptedServer, *, after_idle_close=None) -> list[FetchResult]:
    """One URL after the other on one Fetcher, each started as the last ended
    (as after= does); `after_idle_close(fetcher)` runs once the server has
    closed an idle connection, before the next URL starts."""

    async def run() -> list[FetchResult]:
        loop = asyncio.get_running_loop()
        results: list[FetchResult] = []
        ended = asyncio.Event()

        def on_result(result: FetchResult) -> None:
            results.append(result)
            ended.set()

        fetcher = Fetcher(loop, SETTINGS, on_result)
        try:
            for n, then in enumerate(server.script):
                ended.clear()
                assert fetcher.start(n, f"http://h.test:{server.port}/{n}", "127.0.0.1") is None
                assert await loop.run_in_executor(None, server.got[n].wait, WAIT_S)
                server.go[n].set()  # the request is out: libcurl waits for the answer
                await asyncio.wait_for(ended.wait(), WAIT_S)
                if then == IDLE_CLOSE and after_idle_close is not None:
                    assert await loop.run_in_executor(None, server.idle_closed.wait, WAIT_S)
                    after_idle_close(fetcher)
        finally:
            fetcher.close()
        return results

    try:
        return uvloop.run(run())
    finally:
        server.close()


def test_one_hosts_pages_in_turn_reuse_its_connection_and_survive_the_server_closing_it():
    script = [KEEP, KEEP, IDLE_CLOSE, KEEP, CLOSE, CLOSE, CLOSE, KEEP, IDLE_CLOSE, KEEP]
    server = ScriptedServer(script)
    results = fetch_in_turn(server)
    assert [(r.http_code, r.body) for r in results] == [(200, BODY)] * len(script)
    # a connection per close (announced or not) and one for the rest
    assert server.connections == 1 + script.count(CLOSE) + script.count(IDLE_CLOSE)


def test_a_connection_the_server_closed_while_idle_stops_waking_the_worker():
    def idle_closed(fetcher: Fetcher) -> None:
        fetcher.serve_ready()  # as the loop would: the close is seen
        assert fetcher.curl._epoll.poll(0) == [], "a closed idle connection still wakes the loop"

    server = ScriptedServer([KEEP, IDLE_CLOSE, KEEP])
    results = fetch_in_turn(server, after_idle_close=idle_closed)
    assert [r.http_code for r in results] == [200, 200, 200]
    assert server.connections == 2
