# The operator's controls over a running crawl (docs/api.md), kept in the
# `control` database (db.py) in the frontier's write transaction, so a
# change is durable with the commit that follows it (the API answers only
# after that commit) and restored at the next start:
#   - the crawl paused: nothing is handed out; what is in flight ends as usual;
#   - per host name (every origin of it: http, https, other ports, as
#     politeness is): paused (its origins wait, Waiting.PAUSED), blocked
#     (its queued URLs end BLOCKED, urlstate.py, their entries kept in the
#     `blocked` database for an unblock) and a delay (Politeness.set_floor);
#   - the audit list: every change as one entry (time, action, target,
#     detail), the last AUDIT_KEEP kept, each also one log line.
# The engine asks `held` (a set of host names) at each origin's turn, so an
# uncontrolled crawl pays one set lookup per turn.
"""Controls: the crawl's and hosts' pause, block and delay, and the audit list."""

from __future__ import annotations

import logging

import msgspec

from . import db as d
from .history import iso
from .politeness import Origin, Politeness, Waiting
from .urlstate import UrlEvent, can

log = logging.getLogger("urlserver")
PAUSED_KEY = b"paused"
HOST_PREFIX = b"host:"
AUDIT_PREFIX = b"audit:"
# Changes kept in the audit list (GET /api/log): a busy operator's week; each
# is about 150 bytes, and the log lines keep the rest.
AUDIT_KEEP = 1000
# URLs of a blocked host moved to BLOCKED in one go: the rest follow at the
# host's next turns, so one block never holds the event loop for long.
BLOCK_BATCH = 10_000


class HostControl(msgspec.Struct, omit_defaults=True):
    """What the operator set for one host name."""

    paused: bool = False
    blocked: bool = False
    delay: float = 0.0  # seconds, 0: none (--delay and Crawl-delay alone)


class AuditEntry(msgspec.Struct):
    """One change made through the API."""

    seq: int
    time: float
    action: str
    target: str
    detail: dict = {}


class Controls:
    """The operator's settings, read at start from `database` and kept there."""

    def __init__(self, database: d.Db, politeness: Politeness) -> None:
        self.db = database
        self.politeness = politeness
        self.hosts: dict[str, HostControl] = {}
        self.held: set[str] = set()  # host names paused or blocked: asked at each turn
        with database.begin() as txn:
            self.paused = txn.get(PAUSED_KEY, db=database.control) is not None
            cur = txn.cursor(db=database.control)
            if cur.set_range(HOST_PREFIX):
                for key, value in cur:
                    if not key.startswith(HOST_PREFIX):
                        break
                    self._set(key[len(HOST_PREFIX):].decode("utf-8", "surrogateescape"),
                              msgspec.msgpack.decode(value, type=HostControl))

    def host(self, name: str) -> HostControl:
        """The controls of host name `name` (defaults if none were set)."""
        return self.hosts.get(name) or HostControl()

    def _set(self, name: str, control: HostControl) -> None:
        if control == HostControl():
            self.hosts.pop(name, None)
        else:
            self.hosts[name] = control
        if control.paused or control.blocked:
            self.held.add(name)
        else:
            self.held.discard(name)
        self.politeness.set_floor(name, control.delay)

    # -- changes, written in `txn` -----------------------------------------------------

    def set_paused(self, txn, paused: bool) -> None:
        self.paused = paused
        if paused:
            txn.put(PAUSED_KEY, b"", db=self.db.control)
        else:
            txn.delete(PAUSED_KEY, db=self.db.control)

    def set_host(self, txn, name: str, **changes) -> HostControl:
        """Change some of `name`'s controls (HostControl's fields); the new ones."""
        control = msgspec.structs.replace(self.host(name), **changes)
        self._set(name, control)
        key = HOST_PREFIX + name.encode("utf-8", "surrogateescape")
        if control == HostControl():
            txn.delete(key, db=self.db.control)
        else:
            txn.put(key, msgspec.msgpack.encode(control), db=self.db.control)
        return control

    def audit(self, txn, seq: int, now: float, action: str, target: str, **detail) -> AuditEntry:
        """Record one change (seq from the crawl's counter) and log it."""
        entry = AuditEntry(seq, now, action, target, detail)
        txn.put(AUDIT_PREFIX + d.U64.pack(seq), msgspec.msgpack.encode(entry), db=self.db.control)
        if seq > AUDIT_KEEP:
            txn.delete(AUDIT_PREFIX + d.U64.pack(seq - AUDIT_KEEP), db=self.db.control)
        log.warning("event=operator_change action=%s target=%r%s", action, target,
                    "".join(f" {k}={v!r}" for k, v in detail.items()))
        return entry

    def audit_log(self, txn, *, limit: int, target: str | None = None) -> list[dict]:
        """The last `limit` changes (of `target` only, if given), newest first."""
        out: list[dict] = []
        cur = txn.cursor(db=self.db.control)
        if not cur.set_range(AUDIT_PREFIX + b"\xff" * 8):
            if not cur.last():
                return out
        while len(out) < limit:
            key = cur.key()
            if key.startswith(AUDIT_PREFIX):
                entry = msgspec.msgpack.decode(cur.value(), type=AuditEntry)
                if target is None or entry.target == target:
                    out.append({**msgspec.structs.asdict(entry), "at": iso(entry.time)})
            elif key < AUDIT_PREFIX:
                break
            if not cur.prev():
                break
        return out


