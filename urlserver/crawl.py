# The crawl engine: frontier + politeness + claims + robots + DNS answers,
# driven by the server with explicit times and no sockets. take() finds the
# next host whose turn has come (politeness heap) and serves it: DNS first
# (an unknown name is handed to the server to resolve), then robots.txt (a
# special transaction that asks for the body), then the head of its queue,
# skipping what robots.txt disallows. done()/working()/expire()/spider_gone()
# close or extend transactions and schedule what follows (retry.py, urlstate.py);
# feeds (feeds.py) and sitemaps (sitemaps.py) hook into the handout (kind=)
# and the DONE of their URLs. finish_reason() says when a one-shot crawl
# (--exit-when-done) ends and why: done; a global limit reached (the
# handouts stop, the transactions in flight end); or nothing fetchable
# within --linger, the retries due later kept with their due times for the
# next run (deferred()).
# Every change is in the frontier's write transaction: commit() (or
# commit_soon() and its Future) before the assignments it made are written
# to a socket. A page claim keeps its URL record as the claim wrote it
# (Claim.rec), and whatever ends the claim moves that object instead of
# reading the record again (one LMDB get a hand-out saved; CLAIM_RECORD
# below says why it cannot have changed). The engine is given an open
# db.Db (Crawl.open() opens one from the settings); its public methods
# raise db.StateError, never lmdb's own errors, when the state cannot be
# written.
"""Crawl: the urlserver's engine, without I/O."""

from __future__ import annotations

import logging
import re
import time
from urllib.parse import unquote

from wreck.options import size_text
from wreck.protocol import Assignment, Done, Links
from wreck.protocol.control import NO_ADDRESS
from wreck.protocol.handshake import CAP_AFTER, CAP_RECORD
from wreck.protocol.textfields import encode_reason
from wreck.urlnorm import normalize
from wreck.plugins import STATS, URL_FILTER, Plugins

from . import db as d
from .db import StateError, translate_errors
from . import lineage
from . import robots as r
from .dns import Resolution
from .domainbudget import DomainBudget
from .errorkind import ErrorKind, fetch_kind
from .bandwidth import Bandwidth
from .chains import Chain, Chains
from .control import Controls, block_queue, pause_origin
from .feeds import Feeds
from .forward import Forwarder
from .frontier import Frontier
from .iptoken import IpTokens
from .hostview import HELD_SCAN, due as host_due
from .partition import DocIdsExhausted, doc_id_of
from .politeness import HELD, Origin, Politeness, Waiting
from .recrawl import Recrawl, policy_for
from .retry import after_done, slows_host
from .robotsstate import RobotsEvent, RobotsPhase
from .scope import Scope, split_host
from .seedfilter import seed_refusal
from .settings import Settings
from .suspects import SUSPECT_WAIT_S, Suspects
from .sitemaps import Sitemaps
from .transactions import PAGE, ROBOTS, UNFETCHED, Claim, ClaimTable, RobotsJob
from .urlfilter import UrlFilter
from .urlstate import UrlEvent, UrlState, can

log = logging.getLogger("urlserver")
MAX_SKIPS = 256  # disallowed URLs skipped in one turn before the host yields
# The URLs of the pages new URLs were found on (an assignment's via=), by
# fingerprint: a host's first pages are the via of most of its others, and a
# fingerprint's URL never changes. Bounded (a URL is at most MAX_URL_LEN),
# cleared when full. Each origin also keeps the last via it handed out
# (Origin.via, lineage()): a page's links to its own site are queued in a
# row, so they read their via once, where this cache turns over long before
# a host's next turn when hosts are many (1 % of the vias at 10M URLs on
# 100,000 hosts: bench/results/2026-11-24-s8-frontier8.md).
VIA_CACHE = 4096
ROBOTS_BODY = {"body": str(r.BODY_REQUEST)}
BYTES_COUNTER = "bytes_fetched"  # meta key: the size= of every FETCHED DONE, summed
# What a record-only transaction says when a host has no address (nofetch=,
# docs/protocol.txt 5.3), by the failure's kind: a refusal or a DNS failure.
NOFETCH = {ErrorKind.FORBIDDEN_ADDRESS: "refused"}
# Why a host's URLs count as deferred: it waits for a retry, not its pace.
DEFERRING = frozenset((Waiting.ROBOTS_RETRY, Waiting.BACKOFF))
DEFERRED_SAMPLE = 5  # deferred URLs named in /status (and so in wreck-crawl's summary)
DEFERRED_SCAN = 10_000  # delayed entries looked at for them (feeds' polls sit among the retries)
# CLAIM_RECORD: why a claim's record (Claim.rec) is still the URL's record
# when the claim ends. The claim moved it to IN_FLIGHT, and urlstate.MOVES
# moves an IN_FLIGHT record only by the events that end a claim (a DONE's,
# CLAIM_EXPIRED, EXPIRIES_EXHAUSTED, UNSENDABLE, UNFETCHED_RECORDED), each
# applied here through the claim, once (it leaves the ClaimTable first).
# The other writers of the urls database leave an IN_FLIGHT record be:
# discover and discover_links write only URLs not yet recorded; a stale
# second entry met at a pop, release_due, drain or block_queue is skipped
# by urlstate.can(); retry_requested takes FETCH_ERROR and ERROR records
# only. A transaction that is aborted ends the engine (abandon(), after
# server.py's state_unwritable), so no claim outlives a write it lost; a
# restart requeues the persisted claims from LMDB (REQUEUED_AFTER_RESTART,
# read afresh), never from memory.


class NotOwned(ValueError):
    """A partition was sent a link of a host it does not own: the partitions
    disagree on their count (docs/protocol.txt 5.10, ERROR partition)."""


