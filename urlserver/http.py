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
# starves the spiders' accepts of descriptors. /metrics reads counters the
# engine keeps as it goes, so a scrape costs the same at 100 hosts or
# 100,000; the one gauge that needs a scan of every host (robots.txt rules
# held) is rescanned at most once per SLOW_GAUGE_S (issue 14, finding 8).
"""Status JSON, Prometheus metrics and the dashboard."""

from __future__ import annotations

import asyncio
import logging
import time
from urllib.parse import parse_qs, urlsplit

import msgspec
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from wreck.deploy import DeployError, SECRET_ENV, is_loopback
from wreck.protocol.settings import split_host_port

from .dashboard import PAGE
from .statusview import SLOW_GAUGE_S, RobotsHeld, hosts_found, status

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


class _Collector:
    """Prometheus metrics from the engine's running counters: nothing here
    walks the hosts or the URLs per scrape (the robots.txt gauge aside,
    rescanned at most once per SLOW_GAUGE_S)."""

    def __init__(self, server, *, clock=time.monotonic, robots_held: RobotsHeld | None = None) -> None:
        self.server = server
        self.robots_held = robots_held or RobotsHeld(clock=clock)

    def collect(self):
        server = self.server
        crawl = server.crawl
        fr = crawl.frontier
        urls = GaugeMetricFamily("wreck_urls", "Known URLs by state", labels=["state"])
        for state, n in fr.counts.items():
            urls.add_metric([state.lower()], n)
        yield urls
        yield GaugeMetricFamily("wreck_queued_urls", "URLs in host queues", value=fr.queued_total)
        yield GaugeMetricFamily("wreck_in_flight", "Transactions in flight", value=len(crawl.claims))
        yield GaugeMetricFamily("wreck_hosts_known", "Hosts (origins) known", value=len(fr.origins))
        yield GaugeMetricFamily("wreck_spiders", "Connected spiders",
                                value=sum(1 for s in server.spiders if s.conn.opened))
        yield GaugeMetricFamily("wreck_dns_cache_entries", "DNS cache entries", value=len(server.resolver.cache))
        yield GaugeMetricFamily("wreck_robots_cache_entries", "robots.txt rules held", value=self.robots_held(fr.origins))
        counters = {**crawl.stats, **crawl.bandwidth.stats, **(crawl.recrawl.stats if crawl.recrawl else {})}
        for name, value in counters.items():
            yield CounterMetricFamily(f"wreck_{name}", f"Count of {name.replace('_', ' ')}", value=value)
        errors = CounterMetricFamily("wreck_errors", "URLs ended in ERROR by kind", labels=["kind"])
        for kind, n in crawl.errors_by_kind.items():
            errors.add_metric([kind], n)
        yield errors
        plugin_errors = CounterMetricFamily("wreck_plugin_errors", "Plugin hooks that failed, by plugin",
                                            labels=["plugin"])
        for name, n in crawl.plugins.status()["errors"].items():
            plugin_errors.add_metric([name], n)
        yield plugin_errors


class HttpStatus:
    """The --http listener."""

    def __init__(self, server) -> None:
        self.server = server
        self.registry = CollectorRegistry(auto_describe=False)
        self.robots_held = RobotsHeld()  # shared by /status and /metrics: one scan per SLOW_GAUGE_S
        self.registry.register(_Collector(server, robots_held=self.robots_held))
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
