# Sitemaps (sitemaps.org 0.9) as a pure function of (bytes, URL): a urlset
# gives page URLs, a sitemapindex gives child sitemaps, a text sitemap (one
# URL a line, the protocol's other format) page URLs too; the spider sends
# either as the DONE's outlinks with sitemap=urlset|index (docs/protocol.txt
# 5.5), so the urlserver never parses XML. A gzipped sitemap (the file itself,
# not Content-Encoding, which libcurl already undid) is inflated here.
#
# Safety: lxml's iterparse streams the document with entity resolution,
# DTD loading and network access off (no billion laughs, no XXE), inflation
# stops at MAX_SITEMAP_BYTES and parsing at MAX_SITEMAP_URLS <loc>s or
# MAX_SITEMAP_ELEMENTS elements. Every element is freed once its end is
# read, and detached from its parent with the siblings before it, so the
# tree never holds more than the current path: a bomb of millions of tiny
# elements (issue 14, finding 5: 49 KB gzipped, 48 MB inflated, took a
# worker to 1.6 GiB) costs no more memory than its inflated bytes.
"""Sitemap parsing: body -> (kind, URLs, how many were listed)."""

from __future__ import annotations

import io
import zlib
from typing import NamedTuple

from wreck.protocol import limits
from wreck.urlnorm import normalize

MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # sitemaps.org: 50 MB uncompressed at most
MAX_SITEMAP_URLS = 50_000  # sitemaps.org: 50,000 URLs per sitemap (and per index)
# Elements read at most: 50,000 <url>s with loc, lastmod, changefreq and
# priority are 250,000; image and video extensions add a few per URL.
MAX_SITEMAP_ELEMENTS = 1_000_000
GZIP_MAGIC = b"\x1f\x8b"


class Sitemap(NamedTuple):
    kind: str  # "urlset" | "index"
    urls: tuple[str, ...]  # normalised, unique, document order; at most MAX_OUTLINKS
    listed: int  # <loc> elements read (at most MAX_SITEMAP_URLS)


class SitemapError(ValueError):
    """The body is not a usable sitemap; the message says why."""


def inflate(body: bytes, limit: int = MAX_SITEMAP_BYTES) -> bytes:
    """A gzipped body inflated, at most `limit` bytes; others returned as they are."""
    if not body.startswith(GZIP_MAGIC):
        return body
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise SitemapError(f"bad gzip: {exc}") from None
    if len(data) > limit:
        raise SitemapError(f"inflates beyond {limit} bytes")
    return data


def parse(body: bytes, url: str, *, max_bytes: int = MAX_SITEMAP_BYTES,
          max_urls: int = MAX_SITEMAP_URLS, max_elements: int = MAX_SITEMAP_ELEMENTS) -> Sitemap:
    """The URLs a sitemap or sitemap index lists; SitemapError if it is neither."""
    from lxml import etree  # on first use: most crawls parse no sitemap

    data = inflate(body, max_bytes)
    if len(data) > max_bytes:
        raise SitemapError(f"larger than {max_bytes} bytes")
    if not data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):  # the head only: no copy of 50 MB
        return _parse_text(data, max_urls)
    events = etree.iterparse(io.BytesIO(data), events=("start", "end"), resolve_entities=False,
                             load_dtd=False, no_network=True, huge_tree=False, recover=False)
    kind = None
    urls: list[str] = []
    seen: set[str] = set()
    listed = 0
    size = 0  # octets of the outlinks block so far (MAX_OUTLINKS_BYTES)
    elements = 0
    try:
        for event, elem in events:
            tag = elem.tag.rpartition("}")[2] if isinstance(elem.tag, str) else ""
            if kind is None:
                if tag not in ("urlset", "sitemapindex"):
                    raise SitemapError(f"root element is <{tag}>, not <urlset> or <sitemapindex>")
                kind = "urlset" if tag == "urlset" else "index"
                continue
            if event != "end":
                elements += 1
                if elements > max_elements:
                    break  # keep what was read before
                continue
            if tag == "loc":
                listed += 1
                link = normalize((elem.text or "").strip(), url)
                if (link is not None and link not in seen and len(urls) < limits.MAX_OUTLINKS
                        and size + len(link) + 1 <= limits.MAX_OUTLINKS_BYTES):
                    seen.add(link)
                    urls.append(link)
                    size += len(link) + 1
                if listed >= max_urls:
                    break
            _free(elem)
    except etree.XMLSyntaxError as exc:
        if kind is None:
            raise SitemapError(f"not XML: {exc}") from None
        # a truncated or broken tail: keep what was read before it
    if kind is None:
        raise SitemapError("empty document")
    return Sitemap(kind, tuple(urls), listed)


def _parse_text(data: bytes, max_urls: int) -> Sitemap:
    """sitemaps.org's text format: one absolute URL a line, UTF-8; a line
    that is no http(s) URL is skipped, a file with none is no sitemap."""
    urls: dict[str, None] = {}
    listed = size = 0
    for line in data.decode("utf-8", "replace").lstrip("\ufeff").splitlines():
        line = line.strip()
        link = normalize(line) if line.lower().startswith(("http://", "https://")) else None
        if link is None:
            continue
        listed += 1
        if link not in urls and len(urls) < limits.MAX_OUTLINKS and size + len(link) + 1 <= limits.MAX_OUTLINKS_BYTES:
            urls[link] = None
            size += len(link) + 1
        if listed >= max_urls:
            break
    if not listed:
        raise SitemapError("not XML, nor a text sitemap (one URL a line)")
    return Sitemap("urlset", tuple(urls), listed)


def _free(elem) -> None:
    """Drop an element that has been read, and every sibling before it: what
    clear() alone leaves attached to the parent (and so to the root)."""
    elem.clear(keep_tail=False)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def done_fields(sitemap: Sitemap) -> dict[str, str]:
    """The DONE extension fields of a parsed sitemap (docs/protocol.txt 5.5)."""
    return {"sitemap": sitemap.kind, "listed": str(sitemap.listed)}
