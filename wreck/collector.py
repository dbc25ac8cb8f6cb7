# Python's cyclic garbage collector, set for a long-running daemon.
#
# What a daemon has loaded once it serves (modules, settings, the crawl's
# hosts and records) lives as long as it does: gc.freeze() moves it out of
# the collector's generations, so a full collection does not walk it again.
# And the young generation's threshold goes from CPython's 700 to
# YOUNG_THRESHOLD: a daemon makes a few container objects per link, page or
# record, nearly all freed at once by reference counting, yet a batch of a
# thousand (one DONE's links, one commit's records) alive at the same moment
# set a young collection off every few hundred, and those found next to no
# cycles (bench/results/2026-11-24-s8-frontier8.md: the collector was 6-13 %
# of a hand-out's CPU; 50,000 gave +6 to +13 % hand-outs/s).
"""settle(): freeze what is loaded and raise the young generation's threshold."""

from __future__ import annotations

import gc

# Container allocations (net of frees) between young collections: about a
# hundred pages' links in flight, a few MB of young objects at most.
YOUNG_THRESHOLD = 50_000


def settle() -> None:
    """Call once a daemon has loaded what it keeps, before it serves."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
