# The operator's window: a minimal asyncio HTTP/1.0 server (one request per
# connection, bounded request head) serving /metrics (Prometheus text from
# prometheus-client, a custom collector reading the engine's counters at
# scrape time), /status (JSON via msgspec), /url?u=URL (one URL's state)
# and / (an HTML dashboard that refreshes itself every few seconds).
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
import html
import logging
import time
from urllib.parse import parse_qs, urlsplit

import msgspec
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from wreck.deploy import DeployError, SECRET_ENV, is_loopback
from wreck.protocol.settings import split_host_port

from .politeness import Waiting

log = logging.getLogger("urlserver")
MAX_HEAD = 8192
READ_TIMEOUT = 5.0
# Rates are taken over about this much recent time, up to now: a crawl that
# fetches nothing shows 0/s within it rather than its last busy figure.
RATE_WINDOW_S = 10.0


def rates(samples, stats: dict, now: float) -> dict[str, float]:
    """Handouts, DONEs and links per second from the samples (time, handouts,
    done, discovered; oldest first) to the counters now."""
    base = None
    for sample in samples:
        if base is None or sample[0] <= now - RATE_WINDOW_S:
            base = sample
        else:
            break
    if base is None or now - base[0] <= 0.5:  # too short a span to say anything
        return {}
    span = now - base[0]
    return {"handouts_per_s": (stats["handouts"] - base[1]) / span, "done_per_s": (stats["done"] - base[2]) / span,
            "links_per_s": (stats["discovered"] - base[3]) / span}


# An operator's browser and a Prometheus scraper or two: 32 at once is
# plenty; beyond it a request gets 503 at once and holds no descriptor.
MAX_CONNECTIONS = 32
# The robots.txt-rules gauge scans every host: at 100,000 hosts a scan costs
# milliseconds, so it is redone at most this often whatever the scrape rate.
SLOW_GAUGE_S = 10.0


def check_address(address: str, secret: bytes) -> None:
    """Refuse --http beyond loopback without a secret, as --listen is."""
    host = split_host_port(address, listen=True)[0] or "0.0.0.0"
    if not secret and not is_loopback(host):
        raise DeployError(
            f"refusing to serve --http on {host} without a shared secret: /status shows the crawl to anyone "
            f"who can reach it; give --secret-file FILE or set {SECRET_ENV}, or keep --http on 127.0.0.1"
        )


def status(server) -> dict:
    """Everything /status shows, as plain data."""
    crawl = server.crawl
    fr = crawl.frontier
    waiting: dict[str, int] = {}
    for host in fr.origins.values():
        if host.waiting is not Waiting.NONE:
            waiting[host.waiting.value] = waiting.get(host.waiting.value, 0) + 1
    now = time.time()
    return {
        "time": now,
        "crawl_id": crawl.crawl_id,  # the crawl's identity, which its store keeps (docs/protocol.txt 6.1)
        "urls": dict(fr.counts),
        "queued": fr.queued_total,
        "delayed_retries": fr.delayed_total,
        "in_flight": len(crawl.claims),
        "in_flight_by_spider": crawl.claims.per_spider(),
        "spiders": [s.name for s in server.spiders if s.conn.opened],  # not peers still in their handshake
        "hosts": {"known": len(fr.origins), "ready": len(crawl.politeness), "waiting": waiting},
        "rates": rates(server.samples, crawl.stats, now),
        "counters": {**crawl.stats, **crawl.bandwidth.stats, **(crawl.recrawl.stats if crawl.recrawl else {})},
        "errors_by_kind": dict(crawl.errors_by_kind),
        "filtered_by": dict(fr.filtered_by),
        "plugins": crawl.plugins.status(),
        "dns_cache": len(server.resolver.cache),
        "robots_cache": sum(1 for h in fr.origins.values() if h.robots.rules is not None),
        "feeds": crawl.feeds.count,
        "finished": crawl.finished(),
        # why the crawl ended (None while it runs): done, limit reached: FLAG N,
        # deferred retries, interrupted
        "finish_reason": server.finish_reason,
        "limit": crawl.limit,
        "bytes_fetched": crawl.bytes_fetched,
        "deferred": crawl.deferred(now),
        "waiting_for": waiting_for(crawl, waiting),
    }


def waiting_for(crawl, waiting: dict[str, int]) -> list[str]:
    """What the crawl waits for when nothing is in flight, most origins
    first ('robots retry', 'backoff', 'crawl-delay', 'dns', 'retry'...); []
    while something is in flight."""
    if len(crawl.claims):
        return []
    reasons = sorted(waiting, key=lambda k: -waiting[k])
    if crawl.frontier.counts["FETCH_ERROR"]:
        reasons.append("retry")
    if crawl.limit is not None:
        reasons.insert(0, f"limit reached ({crawl.limit})")
    return reasons


class _Collector:
    """Prometheus metrics from the engine's running counters: nothing here
    walks the hosts or the URLs per scrape (the robots.txt gauge aside,
    rescanned at most once per SLOW_GAUGE_S)."""

    def __init__(self, server, *, clock=time.monotonic) -> None:
        self.server = server
        self.clock = clock
        self._robots = (float("-inf"), 0)  # (when scanned, rules held)

    def robots_held(self) -> int:
        now = self.clock()
        scanned, held = self._robots
        if now - scanned >= SLOW_GAUGE_S:
            origins = self.server.crawl.frontier.origins.values()
            held = sum(1 for h in origins if h.robots.rules is not None)
            self._robots = (now, held)
        return held

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
        yield GaugeMetricFamily("wreck_robots_cache_entries", "robots.txt rules held", value=self.robots_held())
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


DASHBOARD = """<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="refresh" content="3"><title>WRECK urlserver</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em}}td,th{{padding:2px 12px;text-align:left}}
th{{color:#555}}</style></head><body><h1>WRECK urlserver</h1>
<p>{summary}</p><table>{rows}</table><p><a href="/status">/status</a> · <a href="/metrics">/metrics</a></p>
</body></html>"""


def dashboard(server) -> str:
    st = status(server)
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in st["urls"].items())
    for key in ("queued", "in_flight", "delayed_retries", "dns_cache", "robots_cache"):
        rows += f"<tr><th>{key}</th><td>{st[key]}</td></tr>"
    deferred = st["deferred"]
    if deferred["urls"]:
        until = time.strftime("%H:%M:%S", time.localtime(deferred["until"])) if deferred["until"] else "-"
        rows += f"<tr><th>deferred</th><td>{deferred['urls']} until {until}</td></tr>"
    rate_text = ", ".join(f"{k} {v:.1f}" for k, v in st["rates"].items())
    summary = (f"{len(st['spiders'])} spiders; {st['hosts']['known']} hosts; {html.escape(rate_text)}"
               + ("; <b>finished</b>" if st["finished"] else "")
               + (f"; ended: {html.escape(st['finish_reason'])}" if st["finish_reason"] else "")
               + (f"; waiting for {html.escape(', '.join(st['waiting_for']))}" if st["waiting_for"] else ""))
    return DASHBOARD.format(summary=summary, rows=rows)


class HttpStatus:
    """The --http listener."""

    def __init__(self, server) -> None:
        self.server = server
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(_Collector(server))
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
            return 200, "application/json", msgspec.json.encode(status(self.server))
        if path == "/url":
            url = parse_qs(parts.query).get("u", [""])[0]
            found = self.server.crawl.lookup(url) if url else None
            code = 200 if found else 404
            return code, "application/json", msgspec.json.encode(found or {"url": url, "state": "UNKNOWN"})
        if path == "/":
            return 200, "text/html; charset=utf-8", dashboard(self.server).encode()
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
