# What /status says, as plain data, built from figures the engine keeps as
# it goes (issue 14, finding 8): counts by URL state (Frontier.counts),
# origins by waiting reason and the top-N host tables (hostview.HostBoard),
# the last hour (history.History), the spiders' connections. Nothing here
# walks every host or URL: where a reason's next due time needs origins it
# reads at most hostview.HELD_SCAN of them, and the one figure that needs a
# walk (robots.txt rules held) is rescanned at most once per SLOW_GAUGE_S.
"""status(server): the /status document."""

from __future__ import annotations

import time

from wreck.crawlfile import to_toml
from wreck.options import declared

from .hostview import HELD_SCAN, due
from .politeness import Waiting

# Rates are taken over about this much recent time, up to now: a crawl that
# fetches nothing shows 0/s within it rather than its last busy figure.
RATE_WINDOW_S = 10.0
# The robots.txt-rules figure scans every host: at 100,000 hosts a scan costs
# milliseconds, so it is redone at most this often whatever the request rate.
SLOW_GAUGE_S = 10.0
# What the dashboard's "waiting for" table names, in the order it shows them:
# the reasons a crawl can sit idle for (politeness.Waiting).
WAIT_REASONS = (Waiting.ROBOTS_RETRY, Waiting.BACKOFF, Waiting.CRAWL_DELAY, Waiting.DNS, Waiting.ROBOTS,
                Waiting.HOST, Waiting.IP, Waiting.IP_TOKEN)
# The reasons that end at a time; the others end on an answer (DNS, a
# robots.txt fetch, a transaction of the host's name or address).
TIMED = frozenset((Waiting.ROBOTS_RETRY, Waiting.BACKOFF, Waiting.CRAWL_DELAY))


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


class RobotsHeld:
    """The number of origins holding robots.txt rules, rescanned at most once per SLOW_GAUGE_S."""

    def __init__(self, *, clock=time.monotonic) -> None:
        self.clock = clock
        self._last = (float("-inf"), 0)  # (when scanned, rules held)

    def __call__(self, origins: dict) -> int:
        now = self.clock()
        scanned, held = self._last
        if now - scanned >= SLOW_GAUGE_S:
            held = sum(1 for h in origins.values() if h.robots.rules is not None)
            self._last = (now, held)
        return held


# Keys for the dashboard's eyes only: left out of the urlserver's last line
# (its final /status, which wreck-crawl's summary reads) and of the plugins'
# stats, where tables of hosts and an hour of samples are only noise.
DASHBOARD_ONLY = ("host_tables", "history", "spider_table", "waiting_due", "settings")


def summary(server) -> dict:
    """status() without the dashboard's tables (DASHBOARD_ONLY), its
    deferred URLs counted over every host (a one-off look: the last line)."""
    return {k: v for k, v in status(server, exact=True).items() if k not in DASHBOARD_ONLY}


def status(server, *, robots_held: RobotsHeld | None = None, exact: bool = False) -> dict:
    """Everything /status shows, as plain data; `robots_held` keeps the
    robots.txt figure between looks (the listener's: one scan per SLOW_GAUGE_S);
    `exact` counts the deferred URLs of every host, not of HELD_SCAN of them."""
    crawl = server.crawl
    fr = crawl.frontier
    board = fr.board
    waiting = board.waiting_counts()
    now = time.time()
    history = getattr(server, "history", None)
    if history is not None:
        server.take_history(now)  # an idle server pumps rarely: a look keeps the chart going
    return {
        "time": now,
        "crawl_id": crawl.crawl_id,  # the crawl's identity, which its store keeps (docs/protocol.txt 6.1)
        "paused": crawl.controls.paused,  # by the operator (POST /api/pause, docs/api.md)
        "urls": dict(fr.counts),
        "queued": fr.queued_total,
        "delayed_retries": fr.delayed_total,
        "in_flight": len(crawl.claims),
        "in_flight_by_spider": crawl.claims.per_spider(),
        "spiders": [s.name for s in server.spiders if s.conn.opened],  # not peers still in their handshake
        "spider_table": spider_table(server, crawl),
        "hosts": {"known": len(fr.origins), "ready": len(crawl.politeness), "waiting": waiting},
        "host_tables": host_tables(crawl, now),
        "rates": rates(server.samples, crawl.stats, now),
        "history": history.series() if history is not None else {},
        "counters": {**crawl.stats, **crawl.bandwidth.stats, **(crawl.recrawl.stats if crawl.recrawl else {})},
        "errors_by_kind": dict(crawl.errors_by_kind),
        "filtered_by": dict(fr.filtered_by),
        "plugins": crawl.plugins.status(),
        "dns_cache": len(server.resolver.cache),
        "robots_cache": (robots_held or RobotsHeld())(fr.origins),  # without one: a scan, for a one-off look
        "feeds": crawl.feeds.count,
        "finished": crawl.finished(),
        # why the crawl ended (None while it runs): done, limit reached: FLAG N,
        # deferred retries, interrupted
        "finish_reason": server.finish_reason,
        "limit": crawl.limit,
        "bytes_fetched": crawl.bytes_fetched,
        "deferred": crawl.deferred(now, exact=exact),
        "waiting_for": waiting_for(crawl, waiting),
        "waiting_due": waiting_due(crawl, now),
        "store": server.store_view.figures if getattr(server, "store_view", None) else None,
        "partition": partition_status(server),
        "settings": settings_shown(crawl.settings),
    }


