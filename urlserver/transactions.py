# Claims: which spider holds which URL, until when. Every claim has a
# deadline (Timeout_Update after the handout or the last WORKING); a heap
# of (deadline, trans_id) finds expired claims in O(log n), entries made
# stale by a WORKING are skipped. The table is in memory; it also owns the
# claims database in LMDB, where page claims are persisted (in the write
# transaction that claims them) so that a restart can requeue them.
"""Claim and ClaimTable: in-flight transactions and their expiry."""

from __future__ import annotations

import heapq

from . import db as d

PAGE, ROBOTS = "page", "robots"
# A record-only page transaction (docs/protocol.txt 5.3 nofetch=): the spider
# connects nowhere, so it holds no politeness slot; persisted as a page claim.
UNFETCHED = "unfetched"


class RobotsJob:
    """Fetch `url` (maybe after redirects) to learn `origin`'s robots.txt."""

    __slots__ = ("origin", "url", "hops")

    def __init__(self, origin: str, url: str, hops: int = 0) -> None:
        self.origin, self.url, self.hops = origin, url, hops


class Claim:
    """One transaction in flight: a page (entry: its queue entry; rec: its
    URL record as the claim wrote it, which its ending moves: crawl.py), a
    robots.txt fetch (job), or an unfetched page (failure: its host's
    dns.Resolution)."""

    __slots__ = ("trans_id", "doc_id", "kind", "host", "ip", "url", "entry", "fp", "job", "spider",
                 "deadline", "started", "failure", "rec")

    def __init__(self, trans_id: int, doc_id: int, kind: str, host, ip: str, url: str, spider,
                 deadline: float, started: float, *, entry: bytes = b"", job: RobotsJob | None = None,
                 failure=None, rec=None) -> None:
        self.trans_id, self.doc_id, self.kind, self.host, self.ip = trans_id, doc_id, kind, host, ip
        self.url, self.spider, self.deadline, self.started = url, spider, deadline, started
        self.entry, self.job, self.failure, self.rec = entry, job, failure, rec
        self.fp = d.entry_fp(entry)  # a page claim's URL fingerprint (b"" for robots.txt)


class ClaimTable:
    """trans_id -> Claim, with expiry by deadline; page claims persisted in
    `database`'s claims table."""

    def __init__(self, database: d.Db | None = None) -> None:
        self.by_id: dict[int, Claim] = {}
        self._heap: list[tuple[float, int]] = []
        self._db = database

    # -- the persisted page claims (in the caller's write transaction) ----------------

    def persist(self, txn, claim: Claim) -> None:
        """Record a page claim, so that a restart gives its URL back."""
        txn.put(d.claim_key(claim.trans_id), d.pack_held(claim.host.id, claim.entry), db=self._db.claims)

    def forget(self, txn, trans_id: int) -> None:
        """The page claim ended (DONE, expiry, spider gone, unsendable)."""
        txn.delete(d.claim_key(trans_id), db=self._db.claims)

    def take_saved(self, txn) -> list[tuple[int, bytes]]:
        """After a restart: every persisted claim, as (host_id, queue entry), deleted."""
        found = []
        for key, value in list(txn.cursor(db=self._db.claims)):
            found.append(d.unpack_held(value))
            txn.delete(key, db=self._db.claims)
        return found

    # -- the claims in memory --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.by_id)

    def add(self, claim: Claim) -> None:
        self.by_id[claim.trans_id] = claim
        heapq.heappush(self._heap, (claim.deadline, claim.trans_id))

    def get(self, trans_id: int) -> Claim | None:
        return self.by_id.get(trans_id)

    def remove(self, trans_id: int) -> Claim | None:
        return self.by_id.pop(trans_id, None)

    def extend(self, claim: Claim, deadline: float) -> None:
        claim.deadline = deadline
        heapq.heappush(self._heap, (deadline, claim.trans_id))

    def expired(self, now: float) -> list[Claim]:
        """Claims whose deadline has passed, removed from the table."""
        heap, found = self._heap, []
        while heap and heap[0][0] <= now:
            deadline, trans_id = heapq.heappop(heap)
            claim = self.by_id.get(trans_id)
            if claim is not None and claim.deadline == deadline:
                del self.by_id[trans_id]
                found.append(claim)
        return found

    def next_deadline(self) -> float | None:
        heap = self._heap
        while heap:
            deadline, trans_id = heap[0]
            claim = self.by_id.get(trans_id)
            if claim is not None and claim.deadline == deadline:
                return deadline
            heapq.heappop(heap)
        return None

    def of_spider(self, spider) -> list[Claim]:
        return [c for c in self.by_id.values() if c.spider is spider]

    def per_spider(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for c in self.by_id.values():
            name = getattr(c.spider, "name", str(c.spider))
            counts[name] = counts.get(name, 0) + 1
        return counts