class Crawl:
    """The urlserver's state machine over LMDB."""

    @classmethod
    def open(cls, settings: Settings, *, clock=time.time) -> Crawl:
        """Open the crawl state under settings.data and the engine over it (StateError if it cannot be)."""
        database = d.Db(settings.data, map_size=settings.map_size, sync=settings.sync)
        try:
            return cls(settings, database, clock=clock)
        except BaseException:
            database.close()
            raise

    @translate_errors
    def __init__(self, settings: Settings, database: d.Db, *, clock=time.time) -> None:
        self.settings = s = settings
        self.clock = clock
        self.db = database
        scope = Scope(mode=s.scope, seed_hosts=set(), include=s.include, exclude=s.exclude,
                      max_depth=s.max_depth, max_url_len=s.max_url_len,
                      max_path_repeats=s.max_path_repeats, max_query_repeats=s.max_query_repeats)
        domains = None  # in host scope every host is a seed's: nothing to count
        if s.scope != "host" and (s.max_hosts_per_domain or s.max_pages_per_domain):
            domains = DomainBudget(max_hosts=s.max_hosts_per_domain, max_pages=s.max_pages_per_domain,
                                   seed_hosts=scope.seed_hosts)
        self.frontier = Frontier(self.db, scope, max_pages=s.max_pages, max_redirects=s.max_redirects,
                                 domains=domains)
        self.forward: Forwarder | None = None  # partitions: links of other partitions' hosts (forward.py)
        if s.partitions > 1:
            self.forward = self.frontier.forward = Forwarder(self.db, partition=s.partition,
                                                              partitions=s.partitions)
        self.plugins = Plugins(s.plugins, hooks=(URL_FILTER, STATS))
        if self.plugins.has(URL_FILTER) or s.url_filter_cmd:  # the server starts the command (UrlFilter.start)
            self.frontier.url_filter = UrlFilter(self.plugins, command=s.url_filter_cmd, timeout=s.url_filter_timeout)
        self.politeness = Politeness(delay=s.delay, host_concurrency=s.host_concurrency,
                                     ip_concurrency=s.ip_concurrency, ip_delay=s.ip_delay,
                                     backoff_max=s.backoff_max, tokens=self._ip_tokens(clock()))
        self.politeness.restore(self.frontier.saved_paces, clock())  # no host sooner than its delay
        self.frontier.saved_paces = []
        self.frontier.clock = clock  # the times of a URL's history (history.py)
        self.controls = Controls(self.db, self.politeness)  # the operator's, kept across restarts (control.py)
        self.recrawl = (Recrawl(self.db, policy_for(s.recrawl, s.recrawl_min, s.recrawl_max, s.recrawl_factor))
                        if s.recrawl else None)
        self.bandwidth = Bandwidth(s.accept_type)
        self.claims = ClaimTable(self.db)
        # URLs handed ahead to a busy host's spider (chains.py): only where no delay spaces requests
        self.chains = Chains(s.host_lookahead if not (s.delay or s.ip_delay) else 0)
        self.suspects = Suspects()
        self.feeds = Feeds(self.db, min_interval=s.feed_min_interval, max_interval=s.feed_max_interval,
                           backoff=s.feed_backoff)
        self.sitemaps = Sitemaps(self.frontier, enabled=s.sitemaps, max_urls=s.sitemap_max_urls,
                                 per_host=s.sitemaps_per_host, depth=s.sitemap_depth)
        self.dns_wanted: set[Origin] = set()  # hosts whose name the server should resolve
        self.dns_running: set[Origin] = set()  # ... and is resolving now
        # robots.txt fetches waiting on any origin (Origin.robots_jobs): counted, so that
        # finished() never walks every host (a /status at 100,000 hosts; issue 14, finding 8)
        self.robots_jobs_queued = 0
        self._dns_failures: dict[Origin, int] = {}
        self.stats: dict[str, int] = {"handouts": 0, "robots_handouts": 0, "done": 0,
                                      "expired": 0, "discovered": 0, "ignored_done": 0,
                                      "feed_fetches": 0, "feed_redundant": 0, "feed_stories": 0,
                                      "sitemaps_fetched": 0, "handed_ahead": 0, "unfetched_handouts": 0,
                                      "seeds_refused": 0}
        self.errors_by_kind: dict[str, int] = {}  # ErrorKind name -> URLs ended in ERROR
        self._vias: dict[bytes, str] = {}  # via fingerprint -> its URL (VIA_CACHE)
        self.frontier.on_new_work = self._on_new_work
        self.on_handout = None  # callback(now, assignment), for tests and tracing
        self._now = clock()
        self._ahead = False  # the spider take() serves honours after= (its caps)
        self._record = False  # ... and nofetch=: it records the URLs of a host that has no address
        self.started = self._now  # --max-time counts this run's wall time
        self.limit: str | None = None  # the global limit reached, once it is
        with self.db.begin() as txn:  # document bytes (size=) fetched in all runs, for --max-bytes
            self.bytes_fetched = self.db.counter(txn, BYTES_COUNTER, default=0)
        self._bytes_saved = self.bytes_fetched  # written once per commit (_write_slots), not per page
        self.crawl_id = self.db.crawl_id(self.frontier.txn, s.crawl_id)  # committed below, before any spider hears it
        self._requeue_claims()
        for host in self.frontier.origins.values():
            if host.queued:
                self.politeness.schedule(host, self._now)
        if s.retry_errors:
            self._retry_on_request()
        self.commit()

    def _ip_tokens(self, now: float) -> IpTokens | None:
        """The IP tokens shared with the other partitions (iptoken.py); None when alone."""
        s = self.settings
        if s.partitions == 1:
            return None
        return IpTokens(me=s.partition, partitions=s.partitions, ip_delay=s.ip_delay,
                        lease=s.timeout_req + s.ip_delay, now=now, lent=self.db.tokens_lent(self.frontier.txn))

    # -- IP tokens across partitions (iptoken.py; the server carries the messages) --------

    @translate_errors
    def token_received(self, peer: int, message, now: float) -> None:
        """A token message from partition `peer`: the hosts it lets go on are woken."""
        self._now = now
        self._wake_all(self.politeness.token_received(peer, message, now), now)

    def token_messages(self) -> list:
        """Token messages to send, as (partition, message)."""
        tokens = self.politeness.tokens
        return tokens.take_messages() if tokens is not None else []

    @translate_errors
    def token_link(self, peer: int, *, dialled: bool, up: bool, now: float) -> None:
        """The connection this partition `dialled` to `peer` (or `peer` dialled
        to it) opened or closed: what it carried is asked for again, or lost."""
        tokens = self.politeness.tokens
        if tokens is None:
            return
        if dialled:
            (tokens.found_owner if up else tokens.lost_owner)(peer, now)
        elif not up:
            tokens.lost_holder(peer, now)
        self._wake_all(self.politeness.token_granted(), now)

    def _wake_all(self, hosts: list[Origin], now: float) -> None:
        for host in hosts:
            host.waiting = Waiting.NONE
            self._wake(host, now)

    # -- lifecycle ------------------------------------------------------------------

    @translate_errors
    def commit(self) -> None:
        self._write_slots()
        self.frontier.commit()

    def _write_slots(self) -> None:
        """The politeness slots touched, which IP tokens are out, and the bytes
        fetched, into the commit: durable before the assignments and grants are
        sent (server.py)."""
        if self.bytes_fetched != self._bytes_saved:  # one put per commit: it was one per page
            self.db.set_counter(self.frontier.txn, BYTES_COUNTER, self.bytes_fetched)
            self._bytes_saved = self.bytes_fetched
        for pace in self.politeness.take_touched():
            self.db.put_pace(self.frontier.txn, *pace)
        if self.politeness.tokens is not None:
            for ip, partition in self.politeness.tokens.take_lent():
                self.db.put_token_lent(self.frontier.txn, ip, partition)

    @translate_errors
    def commit_soon(self):
        """commit(), on the writer thread: its (committed, durable) Futures,
        or None if nothing changed (Frontier.commit_soon). Until
        `committed` is done, the next use of the state waits for it."""
        self._write_slots()
        return self.frontier.commit_soon()

    @translate_errors
    def settle(self) -> None:
        """Finish the commit in flight (StateError if it could not be written)."""
        self.frontier.settle()

    @translate_errors
    def close(self) -> None:
        self.commit()
        self.frontier.save_start()
        self.db.close()
        if self.frontier.url_filter is not None:
            self.frontier.url_filter.close()
        self.plugins.close()

    def abandon(self) -> None:
        """Close without committing (the state could not be written)."""
        try:
            self.frontier.abort()
        except StateError:
            pass  # the environment is closed below either way, which aborts it
        self.db.close()

    def _requeue_claims(self) -> None:
        """After a restart every claim in LMDB died with its spider: requeue it."""
        fr = self.frontier
        saved = self.claims.take_saved(fr.txn)
        for host_id, entry in saved:
            fr.move(d.entry_fp(entry), UrlEvent.REQUEUED_AFTER_RESTART, "requeued after restart")
            fr.push(fr.by_id[host_id], entry, front=True)
        if saved:
            log.warning("event=claims_requeued count=%d reason=restart", len(saved))

    def _retry_on_request(self) -> None:
        """--retry-errors [--only REGEX]: ERROR URLs and retries waiting for
        their due time are queued again now, with their full tries
        (urlstate RETRY_REQUESTED), and an unreachable robots.txt is forgotten,
        so its origin fetches it again at its next turn, when --only chooses
        its ORIGIN/robots.txt or one of the URLs requeued on it
        (docs/url-states.md, "Retry on request")."""
        only = re.compile(self.settings.retry_only) if self.settings.retry_only is not None else None
        wanted = (lambda url: True) if only is None else (lambda url: only.search(url) is not None)
        counts = self.retry(wanted, errors=True, deferred=True, now=self._now)
        log.warning("event=retry_requested urls=%d errors=%d retries=%d robots=%d only=%r",
                    counts["urls"], counts["errors"], counts["retries"], counts["robots"], self.settings.retry_only)

    @translate_errors
    def retry(self, wanted, *, errors: bool, deferred: bool, now: float) -> dict[str, int]:
        """Queue again now, with their full tries, the ERROR URLs (`errors`)
        and the retries waiting for their due time (`deferred`) whose URL
        `wanted(url)` accepts, and forget the unreachable robots.txt of the
        origins they join or that `wanted` chooses (by ORIGIN/robots.txt):
        the --retry-errors of a start, and POST /api/retry. The counts."""
        fr = self.frontier
        retries, failed, touched = fr.retry_requested(wanted, errors=errors, retries=deferred)
        requeued = {host.origin for host in touched}
        forgotten = [origin.decode() for origin, raw in fr.txn.cursor(db=self.db.robots)
                     if r.unpack(raw).kind == r.UNREACHABLE
                     and (origin.decode() in requeued or wanted(origin.decode() + "/robots.txt"))]
        for origin in forgotten:
            fr.txn.delete(origin.encode(), db=self.db.robots)
            host = fr.origins.get(origin)
            if host is not None and host.robots.phase is RobotsPhase.UNREACHABLE:  # a running crawl's memory
                host.robots.move(RobotsEvent.EXPIRED)
                host.robots.tries = 0
                if host.waiting is Waiting.ROBOTS_RETRY:
                    self.politeness.schedule(host, now)
        self.stats["retry_requested"] = self.stats.get("retry_requested", 0) + retries + failed
        return {"urls": retries + failed, "errors": failed, "retries": retries, "robots": len(forgotten)}

    # -- input ----------------------------------------------------------------------

    @translate_errors
    def add_seed(self, url: str) -> str:
        """'queued', 'known', 'bad' (see Frontier.discover) or 'filtered' (seedfilter.py)."""
        return self._refused_seed(url) or self.frontier.discover(url, depth=0, seed=True)

    def _refused_seed(self, raw_url: str) -> str | None:
        """'filtered' when --exclude or a plugin refuses the seed `raw_url`
        (seedfilter.py): recorded FILTERED as a refused link is, its host
        no seed host; 'known' when its URL is; else None (admit it)."""
        url = normalize(raw_url)
        if url is None:
            return None
        fr = self.frontier
        name = split_host(url)[1]
        why = seed_refusal(fr.scope, fr.url_filter, url, name)
        if why is None:
            return None
        log.warning("event=seed_refused url=%s reason=%r", url, why)
        if fr.forward is not None and fr.forward.foreign(name):
            # another partition's URL, not forwarded: its owner, given the same seeds
            # (docs/partitions.md), records and counts it
            return "filtered"
        self.stats["seeds_refused"] += 1
        fp = d.fingerprint(url)
        if fr.seen.check_and_add(fp) and fr.txn.get(fp, db=fr.db.urls) is not None:
            return "known"
        fr.record_filtered(fp, d.UrlRecord(url), why)
        return "filtered"

    @translate_errors
    def add_feed(self, raw_url: str) -> str:
        """A seed the operator marked as a feed: 'queued', 'known', 'bad' or 'filtered'."""
        refused = self._refused_seed(raw_url)
        if refused is not None:
            return refused
        result = self.frontier.discover(raw_url, depth=0, seed=True)
        url = normalize(raw_url)
        if url is None or result not in ("queued", "known"):
            return result
        fr, fp = self.frontier, d.fingerprint(url)
        self.feeds.add(fr.txn, fp, url, split_host(url)[1], marked=True)
        rec = fr.record(fp)
        if rec.state == UrlState.FETCHED:  # fetched before as a page: poll it from now on
            rec.doc_id = 0
            fr.move(fp, UrlEvent.MARKED_AS_FEED, "marked as a feed", rec=rec)
            fr.push(fr.origin_for(*split_host(url)), d.pack_entry(fp, rec.depth, rec.hops, url))
        return result

    @translate_errors
    def apply_links(self, sender: int, batch: Links, now: float) -> bool:
        """Batch `batch.seq` of partition `sender` (docs/protocol.txt 5.10):
        its links admitted as outlinks are, and the sender's last applied
        sequence number with them, in the open transaction; False for a
        resend (applied before: acknowledge it again, apply nothing).
        NotOwned, before anything changes, for a link of a host this
        partition does not own."""
        fw, fr = self.forward, self.frontier
        if batch.seq <= fw.last_applied(fr.txn, sender):
            return False
        for link in batch.links:
            url = normalize(link.url)
            if url is None or fw.foreign(split_host(url)[1]):
                raise NotOwned(f"partition {self.settings.partition} of {self.settings.partitions} does not own "
                               f"{link.url[:200]}: are both started with the same --partitions?")
        self._now = now
        plain: dict[tuple[int, str, str], list[str]] = {}  # (depth, via, path) -> links: a page's go together
        for link in batch.links:
            extra = link.extra
            hops, via, path = extra.get("hops", "0"), extra.get("via", ""), extra.get("path", "")
            if len(path) > lineage.MAX_PATH_LEN or path.strip("LRMPI+0123456789"):
                path = ""  # a hop path this urlserver cannot read: kept as none rather than refused
            if extra.get("seed") == "1":
                fr.discover(link.url, depth=0, seed=True)
            elif hops.isdigit() and hops != "0":  # a redirect's target: its hops count against --max-redirects
                fr.discover(link.url, depth=link.depth, hops=int(hops), via_url=via, path=path)
            else:
                plain.setdefault((link.depth, via, path), []).append(link.url)
        for (depth, via, path), urls in plain.items():
            fr.discover_links(urls, depth=depth, via_url=via, path=path)
        fw.applied_batch(fr.txn, sender, batch.seq, len(batch.links))
        return True

    @translate_errors
    def links_acked(self, dest: int, seq: int) -> None:
        """Partition `dest` applied batch `seq`: out of the outbox with the next commit."""
        self.forward.acked(self.frontier.txn, dest, seq)

    def _on_new_work(self, host: Origin) -> None:
        self._wake(host, self._now)

    def wake(self, host: Origin, now: float) -> None:
        """Put `host` back in the politeness heap if it has work and nothing
        holds it (after the operator resumed it)."""
        self._wake(host, now)

    def _wake(self, host: Origin, now: float) -> None:
        """Put `host` in the politeness heap if it has work and nothing holds it."""
        if host.in_heap or host.waiting in HELD or not (host.queued or host.robots_jobs):
            return
        if host.inflight >= self.politeness.host_concurrency:
            self.politeness.park(host)  # its name is busy (maybe through another origin)
        else:
            self.politeness.schedule(host, max(now, host.next_ok))
            if host.next_ok > now:
                host.waiting = self._pace(host)

    # -- handing out ------------------------------------------------------------------

    @translate_errors
    def take(self, spider, now: float, caps: frozenset[str] = frozenset()) -> Assignment | None:
        """The next assignment for `spider` whose time has come, claimed; or
        None. `caps` are the capabilities the spider announced in its AUTH
        (docs/protocol.txt 3.1): a busy host's next URLs are handed ahead
        (after=, chains.py) only to a spider that honours after=, and the
        URLs of a host without an address are handed as record-only
        transactions (nofetch=) only to one that honours nofetch=."""
        self._now = now
        self._ahead = CAP_AFTER in caps
        self._record = CAP_RECORD in caps
        if self.limit_reached(now) is not None:
            return None  # a global limit: nothing more is handed out, this run
        if self.controls.paused:
            return None  # paused by the operator: what is in flight ends as usual
        self.frontier.release_due(now)
        pol = self.politeness
        while (host := pol.pop_due(now)) is not None:
            assignment = self._serve(host, spider, now)
            if assignment is not None:
                self._wake(host, now)  # back in the heap if --host-concurrency allows another
                if self.on_handout is not None:
                    self.on_handout(now, assignment)
                return assignment
        if self.chains.lookahead and self._ahead:
            for chain in self.chains.candidates(spider):
                assignment = self._serve_chained(chain, spider, now)
                if assignment is not None:
                    if self.on_handout is not None:
                        self.on_handout(now, assignment)
                    return assignment
        return None

    def _serve_chained(self, chain: Chain, spider, now: float) -> Assignment | None:
        """The next URL of a chain's host, to start when its last transfer ends
        (chains.py), if only its slots' concurrency holds the host."""
        host = chain.host
        if (not host.queued or host.in_heap or host.waiting not in (Waiting.HOST, Waiting.IP) or host.delay
                or host.slow or host.robots_jobs or host.ip != chain.ip):
            return None
        if host.name in self.controls.held or self.politeness.name_slot(host).floor:
            return None  # paused, blocked or given a delay by the operator (control.py): its turns space it
        if not self.politeness.may_chain(host.ip):
            return None  # another partition waits for its address's token (iptoken.py)
        res = host.addr_state
        if res is None or res.expires <= now:
            return None  # its address is looked up again at its next turn
        rules = self._rules(host, now)
        if rules is None or not rules.usable:
            return None
        return self._next_page(host, rules, spider, now, chain)

    def _serve(self, host: Origin, spider, now: float) -> Assignment | None:
        host.waiting = Waiting.NONE  # out of the heap now: whatever held it is decided again below
        if host.name in self.controls.held:  # the operator paused or blocked its name (control.py)
            self._hold(host, now)
            return None
        if self._record and self._unfetchable(host, now):
            return self._claim_unfetched(host, spider, now)
        if not self._address(host, now):
            return None
        blocked = self.politeness.blocked_until(host, now)
        if blocked is not None:
            if blocked != float("inf"):
                self.politeness.schedule(host, blocked)
                host.waiting = self._pace(host)
            return None
        if host.robots_jobs:
            self.robots_jobs_queued -= 1
            return self._claim_robots(host, host.robots_jobs.pop(0), spider, now)
        rules = self._rules(host, now)
        if rules is None:
            if host.robots.fetching:
                host.waiting = Waiting.ROBOTS
                return None
            host.robots.move(RobotsEvent.FETCH_STARTED)
            return self._claim_robots(host, RobotsJob(host.origin, host.origin + "/robots.txt"), spider, now)
        if not rules.usable:
            if host.robots.tries >= self.settings.robots_max_tries:
                self._error(ErrorKind.ROBOTS_UNREACHABLE, self.frontier.drain(host, f"robots.txt {rules.record.why}"))
            else:
                self.politeness.schedule(host, rules.record.expires)
                host.waiting = Waiting.ROBOTS_RETRY
            return None
        return self._next_page(host, rules, spider, now)

    def _next_page(self, host: Origin, rules: r.RobotsRules, spider, now: float,
                   chain: Chain | None = None) -> Assignment | None:
        """Claim the head of `host`'s queue that robots.txt allows (skipping
        at most MAX_SKIPS), handed after `chain`'s tail if one is given."""
        fr = self.frontier
        for _ in range(MAX_SKIPS):
            entry = fr.pop(host)
            if entry is None:
                return None
            fp, depth, hops, url = d.unpack_entry(entry)
            if not self.suspects.may_take(fp, spider):  # one suspect per spider at a time
                fr.push(host, entry, front=True)
                if chain is None:
                    self.politeness.schedule(host, now + SUSPECT_WAIT_S)
                return None
            rec = fr.record(fp)
            if not can(rec.state, UrlEvent.CLAIMED):  # a stale entry (urlstate.can; frontier.py, SWEEP_RUN)
                fr.stale(url, rec.state)
                continue
            if rules.allowed(url):
                return self._claim_page(host, entry, rec, fp, url, spider, now, chain)
            fr.move(fp, UrlEvent.DISALLOWED, "robots.txt", rec=rec)
            # DEBUG (-v): one line per URL is noise in a large crawl (2,100 lines in
            # make bench); their count is /status urls.DISALLOWED
            log.debug("event=disallowed url=%s", url)
        if chain is None:
            self.politeness.schedule(host, now)
        return None

    def _hold(self, host: Origin, now: float) -> None:
        """`host`'s turn came while the operator holds its name: a blocked
        host's queue ends BLOCKED (a batch per turn); a paused one waits."""
        if self.controls.host(host.name).blocked:
            count, more = block_queue(self.frontier, host)
            if count:
                log.warning("event=host_blocked origin=%s urls=%d", host.origin, count)
            if more:
                self.politeness.schedule(host, now)
            if host.robots_jobs:  # robots.txt redirected here: those origins learn it is unreachable
                self._fail_robots_jobs(host, "robots.txt redirected to a host blocked by the operator")
        else:
            pause_origin(self.politeness, host)

    def _pace(self, host: Origin) -> Waiting:
        """Why `host`, in the heap, waits for its turn: a 429/5xx back-off, a
        Crawl-delay longer than --delay, or (NONE) the plain --delay."""
        if host.slow:
            return Waiting.BACKOFF
        return Waiting.CRAWL_DELAY if host.delay > self.settings.delay else Waiting.NONE

    def _address(self, host: Origin, now: float) -> bool:
        """True when `host` has an admitted address; else it waits or is drained."""
        res = host.addr_state
        if res is None or res.expires <= now:
            host.addr_state = res = None
            self.dns_wanted.add(host)
            host.waiting = Waiting.DNS
            return False
        if res.ip is None:
            if res.terminal or self._dns_failures.get(host, 0) >= self.settings.max_retries:
                self._error(res.kind, self.frontier.drain(host, res.error))  # the text stays in the records
                self._fail_robots_jobs(host, res.error)
            else:
                self.politeness.schedule(host, res.expires)
            return False
        host.ip = res.ip
        return True

    def _unfetchable(self, host: Origin, now: float) -> bool:
        """`host` has no address for good: its DNS failed after the retries, or
        every address it resolved to is refused (what _address drains)."""
        res = host.addr_state
        return (res is not None and res.ip is None and res.expires > now
                and (res.terminal or self._dns_failures.get(host, 0) >= self.settings.max_retries))

    def _claim_unfetched(self, host: Origin, spider, now: float) -> Assignment | None:
        """The head of `host`'s queue as a record-only transaction (docs/protocol.txt
        5.3 nofetch=): the spider connects nowhere and stores a record of what
        was tried, so the archive names the URL. It holds no politeness slot."""
        fr, res = self.frontier, host.addr_state
        self._fail_robots_jobs(host, res.error)
        for _ in range(MAX_SKIPS):
            entry = fr.pop(host)
            if entry is None:
                return None
            fp, _, _, url = d.unpack_entry(entry)
            rec = fr.record(fp)
            if can(rec.state, UrlEvent.CLAIMED_UNFETCHED):
                break
            fr.stale(url, rec.state)
        else:
            self.politeness.schedule(host, now)  # the rest at its next turn
            return None
        trans_id, doc_id = self._next_ids(doc=not rec.doc_id)
        rec.doc_id = rec.doc_id or doc_id
        fr.move(fp, UrlEvent.CLAIMED_UNFETCHED, None, rec=rec)
        claim = Claim(trans_id, rec.doc_id, UNFETCHED, host, NO_ADDRESS, url, spider,
                      now + self.settings.timeout_update, now, entry=entry, failure=res, rec=rec)
        self.claims.persist(fr.txn, claim)
        self.claims.add(claim)
        self.stats["unfetched_handouts"] += 1
        extra = {"nofetch": NOFETCH.get(res.kind, "dns"), "why": encode_reason(res.error)}
        if res.refused:
            extra["refused"] = ",".join(res.refused)
        log.info("event=unfetched_handout url=%s reason=%r", url, res.error)
        return Assignment(trans_id, rec.doc_id, NO_ADDRESS, host.name, url, {**extra, **self.lineage(rec, host)})

    def dns_requests(self) -> list[Origin]:
        """Hosts to resolve now; answer each with dns_result()."""
        hosts = list(self.dns_wanted - self.dns_running)
        self.dns_running.update(hosts)
        self.dns_wanted.clear()
        return hosts

    def dns_result(self, host: Origin, res: Resolution, now: float) -> None:
        """The server resolved `host.name` (see dns_requests)."""
        self._now = now
        self.dns_running.discard(host)
        host.addr_state = res
        host.waiting = Waiting.NONE
        if res.ip is None:
            if not res.terminal:
                self._dns_failures[host] = self._dns_failures.get(host, 0) + 1
            log.warning("event=dns_failed host=%s reason=%r", host.name, res.error)
        else:
            self._dns_failures.pop(host, None)
        self.politeness.schedule(host, now)

    def _rules(self, host: Origin, now: float) -> r.RobotsRules | None:
        state = host.robots
        if state.phase is RobotsPhase.UNKNOWN:
            raw = self.db.robots_record(self.frontier.txn, host.origin)
            if raw is not None:
                rules = r.RobotsRules(r.unpack(raw), self.settings.robots_token)
                state.move(RobotsEvent.LOADED if rules.usable else RobotsEvent.LOADED_UNREACHABLE, rules)
                host.delay = max(self.settings.delay, min(rules.crawl_delay(), self.settings.max_crawl_delay))
        rules = state.rules
        if rules is not None and rules.record.expires <= now:
            state.move(RobotsEvent.EXPIRED)
            return None
        return rules

    def _next_ids(self, *, doc: bool) -> tuple[int, int]:
        next_id = self.frontier.next_id
        return next_id("next_trans_id"), self._new_doc_id() if doc else 0

    def _new_doc_id(self) -> int:
        """A new doc id, in this partition's range (docs/partitions.md, Doc ids)."""
        counter = self.frontier.next_id("next_doc_id")
        s = self.settings
        if s.partitions == 1:
            return counter
        try:
            return doc_id_of(counter, s.partition, s.partitions)
        except DocIdsExhausted as exc:  # handing out nothing more, as with a full disk
            raise StateError(str(exc)) from None

    def _claim_page(self, host: Origin, entry: bytes, rec: d.UrlRecord, fp: bytes, url: str, spider,
                    now: float, chain: Chain | None = None) -> Assignment:
        fr = self.frontier
        trans_id, doc_id = self._next_ids(doc=not rec.doc_id)
        doc_id = rec.doc_id or doc_id
        rec.doc_id = doc_id
        fr.move(fp, UrlEvent.CLAIMED, None, rec=rec)  # keeps the reason of its last move
        claim = Claim(trans_id, doc_id, PAGE, host, host.ip, url, spider, now + self.settings.timeout_update, now,
                      entry=entry, rec=rec)
        self.claims.persist(fr.txn, claim)
        self.claims.add(claim)
        if chain is None:
            self.politeness.started(host, now)
            self.chains.started(trans_id, host, host.ip, spider, ahead=self._ahead)
        self.suspects.taken(fp, spider)
        self.stats["handouts"] += 1
        if self.feeds.is_feed(fr.txn, fp):
            extra = {"kind": "feed"}
        elif self.sitemaps.is_sitemap(fr.txn, fp):
            extra = {"kind": "sitemap"}
        else:  # validators mean an earlier fetch passed the type filter: no HEAD then
            extra = self.recrawl.extras(fr.txn, fp) if self.recrawl is not None else {}
            if not extra:
                extra = self.bandwidth.extras(host.id, url)
        if chain is not None:
            extra = {**extra, "after": str(self.chains.extended(chain, trans_id))}
            self.stats["handed_ahead"] += 1
        return Assignment(trans_id, doc_id, host.ip, host.name, url, {**extra, **self.lineage(rec, host)})

    def lineage(self, rec: d.UrlRecord, host: Origin) -> dict[str, str]:
        """The via= and hops= of a page's assignment (docs/protocol.txt 5.3) of
        `host`: where its URL was first found and its hop path, hops=- for a seed."""
        via = rec.via_url or (host.via_url if rec.via == host.via else None)
        if via is None:
            via = self._vias.get(rec.via)
            if via is None:  # an LMDB get and a decode: remembered (VIA_CACHE)
                via = self.frontier.via_url(rec)
                if via is not None:
                    if len(self._vias) >= VIA_CACHE:
                        self._vias.clear()
                    self._vias[rec.via] = via
            if host.queued:  # the next of its queue likely shares it (VIA_CACHE)
                host.via, host.via_url = rec.via, via
            else:  # an origin without work keeps none (Origin.via)
                host.via = host.via_url = None
        out = {"hops": rec.path or lineage.SEED_MARK}
        if via is not None:
            out["via"] = via
        return out

    def _robots_doc_id(self, url: str) -> int:
        """The doc id of the robots.txt fetch of `url`: the one an earlier
        claim (expired, or lost with a killed urlserver) was given, so the
        store spots a duplicate; else a new one, persisted until the DONE."""
        db, txn = self.db, self.frontier.txn
        doc_id = db.robots_doc_id(txn, url)
        if doc_id is None:
            doc_id = self._new_doc_id()
            db.set_robots_doc_id(txn, url, doc_id)
        return doc_id

    def _claim_robots(self, host: Origin, job: RobotsJob, spider, now: float) -> Assignment:
        trans_id, _ = self._next_ids(doc=False)
        doc_id = self._robots_doc_id(job.url)
        self.claims.add(Claim(trans_id, doc_id, ROBOTS, host, host.ip, job.url, spider,
                              now + self.settings.timeout_update, now, job=job))
        self.politeness.started(host, now)
        self.stats["robots_handouts"] += 1
        log.debug("event=robots_fetch origin=%s url=%s hops=%d", job.origin, job.url, job.hops)  # event=robots says how it ended
        return Assignment(trans_id, doc_id, host.ip, host.name, job.url, dict(ROBOTS_BODY))

    def _fail_robots_jobs(self, host: Origin, why: str) -> None:
        """Robots fetches routed to an unusable host: their origins count as unreachable."""
        jobs, host.robots_jobs = host.robots_jobs, []
        self.robots_jobs_queued -= len(jobs)
        for job in jobs:
            self._robots_outcome(job, r.RobotsOutcome(r.UNREACHABLE, why=why), self._now)

    # -- results ------------------------------------------------------------------------

    @translate_errors
    def done(self, spider, event: Done, now: float) -> bool:
        """Apply a spider's DONE. True if its links (if any) were all recorded
        as a page's outlinks, so that once this transaction is durable the
        spider may leave them out of later DONEs (COMMITTED, docs/protocol.txt
        5.5.1); False if it was ignored, or its links were a feed's or a
        sitemap's, of which only some are taken, or a robots.txt fetch's
        (a redirect to an HTML page), of which none is."""
        self._now = now
        claim = self.claims.get(event.trans_id)
        if claim is None or claim.spider is not spider:
            self.stats["ignored_done"] += 1
            log.warning("event=done_ignored trans_id=%d reason=unknown_or_expired", event.trans_id)
            return False
        self.claims.remove(event.trans_id)
        self.stats["done"] += 1
        self._release(claim, now)
        if claim.kind == ROBOTS:
            self.db.forget_robots_doc_id(self.frontier.txn, claim.url)  # consumed
            self._robots_outcome(claim.job, r.outcome(event, claim.job.hops, self.settings.max_redirects), now)
        elif claim.kind == UNFETCHED:
            self._unfetched_done(claim, event)
        else:
            links_recorded = self._page_done(claim, event, now)
            self._wake(claim.host, now)
            return links_recorded
        self._wake(claim.host, now)
        # a robots.txt fetch's links (its redirect target an HTML page) are not recorded: never known (5.5.1)
        return not event.outlinks

    def _release(self, claim: Claim, now: float) -> None:
        if claim.kind == UNFETCHED:
            return  # it connected nowhere: it held no slot
        if not self.chains.ended(claim.trans_id):
            return  # its chain goes on in its spider: the host's transfer is still under way
        self._wake_all(self.politeness.finished(claim.host, claim.ip, now), now)

    def _unfetched_done(self, claim: Claim, event: Done) -> None:
        """A record-only transaction's DONE: the store holds its record, and
        the URL ends as a drained one would, with its host's failure."""
        self.claims.forget(self.frontier.txn, claim.trans_id)
        res = claim.failure
        self.frontier.move(claim.fp, UrlEvent.UNFETCHED_RECORDED, res.error, rec=claim.rec)
        self._error(res.kind)
        log.info("event=unfetched_recorded url=%s specific=%s reason=%r", claim.url, event.specific.name, res.error)

    def _page_done(self, claim: Claim, event: Done, now: float) -> bool:
        fr, s = self.frontier, self.settings
        fp = claim.fp
        self.suspects.cleared(fp, claim.spider)
        self.claims.forget(fr.txn, claim.trans_id)
        rec = claim.rec  # as the claim wrote it: no second get (CLAIM_RECORD)
        rec.tries += 1
        # a page in codings no browser knows (again=raw): handed out again with raw=1
        # as soon as the host's delay allows (docs/protocol.txt 5.5, bandwidth.py)
        again_raw = event.extra.get("again") == "raw" and self.bandwidth.room_for_raw()
        step = after_done(event, rec.tries, now, retry_delay=s.retry_delay, max_retries=s.max_retries,
                          backoff_max=s.backoff_max, again_raw=again_raw)
        if again_raw and step.event is UrlEvent.FETCH_FAILED:
            self.bandwidth.fetch_raw(claim.url)
        self._host_answered(claim.host, event, now)  # feeds' answers count too
        feed = self.feeds.state(fr.txn, fp)
        fetched = step.event is UrlEvent.FETCHED
        failed = step.event in (UrlEvent.FETCH_FAILED, UrlEvent.FAILED, UrlEvent.RETRIES_EXHAUSTED)
        fr.board.answered(claim.host, fetched=fetched, error=step.reason if failed else None,
                          seconds=now - claim.started)
        if fetched:
            self.bytes_fetched += _size(event)  # into the state at commit (_write_slots)
        if feed is None and "feed" in event.extra and fetched:
            feed = self.feeds.add(fr.txn, fp, claim.url, claim.host.name, marked=False)
        if feed is not None and fetched:
            self._feed_done(claim, event, rec, feed, now)
            return False
        if fetched and self.recrawl is not None:
            rec.tries = rec.doc_id = 0  # the next visit is a new document, with tries of its own
            fr.delay(claim.host, claim.entry, self.recrawl.fetched(fr.txn, fp, event, now))
        if step.event is UrlEvent.FETCH_FAILED:
            rec.doc_id = 0  # the retry is a new document
            fr.delay(claim.host, claim.entry, step.retry_at)
            log.info("event=fetch_error url=%s tries=%d reason=%r", claim.url, rec.tries, step.reason)
        elif step.event is UrlEvent.FAILED or step.event is UrlEvent.RETRIES_EXHAUSTED:
            self._error(fetch_kind(event.specific))
            log.info("event=error url=%s reason=%r", claim.url, step.reason)
        fr.move(fp, step.event, step.reason, rec=rec)
        if step.follow and self.sitemaps.is_sitemap(fr.txn, fp):  # a moved sitemap is still one
            self.sitemaps.admit(step.follow, level=self.sitemaps.level(fp), base=claim.url, via=fp,
                                path=lineage.extend(rec.path, lineage.REDIRECT))
        elif step.follow:
            fr.discover(step.follow, depth=rec.depth, hops=rec.hops + 1, base=claim.url, via=fp,
                        path=lineage.extend(rec.path, lineage.REDIRECT))
            target = normalize(step.follow, claim.url)
            if feed is not None and target is not None:  # a moved feed is still a feed
                self.feeds.add(fr.txn, d.fingerprint(target), target, split_host(target)[1], marked=feed.marked)
        if fetched and self.sitemaps.is_sitemap(fr.txn, fp):
            self.stats["sitemaps_fetched"] += 1
            self.stats["discovered"] += self.sitemaps.fetched(fp, claim.url, event, rec)
            return False
        fr.discover_links(event.outlinks, depth=rec.depth + 1, base=claim.url, via=fp,
                          path=lineage.extend(rec.path, lineage.LINK))
        # links left out (known=) were sent and recorded before (5.5.1): they count as found
        self.stats["discovered"] += len(event.outlinks) + event.known
        return True

    def _feed_done(self, claim: Claim, event: Done, rec: d.UrlRecord, feed, now: float) -> None:
        """A feed was fetched: new stories are discovered, the feed goes back to
        PENDING until its next fetch (feeds.py decides when)."""
        fr, fp = self.frontier, claim.fp
        got = self.feeds.fetched(fr.txn, fp, feed, event, now)
        if self._polls(feed):
            rec.tries = rec.doc_id = 0
            fr.move(fp, UrlEvent.FEED_FETCHED, got.reason, rec=rec)
            fr.delay(claim.host, claim.entry, got.due)
        else:  # found by its content in a one-shot crawl: fetched once, its stories followed
            fr.move(fp, UrlEvent.FETCHED, "feed: fetched once (not polled: not named by --feeds or feed:)",
                    rec=rec)
        self.stats["feed_fetches"] += 1
        self.stats["feed_redundant"] += got.redundant
        self.stats["feed_stories"] += got.stories
        fr.discover_links(got.discover, depth=rec.depth + 1, base=claim.url, via=fp,
                          path=lineage.extend(rec.path, lineage.LINK))
        self.stats["discovered"] += len(got.discover)

    def _polls(self, feed) -> bool:
        """Whether `feed` is fetched again and again: one the operator named
        (--feeds, feed:), or any feed in a continuous crawl or with --recrawl."""
        return feed.marked or not self.settings.exit_when_done or self.recrawl is not None

    def _host_answered(self, host: Origin, event: Done, now: float) -> None:
        """Politeness and HEAD knowledge from one page answer of `host`."""
        if slows_host(event):
            self.politeness.slow_down(host, now, event.retry_after)
            log.info("event=host_slowed origin=%s http=%d delay=%.3g", host.origin, event.http_code, host.slow)
        elif event.http_code:
            self.politeness.recover(host)
        if event.extra.get("head") == "no":
            self.bandwidth.head_unusable(host.id)
            log.info("event=head_unusable origin=%s reason=%r", host.origin, event.reason)

    def _robots_outcome(self, job: RobotsJob, result: r.RobotsOutcome, now: float) -> None:
        fr, s = self.frontier, self.settings
        origin, name = split_host(job.origin + "/")
        target = fr.origin_for(origin, name)
        if result.kind == r.FOLLOW:
            url = normalize(result.url, job.url)
            if url is not None:
                host = fr.origin_for(*split_host(url))
                host.robots_jobs.append(RobotsJob(job.origin, url, job.hops + 1))
                self.robots_jobs_queued += 1
                self._wake(host, now)
                return
            result = r.RobotsOutcome(r.ALLOW_ALL, why="unusable redirect target")
        unreachable = result.kind == r.UNREACHABLE
        tries = target.robots.tries + 1 if unreachable else 0
        rec = r.record_for(result, now, ttl=s.robots_ttl, retry=s.robots_retry, tries=tries)
        self.db.put_robots_record(fr.txn, origin, r.pack(rec))
        rules = r.RobotsRules(rec, s.robots_token)
        target.robots.move(RobotsEvent.FOUND_UNREACHABLE if unreachable else RobotsEvent.LEARNED, rules)
        target.delay = max(s.delay, min(rules.crawl_delay(), s.max_crawl_delay))
        self.politeness.delay_learned(target, now)
        if not unreachable:
            self.sitemaps.from_robots(origin, rules.sitemaps())
        log.info("event=robots origin=%s outcome=%s why=%r delay=%.3g", origin, rec.kind, rec.why, target.delay)
        if target.waiting is Waiting.ROBOTS:
            target.waiting = Waiting.NONE
        self._wake(target, now)

    def working(self, spider, trans_ids, now: float) -> list[int]:
        """Extend `spider`'s claims; returns the ids it does not hold (unknown,
        finished, expired or another spider's), which the server answers with
        CANCEL (docs/protocol.txt 5.4)."""
        unheld = []
        for trans_id in trans_ids:
            claim = self.claims.get(trans_id)
            if claim is not None and claim.spider is spider:
                self.claims.extend(claim, now + self.settings.timeout_update)
            else:
                unheld.append(trans_id)
        return unheld

    @translate_errors
    def expire(self, now: float) -> list[Claim]:
        """Claims past their deadline, requeued; the server cancels them."""
        self._now = now
        tokens = self.politeness.tokens
        if tokens is not None:  # a recalled grant whose turn ran out unused goes back
            tokens.tick(now)
            self._wake_all(self.politeness.token_granted(), now)
        claims = self.claims.expired(now)
        for claim in claims:
            if claim.kind == PAGE:
                self.suspects.released(claim.fp, claim.spider)
            self._give_back(claim, now, "timeout")  # its spider lives and is stuck on it: charge it
        return claims

    @translate_errors
    def spider_gone(self, spider, now: float) -> None:
        """A spider's connection closed: its claims go back to their queues."""
        self._now = now
        claims = list(self.claims.of_spider(spider))
        charged = self.suspects.died(spider, [c.fp for c in claims if c.kind == PAGE])
        for claim in claims:
            self.claims.remove(claim.trans_id)
            self._give_back(claim, now, "spider gone", charge=claim.kind == PAGE and claim.fp in charged)

    def _give_back(self, claim: Claim, now: float, why: str, *, charge: bool = True) -> None:
        """Requeue a claim that ended without DONE; `charge` counts it
        against --max-expiries (suspects.py says when a death is blamed)."""
        self.stats["expired"] += 1
        self._release(claim, now)
        host, fr = claim.host, self.frontier
        if claim.kind == ROBOTS:
            job = claim.job
            if job.hops or job.origin != host.origin:
                host.robots_jobs.insert(0, job)
                self.robots_jobs_queued += 1
            else:
                host.robots.move(RobotsEvent.FETCH_ABANDONED)
        else:
            self.claims.forget(fr.txn, claim.trans_id)
            fp, rec = claim.fp, claim.rec  # as the claim wrote it (CLAIM_RECORD)
            rec.expiries += charge
            if rec.expiries >= self.settings.max_expiries:
                fr.move(fp, UrlEvent.EXPIRIES_EXHAUSTED, f"claim expired {rec.expiries} times ({why})", rec=rec)
                self._error(ErrorKind.CLAIM_EXPIRED)
            else:
                fr.move(fp, UrlEvent.CLAIM_EXPIRED, f"claim expired ({why})", rec=rec)
                fr.push(host, claim.entry, front=True)
        log.warning("event=claim_expired trans_id=%d url=%s reason=%s", claim.trans_id, claim.url, why)
        self._wake(host, now)

    @translate_errors
    def unsendable(self, trans_id: int, why: str, now: float) -> None:
        """An assignment the protocol refused to encode: end its URL as ERROR."""
        claim = self.claims.remove(trans_id)
        if claim is None:
            return
        self._release(claim, now)
        if claim.kind != ROBOTS:
            self.suspects.cleared(claim.fp, claim.spider)
            self.claims.forget(self.frontier.txn, trans_id)
            self.frontier.move(claim.fp, UrlEvent.UNSENDABLE, f"cannot be sent: {why}", rec=claim.rec)
            self._error(ErrorKind.UNSENDABLE)
        else:  # its origin (maybe not claim.host, after redirects) moves to KNOWN, allow-all
            self._robots_outcome(claim.job, r.RobotsOutcome(r.ALLOW_ALL, why="robots URL cannot be sent"), now)
        log.warning("event=unsendable url=%s reason=%r", claim.url, why)
        self._wake(claim.host, now)

    def _error(self, kind: ErrorKind, urls: int = 1) -> None:
        """Count `urls` URLs ended in ERROR for `kind` (its name only: a bounded label set)."""
        if urls:
            self.errors_by_kind[kind.name] = self.errors_by_kind.get(kind.name, 0) + urls

    # -- timing and status -------------------------------------------------------------

    @translate_errors
    def lookup(self, url: str) -> dict | None:
        """A URL's state for operators; with --recrawl, its revisit record too."""
        found = self.frontier.lookup(url)
        if found is not None and self.recrawl is not None:
            rev = self.recrawl.get(self.frontier.txn, d.fingerprint(normalize(url)))
            if rev is not None:
                found["recrawl"] = {"interval_s": rev.interval, "visits": rev.visits, "changes": rev.changes,
                                    "etag": unquote(rev.etag) or None,
                                    "last_modified": unquote(rev.last_modified) or None}
        return found

    @translate_errors
    def next_wakeup(self, *, serving: bool = True) -> float | None:
        """When expire() -- and take(), if `serving` -- next has something to do."""
        times = [self.claims.next_deadline()]
        if self.politeness.tokens is not None:
            times.append(self.politeness.tokens.next_deadline())
        if serving and not self.controls.paused:
            times += [self.politeness.next_time(), self.frontier.next_delayed()]
            if self.settings.max_time and self.limit is None:
                times.append(self.started + self.settings.max_time)
        times = [t for t in times if t is not None]
        return min(times) if times else None

    @translate_errors
    def finished(self) -> bool:
        """Nothing pending, delayed, resolving or in flight, but future fetches
        (feeds', recrawls'): those wait in LMDB for a continuous crawl (or the next start)."""
        fr = self.frontier
        return (not self.claims and not fr.queued_total
                and not self.dns_wanted and not self.dns_running
                and not self.robots_jobs_queued
                and (not fr.delayed_total or self._only_future_fetches_delayed()))

    def _only_future_fetches_delayed(self) -> bool:
        """A delayed entry is a retry (its URL is FETCH_ERROR until released),
        a feed's next fetch or, with --recrawl, a FETCHED page's next visit."""
        if self.recrawl is not None:
            return not self.frontier.counts["FETCH_ERROR"]
        return self.feeds.only_feeds_delayed(self.frontier.txn)

    # -- the end of a one-shot crawl (--exit-when-done) ------------------------------------

    def limit_reached(self, now: float) -> str | None:
        """The global limit this run has reached ('--max-total-pages 100'...), or None.
        Once reached it stays so for this run: a later start with a higher one continues."""
        if self.limit is None:
            s = self.settings
            if s.max_total_pages and self.frontier.counts["FETCHED"] >= s.max_total_pages:
                self.limit = f"--max-total-pages {s.max_total_pages}"
            elif s.max_bytes and self.bytes_fetched >= s.max_bytes:
                self.limit = f"--max-bytes {size_text(s.max_bytes)}"
            elif s.max_time and now - self.started >= s.max_time:
                self.limit = f"--max-time {s.max_time:g}"
            if self.limit is not None:
                log.warning("event=limit_reached limit=%r in_flight=%d: handing out nothing more",
                            self.limit, len(self.claims))
        return self.limit

    @translate_errors
    def next_fetch(self) -> float | None:
        """When something may next be handed out: a host's turn, a retry's due time."""
        times = [t for t in (self.politeness.next_time(), self.frontier.next_delayed()) if t is not None]
        return min(times) if times else None

    @translate_errors
    def finish_reason(self, now: float, *, one_shot: bool = True) -> str | None:
        """Why a one-shot crawl ends now, or None while it goes on: 'done',
        'limit reached: FLAG N' (once the transactions in flight have ended),
        or 'deferred retries' when nothing is fetchable within --linger and
        URLs wait for a retry (robots.txt 5xx, 503, timeouts, back-off):
        they stay in the frontier with their due times, for the next run."""
        if self.limit_reached(now) is not None:
            return None if self.claims else f"limit reached: {self.limit}"
        if not one_shot:
            return None  # a continuous crawl ends on a limit or from outside
        if self.finished():
            return "done"
        if (self.claims or self.dns_wanted or self.dns_running
                or self.robots_jobs_queued):
            return None
        upcoming = self.frontier.next_delayed()
        for host in self.frontier.origins.values():
            if not host.queued:
                continue
            if host.waiting not in DEFERRING:
                self._wake(host, now)  # in the heap already, normally
                return None  # served at its pace (--delay, Crawl-delay): not a deferral
            due = host_due(host, now)
            if due is not None and (upcoming is None or due < upcoming):
                upcoming = due
        if upcoming is not None and upcoming <= now + self.settings.linger:
            return None
        return "deferred retries"

    @translate_errors
    def deferred(self, now: float, *, exact: bool = False) -> dict:
        """What waits for a later turn: URLs queued on hosts that cannot be
        served yet and retries, how many, the earliest due time and a few of them.
        The hosts are read from the board's sets of held origins, at most
        hostview.HELD_SCAN of them so that a look never walks every host
        (the count is then a lower bound), or all of them if `exact`."""
        fr, txn = self.frontier, self.frontier.txn
        sample: list[dict] = []
        earliest = None
        # Delayed entries sort by due time; with --recrawl most are next visits, not retries.
        scan = txn.cursor(db=self.db.delayed) if self.recrawl is None and fr.counts["FETCH_ERROR"] else ()
        for looked, (key, value) in enumerate(scan):
            if len(sample) >= DEFERRED_SAMPLE or looked >= DEFERRED_SCAN:
                break
            if not self.feeds.is_feed(txn, d.delayed_fp(key)):  # a feed's next poll is no deferral
                due = d.delayed_due(key)
                url = d.unpack_entry(d.unpack_held(value)[1])[3]
                rec = fr.record(d.delayed_fp(key))
                sample.append({"url": url, "due": due, "why": rec.reason if rec else "retry"})
                earliest = due if earliest is None else min(earliest, due)
        hosts = []
        for host in fr.board.held_sample(DEFERRING, limit=None if exact else HELD_SCAN):
            if not host.queued:
                continue  # nothing queued, or it is served in turn
            due = host_due(host, now)
            hosts.append({"origin": host.origin, "urls": host.queued, "due": due,
                          "why": host.waiting.value or "delay"})
            if due is not None:
                earliest = due if earliest is None else min(earliest, due)
        retries = fr.counts["FETCH_ERROR"]
        return {"urls": retries + sum(h["urls"] for h in hosts), "retries": retries, "until": earliest,
                "hosts": hosts[:DEFERRED_SAMPLE], "sample": sample}


def _size(event: Done) -> int:
    """The size= of a FETCHED DONE (docs/protocol.txt 5.5); 0 when absent or not a number."""
    text = event.extra.get("size", "")
    return int(text) if text.isdigit() and len(text) <= 15 else 0