def partition_status(server) -> dict | None:
    """This urlserver's partition (docs/partitions.md), None when it is the
    only one: its index, its links to the others, the batches of links
    waiting in its outbox, and the batches applied from each other
    partition (a watcher ends a crawl when every partition would end,
    every outbox is empty, and these counts stand still between two looks)."""
    crawl = server.crawl
    if getattr(crawl, "forward", None) is None:
        return None
    s = crawl.settings
    links = getattr(server, "peer_links", None)
    fw = crawl.forward
    with crawl.db.begin() as txn:
        applied = {str(j): fw.last_applied(txn, j) for j in range(s.partitions) if j != s.partition}
    return {"index": s.partition, "of": s.partitions, "peers": list(s.peers),
            "links_up": {str(j): up for j, up in links.up.items()} if links is not None else {},
            "outbox_batches": fw.waiting(), "links_forwarded": fw.forwarded, "links_applied": fw.applied,
            "batches_applied": applied,
            # why this partition would end a one-shot crawl now (Crawl.finish_reason), or None
            "would_end": crawl.finish_reason(time.time(), one_shot=True)}


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


def waiting_due(crawl, now: float) -> list[dict]:
    """Per waiting reason: the origins held for it and the earliest time one
    of them is due (among at most HELD_SCAN looked at; None: it waits for an
    answer, not a time), then the URL retries and their earliest due time."""
    board = crawl.frontier.board
    out = []
    for reason in WAIT_REASONS:
        held = board.held.get(reason)
        if not held:
            continue
        timed = reason in TIMED
        dues = [d for d in (due(h, now) for h in board.held_sample((reason,))) if d is not None] if timed else []
        out.append({"why": reason.value, "origins": len(held), "next_due": min(dues) if dues else None,
                    "exact": not timed or len(held) <= HELD_SCAN})
    retries = crawl.frontier.counts["FETCH_ERROR"]
    if retries:
        out.append({"why": "retry", "urls": retries, "next_due": crawl.frontier.next_delayed(), "exact": True})
    return out


def host_tables(crawl, now: float) -> dict[str, list[dict]]:
    """The hosts view's four tables: busiest (most fetched), slowest (longest
    answer), erroring (most errors) and blocked (held by robots.txt, a
    back-off, a Crawl-delay or DNS), each at most hostview.TOP_N rows."""
    board = crawl.frontier.board
    blocked = board.held_sample(WAIT_REASONS[:4], limit=board.busiest.n)
    return {
        "busiest": [board.row(o, now) for o in board.busiest.ranked()],
        "slowest": [board.row(o, now) for o in board.slowest.ranked()],
        "erroring": [board.row(o, now) for o in board.erroring.ranked()],
        "blocked": sorted((board.row(o, now) for o in blocked), key=lambda r: (r["due"] or now, r["origin"])),
    }


def spider_table(server, crawl) -> list[dict]:
    """One row per connected spider: name, address, in flight, DONEs/s, last seen."""
    inflight = crawl.claims.per_spider()
    return [{"name": s.name, "address": s.peer, "in_flight": inflight.get(s.name, 0),
             "rate": round(getattr(s, "rate", 0.0), 2), "last_seen": getattr(s, "last_seen", None)}
            for s in server.spiders if s.conn.opened]


def settings_shown(settings) -> dict:
    """The crawl's settings as the kept file writes them (the secret is no declared setting)."""
    return {d.name: to_toml(d, getattr(settings, d.name)) for d in declared(type(settings))}


# A search prefix longer than any host name is refused as empty: RFC 1035's
# 253 characters, a scheme and a port.
MAX_QUERY = 300


def hosts_found(server, query: str) -> dict:
    """/hosts?q=PREFIX: the origins whose host name (or scheme://host) starts
    with `query`, in name order, at most hostview.TOP_N, as hosts-view rows."""
    prefix = query.strip().lower()[:MAX_QUERY]
    fr = server.crawl.frontier
    now = time.time()
    rows = [fr.board.row(o, now) for o in fr.board.search(fr.origins, prefix)] if prefix else []
    return {"query": prefix, "hosts": rows}
