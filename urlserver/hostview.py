# The hosts as the dashboard and /status see them, kept as the crawl goes so
# that a look costs the same at 100 hosts or 100,000 (issue 14, finding 8;
# issue 17). The engine tells the board three things, each in O(1):
#   - an origin was created (born): its name joins a sorted index, merged
#     lazily (new names wait in a list; the first search after sorts them in,
#     and timsort merges a sorted run with a short one in linear time);
#   - an origin's waiting reason changed (moved, from Origin.waiting's
#     setter): it changes set, so the counts by reason are len() of a set and
#     "blocked" hosts are read from those sets with a bounded scan;
#   - a page answer came back (answered): fetched, errors, last error and
#     the slowest answer of its origin, and the top-N tables of the busiest
#     (most fetched), the erroring (most errors) and the slowest (longest
#     answer) origins. Those three keys only ever grow, so a bounded top-N
#     stays exact with one comparison per answer: an origin enters when its
#     key passes the smallest held, which then leaves (TopN).
"""HostBoard: per-origin figures, counts by waiting reason, top-N and search."""

from __future__ import annotations

import bisect
import itertools

from .politeness import Waiting

NONE = Waiting.NONE

# Rows in each top-N table and in a search answer: a screenful.
TOP_N = 20
# Origins of one waiting reason looked at for its earliest due time and for
# the "blocked" table: bounded so that a look never walks 100,000 hosts (the
# due time is then the earliest among those looked at, and says so).
HELD_SCAN = 500
# Characters of a last error kept per origin (the record keeps the full text).
LAST_ERROR_CHARS = 200


class HostStats:
    """One origin's answers so far."""

    __slots__ = ("fetched", "errors", "last_error", "slowest")

    def __init__(self) -> None:
        self.fetched = 0
        self.errors = 0
        self.last_error = ""
        self.slowest = 0.0  # seconds from handout to DONE, the longest seen


class TopN:
    """The N origins with the largest value of a key that only grows."""

    def __init__(self, n: int = TOP_N) -> None:
        self.n = n
        self.held: dict = {}  # origin -> key
        self._floor = None  # the origin holding the smallest key, once full

    def offer(self, origin, key: float) -> None:
        held = self.held
        if origin in held:
            held[origin] = key
            if origin is self._floor:
                self._floor = min(held, key=held.__getitem__)
            return
        if len(held) < self.n:
            held[origin] = key
            if len(held) == self.n:
                self._floor = min(held, key=held.__getitem__)
            return
        if key > held[self._floor]:
            del held[self._floor]
            held[origin] = key
            self._floor = min(held, key=held.__getitem__)

    def ranked(self) -> list:
        """The origins, largest key first."""
        return sorted(self.held, key=lambda o: (-self.held[o], o.origin))


class HostBoard:
    """Per-origin figures and indexes, updated by the engine as it goes."""

    def __init__(self, *, top: int = TOP_N) -> None:
        self.held: dict[Waiting, set] = {w: set() for w in Waiting if w is not NONE}  # origins held, by reason
        self.stats: dict = {}  # Origin -> HostStats, for origins that answered
        self.busiest, self.erroring, self.slowest = TopN(top), TopN(top), TopN(top)
        self.fetched_total = 0  # pages FETCHED, all origins (history's pages/s)
        self._sorted: list[str] = []
        self._new: list[str] = []

    # -- what the engine tells ---------------------------------------------------------

    def born(self, origin) -> None:
        self._new.append(origin.origin)

    def moved(self, origin, old: Waiting, new: Waiting) -> None:
        """`origin`'s waiting reason went from `old` to `new` (on the hot path: a set move)."""
        held = self.held
        if old is not NONE:
            held[old].discard(origin)
        if new is not NONE:
            held[new].add(origin)

    def answered(self, origin, *, fetched: bool, error: str | None, seconds: float) -> None:
        """A page answer of `origin`: fetched, or failed with `error` (None: neither), after `seconds`."""
        st = self.stats.get(origin)
        if st is None:
            st = self.stats[origin] = HostStats()
        if fetched:
            st.fetched += 1
            self.fetched_total += 1
            self.busiest.offer(origin, st.fetched)
        if error is not None:
            st.errors += 1
            st.last_error = error[:LAST_ERROR_CHARS]
            self.erroring.offer(origin, st.errors)
        if seconds > st.slowest:
            st.slowest = seconds
            self.slowest.offer(origin, seconds)

    # -- what a look reads -------------------------------------------------------------

    def waiting_counts(self) -> dict[str, int]:
        """Origins held, by waiting reason (Waiting's value), largest first."""
        counts = {w.value: len(s) for w, s in self.held.items() if s}
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def held_sample(self, reasons, limit: int | None = HELD_SCAN):
        """Up to `limit` origins held for any of `reasons` (a bounded scan; None: all)."""
        sets = [self.held[w] for w in reasons if self.held.get(w)]
        return itertools.islice(itertools.chain.from_iterable(sets), limit)

    def search(self, origins: dict, prefix: str, limit: int = TOP_N) -> list:
        """Origins (of `origins`, the frontier's origin string -> Origin) whose
        origin string (scheme://host:port) or host name starts with `prefix`,
        in name order, at most `limit`."""
        if self._new:  # merged at the first look after new origins came
            self._sorted.extend(self._new)
            self._sorted.sort()
            self._new = []
        found = []
        keys = (prefix,) if "://" in prefix else (f"http://{prefix}", f"https://{prefix}")
        for key in keys:
            i = bisect.bisect_left(self._sorted, key)
            for name in itertools.islice(self._sorted, i, i + limit):
                if not name.startswith(key):
                    break
                found.append(origins[name])
        found.sort(key=lambda o: (o.name, o.origin))
        return found[:limit]

    def row(self, origin, now: float) -> dict:
        """What the hosts view shows of one origin."""
        st = self.stats.get(origin)
        waiting = origin.waiting.value
        return {
            "origin": origin.origin, "queued": origin.queued, "in_flight": origin.inflight,
            "fetched": st.fetched if st else 0, "errors": st.errors if st else 0,
            "last_error": st.last_error if st else "", "slowest_s": round(st.slowest, 3) if st else 0.0,
            "delay_s": max(origin.delay, origin.slow), "robots": origin.robots.phase.value,
            "waiting": waiting, "due": due(origin, now),
        }  # fmt: skip


def due(origin, now: float) -> float | None:
    """When `origin` may be served next: its robots.txt retry, else its
    politeness slot (None: it waits for an answer or for work, not a time)."""
    rules = origin.robots.rules
    if origin.waiting.value == "robots retry" and rules is not None:
        return rules.record.expires
    return max(now, origin.next_ok) if origin.in_heap else None
