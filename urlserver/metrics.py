# /metrics: Prometheus text from prometheus-client, through a custom
# collector that reads the engine's running figures at scrape time, so a
# scrape walks no host or URL (the robots.txt gauge aside, rescanned at most
# once per statusview.SLOW_GAUGE_S; issue 14, finding 8).
# Names follow Prometheus' conventions (docs/dashboard.md, "Metrics", lists
# them and the renames): the unit in the name (_bytes), counters end _total
# (prometheus-client adds it), and every label has a closed set of values
# (a URL state, a waiting reason, an ErrorKind, a configured plugin), never a
# host name or an address. The label values known in advance are exported
# at 0 too, so a query or a Grafana panel finds its series from the start.
"""Collector: the urlserver's Prometheus metrics."""

from __future__ import annotations

import time

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from .errorkind import ErrorKind
from .politeness import Waiting
from .statusview import RobotsHeld

# The engine's counters exported as they are named in /status "counters",
# with their help; each becomes wreck_NAME_total.
COUNTERS = {
    "handouts": "Page and robots.txt transactions handed out",
    "robots_handouts": "robots.txt transactions handed out",
    "done": "DONE answers received from spiders",
    "expired": "Transactions whose claim expired",
    "discovered": "Links reported by spiders (before dedup and scope)",
    "ignored_done": "DONE answers for unknown or expired transactions",
    "feed_fetches": "Feed fetches",
    "feed_redundant": "Feed fetches that brought nothing new",
    "feed_stories": "New stories found in feeds",
    "sitemaps_fetched": "Sitemaps fetched",
    "retry_requested": "URLs put back by --retry-errors",
    "seeds_refused": "Seeds --exclude or a URL filter plugin refused (FILTERED)",
    "head_first": "Pages fetched with a HEAD first (--accept-type)",
    "head_unusable_hosts": "Hosts whose HEAD answers were unusable",
    "raw_again": "Pages in codings no browser knows, handed out again with raw=1",
    "revisits": "Pages revisited (--recrawl)",
    "not_modified": "Revisits answered 304 Not Modified",
    "changed": "Revisits that found the page changed",
    "unchanged": "Revisits that found the page unchanged",
}
STORE_GAUGES = (  # (metric, /status store key, help): the store's last answer (storeview.py)
    ("wreck_store_documents", "documents", "Documents in the store"),
    ("wreck_store_bytes", "bytes", "Uncompressed bytes of the stored documents"),
    ("wreck_store_compressed_bytes", "compressed_bytes", "Bytes of the stored documents on disk (compressed)"),
    ("wreck_store_disk_free_bytes", "disk_free", "Free bytes on the store's disk"),
)


class Collector:
    """Prometheus metrics from the engine's running figures."""

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
        yield GaugeMetricFamily("wreck_delayed_urls", "URLs waiting for a later fetch (retries, recrawls, feeds)",
                                value=fr.delayed_total)
        yield GaugeMetricFamily("wreck_transactions_in_flight", "Transactions in flight", value=len(crawl.claims))
        yield GaugeMetricFamily("wreck_hosts_known", "Hosts (origins) known", value=len(fr.origins))
        waiting = GaugeMetricFamily("wreck_hosts_waiting", "Hosts (origins) held, by what they wait for",
                                    labels=["reason"])
        held = fr.board.held
        for reason in Waiting:
            if reason is not Waiting.NONE:
                waiting.add_metric([reason.name.lower()], len(held.get(reason, ())))
        yield waiting
        yield GaugeMetricFamily("wreck_spiders_connected", "Spiders connected (past their handshake)",
                                value=sum(1 for s in server.spiders if s.conn.opened))
        yield GaugeMetricFamily("wreck_dns_cache_entries", "DNS cache entries", value=len(server.resolver.cache))
        yield GaugeMetricFamily("wreck_robots_cache_entries", "robots.txt rules held",
                                value=self.robots_held(fr.origins))
        yield CounterMetricFamily("wreck_pages_fetched", "Pages fetched (this run)", value=fr.board.fetched_total)
        yield CounterMetricFamily("wreck_fetched_bytes", "Document bytes fetched (size= of FETCHED answers, all runs)",
                                  value=crawl.bytes_fetched)
        counters = {**crawl.stats, **crawl.bandwidth.stats, **(crawl.recrawl.stats if crawl.recrawl else {})}
        for name, value in counters.items():
            yield CounterMetricFamily(f"wreck_{name}", COUNTERS.get(name, f"Count of {name.replace('_', ' ')}"),
                                      value=value)
        errors = CounterMetricFamily("wreck_errors", "URLs ended in ERROR by kind", labels=["kind"])
        for kind in ErrorKind:
            errors.add_metric([kind.name], crawl.errors_by_kind.get(kind.name, 0))
        yield errors
        plugin_errors = CounterMetricFamily("wreck_plugin_errors", "Plugin hooks that failed, by plugin",
                                            labels=["plugin"])
        for name, n in crawl.plugins.status()["errors"].items():
            plugin_errors.add_metric([name], n)
        yield plugin_errors
        store = server.store_view.figures if getattr(server, "store_view", None) else None
        if store is not None:  # absent rather than 0 when unknown: a gap in a graph, not a false drop
            for metric, key, text in STORE_GAUGES:
                yield GaugeMetricFamily(metric, text, value=store.get(key, 0))
