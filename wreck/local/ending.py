# When a crawl split among urlserver partitions is over (docs/partitions.md,
# Ending a crawl). No partition can tell alone: another may still forward it
# links. So a watcher looks at every partition's /status in turn, and the
# crawl is over when, at two successive looks at all of them, every
# partition would end (its `would_end`), holds nothing in flight and has an
# empty outbox, and the batches each applied from the others and its URL
# counts stood still: no batch crossed between the looks, so none is on its
# way (the counting method of distributed termination detection, Mattern).
"""EndWatch: has a partitioned crawl ended?"""

from __future__ import annotations


class EndWatch:
    """Feed it every partition's /status, one round after another."""

    def __init__(self) -> None:
        self._before: list | None = None

    def ended(self, looks: list[dict | None]) -> bool:
        """True once two successive rounds of `looks` (None: a partition that
        did not answer) show every partition quiet, and nothing moved."""
        quiet = all(s is not None and s.get("partition") and s["partition"].get("would_end")
                    and not s.get("in_flight") and not s["partition"].get("outbox_batches") for s in looks)
        now = [(s["partition"]["batches_applied"], s.get("urls")) for s in looks] if quiet else None
        ended = quiet and now == self._before
        self._before = now
        return ended

    @staticmethod
    def reason(looks: list[dict]) -> str:
        """The crawl's finish reason: 'done' if every partition is done, else
        the first other reason (a limit, deferred retries)."""
        reasons = [s["partition"]["would_end"] for s in looks]
        return next((r for r in reasons if r != "done"), "done")
