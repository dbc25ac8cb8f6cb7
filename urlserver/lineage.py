# Where a URL came from: the URL it was first discovered from (its via) and
# its hop path from a seed, one letter per hop, as Heritrix writes them in
# a capture's metadata record (via:, hopsFromSeed:; docs/warc.md).
#
# The letters are Heritrix's (its Hop enum): L a link found in a page (or a
# feed's story), R a redirect's target, M a URL listed in a sitemap (or a
# sitemap named by a sitemap index), P a prerequisite (robots.txt: the
# sitemaps it names are "PM"), I a URL inferred by convention (the
# well-known /sitemap.xml). A seed's path is empty and it has no via.
#
# A path is bounded as Heritrix bounds it (CrawlURI.extendHopsPath): past
# MAX_HOPS_SHOWN letters the oldest are dropped and counted in a prefix,
# "N+" then the last MAX_HOPS_SHOWN letters, so a spider trap's endless
# chain costs a record at most MAX_PATH_LEN bytes and the WARC shows the
# same text Heritrix would.
#
# The via is kept as the via's fingerprint (db.FP_SIZE bytes in the URL
# record, db.NO_VIA for none: a seed, or a sitemap robots.txt names, as
# robots.txt is no URL record); its URL is read from the via's own record when
# the URL is handed out (docs/protocol.txt 5.3, via=). A link forwarded by
# another urlserver partition has its via on that partition: its record
# keeps the via's URL as text instead (Frontier.discover_links(via_url=)),
# so only forwarded links pay for it on disk.
"""Hop paths from the seed, bounded as Heritrix bounds them."""

from __future__ import annotations

LINK, REDIRECT, SITEMAP, PREREQUISITE, INFERRED = "L", "R", "M", "P", "I"
SEED_PATH = ""  # a seed: no hop, no via
SEED_MARK = "-"  # a seed's hops= on the wire (docs/protocol.txt 5.3), as a value is never empty
ROBOTS_SITEMAP_PATH = PREREQUISITE + SITEMAP  # a sitemap robots.txt names (robots.txt is a prerequisite)
WELL_KNOWN_SITEMAP_PATH = INFERRED  # /sitemap.xml, tried by convention
# Heritrix shows 50 letters (CrawlURI.MAX_HOPS_DISPLAYED); the dropped count
# takes at most 5 digits and "+" (depth is a u16, so at most 65,535 hops).
MAX_HOPS_SHOWN = 50
MAX_PATH_LEN = MAX_HOPS_SHOWN + 6


def extend(path: str, letter: str) -> str:
    """`path` followed by one hop of kind `letter`, bounded (Heritrix's rule)."""
    if len(path) < MAX_HOPS_SHOWN:
        return path + letter
    plus = path.find("+")
    dropped = int(path[:plus]) if plus >= 0 else 0
    return f"{min(dropped + 1, 99999)}+{path[plus + 2:]}{letter}"
