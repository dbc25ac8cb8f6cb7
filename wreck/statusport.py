# A daemon's figures for another one, over loopback HTTP: the storeserver's
# --http answers GET /status with a small JSON object (its documents, bytes
# and disk free), and the urlserver's dashboard reads it (docs/dashboard.md,
# "Store"). Both sides are here, bounded like the daemons' other listeners:
#   - serve: HTTP/1.0, one request per connection, a request head of at most
#     MAX_HEAD bytes read within READ_TIMEOUT_S, at most MAX_CONNECTIONS at
#     once (beyond: 503 at once, nothing read), GET and HEAD of the paths
#     given, and nothing else;
#   - fetch: one GET with a deadline over the whole exchange and an answer
#     of at most MAX_ANSWER bytes, failures as StatusUnavailable.
# JSON is written and read by msgspec.
"""serve(): a GET-only JSON status listener; fetch(): its client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from wreck import inherited
from wreck.cannotlisten import listening
from wreck.protocol.settings import split_host_port

MAX_HEAD = 8192  # a GET line and a few headers; a browser's fit easily
READ_TIMEOUT_S = 5.0  # a client that says nothing is dropped
MAX_CONNECTIONS = 16  # a urlserver polling, an operator's curl: plenty
MAX_ANSWER = 1 << 20  # a status object is a few hundred bytes


class StatusUnavailable(Exception):
    """The status address did not answer a JSON object in time."""


class StatusPort:
    """Serves `routes` (path -> a function returning a JSON-able object)."""

    def __init__(self, routes: dict[str, Callable[[], object]]) -> None:
        self.routes = routes
        self.active = 0
        self._server: asyncio.AbstractServer | None = None

    async def start(self, address: str) -> tuple[str, int]:
        """Listen on HOST:PORT (port 0: any); the bound (host, port)."""
        host, port = split_host_port(address, listen=True)
        sock = inherited.take(host, port)  # bound by wreck-crawl, which started us at once with our peers
        where = {"sock": sock} if sock is not None else {"host": host, "port": port, "reuse_address": True}
        with listening("--http", host, port):
            self._server = await asyncio.start_server(self._handle, **where)
        return self._server.sockets[0].getsockname()[:2]

    def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= MAX_CONNECTIONS:
            writer.write(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        self.active += 1
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
            method, target = head[:MAX_HEAD].split(b"\r\n", 1)[0].decode("latin-1").split(" ")[:2]
            route = self.routes.get(target.split("?", 1)[0])
            if method not in ("GET", "HEAD") or route is None:
                answer, body = "404 Not Found", b"not found\n"
            else:
                answer, body = "200 OK", msgspec.json.encode(route())
            writer.write(f"HTTP/1.0 {answer}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                         f"Connection: close\r\n\r\n".encode() + (body if method == "GET" else b""))
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError,
                ConnectionError):
            pass  # a client that broke off or sent nonsense: nothing to answer
        finally:
            self.active -= 1
            writer.close()


async def fetch(address: str, path: str = "/status", *, timeout: float) -> dict:
    """GET http://ADDRESS/PATH within `timeout` seconds; the JSON object answered."""
    host, port = split_host_port(address)

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(f"GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n".encode())
            got = b""
            while chunk := await reader.read(1 << 16):  # to the end: HTTP/1.0 closes after the answer
                got += chunk
                if len(got) > MAX_ANSWER + MAX_HEAD:
                    raise StatusUnavailable(f"{address}: an answer beyond {MAX_ANSWER} bytes")
            return got
        finally:
            writer.close()

    try:
        raw = await asyncio.wait_for(exchange(), timeout)
    except (OSError, asyncio.TimeoutError) as exc:
        raise StatusUnavailable(f"{address}: {exc or 'no answer in time'}") from None
    head, _, body = raw.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.0 200") and not head.startswith(b"HTTP/1.1 200"):
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        raise StatusUnavailable(f"{address}: {status_line!r}")
    try:
        answer = msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise StatusUnavailable(f"{address}: the answer is not JSON") from None
    if not isinstance(answer, dict):
        raise StatusUnavailable(f"{address}: the answer is not a JSON object")
    return answer
