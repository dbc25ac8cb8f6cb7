# The seed list's format, shared by the urlserver (which loads the seeds) and
# wreck-crawl (which must know before starting it whether a crawl has feeds,
# and so runs until Ctrl-C). One URL per line from a file, standard input
# ('-') or the command line; blank lines and '#' comments are skipped; a
# seed written 'feed:URL' is a feed. Reading only: what a line means beyond
# that (normalising, queueing) is the urlserver's.
"""Seed lines and the 'feed:' mark."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

FEED_PREFIX = "feed:"


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


def has_feeds(source: str | None, args: Iterable[str]) -> bool:
    """Whether any seed is marked 'feed:' (wreck-crawl then runs continuously)."""
    return any(text.startswith(FEED_PREFIX) for _, _, text in read_lines(source, args))
