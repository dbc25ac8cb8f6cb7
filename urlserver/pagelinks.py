# A page's outlinks as columns: their URLs, origins and fingerprints as
# parallel lists, each made by one C-level pass (map, zip, a dict) over the
# page instead of a Python loop per link. Frontier.discover_links runs on
# these columns: at 100 new links a page, the bytecode of a per-link loop
# was half the urlserver's CPU for new links (issue 16,
# bench/results/2026-11-24-frontier2.md), and each pass here costs tens of
# nanoseconds a link. A page whose links are all in normal form (the usual
# case: spiders send them normalised, wreck/urlnorm.py's match_normal checks) never
# enters a Python loop; the others take the loop for that page only.
"""Columns of a page's outlinks: normal form, origins, fingerprints."""

from __future__ import annotations

import operator
from functools import partial
from hashlib import blake2b

from wreck.urlnorm import match_normal, normalize

from . import db as d
from .scope import split_host

_ORIGIN_NAME = operator.methodcaller("group", 1, 3)  # match_normal's groups: the origin, the host name
_FIRST = operator.itemgetter(0)
_HASH = partial(blake2b, digest_size=d.FP_SIZE - 2)  # db.fingerprint's hash of the URL
_DIGEST = operator.methodcaller("digest")
PREFIXES_KEPT = 1 << 16  # origins whose prefix is kept: about 10 MB at most


def pick(column: list, indices) -> list:
    """The items of `column` at `indices`, in that order."""
    return list(map(column.__getitem__, indices))


def normal_columns(links: list[str], base: str | None, recorded: set[str]) -> tuple[list[str], list[str], dict]:
    """(URLs in normal form, their origins, origin -> host name) of `links`,
    in page order, without those normalize() refuses. A link already in
    normal form is added to `recorded` (RecentLinks.pending: its text is
    its URL); one normalised against `base` is not (the text alone does
    not say its URL)."""
    matches = list(map(match_normal, links))
    if None not in matches:  # every link in normal form: no loop
        recorded.update(links)
        pairs = list(map(_ORIGIN_NAME, matches))
        return links, list(map(_FIRST, pairs)), dict(pairs)
    urls: list[str] = []
    origins: list[str] = []
    names: dict[str, str] = {}
    for raw, match in zip(links, matches):
        if match is not None:
            url = raw
            origin, name = match.group(1, 3)
            recorded.add(raw)
        else:
            url = normalize(raw, base)
            if url is None:
                continue
            origin, name = split_host(url)
        urls.append(url)
        origins.append(origin)
        names[origin] = name
    return urls, origins, names


class Prefixes(dict):
    """origin -> db.origin_prefix(origin), computed on a miss and kept: the
    pages of a crawl link to the same origins again and again. Emptied when
    it holds PREFIXES_KEPT, so its memory stays bounded on any crawl."""

    def __missing__(self, origin: str) -> bytes:
        if len(self) >= PREFIXES_KEPT:
            self.clear()
        prefix = self[origin] = d.origin_prefix(origin)
        return prefix


def fingerprints(urls: list[str], origins: list[str], prefixes: Prefixes) -> tuple[list[bytes], list[bytes]]:
    """(each URL's bytes, its fingerprint: db.fingerprint, column-wise)."""
    datas = list(map(str.encode, urls))
    return datas, list(map(operator.add, map(prefixes.__getitem__, origins), map(_DIGEST, map(_HASH, datas))))
