# From a finished transfer to what the spider reports: the FetchOutcome (status
# mapping), the outlinks of an HTML page, and the binary Record for the
# store. Pure: the worker calls it for each result, in batches, after the
# fetch loop has handled its sockets (link extraction is the costly part;
# the worker's `between` hook serves those sockets again mid-page),
# or on its parse thread for a page spider/htmlguard.py calls heavy; an HTML
# page is parsed only as far as htmlguard.bound() allows.
"""report(result) -> Report(outcome, outlinks, record)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import NamedTuple

import deflate
import pycurl

from wreck.protocol import Record, Specific, http_enum, limits
from wreck.protocol.textfields import HOPS_PATH, is_token

from . import feeds, htmlguard, outcome, outlinks, sitemaps
from .fetch import FetchResult


LOG = logging.getLogger(__name__)

# Validators longer than this are not kept for a recrawl: real ETags are
# tens of octets, and the urlserver stores one pair per URL.
MAX_VALIDATOR_LEN = 256
_KEPT = (Specific.OK, Specific.NOT_MODIFIED, Specific.META_REFRESH)
# libcurl results whose body is read for links: a complete one, and one the
# server cut by closing (CURLE_PARTIAL_FILE: kept as received, outcome.py)
_READ_AS_RECEIVED = (pycurl.E_OK, pycurl.E_PARTIAL_FILE)


class Report(NamedTuple):
    outcome: outcome.FetchOutcome
    outlinks: tuple[str, ...]
    record: Record
    extra: dict[str, str] = {}  # DONE extension fields: feed=, sitemap=, validators, digest, head (5.5)


def revisit_fields(result: FetchResult, specific: Specific) -> dict[str, str]:
    """DONE extensions for recrawls and HEAD (docs/protocol.txt 5.5): the
    response's ETag and Last-Modified, a checksum of a received body,
    head=no when this host's HEAD proved unusable, and again=raw for a page
    in codings no browser knows. A body the server cut (result.truncated)
    sends no validator: they name the whole page, and a recrawl's
    conditional request would keep the cut copy for ever."""
    extra: dict[str, str] = {}
    if specific in _KEPT:
        for name, key in ((b"etag", "etag"), (b"last-modified", "last_modified")) if not result.truncated else ():
            value = header_value(result.head, name)
            if value and len(value) <= MAX_VALIDATOR_LEN and value.isascii() and value.isprintable():
                # printable ASCII: only '%' and SP need escaping (the reason= rule)
                extra[key] = value.replace("%", "%25").replace(" ", "%20")
        if specific is not Specific.NOT_MODIFIED:
            # CRC-32 tells a changed page from an unchanged one (BLAKE2b cost
            # 8 times as much); a collision only delays a recrawl. libdeflate's
            # is zlib's CRC-32, folded with the CPU's carry-less multiply: 4-7
            # us for a 25 KB page where zlib's took 60-77 (loaded machine)
            extra["digest"] = "%08x" % deflate.crc32(result.body)
    if result.head_unusable:
        extra["head"] = "no"
    if result.again:  # a page in codings no browser knows: ask again with raw=1 (5.5)
        extra["again"] = result.again
    return extra


def header_value(head: bytes, name: bytes) -> str | None:
    """The first value of header `name` (lowercase) in a raw header block
    (after its status line; the name's case and blanks around it ignored)."""
    pattern = _HEADER_LINES.get(name)
    if pattern is None:
        pattern = _HEADER_LINES[name] = re.compile(rb"\n[ \t\r\v\f]*" + re.escape(name) + rb"[ \t\r\v\f]*:([^\n]*)",
                                                   re.IGNORECASE)  # ASCII case only, as bytes.lower()
    found = pattern.search(head)
    return None if found is None else found.group(1).strip().decode("latin-1")


def header_refresh(result: FetchResult) -> str | None:
    """The target of a `Refresh: 0; url=...` response header, which browsers
    follow as they follow a <meta http-equiv=refresh> (HTML 7.11.1, the
    shared declarative refresh steps); None without one."""
    value = header_value(result.head, b"refresh")
    return outlinks.refresh_target(value, result.url) if value else None


def location_value(head: bytes) -> str | None:
    """The Location header with its raw octets above 0x7F percent-encoded
    one by one, as curl and browsers send them (a UTF-8 'é' is %C3%A9, not
    the %C3%83%C2%A9 of its Latin-1 reading encoded again as UTF-8)."""
    value = header_value(head, b"location")
    if value is None or value.isascii():
        return value
    return "".join(c if c < "\x80" else "%%%02X" % ord(c) for c in value)


_CONDITIONAL = re.compile(rb"\n(?:if-none-match|if-modified-since)[ \t]*:", re.IGNORECASE)  # in the request sent

# One search a header over the raw block, at C speed: splitting the block
# into lines and testing each in Python cost 5 to 10 us a header, twice a page
# (ETag, Last-Modified: issue 16). Names are the few this module asks for.
_HEADER_LINES: dict[bytes, re.Pattern[bytes]] = {}


def lineage(assignment: dict[str, str]) -> tuple[str, str]:
    """The record's via and hops (docs/protocol.txt 6.3, VIA and HOPS) from
    the assignment's via= and hops= (5.3), as sent; a value that breaks
    their grammar is left out (""), not a reason to fail the fetch."""
    via, hops = assignment.get("via", ""), assignment.get("hops", "")
    return (via if via and len(via) <= limits.MAX_URL_LEN and is_token(via.encode("ascii", "replace"))
            and via.isascii() else "", hops if hops and HOPS_PATH.fullmatch(hops) else "")


def _not_a_sitemap(result: FetchResult, body: bytes, between: Callable[[], None] | None) -> sitemaps.Sitemap | None:
    """A sitemap that is none: an RSS or Atom feed (sitemaps.org takes them
    as sitemaps) gives its items, an HTML page (a page of links named in a
    Sitemap: line, a common mistake) the links a browser shows, each as a
    urlset; else, or without a link, None."""
    links: tuple[str, ...] = ()
    if (feed_kind := feeds.sniff(result.content_type, body)) and (feed := feeds.parse(body, result.url, feed_kind)):
        links = feed.links
    elif outlinks.is_html(result.content_type, body):
        links = outlinks.extract(htmlguard.bound(body)[0], result.url, result.content_type, between=between).outlinks
    return sitemaps.Sitemap("urlset", links, len(links)) if links else None


def report(result: FetchResult, doc_id: int, kind: str | None = None,
           assignment: dict[str, str] | None = None, tags: int | None = None, *,
           between: Callable[[], None] | None = None) -> Report:
    """Outcome, outlinks and store record of one transfer.

    `kind` is the assignment's kind= ("feed", "sitemap" or None): a sitemap
    is parsed as one; a feed, or any non-HTML response whose body is one, is
    parsed as a feed (spider/feeds.py). `assignment` is its extension
    fields: the record keeps their via= and hops= (lineage()). `tags` is
    htmlguard.count(result.body) when the caller counted it already.
    `between` is called in the middle of an HTML page's analysis (after its
    parse): the worker's loop serves libcurl there, so a transfer that ended
    meanwhile is collected and its host's next request leaves without
    waiting for the link walk (issue 16). Never on the parse thread:
    libcurl's handles belong to the loop's thread.
    """
    code = result.http_code
    page_links = outlinks.NO_LINKS
    body = result.body
    extra: dict[str, str] = {}
    why = ""
    if 200 <= code < 300 and result.aborted is None and result.curl_code in _READ_AS_RECEIVED and body:
        if kind == "sitemap":
            try:
                found = sitemaps.parse(body, result.url)
            except sitemaps.SitemapError as exc:
                found, why = _not_a_sitemap(result, body, between), f"not a sitemap: {exc}"
            if found is not None:
                page_links = outlinks.PageLinks(found.urls, None)
                extra = sitemaps.done_fields(found)
        elif (feed_kind := feeds.sniff(None if kind == "feed" else result.content_type, body)) and (
                feed := feeds.parse(body, result.url, feed_kind)) is not None:
            page_links = outlinks.PageLinks(feed.links, None)
            extra = feeds.done_fields(feed)
        elif outlinks.is_html(result.content_type, body):
            html, why = htmlguard.bound(body, tags=tags)  # the page is stored whole; links from what was parsed
            page_links = outlinks.extract(html, result.url, result.content_type, between=between, tags=tags)
            if page_links.outlinks and outlinks.header_nofollow(result.head):
                page_links = outlinks.PageLinks((), page_links.refresh)
            if why:
                LOG.info("%s: %s", result.url, why)
    plain_success = 200 <= code < 300 or code == 304
    got = outcome.of_transfer(
        url=result.url, curl_code=result.curl_code, curl_message=result.message, http_code=code,
        connected=result.connected, aborted=result.aborted,
        location=None if plain_success else location_value(result.head),
        retry_after=None if plain_success else header_value(result.head, b"retry-after"),
        refresh=page_links.refresh if page_links.refresh or not 200 <= code < 300 else header_refresh(result),
        keep_cut=not assignment or "body" not in assignment,  # body=: the urlserver's robots.txt (protocol 5.3)
    )  # fmt: skip
    if got.specific is Specific.NOT_MODIFIED and not _CONDITIONAL.search(result.request):
        # a 304 to a request that named no validator compares with no earlier copy: the (empty)
        # answer as received, stored as a response, not as a revisit of nothing (RFC 9110 15.4.5)
        got = got._replace(specific=Specific.OK)
    if why and not got.reason:
        got = got._replace(reason=why)
    document = result.head + body if result.head or body else b""
    if len(document) > limits.MAX_DOC_LEN:
        document = document[: limits.MAX_DOC_LEN]
    via, hops = lineage(assignment) if assignment else ("", "")
    record = Record(
        doc_id, got.success, got.specific, http_enum(code), min(result.ms, 2**32 - 1),
        result.url, got.new_url, document, request=result.request, ip=result.ip,
        truncated=result.truncated, outlinks=page_links.outlinks if got.success else (),
        nofetch=result.nofetch, refused=result.refused, via=via, hops=hops,
    )  # fmt: skip
    # validators and digest for recrawls of pages (feeds and sitemaps have feedsum=,
    # listed=); head=no matters on failures too
    revisit = revisit_fields(result, got.specific) if kind is None else {}
    if not got.success:
        return Report(got, (), record, revisit)
    # size=: the record's octets, for the urlserver's --max-bytes (docs/protocol.txt 5.5)
    return Report(got, page_links.outlinks, record, {**extra, **revisit, "size": str(len(document))})
