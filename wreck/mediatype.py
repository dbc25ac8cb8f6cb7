# The content-type filter both ends agree on (docs/protocol.txt 5.1,
# accept_type): a response's Content-Type, parameters dropped and case
# folded, is accepted when it equals one of the crawl's media types or
# falls under one of its `type/*` ranges. A response without a
# Content-Type is accepted: the spider sniffs HTML itself, and refusing
# would drop pages of careless servers.
"""accepts(ranges, content_type) -> bool."""

from __future__ import annotations


def media_type(content_type: str | bytes | None) -> str:
    """`type/subtype` of a Content-Type value, lowercase ('' if absent)."""
    if content_type is None:
        return ""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    return content_type.partition(";")[0].strip().lower()


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
