# The request log: one record per HTTP exchange, and questions to ask of it.
#
# The server appends a RequestRecord when an exchange ends (response finished,
# peer gone, or server stopping), so status and bytes_sent are final.  The
# log is shared between the server's thread and test threads, so a lock guards
# it; records() hands out a copy.  Optionally each record is also appended as a
# JSON line to a file, for crawls run in other processes.  wait_for() blocks until
# a condition on the records holds.  The helper functions take a list of
# records, so they work on a live log or on a file read back.

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from .robots import ROBOTS_PATH

DEFAULT_WAIT = 5.0
"""Seconds RequestLog.wait_for waits by default: generous for a loaded CI box."""


class RequestRecord(msgspec.Struct, frozen=True):
    """One request as the server saw it."""

    wall_time: float
    """time.time() when the request head was read."""
    mono_time: float
    """time.monotonic() at the same moment: use this for gaps."""
    duration: float
    """Seconds from the request head to the end of the exchange."""
    client_ip: str
    client_port: int
    server_ip: str
    server_port: int
    host: str
    """Host header, lower-cased, without port ('' when absent)."""
    method: str
    target: str
    """Path + query."""
    user_agent: str | None
    if_none_match: str | None
    if_modified_since: str | None
    accept_encoding: str | None
    status: int
    """Status sent (0 when no status line went out)."""
    bytes_sent: int
    completed: bool
    """False when the response was cut short (peer left, reset, server stopped)."""


class RequestLog:
    """Thread-safe, append-only list of RequestRecord, optionally mirrored to JSON lines."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._records: list[RequestRecord] = []
        self._file = open(path, "ab") if path else None
        self._encoder = msgspec.json.Encoder()

    def append(self, record: RequestRecord) -> None:
        with self._lock:
            self._records.append(record)
            if self._file:
                self._file.write(self._encoder.encode(record) + b"\n")
                self._file.flush()
            self._changed.notify_all()

    def records(self) -> list[RequestRecord]:
        """A snapshot copy of every record so far."""
        with self._lock:
            return list(self._records)

    def wait_for(self, predicate: Callable[[list[RequestRecord]], bool], *,
                 timeout: float = DEFAULT_WAIT) -> list[RequestRecord]:
        """Block until predicate(records) holds; return that snapshot.

        A record lands just after its response's last byte is sent, so a client
        may see the response before the log does: wait, don't sleep.
        """
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self._records), timeout):
                raise TimeoutError(f"request log condition not met within {timeout} s")
            return list(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def close(self) -> None:
        with self._lock:
            if self._file:
                self._file.close()
                self._file = None


def read_jsonl(path: str | Path) -> list[RequestRecord]:
    """Records back from a JSON-lines log file."""
    decoder = msgspec.json.Decoder(RequestRecord)
    return [decoder.decode(line) for line in Path(path).read_bytes().splitlines() if line]


def requests_per_host(records: list[RequestRecord]) -> collections.Counter[str]:
    """Host -> number of requests."""
    return collections.Counter(r.host for r in records)


def gaps_by_host(records: list[RequestRecord], *, clock: str = "mono_time") -> dict[str, list[float]]:
    """Host -> seconds between consecutive request arrivals to that host.

    clock="wall_time" measures them as a daemon that times with time.time()
    does (the urlserver's politeness), so the two can be compared exactly.
    """
    return _gaps(records, lambda r: r.host, clock)


def gaps_by_ip(records: list[RequestRecord], *, clock: str = "mono_time") -> dict[str, list[float]]:
    """Server IP -> seconds between consecutive request arrivals to that address (clock: as gaps_by_host)."""
    return _gaps(records, lambda r: r.server_ip, clock)


def robots_first(records: list[RequestRecord]) -> dict[str, bool]:
    """Host -> whether its first request was for /robots.txt."""
    first: dict[str, bool] = {}
    for record in sorted(records, key=lambda r: r.mono_time):
        first.setdefault(record.host, record.target == ROBOTS_PATH)
    return first


def duplicate_requests(records: list[RequestRecord], *,
                       methods: tuple[str, ...] = ("GET",)) -> dict[tuple[str, str], int]:
    """(host, target) -> count, for those requested more than once with `methods`."""
    counts = collections.Counter((r.host, r.target) for r in records if r.method in methods)
    return {key: n for key, n in counts.items() if n > 1}


def max_concurrency(records: list[RequestRecord], *, by: str = "host") -> dict[str, int]:
    """Key ('host' or 'server_ip') -> most exchanges in progress at one moment."""
    events: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    for r in records:
        key = getattr(r, by)
        events[key] += [(r.mono_time, 1), (r.mono_time + r.duration, -1)]
    peaks = {}
    for key, evs in events.items():
        level = peak = 0
        for _, delta in sorted(evs, key=lambda e: (e[0], e[1])):  # ends before starts
            level += delta
            peak = max(peak, level)
        peaks[key] = peak
    return peaks


def _gaps(records, key, clock: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = collections.defaultdict(list)
    for record in records:
        times[key(record)].append(getattr(record, clock))
    return {k: [b - a for a, b in zip(sorted(v), sorted(v)[1:])] for k, v in times.items()}
