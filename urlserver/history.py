# A URL's history for operators (GET /api/urls?u=URL): how many times it
# was handed to a spider, and its last HISTORY_MOVES moves, each the time,
# the event and the state it led to. One LMDB item per URL in the `history`
# database (db.py), written in the same transaction as the move itself, so
# it is as durable as the URL's state:
#   fetches u32, then per move: time f64 (s), event u8, state u8
# Events are stored by their position in urlstate.UrlEvent (append-only
# there). Moves made through Frontier.move are kept; a URL admitted in bulk
# from a page's links (Frontier.discover_links, the hot path) starts its
# history at its first move after that, its discovery being its record's
# creation. The reason of the last move is the record's own (db.UrlRecord).
"""History: per-URL fetch count and last moves, bounded."""

from __future__ import annotations

import struct
from datetime import datetime, timezone

from .urlstate import UrlEvent, UrlState

# Moves kept per URL: enough to see a retry sequence (claimed, failed, due,
# claimed...) end to end; 10 bytes each, so at most 164 bytes a URL.
HISTORY_MOVES = 16
HEAD = struct.Struct("!I")  # fetches (handouts of the URL)
MOVE = struct.Struct("!dBB")  # time, event position, state
EVENTS = list(UrlEvent)
CODE = {event: i for i, event in enumerate(EVENTS)}
KEPT_BYTES = HISTORY_MOVES * MOVE.size


def noted(raw: bytes | None, event: UrlEvent, state: int, now: float) -> bytes:
    """The history `raw` (None: none yet) with one move more, the oldest dropped past HISTORY_MOVES."""
    if raw is None:
        fetches, moves = 0, b""
    else:
        fetches, moves = HEAD.unpack_from(raw)[0], raw[HEAD.size:]
    if event is UrlEvent.CLAIMED:
        fetches = min(fetches + 1, 0xFFFFFFFF)
    moves += MOVE.pack(now, CODE[event], state)
    return HEAD.pack(fetches) + moves[-KEPT_BYTES:]


def described(raw: bytes | None) -> dict:
    """{"fetches": n, "moves": [{"time", "at", "event", "state"}, ...]} oldest first."""
    if raw is None:
        return {"fetches": 0, "moves": []}
    out = []
    for offset in range(HEAD.size, len(raw), MOVE.size):
        when, code, state = MOVE.unpack_from(raw, offset)
        out.append({"time": when, "at": iso(when), "event": EVENTS[code].name, "state": UrlState(state).name})
    return {"fetches": HEAD.unpack_from(raw)[0], "moves": out}


def iso(when: float) -> str:
    """A time as ISO 8601 UTC, to the millisecond."""
    return datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
