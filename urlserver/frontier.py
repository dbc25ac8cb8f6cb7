# The frontier on disk: one FIFO queue per origin in LMDB (key host_id+seq,
# so a queue is a contiguous key range and its head is one get), URL records
# keyed by a host-local fingerprint (db.py: one origin's records are a
# contiguous range too, so a page's links to its own site share B-tree
# pages), and delayed retries keyed by due time. In memory
# there are only Origin objects (queue bounds, politeness), the Bloom filter
# and per-state counts, so 10 million queued URLs cost no Python objects.
# Every change happens in one open write transaction; commit() makes the
# batch durable (the server commits before writing assignments), or
# commit_soon() starts that on the writer thread (db.py) and the server
# writes the assignments once it is done. A URL
# record's state changes only through move(), by the table of urlstate.py.
#
# Popped entries are deleted a run at a time (SWEEP_RUN): a pop reads the
# head entry and moves the head on; the entries a host popped stay in LMDB
# until SWEEP_RUN of them are popped or its queue empties, and are then
# deleted with one cursor pass. A clean stop keeps each host's first
# popped entry in queues.bounds with its head and tail (deleting them all
# then would be one page written per host in one transaction), and the
# next start takes the runs up where they were. Deleting each at its
# pop dirtied (copied, then wrote at the commit) one queue leaf per host
# served in every commit of hand-outs (bench/results/2026-11-24-s10-frontier10.md).
# After a kill -9 the popped-but-not-deleted entries are back at their
# queues' heads; each one's URL record has moved on (claimed, disallowed,
# drained or blocked, in the transaction of its pop), so the stale-entry
# check (urlstate.can) skips it when it is popped again, and stale()
# counts it back: every commit keeps the total of queued URLs, stamped with
# its transaction, and an open after a kill -9 starts from it, so /status
# shows the same count as before the kill.
#
# ADMITTED LOG. Each host's `admitted` (URLs admitted to its queue, the
# count --max-pages and --max-pages-per-domain hold) lives in the hosts
# table, keyed by origin: rewriting the record of every host a commit
# touched dirtied most of that table's leaves at each commit (about 1,200
# of 1,620 at 10M URLs, bench/results/2026-11-24-s10-links10.md). So a
# commit writes the counts it changed as one record appended to meta
# ("admitted:" + its transaction id: host id and count, 8 bytes a host,
# a few pages written together), and the hosts table is rewritten only
# when the log holds FOLD_ENTRIES items or at a clean stop (the fold:
# every host logged since, written, and the log deleted, in one
# transaction). A new host's record is written by the commit that made it
# (its id must be found at the next start). An open reads the table,
# then the log in order: each item raises its host's count to the logged
# one (counts only grow), so after a kill -9 every budget resumes from the
# last commit's counts, as when each commit wrote the table. The layout is
# format 3's: the last WRECK reads the table's counts and skips the log,
# exact after a clean stop (folded); after a kill -9 under this one, the
# table may be up to FOLD_ENTRIES items behind for it.
"""Frontier: per-host queues, URL states and the seen-set, in LMDB."""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import Future
import operator
from collections import Counter
from itertools import count, repeat

import msgspec

from wreck.urlnorm import normalize

from . import db as d
from . import pagelinks, queuebounds
from .db import UrlRecord
from .domainbudget import DomainBudget
from .history import noted
from .hostview import HostBoard
from .politeness import Origin
from .scope import Scope, split_host
from .seen import RecentLinks, SeenSet
from .pagelinks import pick
from .urlstate import DISCOVERED_STATE, STATE_NAME, UrlEvent, UrlState, can, move

log = logging.getLogger("urlserver")
SEQ_START = 1 << 40  # room below for URLs put back at a queue's head
SEED_PREFIX = b"seedhost:"
SEEN_FILE = "seen.bloom"  # beside LMDB's files: the Bloom filter, mapped (seen.py)
BOUNDS_FILE = "queues.bounds"  # beside them: the queues' bounds at a clean stop (queuebounds.py)
_SLASHES = operator.methodcaller("count", "/")  # scope's path-repeat rule looks only past 5 slashes
_ID = operator.attrgetter("id")
SEEN_START = 1 << 20  # URLs a new crawl's Bloom filter holds before it first grows (2 MB)
# A host's popped entries deleted together (see the top): 64 entries of ~80
# bytes span two or three 4 KB leaves, so a run costs a commit about one dirty
# leaf per 25 hand-outs instead of one each; and fewer than MAX_SKIPS
# (crawl.py, 256), so a restart's stale run is skipped in one turn of its host.
SWEEP_RUN = 64
QUEUED_KEY = b"queued"  # meta: the transaction's id and the queued URLs' total then, u64 each
ADMITTED_PREFIX = b"admitted:"  # meta: + a transaction's id (u64) -> the admitted counts it changed (ADMITTED LOG)
# Log items before the fold: 64K items of 8 bytes, 512 KB of meta, read in
# milliseconds at an open; at about 2,100 hosts touched a commit (10M URLs,
# 100k hosts), a fold every 31 commits writes the table once instead of 31 times.
FOLD_ENTRIES = 1 << 16


