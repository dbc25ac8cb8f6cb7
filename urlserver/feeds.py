# Feeds (RSS, Atom, JSON Feed): URLs fetched again and again, whose items are stories
# fetched once. The spider parses the feed (spider/feeds.py) and its DONE
# carries the items' links as outlinks plus feed=, feedsum= and guids=
# (docs/protocol.txt 5.5); this module decides with them, without a body:
#
#   1. feedsum equal to the last one: the fetch is redundant, recorded as
#      such, and nothing else is looked at;
#   2. else each item's guid fingerprint is checked against the guids known
#      for the feed's source (its host name, so the RSS, Atom and JSON
#      editions of one site share them): an unknown guid is a new story,
#      whose link is DISCOVERED (the seen-set makes it fetched once);
#   3. the feed's next fetch is due `min_interval` after a fetch that found a
#      new story, and `backoff` times the last interval after one that did
#      not, up to `max_interval` (5 minutes, doubling, a week by default).
#
# A feed's URL is never terminal while it works: after each fetch it goes
# back to PENDING on the frontier's delayed queue (frontier.delay), the
# mechanism FETCH_ERROR retries use; 503s and timeouts are retried by the
# FETCH_ERROR backoff of retry.py like any URL. Per-feed state lives in its
# own LMDB databases, so URL records keep their layout:
#
#   feeds      fp(8)                       -> msgpack FeedState
#   feedguids  source fp(8) guid fp(8)     -> b"" (known stories of a source)
"""Feeds: per-feed state, redundancy check, new stories, adaptive refetch."""

from __future__ import annotations

import logging
import re
from hashlib import blake2b
from typing import NamedTuple

import msgspec

from wreck.protocol import Done, Specific

from . import db as d

log = logging.getLogger("urlserver")
_HEX16 = re.compile(r"[0-9a-f]{16}")


class FeedState(msgspec.Struct, kw_only=True):
    """What the urlserver remembers of one feed."""

    url: str
    source: str  # host name: guids are known per source
    marked: bool = False  # named by the operator (--feeds, feed:), not only detected
    kind: str = ""  # rss | atom | json, as last parsed
    checksum: str = ""  # feedsum of the last fetch that parsed
    interval: float = 0.0  # seconds between the last fetch and the next
    last_new: float = 0.0  # wall time a fetch last found a new story
    fetches: int = 0
    redundant: int = 0  # fetches whose checksum equalled the previous one
    stories: int = 0  # new stories found


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(FeedState).decode


class FeedFetch(NamedTuple):
    """What one fetch of a feed leads to."""

    due: float  # wall time of the next fetch
    discover: tuple[str, ...]  # links to DISCOVER (new stories, or a non-feed's outlinks)
    reason: str  # for the URL record: what happened and when it comes back
    redundant: bool  # the checksum equalled the last one
    stories: int  # new stories found


class Feeds:
    """Feed state over the urlserver's LMDB environment."""

    def __init__(self, database: d.Db, *, min_interval: float, max_interval: float, backoff: float) -> None:
        self.db = database
        self.min_interval, self.max_interval, self.backoff = min_interval, max_interval, backoff
        with database.begin() as txn:
            self.count = txn.stat(database.feeds)["entries"]

    def state(self, txn, fp: bytes) -> FeedState | None:
        if not self.count:
            return None
        raw = txn.get(fp, db=self.db.feeds)
        return _decode(raw) if raw is not None else None

    def is_feed(self, txn, fp: bytes) -> bool:
        return bool(self.count) and txn.get(fp, db=self.db.feeds) is not None

    def add(self, txn, fp: bytes, url: str, source: str, *, marked: bool) -> FeedState:
        """The state of feed `fp`, created if new; `marked` sticks once set."""
        state = self.state(txn, fp)
        if state is None:
            state = FeedState(url=url, source=source, marked=marked)
            self.count += 1
            log.info("event=feed_added url=%s marked=%s", url, marked)
        elif marked and not state.marked:
            state.marked = True
        else:
            return state
        txn.put(fp, _encode(state), db=self.db.feeds)
        return state

    def fetched(self, txn, fp: bytes, state: FeedState, done: Done, now: float) -> FeedFetch:
        """A FETCHED DONE of a feed: record it, find new stories, schedule the next fetch."""
        state.fetches += 1
        checksum = done.extra.get("feedsum", "")
        if done.specific is Specific.NOT_MODIFIED:  # a conditional GET's 304: unchanged
            state.redundant += 1
            found, discover, what = False, (), "redundant"
        elif "feed" not in done.extra or not _HEX16.fullmatch(checksum):
            # Not (or no longer) a feed body: follow what it links like a page, and keep polling.
            found, discover, what = False, done.outlinks, "not a feed"
        elif checksum == state.checksum:
            state.redundant += 1
            found, discover, what = False, (), "redundant"
        else:
            state.checksum, state.kind = checksum, done.extra["feed"][:8]
            discover = self._new_stories(txn, state, done)
            found, what = bool(discover), f"{len(discover)} new"
            state.stories += len(discover)
        if found:
            state.interval, state.last_new = self.min_interval, now
        else:
            state.interval = min(max(state.interval, self.min_interval / self.backoff) * self.backoff,
                                 self.max_interval)
        txn.put(fp, _encode(state), db=self.db.feeds)
        log.info("event=feed_fetched url=%s result=%s next_in=%.3g", state.url, what, state.interval)
        return FeedFetch(now + state.interval, discover, f"feed: {what}; next fetch in {state.interval:.6g} s",
                       what == "redundant", len(discover) if found else 0)

    def _new_stories(self, txn, state: FeedState, done: Done) -> tuple[str, ...]:
        links = done.outlinks
        guids = done.extra.get("guids", "").split(",") if done.extra.get("guids") else []
        if len(guids) != len(links) or not all(_HEX16.fullmatch(g) for g in guids):
            if guids:
                log.warning("event=feed_bad_guids url=%s reason=%r", state.url,
                            "guids= does not match the outlinks; using links")
            guids = [blake2b(link.encode("ascii"), digest_size=8).hexdigest() for link in links]
        source = blake2b(state.source.encode("utf-8", "surrogateescape"), digest_size=8).digest()
        new = []
        for link, guid in zip(links, guids):
            if txn.put(source + bytes.fromhex(guid), b"", db=self.db.feedguids, overwrite=False):
                new.append(link)
        return tuple(new)

    def only_feeds_delayed(self, txn) -> bool:
        """Whether every delayed entry is a feed's next fetch (or retry)."""
        if not self.count:
            return False
        for key in txn.cursor(db=self.db.delayed).iternext(values=False):
            if txn.get(d.delayed_fp(key), db=self.db.feeds) is None:
                return False
        return True


def saved_feeds(path: str) -> list[FeedState]:
    """Every feed's state as last committed (for summaries and tests); [] if unreadable."""
    return [_decode(raw) for _, raw in d.saved_items(path, "feeds")]
