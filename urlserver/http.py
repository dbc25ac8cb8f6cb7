# The operator's window: a minimal asyncio HTTP/1.0 server (one request per
# connection, bounded request head) serving /metrics (Prometheus text from
# prometheus-client, a custom collector reading the engine's counters at
# scrape time), /status (JSON via msgspec, statusview.py), /hosts?q=PREFIX
# (the hosts search), /url?u=URL (one URL's state) and / (the dashboard,
# dashboard.py: a static page whose script reads /status).
#
# Like the daemons' listeners (docs/protocol.txt 10), it is refused beyond
# loopback without the crawl's secret (check_address), and it bounds its
# connections (MAX_CONNECTIONS): a flood of them answers 503 and never
# starves the spiders' accepts of descriptors. /metrics (metrics.py) and
# /status (statusview.py) read figures the engine keeps as it goes, so a
# look costs the same at 100 hosts or 100,000 (issue 14, finding 8).
"""Status JSON, Prometheus metrics and the dashboard."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import parse_qs, urlsplit

import msgspec
from prometheus_client import CollectorRegistry, generate_latest

from wreck.deploy import DeployError, SECRET_ENV, is_loopback
from wreck.protocol.settings import split_host_port

from .dashboard import PAGE
from .metrics import Collector
from .statusview import RobotsHeld, hosts_found, status

log = logging.getLogger("urlserver")
MAX_HEAD = 8192
READ_TIMEOUT = 5.0
# An operator's browser and a Prometheus scraper or two: 32 at once is
# plenty; beyond it a request gets 503 at once and holds no descriptor.
MAX_CONNECTIONS = 32


def check_address(address: str, secret: bytes) -> None:
    """Refuse --http beyond loopback without a secret, as --listen is."""
    host = split_host_port(address, listen=True)[0] or "0.0.0.0"
    if not secret and not is_loopback(host):
        raise DeployError(
            f"refusing to serve --http on {host} without a shared secret: /status shows the crawl to anyone "
            f"who can reach it; give --secret-file FILE or set {SECRET_ENV}, or keep --http on 127.0.0.1"
        )


class HttpStatus:
    """The --http listener."""

    def __init__(self, server) -> None:
        self.server = server
        self.registry = CollectorRegistry(auto_describe=False)
        self.robots_held = RobotsHeld()  # shared by /status and /metrics: one scan per SLOW_GAUGE_S
        self.registry.register(Collector(server, robots_held=self.robots_held))
        self._listener = None
        self.active = 0  # connections open now (MAX_CONNECTIONS)

    async def start(self, address: str) -> tuple[str, int]:
        host, port = split_host_port(address, listen=True)
        self._listener = await asyncio.start_server(self._handle, host, port, reuse_address=True)
        bound = self._listener.sockets[0].getsockname()[:2]
        log.info("event=http_listening address=%s:%d", *bound)
        return bound

    async def stop(self) -> None:
        if self._listener:
            self._listener.close()

    def respond(self, target: str) -> tuple[int, str, bytes]:
        parts = urlsplit(target)
        path = parts.path
        if path == "/metrics":
            return 200, "text/plain; version=0.0.4; charset=utf-8", generate_latest(self.registry)
        if path == "/status":
            return 200, "application/json", msgspec.json.encode(status(self.server, robots_held=self.robots_held))
        if path == "/hosts":
            return 200, "application/json", msgspec.json.encode(hosts_found(self.server, parts.query))
        if path == "/url":
            url = parse_qs(parts.query).get("u", [""])[0]
            found = self.server.crawl.lookup(url) if url else None
            code = 200 if found else 404
            return code, "application/json", msgspec.json.encode(found or {"url": url, "state": "UNKNOWN"})
        if path == "/":
            return 200, "text/html; charset=utf-8", PAGE.encode()
        return 404, "text/plain", b"not found\n"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= MAX_CONNECTIONS:
            writer.write(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()  # unread: nothing of it is kept
            return
        self.active += 1
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
            if len(head) > MAX_HEAD:
                raise ValueError("request head too long")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            if method not in ("GET", "HEAD"):
                code, ctype, body = 405, "text/plain", b"method not allowed\n"
            else:
                code, ctype, body = self.respond(target)
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed"}[code]
            writer.write(f"HTTP/1.0 {code} {reason}\r\nContent-Type: {ctype}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                         + (body if method == "GET" else b""))
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                ValueError, ConnectionError):
            pass
        finally:
            self.active -= 1
            writer.close()
