# What of an HTML page link extraction may parse, and where it may run.
#
# lexbor's parse time grows with the square of the nesting depth (issue 14,
# finding 2: 200,000 nested <div>s, 3 KB gzipped, took minutes), and a page
# cannot nest deeper than it has tags. So the guard counts '<' (one C-speed
# bytes.count, a few us on a 30 KB page) and:
#
# - a page with at most INLINE_TAGS '<' is parsed where it is (on the event
#   loop): whatever its shape, that costs a few tens of ms at worst;
# - a larger page is parsed off the event loop (lexbor releases the GIL), on
#   the session's parse thread, so a worker's sockets, WORKING and DONE go
#   on meanwhile;
# - and no page is parsed beyond its first MAX_PARSE_TAGS '<': the rest is
#   cut before link extraction (the page is still stored whole), which bounds
#   the worst parse and the memory of its tree (a 15 MB page of a million
#   links); the cut is reported as the DONE's reason.
"""htmlguard: heavy(body), bound(body) -> (what to parse, why it was cut)."""

from __future__ import annotations

# '<' a page may have and still be parsed on the event loop. Measured
# (selectolax lexbor, 2 shared cores): 4,000 nested <div>s parse in 30-50
# ms; a normal 30 KB page has about 1,000 '<'.
INLINE_TAGS = 4_000
# '<' parsed at most per page. The worst shape at this bound (all nested)
# parses in 0.5-1.5 s, off the loop (50,000 nested: 8 s); a flat page of
# this size in 10 ms. The links past it are lost: MAX_OUTLINKS (10,000)
# already cuts a page's links at about this many tags.
MAX_PARSE_TAGS = 25_000


def count(body: bytes) -> int:
    """The '<' of `body`, for heavy() and bound(): counted once a page (a few
    us for a 30 KB page, 2 % of a spider worker's CPU twice)."""
    return body.count(b"<")


def heavy(body: bytes, tags: int | None = None) -> bool:
    """Whether parsing `body` (with `tags` '<', if counted) could stall the
    event loop: parse it elsewhere."""
    if len(body) <= INLINE_TAGS:
        return False
    return (body.count(b"<") if tags is None else tags) > INLINE_TAGS


def bound(body: bytes, max_tags: int = MAX_PARSE_TAGS, tags: int | None = None) -> tuple[bytes, str]:
    """`body` (with `tags` '<', if counted) cut before its (max_tags+1)-th
    '<', and why ('' when whole)."""
    if len(body) <= max_tags:  # fewer bytes than tags allowed: no count needed
        return body, ""
    if tags is None:
        tags = body.count(b"<")
    if tags <= max_tags:
        return body, ""
    # the (max_tags+1)-th '<' starts what split() leaves last: found at C
    # speed (a find() per tag in Python cost 2 % of a worker on the realdocs web)
    at = len(body) - len(body.split(b"<", max_tags + 1)[-1]) - 1
    return body[:at], f"links taken from the first {max_tags} of {tags} tags only"
