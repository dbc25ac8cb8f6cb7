# The operator's window, on wreck/httpserve.py (h11: the transport, its
# bounds, routing and the API token), serving /metrics (Prometheus text from
# prometheus-client, metrics.py: a custom collector reading the engine's
# counters at scrape time), /status (JSON via msgspec, statusview.py),
# /hosts?q=PREFIX (the hosts search), /url?u=URL (one URL's state), / (the
# dashboard, dashboard.py: a static page whose script reads /status), and
# the operator API under /api (api.py, docs/api.md).
#
# Like the daemons' listeners (docs/protocol.txt 10), it is refused beyond
# loopback without the crawl's secret or an API token (check_address), and it
# bounds its connections (httpserve.MAX_CONNECTIONS): a flood of them answers
# 503 and never starves the spiders' accepts of descriptors. /metrics and
# /status read figures the engine keeps as it goes, so a look costs the same
# at 100 hosts or 100,000 (issue 14, finding 8).
"""Status JSON, Prometheus metrics, the dashboard and the operator API's port."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

import msgspec

from wreck.deploy import DeployError, SECRET_ENV, is_loopback
from wreck.httpserve import MAX_CONNECTIONS, OPEN, READ, HttpServer, Request, Response, Route, TokenGate  # noqa: F401
from wreck.protocol.settings import split_host_port

from .api import api_routes
from .dashboard import PAGE
from .statusview import RobotsHeld, hosts_found, status

log = logging.getLogger("urlserver")


def check_address(address: str, secret: bytes, token: str | None = None) -> None:
    """Refuse --http beyond loopback without a secret or an API token, as --listen is."""
    if exposed(address) and not secret and not token:
        host = split_host_port(address, listen=True)[0] or "0.0.0.0"
        raise DeployError(
            f"refusing to serve --http on {host} without a shared secret or an API token: /status shows the "
            f"crawl and /api steers it for anyone who can reach it; give --secret-file FILE, set {SECRET_ENV} "
            f"or give --api-token-file FILE (docs/api.md), or keep --http on 127.0.0.1"
        )


def exposed(address: str) -> bool:
    """Whether --http `address` listens beyond loopback."""
    return not is_loopback(split_host_port(address, listen=True)[0] or "0.0.0.0")


class HttpStatus:
    """The --http port: these pages and the operator API (api.py) on a
    wreck.httpserve.HttpServer, which owns the transport, the bounds and the token."""

    def __init__(self, server, *, token: str | None = None, exposed: bool = False) -> None:
        self.server = server
        self._registry = None  # /metrics' prometheus_client registry, made at its first scrape
        self.robots_held = RobotsHeld()  # shared by /status and /metrics: one scan per SLOW_GAUGE_S
        # Beyond loopback the pages are open only where the crawl's secret
        # guards it (check_address); with an API token alone they need it too.
        pages = READ if exposed and not getattr(server.settings, "secret", b"") else OPEN
        routes = [Route("GET", "/metrics", self._metrics, pages), Route("GET", "/status", self._status, pages),
                  Route("GET", "/hosts", self._hosts, pages), Route("GET", "/url", self._url, pages),
                  Route("GET", "/", self._dashboard, pages), *api_routes(server)]
        self.http = HttpServer(routes, gate=TokenGate(token, exposed=exposed), log=log)

    @property
    def active(self) -> int:
        """Connections open now (MAX_CONNECTIONS)."""
        return self.http.active

    async def start(self, address: str) -> tuple[str, int]:
        return await self.http.start(address)

    async def stop(self) -> None:
        await self.http.stop()

    def respond(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of a GET of `target`, as the port answers it."""
        parts = urlsplit(target)
        answer = self.http.answer(Request("GET", parts.path, parse_qs(parts.query), {}, b"", "127.0.0.1"))
        return answer.status, answer.content_type, answer.body

    @property
    def registry(self):
        """The /metrics registry; prometheus_client is imported only when
        first scraped (a crawl nobody scrapes starts without it, issue 16)."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            from .metrics import Collector

            self._registry = CollectorRegistry(auto_describe=False)
            self._registry.register(Collector(self.server, robots_held=self.robots_held))
        return self._registry

    def _metrics(self, request: Request) -> Response:
        from prometheus_client import generate_latest

        return Response(200, "text/plain; version=0.0.4; charset=utf-8", generate_latest(self.registry))

    def _status(self, request: Request) -> Response:
        return Response(200, "application/json", msgspec.json.encode(status(self.server, robots_held=self.robots_held)))

    def _hosts(self, request: Request) -> Response:
        return Response(200, "application/json", msgspec.json.encode(hosts_found(self.server, request.arg("q", ""))))

    def _url(self, request: Request) -> Response:
        url = request.arg("u", "")
        found = self.server.crawl.lookup(url) if url else None
        return Response(200 if found else 404, "application/json",
                        msgspec.json.encode(found or {"url": url, "state": "UNKNOWN"}))

    def _dashboard(self, request: Request) -> Response:
        return Response(200, "text/html; charset=utf-8", PAGE.encode())
