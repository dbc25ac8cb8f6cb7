# Recrawl (--recrawl): every FETCHED page gets a next fetch date. The spider
# reports each response's ETag and Last-Modified and a digest of its body on
# DONE (docs/protocol.txt 5.5); they are kept per URL fingerprint in the
# `revisits` database, apart from the URL record, and go back out on the
# next assignment of that URL (5.3) so the spider can ask conditionally.
#
# The interval adapts, like Heritrix's WaitEvaluator: a page that answered
# 304 or came back with the same digest waits `factor` times longer next
# time, a page that changed `factor` times less, within [min, max]. The
# first interval is --recrawl itself.
"""Recrawl: validators, change detection and next fetch dates."""

from __future__ import annotations

import dataclasses
import re

import msgspec

from wreck.protocol import Done, Specific


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecrawlPolicy:
    """When pages are fetched again. Seconds."""

    first: float  # interval after a page's first fetch (--recrawl)
    least: float  # never sooner than this after a fetch (--recrawl-min)
    most: float  # never later (--recrawl-max)
    factor: float  # unchanged: interval * factor; changed: interval / factor

    def next_interval(self, interval: float, changed: bool) -> float:
        if not interval:
            interval = self.first
        elif changed:
            interval /= self.factor
        else:
            interval *= self.factor
        return min(self.most, max(self.least, interval))


DEFAULT_LEAST = 3600.0  # --recrawl-min unset: at most an hour between fetches is the floor
DEFAULT_MOST = 30 * 86400.0  # --recrawl-max unset: a page is seen at least monthly
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, None: 1.0}


def parse_duration(text: str) -> float:
    """Seconds in '30s', '6h', '7d', '1.5h', '2w' or plain '90'; ValueError if not."""
    found = _DURATION.fullmatch(text.strip().lower())
    if not found:
        raise ValueError(f"{text!r} is not a duration such as 30s, 6h or 7d")
    return float(found.group(1)) * _UNIT[found.group(2)]


def policy_for(first: float, least: float, most: float, factor: float) -> RecrawlPolicy:
    """The policy of the settings, 0 for least/most meaning their defaults."""
    return RecrawlPolicy(first=first, least=least or min(first, DEFAULT_LEAST),
                         most=most or max(first, DEFAULT_MOST), factor=factor)


class Revisit(msgspec.Struct, array_like=True):
    """What the next fetch of one URL needs (validators on the wire's
    percent-encoding) and how often it changed."""

    etag: str = ""
    last_modified: str = ""
    digest: str = ""
    interval: float = 0.0  # seconds until the next fetch, as last set
    visits: int = 0  # FETCHED answers so far
    changes: int = 0  # of which brought a new body


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(Revisit).decode


class Recrawl:
    """Reads and updates the `revisits` database inside the frontier's transaction."""

    def __init__(self, db, policy: RecrawlPolicy) -> None:
        self.db = db.revisits
        self.policy = policy
        self.stats = {"revisits": 0, "not_modified": 0, "changed": 0, "unchanged": 0}

    def get(self, txn, fp: bytes) -> Revisit | None:
        raw = txn.get(fp, db=self.db)
        return _decode(raw) if raw is not None else None

    def extras(self, txn, fp: bytes) -> dict[str, str]:
        """Assignment extensions for a conditional request (empty on a first fetch)."""
        rev = self.get(txn, fp)
        if rev is None:
            return {}
        out = {}
        if rev.etag:
            out["etag"] = rev.etag
        if rev.last_modified:
            out["last_modified"] = rev.last_modified
        return out

    def fetched(self, txn, fp: bytes, done: Done, now: float) -> float:
        """A FETCHED DONE for `fp`: record what it says; when to fetch again."""
        rev = self.get(txn, fp)
        first = rev is None
        if first:
            rev = Revisit()
        extra = done.extra
        if done.specific is Specific.NOT_MODIFIED:
            changed = False
            self.stats["not_modified"] += 1
        else:
            digest = extra.get("digest", "")
            changed = first or not digest or digest != rev.digest
            rev.digest = digest
        if not first:
            self.stats["revisits"] += 1
            self.stats["changed" if changed else "unchanged"] += 1
        # a 304 may omit validators it did not change (RFC 9110 15.4.5): keep ours
        rev.etag = extra.get("etag", rev.etag if done.specific is Specific.NOT_MODIFIED else "")
        rev.last_modified = extra.get(
            "last_modified", rev.last_modified if done.specific is Specific.NOT_MODIFIED else "")
        rev.interval = self.policy.next_interval(rev.interval, changed)
        rev.visits += 1
        rev.changes += changed
        txn.put(fp, _encode(rev), db=self.db)
        return now + rev.interval