def block_queue(frontier, host: Origin, *, limit: int = BLOCK_BATCH) -> tuple[int, bool]:
    """Move up to `limit` URLs queued on `host` to BLOCKED, keeping their
    entries for an unblock; (URLs blocked, whether some are left)."""
    count = 0
    txn, blocked_db = frontier.txn, frontier.db.blocked
    while count < limit and (entry := frontier.pop(host)) is not None:
        fp = d.entry_fp(entry)
        rec = frontier.record(fp)
        if rec is None or not can(rec.state, UrlEvent.BLOCKED):
            if rec is not None:
                frontier.stale(rec.url, rec.state)  # a stale entry (urlstate.can): the URL is in hand elsewhere
            continue
        frontier.move(fp, UrlEvent.BLOCKED, "host blocked by the operator", rec=rec)
        txn.put(d.queue_prefix(host.id) + fp, entry, db=blocked_db)
        count += 1
    return count, host.queued > 0


def unblock_queue(frontier, host: Origin) -> int:
    """Queue again every BLOCKED URL kept for `host` (UNBLOCKED); how many."""
    txn, blocked_db = frontier.txn, frontier.db.blocked
    prefix = d.queue_prefix(host.id)
    cur = txn.cursor(db=blocked_db)
    kept = []
    if cur.set_range(prefix):
        for key, entry in cur:
            if not key.startswith(prefix):
                break
            kept.append((key, entry))
    count = 0
    for key, entry in kept:
        txn.delete(key, db=blocked_db)
        fp = d.entry_fp(entry)
        rec = frontier.record(fp)
        if rec is None or not can(rec.state, UrlEvent.UNBLOCKED):
            continue
        frontier.move(fp, UrlEvent.UNBLOCKED, "host unblocked by the operator", rec=rec)
        frontier.push(host, entry)
        count += 1
    return count


def blocked_count(frontier, host: Origin) -> int:
    """URLs of `host` kept BLOCKED."""
    prefix = d.queue_prefix(host.id)
    cur = frontier.txn.cursor(db=frontier.db.blocked)
    count = 0
    if cur.set_range(prefix):
        for key in cur.iternext(values=False):
            if not key.startswith(prefix):
                break
            count += 1
    return count


def pause_origin(politeness: Politeness, host: Origin) -> None:
    """Take `host` out of the heap at once; it waits for the resume."""
    if host.in_heap:
        politeness.unschedule(host)
    if host.waiting not in (Waiting.HOST, Waiting.IP, Waiting.IP_TOKEN, Waiting.DNS):
        host.waiting = Waiting.PAUSED  # a parked or resolving origin finds the pause at its turn
