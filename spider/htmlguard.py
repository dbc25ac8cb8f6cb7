# What of an HTML page link extraction may parse, and where it may run.
#
# lexbor's parse time grows with the square of the nesting depth (issue 14,
# finding 2: 200,000 nested <div>s, 3 KB gzipped, took minutes), and a page
# cannot nest deeper than it has tags. So the guard counts '<' and:
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
# The count runs for every page on the event loop: numpy's vectorised
# compare and count_nonzero take 3-4 us for a 37 KB page in cache, where
# CPython's bytes.count (a byte at a time, with an early-exit test that
# keeps it from vectorising) took 12-13; after a parse, as in the crawl,
# about 9-12 against 16-18; about 1 % of a worker's CPU in the crawl
# (bench/results/2026-11-24-s9-spider9.md). numpy is
# imported here, by the supervisor before its workers fork (spider/cli.py),
# and is already loaded in wreck-crawl (the urlserver's seen-set).
"""htmlguard: heavy(body), bound(body) -> (what to parse, why it was cut)."""

from __future__ import annotations

import numpy as np

# '<' a page may have and still be parsed on the event loop. Measured
# (selectolax lexbor, 2 shared cores): 4,000 nested <div>s parse in 30-50
# ms; a normal 30 KB page has about 1,000 '<'.
INLINE_TAGS = 4_000
# '<' parsed at most per page. The worst shape at this bound (all nested)
# parses in 0.5-1.5 s, off the loop (50,000 nested: 8 s); a flat page of
# this size in 10 ms. The links past it are lost: MAX_OUTLINKS (10,000)
# already cuts a page's links at about this many tags.
MAX_PARSE_TAGS = 25_000
# Below this many bytes bytes.count is as quick as numpy's fixed cost (about
# 1 us for the array views and the call).
SMALL_BODY = 2048
# Bytes compared at a time: bounds the temporary array (one byte a byte
# compared) for a body of up to Max_Doc_Size, and keeps it in the cache.
COUNT_CHUNK = 256 * 1024
# made once: converting a Python int and a dtype name at each call cost
# numpy as much as the compare itself on a page (after a parse, caches cold)
_BYTES = np.dtype(np.uint8)
_LT = np.array(ord("<"), np.uint8)
_equal, _nonzero = np.equal, np.count_nonzero


def count(body: bytes) -> int:
    """The '<' of `body`, for heavy() and bound(): counted once a page."""
    size = len(body)
    if size < SMALL_BODY:
        return body.count(b"<")
    data = np.frombuffer(body, _BYTES)
    if size <= COUNT_CHUNK:
        return int(_nonzero(_equal(data, _LT)))
    return sum(int(_nonzero(_equal(data[at : at + COUNT_CHUNK], _LT))) for at in range(0, size, COUNT_CHUNK))


def heavy(body: bytes, tags: int | None = None) -> bool:
    """Whether parsing `body` (with `tags` '<', if counted) could stall the
    event loop: parse it elsewhere."""
    if len(body) <= INLINE_TAGS:
        return False
    return (count(body) if tags is None else tags) > INLINE_TAGS


def bound(body: bytes, max_tags: int = MAX_PARSE_TAGS, tags: int | None = None) -> tuple[bytes, str]:
    """`body` (with `tags` '<', if counted) cut before its (max_tags+1)-th
    '<', and why ('' when whole)."""
    if len(body) <= max_tags:  # fewer bytes than tags allowed: no count needed
        return body, ""
    if tags is None:
        tags = count(body)
    if tags <= max_tags:
        return body, ""
    # the (max_tags+1)-th '<' starts what split() leaves last: found at C
    # speed (a find() per tag in Python cost 2 % of a worker on the realdocs web)
    at = len(body) - len(body.split(b"<", max_tags + 1)[-1]) - 1
    return body[:at], f"links taken from the first {max_tags} of {tags} tags only"
