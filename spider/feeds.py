# Feeds (RSS 2.0, RSS 1.0, Atom, JSON Feed) as pure functions of (bytes, URL).
#
# The spider has the body, so it parses the feed and sends the urlserver
# only what the urlserver decides with (docs/protocol.txt 5.5): the items'
# links as outlinks, a checksum of the sorted links (feedsum=: equal to the
# last one means nothing changed) and a fingerprint of each item's guid
# (guids=, in outlink order). The urlserver never sees a feed body.
#
# fastfeedparser (Kagi's lxml-based parser) does the parsing: measured in
# bench/feed_bench.py it is several times faster than feedparser on a
# realistic news feed, and it reads JSON Feed, which feedparser 6 does not.
# Its lxml parsers never resolve entities nor touch the network.
"""Feed detection and parsing: body -> item links, guid fingerprints, checksum."""

from __future__ import annotations

import json
import re
from hashlib import blake2b
from typing import NamedTuple

from wreck.protocol import limits
from wreck.urlnorm import normalize

# Items sent per feed: guids= carries 17 octets an item (16 hex digits and a
# comma) and an extension value is at most MAX_URL_LEN (8 KiB) octets. Real
# feeds list 10-100 items, newest first, so the first 400 are the new ones.
MAX_FEED_ITEMS = 400
assert MAX_FEED_ITEMS * 17 - 1 <= limits.MAX_URL_LEN

FEED_TYPES = (b"application/rss+xml", b"application/atom+xml", b"application/feed+json",
              b"application/rdf+xml")
# Generic types a feed is often served as: the body decides.
GENERIC_TYPES = (b"text/xml", b"application/xml", b"application/json", b"text/plain",
                 b"application/octet-stream")
SNIFF_BYTES = 1024
_XML_ROOT = re.compile(rb"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*"
                       rb"<(rss|feed|rdf:RDF)[\s>]", re.S)
_JSON_FEED = re.compile(rb'^\s*\{.*?"version"\s*:\s*"https?://jsonfeed\.org/version/', re.S)


class Feed(NamedTuple):
    kind: str  # "rss" | "atom" | "json"
    links: tuple[str, ...]  # normalised, unique, document order, at most MAX_FEED_ITEMS
    guids: tuple[str, ...]  # 16 hex digits per link: fingerprint of the item's guid (or link)
    checksum: str  # 16 hex digits over the sorted links


def sniff(content_type: bytes | None, body: bytes) -> str | None:
    """'rss', 'atom' or 'json' when the response looks like a feed, else None."""
    ctype = content_type.split(b";", 1)[0].strip().lower() if content_type else b""
    if ctype and ctype not in FEED_TYPES and ctype not in GENERIC_TYPES:
        return None
    head = body[:SNIFF_BYTES]
    found = _XML_ROOT.match(head)
    if found:
        return "atom" if found.group(1) == b"feed" else "rss"
    if _JSON_FEED.match(head):
        return "json"
    if ctype == b"application/feed+json":
        return "json"
    return None


def fingerprint(text: str) -> str:
    """16 hex digits identifying a guid (64-bit BLAKE2b, like URL fingerprints)."""
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def checksum(links) -> str:
    """The feed's checksum: 64-bit BLAKE2b of its sorted item links, LF-joined."""
    return blake2b("\n".join(sorted(links)).encode("ascii"), digest_size=8).hexdigest()


def parse(body: bytes, url: str, kind: str) -> Feed | None:
    """The feed's items, or None when the body is not a feed after all."""
    import fastfeedparser  # on first use: it brings lxml and dateutil (0.1 s of a worker's start)

    try:
        parsed = fastfeedparser.parse(body, include_content=False, include_tags=False,
                                      include_media=False, include_enclosures=False)
    except (ValueError, TypeError, json.JSONDecodeError):
        return None
    links: list[str] = []
    guids: list[str] = []
    seen: set[str] = set()
    for entry in parsed.entries:
        raw = entry.get("link") or _first_href(entry)
        link = normalize(raw.strip(), url) if isinstance(raw, str) and raw.strip() else None
        if link is None or link in seen or len(link) > limits.MAX_URL_LEN:
            continue
        seen.add(link)
        guid = entry.get("id")
        links.append(link)
        guids.append(fingerprint(guid if isinstance(guid, str) and guid else link))
        if len(links) == MAX_FEED_ITEMS:
            break
    return Feed(kind, tuple(links), tuple(guids), checksum(links))


def _first_href(entry) -> str | None:
    for item in entry.get("links") or ():
        href = item.get("href") if isinstance(item, dict) else None
        if href:
            return href
    return None


def done_fields(feed: Feed) -> dict[str, str]:
    """The DONE extension fields of a parsed feed (docs/protocol.txt 5.5)."""
    fields = {"feed": feed.kind, "feedsum": feed.checksum}
    if feed.guids:
        fields["guids"] = ",".join(feed.guids)
    return fields