class Frontier:
    """Queues, records and counts of one crawl's URLs."""

    def __init__(self, database: d.Db, scope: Scope, *, max_pages: int, max_redirects: int,
                 domains: DomainBudget | None = None) -> None:
        self.db = database
        self.scope = scope
        self.domains = domains  # hosts and URLs per domain (--scope domain, any), None if uncapped
        self.crowded = domains.crowded if domains is not None else {}  # host ids whose URLs domains counts
        self.max_pages = max_pages
        self.max_redirects = max_redirects
        self.origins: dict[str, Origin] = {}
        self.board = HostBoard()  # the hosts as /status and the dashboard see them
        self.by_id: dict[int, Origin] = {}
        self.seen = SeenSet()
        self.recent = RecentLinks()
        self.counts: dict[str, int] = {s.name: 0 for s in UrlState}
        self.queued_total = 0
        self.delayed_total = 0
        self.filtered_by: dict[str, int] = {}
        self._txn = None
        self._committing: Future | None = None  # commit_soon()'s, until settled
        self._dirty: set[Origin] = set()  # hosts whose admitted count this transaction changed
        self._new_hosts: set[Origin] = set()  # hosts made in this transaction: written to the table
        self._unfolded: set[Origin] = set()  # hosts whose count is in the log, not the table (ADMITTED LOG)
        self._log_keys: list[bytes] = []  # the log's records, deleted by the fold
        self._logged = 0  # the log's items
        self._fold_now = False  # the next commit folds (a clean stop)
        self._popped: dict[Origin, int] = {}  # host -> its first popped entry still in LMDB (see the top)
        self.unswept = 0  # entries popped before a kill -9 and found again at the queues' heads: stale() skips them
        self._ids: dict[str, int] = {}  # id counters read this transaction, written at commit
        self._prefixes = pagelinks.Prefixes()  # of discover_links' fingerprints
        self.on_new_work = None  # callback(host) when a host's queue grows
        self.clock = time.time  # for the history of moves (history.py); the engine sets its own
        self.url_filter = None  # urlfilter.UrlFilter when plugins or --url-filter-cmd filter URLs
        self.forward = None  # forward.Forwarder with --partitions > 1: other partitions' links go there
        self._load()

    # -- transactions ---------------------------------------------------------

    @property
    def txn(self):
        if self._txn is None:
            self.settle()  # one writer: the commit in flight ends first
            self._txn = self.db.begin(write=True)
        return self._txn

    @property
    def committing(self) -> bool:
        """A commit_soon() is in flight (not yet settled)."""
        return self._committing is not None

    def commit(self) -> None:
        """Make every change since the last commit durable."""
        self.settle()
        txn = self._close_txn()
        if txn is not None:
            self.db.commit(txn)
            self._committed()
            if self.forward is not None:
                self.forward.durable()  # the batches it wrote may leave now

    def commit_soon(self) -> tuple[Future, Future] | None:
        """Start making every change since the last commit durable, on the
        writer thread (db.py, WRITER): its (committed, durable) Futures, or
        None if there was nothing to commit. Once `committed` is done,
        settle() (or the next use of txn) finishes it and the next
        transaction may be filled; the changes are durable once `durable`
        is done."""
        self.settle()
        txn = self._close_txn()
        if txn is None:
            return None
        committed, durable = self.db.commit_soon(txn)
        self._committing = committed
        return committed, durable

    def settle(self) -> None:
        """Wait for the commit in flight to return, if any (StateError if it failed)."""
        future, self._committing = self._committing, None
        if future is not None:
            future.result()
            self._committed()

    def _close_txn(self):
        """The open transaction, with the hosts, id counters and counts written into it; None if none."""
        txn, self._txn = self._txn, None
        if txn is None:
            return None
        self._write_admitted(txn)
        for name, value in self._ids.items():
            self.db.set_counter(txn, name, value)
        txn.put(b"counts", msgspec.msgpack.encode(self.counts), db=self.db.meta)
        txn.put(QUEUED_KEY, d.U64.pack(txn.id()) + d.U64.pack(self.queued_total), db=self.db.meta)
        if self.forward is not None:  # partitions: the links for the others, in the same commit
            self.forward.flush(txn)
        return txn

    def _write_admitted(self, txn) -> None:
        """Write the admitted counts changed since the last commit: new hosts'
        records into the table, the others' counts into the log, or every
        logged count into the table at a fold (ADMITTED LOG)."""
        dirty, new, hosts_db = self._dirty, self._new_hosts, self.db.hosts
        for host in new:
            txn.put(host.origin.encode(), d.HOSTREC.pack(host.id, host.admitted), db=hosts_db)
        dirty -= new
        new.clear()
        if self._fold_now or self._logged + len(dirty) > FOLD_ENTRIES:
            for host in self._unfolded | dirty:
                txn.put(host.origin.encode(), d.HOSTREC.pack(host.id, host.admitted), db=hosts_db)
            for key in self._log_keys:
                txn.delete(key, db=self.db.meta)
            self._unfolded.clear()
            self._log_keys.clear()
            self._logged = 0
            self._fold_now = False
        elif dirty:
            key = ADMITTED_PREFIX + d.U64.pack(txn.id())
            txn.put(key, d.pack_admitted(dirty), db=self.db.meta)
            self._log_keys.append(key)
            self._unfolded |= dirty
            self._logged += len(dirty)
        dirty.clear()

    def _committed(self) -> None:
        self.recent.committed()
        self.seen.committed(self._stamp())  # the filter's file covers this transaction (seen.py)
        if self.seen.full:
            self._rebuild_seen()

    def abort(self) -> None:
        """Drop every change since the last commit. The in-memory state (queue
        bounds, counts, Bloom filter) still holds them: reopen the crawl."""
        future, self._committing = self._committing, None
        if future is not None:
            future.exception()  # its outcome no longer matters, but it must end first
        if self._txn is not None:
            txn, self._txn = self._txn, None
            self.db.abort(txn)
        self._ids.clear()
        if self.forward is not None:
            self.forward.abort()
        self.recent.aborted()

    # -- start ---------------------------------------------------------------

    def _load(self) -> None:
        database, domains = self.db, self.domains
        with database.begin() as txn:
            raw = txn.get(b"counts", db=database.meta)
            if raw:
                self.counts.update(msgspec.msgpack.decode(raw))
            cur = txn.cursor(db=database.meta)
            if cur.set_range(SEED_PREFIX):
                for key in cur.iternext(values=False):
                    if not key.startswith(SEED_PREFIX):
                        break
                    self.scope.add_seed_host(key[len(SEED_PREFIX):].decode())
            saved = queuebounds.take(self._bounds_path, self._stamp(), txn.stat(database.hosts)["entries"])
            unknown = []  # the hosts whose queue bounds the saved file did not give: probed below
            for at, (key, value) in enumerate(txn.cursor(db=database.hosts)):
                host_id, admitted = d.HOSTREC.unpack(value)
                origin = key.decode()
                host = Origin(origin, split_host(origin)[1], host_id, SEQ_START, SEQ_START, admitted, self.board)
                if saved is not None and saved[at * queuebounds.FIELDS] == host_id:  # saved at a clean stop
                    first, host.head, host.tail = saved[at * queuebounds.FIELDS + 1:at * queuebounds.FIELDS + 4]
                    if first < host.head:  # popped entries still in LMDB: deleted with the host's next run
                        self._popped[host] = first
                else:
                    unknown.append(host)
                self.origins[origin] = host
                self.by_id[host_id] = host
            self._replay_admitted(txn)
            self.delayed_total = txn.stat(database.delayed)["entries"]
            self.saved_paces = database.paces_saved(txn)  # for Politeness.restore, then dropped
            saved_total = txn.get(QUEUED_KEY, db=database.meta)
        if domains is not None:
            domains.load(self.origins.values())  # the domain caps go on from the kept counts (domainbudget.py)
        queuebounds.probe(database, unknown)
        self.queued_total = sum(host.tail - host.head for host in self.origins.values())
        if saved_total is not None and d.U64.unpack_from(saved_total)[0] == self._stamp():
            # written by the last commit: the queues' heads may hold its popped entries (see the top)
            self.unswept = max(self.queued_total - d.U64.unpack_from(saved_total, 8)[0], 0)
            self.queued_total -= self.unswept
        if not self.seen.load(self._seen_path, self._stamp()):
            self._rebuild_seen()

    def _replay_admitted(self, txn) -> None:
        """Raise each host's count to the one the admitted log holds, in commit order (ADMITTED LOG)."""
        cur, by_id = txn.cursor(db=self.db.meta), self.by_id
        if not cur.set_range(ADMITTED_PREFIX):
            return
        for key, value in cur:
            if not key.startswith(ADMITTED_PREFIX):
                break
            self._log_keys.append(key)
            for host_id, admitted in d.unpack_admitted(value):
                host = by_id.get(host_id)
                if host is None:  # every logged host has its record (written by the commit that made it)
                    continue
                if admitted > host.admitted:
                    host.admitted = admitted
                self._unfolded.add(host)
                self._logged += 1

    @property
    def _seen_path(self) -> str:
        return os.path.join(self.db.path, SEEN_FILE)

    def _stamp(self) -> int:
        return self.db.last_txnid()

    @property
    def _bounds_path(self) -> str:
        return os.path.join(self.db.path, BOUNDS_FILE)

    def save_start(self) -> None:
        """After the last commit: mark the Bloom filter's file clean (or write
        it, if it lives in anonymous memory) and write the queues' bounds
        (queuebounds.py), for a fast next start. The admitted log is folded
        into the hosts table first (ADMITTED LOG): the state then holds every
        count there, as the last WRECK wrote it.

        A write that fails (a full disk, a read-only remount) is one log
        line, not an error: the committed state is whole without the files,
        and the next start rebuilds a missing one (seen.py) or probes the
        queues (queuebounds.py)."""
        if self._log_keys or self._unfolded:
            self._fold_now = True
            _ = self.txn  # the fold needs a transaction, if none is open
        self.commit()
        stamp = self._stamp()
        try:
            self.seen.save(self._seen_path, stamp)
        except OSError as exc:
            log.warning("seen-set not saved (%s); the next start rebuilds it from the state",
                        exc.strerror or exc)
            _discard(self._seen_path)  # a partial file must not hold the space
        try:
            with self.db.begin() as txn:
                names = txn.cursor(db=self.db.hosts).iternext(values=False)
                queuebounds.save(self._bounds_path, stamp, map(self._bounds, map(bytes.decode, names)))
        except OSError as exc:
            log.warning("queue bounds not saved (%s); the next start reads them from the state",
                        exc.strerror or exc)
            _discard(self._bounds_path)

    def _bounds(self, origin: str) -> tuple[int, int, int, int]:
        """(host id, first, head, tail) of a host of the hosts table, for queuebounds.save."""
        host = self.origins.get(origin)
        if host is None:  # every host of the table is loaded or was added: never, but never a wrong bound
            return queuebounds.NO_HOST, SEQ_START, SEQ_START, SEQ_START
        return host.id, self._popped.get(host, host.head), host.head, host.tail

    def _rebuild_seen(self) -> None:
        with self.db.begin() as txn:
            total = txn.stat(self.db.urls)["entries"]
            keys = txn.cursor(db=self.db.urls).iternext(values=False)
            # a quarter more than is known: rounded up to a power of two, the
            # filter doubles when it filled, and after a kill -9 it has room
            self.seen.rebuild(keys, capacity=max(total + total // 4, SEEN_START), path=self._seen_path,
                              stamp=txn.id())

    # -- hosts -----------------------------------------------------------------

    def next_id(self, name: str) -> int:
        """The next value of the persistent counter `name` (ids are never
        reused: the counter is written with the transaction that used it)."""
        value = self._ids.get(name)
        if value is None:
            value = self.db.counter(self.txn, name)
        self._ids[name] = value + 1
        return value

    def origin_for(self, origin: str, name: str) -> Origin:
        host = self.origins.get(origin)
        if host is None:
            host_id = self.next_id("next_host_id")
            host = Origin(origin, name, host_id, SEQ_START, SEQ_START, 0, self.board)
            self.origins[origin] = host
            self.by_id[host_id] = host
            self._new_hosts.add(host)
            if self.domains is not None:
                self.domains.added(host)
        return host

    def add_seed_host(self, name: str) -> None:
        if name not in self.scope.seed_hosts:
            self.scope.add_seed_host(name)
            self.txn.put(SEED_PREFIX + name.encode(), b"", db=self.db.meta)

    # -- URL records -------------------------------------------------------------

    def record(self, fp: bytes) -> UrlRecord | None:
        raw = self.txn.get(fp, db=self.db.urls)
        return UrlRecord.unpack(raw) if raw is not None else None

    def save(self, fp: bytes, rec: UrlRecord, old_state: int | None) -> None:
        """Write `rec`, keeping the per-state counts right."""
        if old_state != rec.state:
            if old_state is not None:
                self.counts[STATE_NAME[old_state]] -= 1
            self.counts[STATE_NAME[rec.state]] += 1
        self.txn.put(fp, rec.pack(), db=self.db.urls)

    def move(self, fp: bytes, event: UrlEvent, reason: str | None = "", *,
             rec: UrlRecord | None = None) -> UrlRecord | None:
        """Move the URL `fp` (or its record `rec`, already read) by `event`
        (urlstate.MOVES) and write it; None if the URL is unknown. A reason of
        None keeps the record's reason."""
        if rec is None:
            rec = self.record(fp)
            if rec is None:
                return None
        old = move(rec, event, reason)
        rec.history = noted(rec.history, event, rec.state, self.clock())
        self.save(fp, rec, old)
        return rec

    def lookup(self, url: str) -> dict | None:
        """A URL's state for operators (normalised first), with its via's URL."""
        norm = normalize(url)
        if norm is None:
            return None
        rec = self.record(d.fingerprint(norm))
        return {**rec.as_dict(), "via": self.via_url(rec)} if rec else None

    def via_url(self, rec: UrlRecord) -> str | None:
        """The URL `rec`'s URL was first found on (lineage.py), None for a seed
        or a via that is no URL record."""
        if rec.via_url:
            return rec.via_url
        if rec.via == d.NO_VIA:
            return None
        raw = self.txn.get(rec.via, db=self.db.urls)
        return d.record_url(raw) if raw is not None else None

    # -- admission ---------------------------------------------------------------

    def discover(self, raw_url: str, *, depth: int, hops: int = 0, base: str | None = None,
                 seed: bool = False, via: bytes = d.NO_VIA, path: str = "", via_url: str = "") -> str:
        """Admit one URL: 'queued', 'known', 'filtered' or 'bad'. A new URL's
        record keeps `via` (the fingerprint of the URL it was found on; or
        `via_url`, that URL itself, when no record here holds it) and `path`,
        its hop path from the seed (lineage.py)."""
        url = normalize(raw_url, base)
        if url is None:
            return "bad"
        origin, name = split_host(url)
        fp = d.fingerprint(url)
        if self.forward is not None and self.forward.foreign(name):  # another partition's (docs/partitions.md)
            if seed:
                self.add_seed_host(name)  # every partition knows every seed's host, for --scope
            elif self.scope.filter_reason(url, name, depth) is not None or hops > self.max_redirects:
                return "filtered"  # its owner would filter it too: not sent
            added = self.forward.add(self.txn, url, fp, name, depth, hops, seed=seed, via_url=via_url or base or "",
                                     path=path)
            return "forwarded" if added else "known"
        if self.seen.check_and_add(fp) and self.txn.get(fp, db=self.db.urls) is not None:
            return "known"
        if seed:
            self.add_seed_host(name)
            reason = None if len(url) <= self.scope.max_url_len else "url too long"
        else:
            reason = self.scope.filter_reason(url, name, depth)
            if reason is None and self.url_filter is not None:
                reason = self.url_filter.reason(url, name, depth, base)
        if reason is None and hops > self.max_redirects:
            reason = "too many redirects"
        return self._admit(url, fp, origin, name, depth, hops, reason, via, path, via_url)

    def discover_links(self, links, *, depth: int, base: str | None = None, via: bytes = d.NO_VIA,
                       path: str = "", via_url: str = "") -> int:
        """Admit a page's outlinks, as discover() would one by one; how many were queued.
        Each new URL's record keeps `via` and `path` (the page's fingerprint and
        the links' hop path: the same for every link of a page). Links another
        urlserver partition forwards give `via_url`, the page's URL, instead
        of `via` (its record is that partition's): kept as text.

        The hot path of a DONE: a link recorded lately ends at one set
        lookup (RecentLinks), a link already in normal form skips
        normalize() and split_host(), a known one costs a Bloom probe (and
        an LMDB get only on a maybe), and a new one in scope on a known host
        becomes two LMDB items written with one putmulti per database, with
        no record object; each host is woken once. The page is handled as
        columns (pagelinks.py), each step one pass of C over the page's
        links; only links of an origin that some rule may refuse, or whose
        host is new or near its budget, go one by one (_admit_link).
        """
        recent = self.recent
        known, pending = recent.known, recent.pending
        links = [raw for raw in links if raw not in known and raw not in pending]
        if not links:
            return 0
        txn, scope, hosts, url_filter = self.txn, self.scope, self.origins, self.url_filter
        if url_filter is not None:  # only links not recorded lately go to the filters
            url_filter.batch(links)
        # whatever follows records each link in normal form (known, queued, filtered or forwarded)
        urls, origins, names = pagelinks.normal_columns(links, base, pending)
        datas, fps = pagelinks.fingerprints(urls, origins, self._prefixes)
        keep = None  # indices of the links left, when some are not
        forward = self.forward  # with --partitions > 1 (docs/partitions.md): another partition's host
        if forward is not None:
            keep = [i for i, name in enumerate(map(names.__getitem__, origins)) if not forward.foreign(name)]
            for i in sorted(set(range(len(urls))) - set(keep)):  # to its outbox
                if scope.filter_reason(urls[i], names[origins[i]], depth) is None:
                    forward.add(txn, urls[i], fps[i], names[origins[i]], depth, via_url=via_url or base or "",
                                path=path)
            keep = dict(zip(pick(fps, keep), keep))  # a URL once a page
        elif len(set(fps)) != len(fps):
            keep = dict(zip(fps, range(len(fps))))
        if keep is not None:
            keep = list(keep.values())
            urls, origins, datas, fps = pick(urls, keep), pick(origins, keep), pick(datas, keep), pick(fps, keep)
        if not fps:
            return 0
        # the Bloom filter probed for the whole page at once (seen.py): a maybe costs an LMDB get
        maybes = self.seen.check_and_add_many(fps)
        if True in maybes:
            urls_db = self.db.urls
            keep = [i for i, maybe in enumerate(maybes) if not maybe or txn.get(fps[i], db=urls_db) is None]
            urls, origins, datas, fps = pick(urls, keep), pick(origins, keep), pick(datas, keep), pick(fps, keep)
            if not fps:
                return 0
        # Links of an origin whose every link the scope admits in one look (no URL
        # rule can refuse them, its host rules admit it, its host is known with
        # budget left) are written column-wise; the others one by one (_admit).
        counts = Counter(origins)
        lone: set[str] = set()  # origins whose links go one by one
        max_len, repeats = scope.max_url_len, scope.max_path_repeats
        if (url_filter is not None or scope.url_rules or max(map(len, urls)) > max_len
                or (repeats and max(map(_SLASHES, urls)) > 5) or scope.query_trap(urls)):
            lone.update(counts)
        else:
            max_pages, crowded = self.max_pages, self.crowded
            domain_pages = self.domains.max_pages if crowded else 0  # a crowd's budget (domainbudget.py)
            for origin, added in counts.items():
                host = hosts.get(origin)
                if (host is None or host.admitted + added > max_pages or scope.host_reason(names[origin], depth)
                        or (crowded and (crowd := crowded.get(host.id)) is not None
                            and crowd.admitted + added > domain_pages)):
                    lone.add(origin)
        record_head = d.pack_new_record(DISCOVERED_STATE, depth, via, path, via_url)  # urlstate's first move
        entry_tail = d.ENTRY.pack(b"", min(depth, 65535), 0)[d.FP_SIZE:]
        records: list[tuple[bytes, bytes]] = []  # fp -> URL record, written after the loop
        entries: list[tuple[bytes, bytes]] = []  # queue key -> entry
        touched: set[Origin] = set()  # the hosts whose queues grow here
        queued = 0
        if lone:
            ones = [i for i, origin in enumerate(origins) if origin in lone]
            for i in ones:
                queued += self._admit_link(urls[i], fps[i], datas[i], origins[i], names[origins[i]], depth, base,
                                           via, path, via_url, record_head, entry_tail, records, entries, touched)
            keep = [i for i, origin in enumerate(origins) if origin not in lone]
            origins, datas, fps = pick(origins, keep), pick(datas, keep), pick(fps, keep)
        if fps:
            queue_of = list(map(hosts.__getitem__, origins))
            seqs = {host: count(host.tail) for host in queue_of}  # each host's next queue keys
            keys = map(d.QKEY.pack, map(_ID, queue_of), map(next, map(seqs.__getitem__, queue_of)))
            records.extend(zip(fps, map(record_head.__add__, datas)))
            entries.extend(zip(keys, map(operator.add, map(operator.add, fps, repeat(entry_tail)), datas)))
            touched.update(seqs)
            for host in seqs:
                added = counts[host.origin]
                host.tail += added
                host.admitted += added
            if self.crowded:  # the hosts of a domain of several count for it too (domainbudget.py)
                self.domains.count_admitted(seqs, counts)
        if entries:
            txn.cursor(db=self.db.urls).putmulti(records)
            txn.cursor(db=self.db.queue).putmulti(entries)
            self.counts[DISCOVERED_STATE.name] += len(entries)
            self.queued_total += len(entries)
            self._dirty.update(touched)
            if self.on_new_work is not None:
                for host in touched:
                    self.on_new_work(host)
        return queued + len(entries)

    def _admit_link(self, url: str, fp: bytes, data: bytes, origin: str, name: str, depth: int,
                    base: str | None, via: bytes, path: str, via_url: str, record_head: bytes, entry_tail: bytes,
                    records: list, entries: list, touched: set) -> int:
        """One link of discover_links that the column-wise path did not take:
        filtered or queued by _admit, or its record and queue entry added to
        `records` and `entries` and its host to `touched` (1 if queued by
        _admit, else 0)."""
        reason = self.scope.filter_reason(url, name, depth)
        if reason is None and self.url_filter is not None:
            reason = self.url_filter.reason(url, name, depth, base)
        host = self.origins.get(origin)
        if reason is not None or host is None or host.admitted >= self.max_pages or host.id in self.crowded:
            return self._admit(url, fp, origin, name, depth, 0, reason, via, path, via_url) == "queued"
        records.append((fp, record_head + data))
        entries.append((d.QKEY.pack(host.id, host.tail), fp + entry_tail + data))
        host.tail += 1
        host.admitted += 1
        touched.add(host)
        return 0

    def record_filtered(self, fp: bytes, rec: UrlRecord, reason: str) -> None:
        """Record a new URL (already in the Bloom filter) as FILTERED for `reason`, counted in /status."""
        self.move(fp, UrlEvent.FILTERED, reason, rec=rec)
        self.filtered_by[reason] = self.filtered_by.get(reason, 0) + 1

    def _admit(self, url: str, fp: bytes, origin: str, name: str, depth: int, hops: int,
               reason: str | None, via: bytes, path: str, via_url: str = "") -> str:
        """Record a new URL (already in the Bloom filter) as FILTERED or queue it."""
        host = self.origins.get(origin)
        if reason is None and host is not None and host.admitted >= self.max_pages:
            reason = "host page budget exhausted"
        elif reason is None and self.domains is not None:  # the domain caps (domainbudget.py)
            reason = self.domains.new_host_reason(name) if host is None else self.domains.admit(host)
        if reason is not None:
            self.record_filtered(fp, UrlRecord(url, hops=hops, depth=depth, via=via, path=path, via_url=via_url),
                                 reason)
            return "filtered"
        if host is None:
            host = self.origin_for(origin, name)
            if self.domains is not None:
                self.domains.admit(host)  # counted: new_host_reason left room
        self.move(fp, UrlEvent.DISCOVERED, rec=UrlRecord(url, hops=hops, depth=depth, via=via, path=path,
                                                         via_url=via_url))
        self.push(host, d.pack_entry(fp, depth, hops, url))
        host.admitted += 1
        self._dirty.add(host)
        return "queued"

    # -- queues ---------------------------------------------------------------------

    def push(self, host: Origin, entry: bytes, *, front: bool = False) -> None:
        if front:
            host.head -= 1
            seq = host.head
            if self._popped.get(host) == seq:  # the entry put back is the only one popped: nothing left to delete
                del self._popped[host]
        else:
            seq = host.tail
            host.tail += 1
        self.txn.put(d.QKEY.pack(host.id, seq), entry, db=self.db.queue)
        self.queued_total += 1
        if self.on_new_work is not None:
            self.on_new_work(host)

    def pop(self, host: Origin) -> bytes | None:
        """The raw entry at the head of `host`'s queue, taken off it (deleted
        from LMDB with the next SWEEP_RUN: see the top)."""
        head = host.head
        if head >= host.tail:
            return None
        entry = self.txn.get(d.QKEY.pack(host.id, head), db=self.db.queue)
        host.head = head + 1
        self.queued_total -= 1
        popped = self._popped
        first = popped.setdefault(host, head)
        if head + 1 - first >= SWEEP_RUN or head + 1 == host.tail:
            self._delete_popped(host, first)
            del popped[host]
        return entry

    def stale(self, url: str, state: int) -> None:
        """A popped entry turned out stale (its URL's record is not queued:
        urlstate.can), and is skipped. Entries popped before a kill -9 are
        expected (see the top) and counted back into queued_total; any other
        is a warning."""
        if self.unswept:
            self.unswept -= 1
            self.queued_total += 1  # not in the total saved at the last commit, but taken off it by pop()
            log.debug("event=stale_entry url=%s state=%s reason=popped_before_restart", url, UrlState(state).name)
        else:
            log.warning("event=stale_entry url=%s state=%s", url, UrlState(state).name)

    def _delete_popped(self, host: Origin, first: int) -> None:
        """Delete `host`'s entries from seq `first` to its head, with one cursor pass."""
        cursor = self.txn.cursor(db=self.db.queue)
        end = d.QKEY.pack(host.id, host.head)
        if cursor.set_range(d.QKEY.pack(host.id, first)):
            while cursor.key() < end and cursor.delete():  # delete() moves to the next key
                pass

    def drain(self, host: Origin, reason: str) -> int:
        """End every queued URL of `host` (DNS failure, forbidden address...): DRAINED."""
        count = 0
        while (entry := self.pop(host)) is not None:
            fp = d.entry_fp(entry)
            rec = self.record(fp)
            if rec is not None and can(rec.state, UrlEvent.DRAINED):
                self.move(fp, UrlEvent.DRAINED, reason, rec=rec)
                count += 1
            elif rec is not None:  # a stale entry (urlstate.can)
                self.stale(rec.url, rec.state)
        if count:
            log.warning("event=host_drained origin=%s urls=%d state=%s reason=%r",
                        host.origin, count, UrlState.ERROR.name, reason)
        return count

    # -- delayed retries -------------------------------------------------------------

    def delay(self, host: Origin, entry: bytes, due: float) -> None:
        self.txn.put(d.delayed_key(due, d.entry_fp(entry)), d.pack_held(host.id, entry), db=self.db.delayed)
        self.delayed_total += 1

    def next_delayed(self) -> float | None:
        cur = self.txn.cursor(db=self.db.delayed)
        if not cur.first():
            return None
        return d.delayed_due(cur.key())

    def release_due(self, now: float) -> int:
        """Move retries that are due back to the tail of their host's queue."""
        if not self.delayed_total:
            return 0
        cur = self.txn.cursor(db=self.db.delayed)
        moved = 0
        last = d.delayed_key(now, d.LAST_FP)  # keys sort by due time: every key <= it is due
        while cur.first() and cur.key() <= last:
            host_id, entry = d.unpack_held(cur.value())
            cur.delete()
            self.delayed_total -= 1
            fp = d.entry_fp(entry)
            rec = self.record(fp)
            if rec is None or not can(rec.state, UrlEvent.DUE):  # a stale second entry (urlstate.can)
                log.warning("event=stale_entry fp=%s state=%s", fp.hex(), rec and UrlState(rec.state).name)
                continue
            self.move(fp, UrlEvent.DUE, "retry", rec=rec)
            self.push(self.by_id[host_id], entry)
            moved += 1
        return moved

    # -- retry on request (--retry-errors) ----------------------------------------------

    def retry_requested(self, wanted, *, errors: bool = True, retries: bool = True) -> tuple[int, int, set[Origin]]:
        """Queue again, at the tail of their origin's queue, every FETCH_ERROR
        URL waiting in the delayed queue (`retries`) and every ERROR URL
        (`errors`) whose URL `wanted(url)` accepts (RETRY_REQUESTED), their
        tries and expiries reset so each gets its full retries again.
        (retries, errors) requeued and the origins they joined. A scan of the
        records: at a start, or when the operator asks (POST /api/retry)."""
        txn, touched = self.txn, set()
        do_retries, do_errors = retries, errors
        retries = errors = 0
        if do_retries and self.counts["FETCH_ERROR"]:
            held = list(txn.cursor(db=self.db.delayed))  # read first: the loop deletes
            for key, value in held:
                host_id, entry = d.unpack_held(value)
                fp = d.entry_fp(entry)
                rec = self.record(fp)
                if rec is None or rec.state != UrlState.FETCH_ERROR or not wanted(rec.url):
                    continue  # a feed's next poll, a recrawl's next visit, or not chosen
                txn.delete(key, db=self.db.delayed)
                self.delayed_total -= 1
                host = self.by_id[host_id]
                self._requeue(fp, rec, host, entry)
                touched.add(host)
                retries += 1
        if do_errors and self.counts["ERROR"]:
            error = UrlState.ERROR
            failed = [(fp, raw) for fp, raw in txn.cursor(db=self.db.urls) if d.record_state(raw) == error]
            for fp, raw in failed:
                rec = UrlRecord.unpack(raw)
                if not wanted(rec.url):
                    continue
                host = self.origin_for(*split_host(rec.url))
                self._requeue(fp, rec, host, d.pack_entry(fp, rec.depth, rec.hops, rec.url))
                touched.add(host)
                errors += 1
        return retries, errors, touched

    def _requeue(self, fp: bytes, rec: UrlRecord, host: Origin, entry: bytes) -> None:
        rec.tries = rec.expiries = rec.doc_id = 0  # its full retries again; the fetch is a new document
        self.move(fp, UrlEvent.RETRY_REQUESTED, "retry requested", rec=rec)
        self.push(host, entry)


def _discard(path: str) -> None:
    """Remove a start-up file and its tmp, if any: a failed write must not hold the space."""
    for name in (f"{path}.tmp", path):
        try:
            os.unlink(name)
        except OSError:
            pass
