# Outlinks of an HTML page, as pure functions of (bytes, page URL).
#
# The page is parsed once by selectolax's lexbor backend (the fastest of the
# candidates measured in bench/spider_bench.py's notes: about 100 us for a
# 30 KB page, lxml about 120-140 us). Elements are visited with tags(), which
# is cheaper than a CSS selector. <base href> (the first one) sets the base;
# <meta name=robots content=nofollow|none> empties the link list;
# rel=nofollow anchors are skipped; a, area, link[rel~=alternate], frame and
# iframe give links. Every link is normalised with wreck.urlnorm (which
# drops fragments and non-http(s) schemes) and de-duplicated in page order.
# A meta refresh naming a URL is returned separately: the caller reports the
# page as a redirect to it.
#
# Before parsing, the page's encoding is sniffed as a browser does
# (wreck/htmlcharset.py: BOM, the Content-Type charset, a <meta> prescan,
# windows-1252); a UTF-8 page is parsed as bytes (lexbor reads UTF-8), any
# other is decoded first. Each link's query is then percent-encoded in the
# page's encoding before resolution, as the URL Standard says (docs/urls.md);
# its path is UTF-8 whatever the page.
#
# A link's fragment plays no part in its normal form (URL Standard: it
# starts at the first '#', whatever comes before), so it is cut before the
# link is resolved: on documentation sites most links carry one ('#foo',
# 'page.html#section'; 70 % of the realdocs pages' anchors), and each would
# otherwise miss BaseUrl's string fast path and cost a full URL parse, and
# 'a.html#x' and 'a.html#y' are resolved once a page, not twice (issue 16).
#
# An absolute link (http:// or https://) has one normal form whatever page
# it is on, and the same ones come back page after page (a site's links to
# other sites, navigation written in full): a worker keeps the last
# ABSOLUTE_CACHE of them, so each is parsed by ada-url once, not on every
# page (issue 16: link resolution was 12 % of a spider worker's CPU).
"""HTML -> (outlinks, meta refresh target)."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser

from wreck import htmlcharset
from wreck.protocol import limits
from wreck.urlnorm import BaseUrl, encode_query, normalize

# HTML content types; anything else gets no link extraction.
HTML_TYPES = (b"text/html", b"application/xhtml+xml")
# Bytes sniffed from an untyped body to decide whether it is HTML.
SNIFF_BYTES = 512
_SNIFF = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)", re.I | re.S)
# <meta http-equiv=refresh content="5; url=/next">: the URL after 'url='.
_REFRESH = re.compile(r"^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$", re.I | re.S)
# Tags whose attribute names a link: tag -> attribute.
_LINK_TAGS = (("a", "href"), ("area", "href"), ("link", "href"), ("frame", "src"), ("iframe", "src"))


# Absolute links whose normal form a worker keeps: about 150 bytes each, so
# a few MB, for the links of the last few hundred pages of many sites.
ABSOLUTE_CACHE = 16_384
_ABSOLUTE = ("http://", "https://")  # with both slashes: the page's URL plays no part (URL Standard)
# An OrderedDict, not a dict: evicting a dict's oldest key with
# next(iter(d)) scans the slots its earlier deletions left (O(n) until the
# dict is resized), which made this cache 6.5 % of a worker's CPU in
# make bench; popitem(last=False) is O(1).
_absolute: OrderedDict[str, str | None] = OrderedDict()  # raw href -> normalize(href), oldest first
_MISS = object()


def _resolve_absolute(raw: str) -> str | None:
    """normalize(raw) for an absolute http(s) link, kept for the next pages."""
    url = _absolute.get(raw, _MISS)
    if url is _MISS:
        url = normalize(raw)
        if len(_absolute) >= ABSOLUTE_CACHE:
            _absolute.popitem(last=False)
        _absolute[raw] = url
    return url  # type: ignore[return-value]


class PageLinks(NamedTuple):
    outlinks: tuple[str, ...]
    refresh: str | None  # normalised meta refresh target, if any


NO_LINKS = PageLinks((), None)


def is_html(content_type: bytes | None, body: bytes) -> bool:
    """Whether a response is HTML: by Content-Type, else by sniffing the body."""
    if content_type:
        return content_type.split(b";", 1)[0].strip().lower() in HTML_TYPES
    return _SNIFF.match(body[:SNIFF_BYTES]) is not None


def extract(html: bytes, page_url: str, content_type: bytes | None = None, *,
            between: Callable[[], None] | None = None) -> PageLinks:
    """Outlinks (normalised, unique, page order, bounded) and refresh target.

    `content_type` is the response's raw Content-Type header, whose charset
    (if any) decides the page's encoding before its <meta>. `between` is
    called once, after the parse and before the link walk (the two halves
    of a page's cost): the worker serves libcurl there (spider/report.py).
    """
    encoding = htmlcharset.sniff(html, content_type)
    if encoding == htmlcharset.UTF8:
        tree = LexborHTMLParser(html)
        query_encoding = None
    else:
        tree = LexborHTMLParser(htmlcharset.decode(html, content_type)[1])
        query_encoding = htmlcharset.query_encoding(encoding)
        if query_encoding == htmlcharset.UTF8:
            query_encoding = None
    if between is not None:
        between()
    base = page_url
    for node in tree.tags("base"):
        href = node.attributes.get("href")
        if href:
            if query_encoding is not None:
                href = encode_query(href, query_encoding)
            base = normalize(href, page_url) or page_url
        break
    follow = True
    refresh = None
    for node in tree.tags("meta"):
        attrs = node.attributes
        name = (attrs.get("name") or "").lower()
        if name == "robots" or name == "wreck":
            content = (attrs.get("content") or "").lower()
            if "nofollow" in content or "none" in content:
                follow = False
        elif (attrs.get("http-equiv") or "").lower() == "refresh" and refresh is None:
            refresh = _refresh_target(attrs.get("content") or "", base, query_encoding)
    if not follow:
        return PageLinks((), refresh)
    resolve = BaseUrl(base).resolve
    seen: set[str] = {page_url}
    raw_seen: set[str] = set()
    out: list[str] = []
    size = 0
    for tag, attr in _LINK_TAGS:
        for node in tree.tags(tag):
            attrs = node.attributes
            raw = attrs.get(attr)
            if not raw:
                continue
            if "#" in raw:  # the fragment is dropped anyway: 'page.html#s2' is 'page.html' (see the top)
                raw = raw[: raw.index("#")]
            if raw in raw_seen:
                continue
            rel = attrs.get("rel")
            if rel is not None:
                rel = rel.lower()
                if "nofollow" in rel or (tag == "link" and "alternate" not in rel.split()):
                    continue
            elif tag == "link":
                continue
            # Only a followed link marks its href as seen: a nofollow one
            # earlier in the page must not hide a plain link to the same URL.
            raw_seen.add(raw)
            if query_encoding is not None:
                raw = encode_query(raw, query_encoding)
            url = _resolve_absolute(raw) if raw.startswith(_ABSOLUTE) else resolve(raw)
            if url is None or url in seen:
                continue
            seen.add(url)
            size += len(url) + 1
            if len(out) >= limits.MAX_OUTLINKS or size > limits.MAX_OUTLINKS_BYTES:
                return PageLinks(tuple(out), refresh)
            out.append(url)
    return PageLinks(tuple(out), refresh)


def _refresh_target(content: str, base: str, query_encoding: str | None) -> str | None:
    found = _REFRESH.match(content)
    if not found:
        return None
    target = found.group(1).strip().strip("'\"").strip()
    if query_encoding is not None:
        target = encode_query(target, query_encoding)
    return normalize(target, base) if target else None
