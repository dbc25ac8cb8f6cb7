# Seeds from a file, standard input ('-') or the command line (the line format
# is wreck/seedfile.py, shared with wreck-crawl). One URL per
# line; blank lines and '#' comments are skipped; a line that does not
# normalise to an http(s) URL is reported with its line number and skipped.
# A seed written 'feed:URL', and every line of a --feeds file, is a feed
# (feeds.py): fetched again and again, its new items fetched once.
# Adding seeds is idempotent (the seen-set), so a resumed crawl may be given
# the same seeds again.
"""Reading seed URLs."""

from __future__ import annotations

from collections.abc import Iterable

from wreck.seedfile import FEED_PREFIX, has_feeds, read_lines  # noqa: F401 (has_feeds: re-exported)
from wreck.urlnorm import normalize


def load(crawl, source: str | None, args: Iterable[str], log, *, feeds: str | None = None) -> dict[str, int]:
    """Add every seed (and every feed of the `feeds` file) to `crawl`; counts by outcome."""
    counts = {"queued": 0, "known": 0, "bad": 0, "filtered": 0}
    lines = [(False, line) for line in read_lines(source, args)]
    if feeds is not None:
        lines += [(True, line) for line in read_lines(feeds, ())]
    for is_feed, (where, number, text) in lines:
        if text.startswith(FEED_PREFIX):
            is_feed, text = True, text[len(FEED_PREFIX):].strip()
        if normalize(text) is None:
            log.warning("event=bad_seed source=%s line=%d text=%r", where, number, text[:200])
            counts["bad"] += 1
            continue
        outcome = crawl.add_feed(text) if is_feed else crawl.add_seed(text)
        counts[outcome] = counts.get(outcome, 0) + 1  # "forwarded": another partition's (docs/partitions.md)
    crawl.commit()
    log.info("event=seeds_loaded queued=%d known=%d bad=%d filtered=%d", counts["queued"], counts["known"],
             counts["bad"], counts["filtered"])
    return counts
