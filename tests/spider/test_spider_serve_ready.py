"""A host's next request leaves while the worker's loop is busy analysing
other pages (issue 16): CurlLoop.serve_ready(), called between two
analyses, collects a response that arrived meanwhile and sends the request
that follows it, before the busy callback returns. The web server here is a
socket in a thread that answers each request only when told to, so the test
controls exactly what has arrived when; nothing sleeps."""

from __future__ import annotations

import asyncio
import select
import socket
import threading

import pycurl

from wreck.spider.curlloop import CurlLoop

WAIT_S = 30.0  # for a thread or the kernel; never reached when things work
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


class OneConnectionServer:
    """Accepts one keep-alive connection; answers request N when go[N] is set."""

    def __init__(self, requests: int) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.got = [threading.Event() for _ in range(requests)]
        self.go = [threading.Event() for _ in range(requests)]
        self.sent = [threading.Event() for _ in range(requests)]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            buffered = b""
            for got, go, sent in zip(self.got, self.go, self.sent):
                while b"\r\n\r\n" not in buffered:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                buffered = buffered.split(b"\r\n\r\n", 1)[1]
                got.set()
                if not go.wait(WAIT_S):
                    return
                conn.sendall(RESPONSE)
                sent.set()

    def close(self) -> None:
        self.sock.close()


def _handle(url: str) -> pycurl.Curl:
    handle = pycurl.Curl()
    handle.setopt(pycurl.URL, url)
    handle.setopt(pycurl.WRITEFUNCTION, lambda data: None)
    return handle


def test_a_response_that_arrives_during_analysis_is_collected_and_its_next_request_leaves():
    server = OneConnectionServer(requests=2)
    url = f"http://127.0.0.1:{server.port}/"
    first, second = _handle(url), _handle(url)
    done: list[pycurl.Curl] = []

    async def crawl() -> None:
        loop = asyncio.get_running_loop()

        second_done = asyncio.Event()

        def on_done(handle: pycurl.Curl, code: int, message: str) -> None:
            assert code == 0, message
            done.append(handle)
            if handle is first:
                curl.add(second)  # the host's next URL (after=): starts as the first transfer ends
            else:
                second_done.set()

        curl = CurlLoop(loop, on_done)
        curl.add(first)
        assert await loop.run_in_executor(None, server.got[0].wait, WAIT_S)  # the loop sent the request
        # From here on the loop is busy (the analysis of other hosts' pages):
        server.go[0].set()
        assert server.sent[0].wait(WAIT_S)
        select.select(list(curl._watched), [], [], WAIT_S)  # the response is in the socket now
        assert not done
        curl.serve_ready()  # between two analyses
        assert done == [first]
        assert server.got[1].wait(WAIT_S), "the next request left before the busy callback returned"
        server.go[1].set()
        await asyncio.wait_for(second_done.wait(), WAIT_S)  # the loop's turn again: collected as usual
        curl.close()

    try:
        asyncio.run(crawl())
    finally:
        server.close()
        first.close()
        second.close()


def test_serving_with_nothing_ready_changes_nothing():
    async def idle() -> None:
        curl = CurlLoop(asyncio.get_running_loop(), lambda *_: None)
        curl.serve_ready()
        assert curl.running == 0
        curl.close()
        curl.serve_ready()  # after close: nothing, no error

    asyncio.run(idle())
