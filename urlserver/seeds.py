# Seeds from a file, standard input ('-') or the command line. One URL per
# line; blank lines and '#' comments are skipped; a line that does not
# normalise to an http(s) URL is reported with its line number and skipped.
# Adding seeds is idempotent (the seen-set), so a resumed crawl may be given
# the same seeds again.
"""Reading seed URLs."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

from protocol.urlnorm import normalize


def read_lines(source: str | None, args: Iterable[str]) -> Iterator[tuple[str, int, str]]:
    """(where, line number, text) for every seed candidate."""
    if source is not None:
        if source == "-":
            fh, where = sys.stdin, "<stdin>"
        else:
            fh, where = open(source, encoding="utf-8", errors="replace"), source
        try:
            for number, line in enumerate(fh, 1):
                text = line.strip()
                if text and not text.startswith("#"):
                    yield where, number, text
        finally:
            if fh is not sys.stdin:
                fh.close()
    for number, text in enumerate(args, 1):
        yield "<args>", number, text.strip()


def load(crawl, source: str | None, args: Iterable[str], log) -> dict[str, int]:
    """Add every seed to `crawl`; returns counts by outcome."""
    counts = {"queued": 0, "known": 0, "bad": 0, "filtered": 0}
    for where, number, text in read_lines(source, args):
        if normalize(text) is None:
            log.warning("event=bad_seed source=%s line=%d text=%r", where, number, text[:200])
            counts["bad"] += 1
            continue
        counts[crawl.add_seed(text)] += 1
    crawl.commit()
    log.info("event=seeds_loaded queued=%d known=%d bad=%d", counts["queued"], counts["known"], counts["bad"])
    return counts
