# Which documents a wreck-dump --all writes: --status (codes and classes,
# "200,3xx"; "none" for a fetch without an HTTP response), --host (the URL's
# host, as the crawler normalises it: wreck/urlnorm.py), --since and --until
# (the time the store committed the document: ISO 8601, UTC unless a zone is
# given, or Unix seconds; --since inclusive, --until exclusive). A filter not
# given keeps everything; given ones must all hold. Each option's text is
# parsed here, and a mistake is a FilterError naming the option.
"""Filter(status=, host=, since=, until=).keeps(meta, document)."""

from __future__ import annotations

import dataclasses
import datetime
import re

from wreck.urlnorm import host_of, normalize

from .dumprecord import status_code
from .layout import StoredDoc

_STATUS = re.compile(r"([1-5])(?:xx|\d\d)", re.IGNORECASE)
NO_STATUS = "none"  # --status none: fetches that got no HTTP response


class FilterError(ValueError):
    """A filter option's value does not parse; the message names the option."""


@dataclasses.dataclass(frozen=True)
class Filter:
    """The documents a dump keeps: every filter given must hold."""

    statuses: frozenset[str] = frozenset()  # '200', '3xx', 'none'; empty: any
    hosts: frozenset[str] = frozenset()  # normalised host names; empty: any
    # compared as datetimes, as the record's stored_at is written (to the
    # microsecond): a stored_at copied from a record into --since finds it
    since: datetime.datetime | None = None  # inclusive
    until: datetime.datetime | None = None  # exclusive

    @property
    def any(self) -> bool:
        """Whether any filter is given."""
        return bool(self.statuses or self.hosts) or self.since is not None or self.until is not None

    def keeps(self, meta: StoredDoc, document: bytes | None) -> bool:
        """Whether the document passes every filter (`document` only read for
        a status missing from the metadata)."""
        if self.since is not None or self.until is not None:
            stored = datetime.datetime.fromtimestamp(meta.stored_at, datetime.timezone.utc)
            if (self.since is not None and stored < self.since) or (self.until is not None and stored >= self.until):
                return False
        if self.hosts and host_of(meta.url) not in self.hosts:
            return False
        if self.statuses:
            code = status_code(meta, document or b"")
            if code is None:
                return NO_STATUS in self.statuses
            return str(code) in self.statuses or f"{code // 100}xx" in self.statuses
        return True


def parse_statuses(text: str) -> frozenset[str]:
    """'200,3xx,none' -> {'200', '3xx', 'none'}; FilterError if not."""
    found = set()
    for item in (t.strip().lower() for t in text.split(",") if t.strip()):
        if item != NO_STATUS and not _STATUS.fullmatch(item):
            raise FilterError(f"--status: {item!r} is not a status such as 200, 3xx or none")
        found.add(item)
    return frozenset(found)


def parse_hosts(text: str) -> frozenset[str]:
    """'Example.COM,b.example' -> normalised host names; FilterError if not."""
    found = set()
    for item in (t.strip() for t in text.split(",") if t.strip()):
        url = normalize(item if "://" in item else f"http://{item}/")
        host = host_of(url) if url else None
        if not host:
            raise FilterError(f"--host: {item!r} is not a host name")
        found.add(host)
    return frozenset(found)


def parse_time(text: str, flag: str) -> datetime.datetime:
    """The time of ISO 8601 ('2026-11-24', '2026-11-24T06:00:00Z'; UTC
    unless it names a zone) or Unix seconds; FilterError if neither."""
    try:
        return datetime.datetime.fromtimestamp(float(text), datetime.timezone.utc)
    except (ValueError, OverflowError, OSError):
        pass
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise FilterError(f"{flag}: {text!r} is not a time such as 2026-11-24T06:00:00Z or Unix seconds") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when
