# Sitemaps (--sitemaps): the Sitemap: lines of a host's robots.txt and its
# /sitemap.xml are admitted to the frontier as sitemap URLs; the spider
# parses each (spider/sitemaps.py) and its DONE carries the listed URLs as
# outlinks with sitemap=urlset or sitemap=index (docs/protocol.txt 5.5). A
# urlset's URLs are DISCOVERED like links, an index's children are admitted
# as sitemaps one level deeper. Bounds, each a setting:
#
#   sitemap_max_urls   URLs taken from one sitemap (sitemaps.org allows
#                      50,000; one DONE carries at most MAX_OUTLINKS, 10,000)
#   sitemaps_per_host  sitemaps admitted per host, whatever names them
#   sitemap_depth      index nesting: robots.txt and /sitemap.xml are level
#                      0, an index's children level 1, and so on
#
# The spider bounds the rest (50 MB inflated, 50,000 <loc>s, safe XML).
# Sitemaps are fetched once. State, in its own LMDB database:
#
#   sitemaps   fp(8) -> level(1)           (URLs admitted as sitemaps)
#   meta       "sitemaps:" host name -> u64 sitemaps admitted for that host
"""Sitemaps: admission from robots.txt, bounds, and what a sitemap's DONE yields."""

from __future__ import annotations

import logging

from wreck.protocol import Done
from wreck.urlnorm import normalize

from . import db as d
from . import lineage
from .frontier import Frontier
from .scope import split_host

log = logging.getLogger("urlserver")
COUNT_PREFIX = "sitemaps:"
WELL_KNOWN = "/sitemap.xml"


class Sitemaps:
    """Which URLs are sitemaps, and what their fetches add to the frontier."""

    def __init__(self, frontier: Frontier, *, enabled: bool, max_urls: int, per_host: int, depth: int) -> None:
        self.frontier = frontier
        self.db = frontier.db
        self.enabled, self.max_urls, self.per_host, self.depth = enabled, max_urls, per_host, depth

    def is_sitemap(self, txn, fp: bytes) -> bool:
        return self.enabled and txn.get(fp, db=self.db.sitemaps) is not None

    def level(self, fp: bytes) -> int:
        """The index nesting level of sitemap `fp` (admitted before)."""
        return self.frontier.txn.get(fp, db=self.db.sitemaps)[0]

    def from_robots(self, origin: str, listed: list[str]) -> int:
        """Admit the sitemaps robots.txt of `origin` names (a relative one,
        `Sitemap: /sitemap.xml`, resolved against the robots.txt, as Scrapy
        does), and its /sitemap.xml."""
        if not self.enabled:
            return 0
        robots_txt = origin + "/robots.txt"
        return (sum(self.admit(url, level=0, base=robots_txt, path=lineage.ROBOTS_SITEMAP_PATH) for url in listed)
                + self.admit(origin + WELL_KNOWN, level=0, path=lineage.WELL_KNOWN_SITEMAP_PATH))

    def admit(self, raw_url: str, *, level: int, base: str | None = None, via: bytes = d.NO_VIA,
              path: str = "") -> bool:
        """Queue `raw_url` as a sitemap if the bounds allow; whether it was
        queued. `via` and `path`: where it was found (lineage.py)."""
        url = normalize(raw_url, base)
        if url is None or level > self.depth:
            return False
        fr, txn = self.frontier, self.frontier.txn
        name = split_host(url)[1]
        counter = COUNT_PREFIX + name
        admitted = self.db.counter(txn, counter, 0)
        if admitted >= self.per_host:
            log.info("event=sitemap_skipped url=%s reason=%r", url, f"{self.per_host} sitemaps for this host")
            return False
        if fr.discover(url, depth=0, via=via, path=path) != "queued":
            return False
        txn.put(d.fingerprint(url), bytes((level,)), db=self.db.sitemaps)
        self.db.set_counter(txn, counter, admitted + 1)
        log.info("event=sitemap_queued url=%s level=%d", url, level)
        return True

    def fetched(self, fp: bytes, url: str, done: Done, rec: d.UrlRecord) -> int:
        """A FETCHED sitemap (`rec` its record): queue its children or discover
        its URLs, each found on it by a sitemap hop (lineage.py); how many."""
        kind = done.extra.get("sitemap")
        links = done.outlinks
        path = lineage.extend(rec.path, lineage.SITEMAP)
        if kind == "index":
            level = self.level(fp) + 1
            count = sum(self.admit(link, level=level, via=fp, path=path) for link in links)
        elif kind == "urlset":
            count = self.frontier.discover_links(links[: self.max_urls], depth=rec.depth + 1, base=url, via=fp,
                                                 path=path)
        else:
            log.warning("event=sitemap_unusable url=%s reason=%r", url, done.reason or "no sitemap= field")
            return 0
        listed = done.extra.get("listed", "")
        log.info("event=sitemap_fetched url=%s kind=%s listed=%s sent=%d taken=%d queued=%d", url, kind,
                 listed, len(links), min(len(links), self.max_urls), count)
        return count
