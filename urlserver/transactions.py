# Claims: which spider holds which URL, until when. Every claim has a
# deadline (Timeout_Update after the handout or the last WORKING); a heap
# of (deadline, trans_id) finds expired claims in O(log n), entries made
# stale by a WORKING are skipped. The table is in memory; the frontier
# persists page claims in LMDB (claims db) so a restart can requeue them.
"""Claim and ClaimTable: in-flight transactions and their expiry."""

from __future__ import annotations

import heapq

PAGE, ROBOTS = "page", "robots"


class RobotsJob:
    """Fetch `url` (maybe after redirects) to learn `origin`'s robots.txt."""

    __slots__ = ("origin", "url", "hops")

    def __init__(self, origin: str, url: str, hops: int = 0) -> None:
        self.origin, self.url, self.hops = origin, url, hops


class Claim:
    __slots__ = ("trans_id", "doc_id", "kind", "host", "ip", "url", "entry", "job", "spider",
                 "deadline", "started")

    def __init__(self, trans_id: int, doc_id: int, kind: str, host, ip: str, url: str, spider,
                 deadline: float, started: float, *, entry: bytes = b"", job: RobotsJob | None = None) -> None:
        self.trans_id, self.doc_id, self.kind, self.host, self.ip = trans_id, doc_id, kind, host, ip
        self.url, self.spider, self.deadline, self.started = url, spider, deadline, started
        self.entry, self.job = entry, job


class ClaimTable:
    """trans_id -> Claim, with expiry by deadline."""

    def __init__(self) -> None:
        self.by_id: dict[int, Claim] = {}
        self._heap: list[tuple[float, int]] = []

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
