# A bounded set of the strings seen lately, in two generations: what is
# added goes into the current generation; once that holds `limit` strings,
# it becomes the last one and the generation before is forgotten at once,
# so at most about twice `limit` strings are held, whatever the crawl's
# size, and a string added lately is always still there. `known` is the
# union of the two generations kept as one set: a lookup is one probe of
# one table (a string new to both costs one cache miss, not two: issue 16),
# and at a turn the current generation simply becomes `known`, so no set of
# the last generation is kept apart (no copy, no difference taken).
#
# Both ends of a DONE's links use it, each adding what it may trust only
# once a commit says so: the urlserver's RecentLinks (urlserver/seen.py:
# links its committed transactions recorded) and the spider's SentLinks
# (spider/sentlinks.py: links of DONEs the urlserver named in COMMITTED).
"""RecentSet: the strings added lately, bounded, in two generations."""

from __future__ import annotations

from collections.abc import Collection


class RecentSet:
    """The strings added lately: every one of the last `limit` to about
    2 x `limit` added, and no more (an older one is forgotten)."""

    __slots__ = ("limit", "current", "known")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.current: set[str] = set()  # this generation
        self.known: set[str] = set()  # this generation and the last one

    def update(self, items: Collection[str]) -> None:
        """Add `items` (read twice: a set, tuple or list); a full generation
        becomes the last one."""
        self.current.update(items)
        self.known.update(items)
        if len(self.current) >= self.limit:
            self.known, self.current = self.current, set()  # the last generation forgotten

    def __contains__(self, item: str) -> bool:
        return item in self.known

    def __len__(self) -> int:
        return len(self.known)
