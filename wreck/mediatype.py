# The content-type filter both ends agree on (docs/protocol.txt 5.1,
# accept_type): a response's Content-Type, parameters dropped and case
# folded, is accepted when it equals one of the crawl's media types or
# falls under one of its `type/*` ranges. A response without a
# Content-Type is accepted: the spider sniffs HTML itself, and refusing
# would drop pages of careless servers.
#
# A value is read as browsers read it: the `type/subtype` of tokens at its
# start, ended by ';', a blank or its end (`text/html charset=utf-8`, the
# ';' forgotten, is text/html in Chrome and Firefox); of values joined by
# commas (a proxy merging two headers) the last that parses (Fetch's
# "extract a MIME type"); a value without one (`html`) counts as absent.
"""media_type(content_type) -> 'type/subtype'; accepts(ranges, content_type) -> bool."""

from __future__ import annotations

import re

# RFC 9110 5.6.2 token characters on both sides of the '/'
_TOKEN = r"[!#$%&'*+.^_`|~0-9a-z-]+"
_ESSENCE = re.compile(rf"{_TOKEN}/{_TOKEN}")
_LEADING = re.compile(rf"\s*({_TOKEN}/{_TOKEN})(?:[\s;]|$)")


def media_type(content_type: str | bytes | None) -> str:
    """`type/subtype` of a Content-Type value, lowercase ('' if absent or
    unreadable; see the opening comment)."""
    if content_type is None:
        return ""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    media = content_type.partition(";")[0].strip().lower()
    if _ESSENCE.fullmatch(media) and media != "*/*":
        return media  # the usual case: one value, 'type/subtype; params'
    for value in reversed(content_type.lower().split(",")):
        found = _LEADING.match(value)
        if found and found.group(1) != "*/*":
            return found.group(1)
    return ""


def accepts(ranges: tuple[str, ...], content_type: str | bytes | None) -> bool:
    """Whether a response of `content_type` passes the filter `ranges` (empty: all)."""
    if not ranges:
        return True
    media = media_type(content_type)
    if not media:
        return True
    if media in ranges:
        return True
    major = media.partition("/")[0]
    return major + "/*" in ranges
