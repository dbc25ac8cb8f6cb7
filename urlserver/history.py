# A URL's history for operators (GET /api/urls?u=URL): how many times it
# was handed to a spider, and its last HISTORY_MOVES moves, each the time,
# the event and the state it led to. It trails the URL's own record
# (db.UrlRecord), so it is written with the move itself, as durable as the
# state and without an LMDB operation of its own (a separate item cost a
# fifth of the engine's handout rate, bench/frontier_bench.py):
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

from .db import HISTORY_HEAD, HISTORY_MOVE
from .urlstate import UrlEvent, UrlState

# Moves kept per URL: enough to see a retry sequence (claimed, failed, due,
# claimed...) end to end; 10 bytes each, so at most 164 bytes a URL.
HISTORY_MOVES = 16
HEAD = struct.Struct("!I")  # fetches (handouts of the URL): db.HISTORY_HEAD bytes
MOVE = struct.Struct("!dBB")  # time, event position, state: db.HISTORY_MOVE bytes
EVENTS = list(UrlEvent)
CODE = {event: i for i, event in enumerate(EVENTS)}
KEPT_BYTES = HISTORY_MOVES * MOVE.size
assert HEAD.size == HISTORY_HEAD and MOVE.size == HISTORY_MOVE and HISTORY_MOVES <= 255  # db.UrlRecord's layout
_pack_move, _pack_head, _unpack_head = MOVE.pack, HEAD.pack, HEAD.unpack_from
_ZERO, _ONE = HEAD.pack(0), HEAD.pack(1)
_CLAIMED = UrlEvent.CLAIMED


def noted(raw: bytes, event: UrlEvent, state: int, now: float) -> bytes:
    """The history `raw` (b"": none yet) with one move more, the oldest
    dropped past HISTORY_MOVES. On every move of a URL: kept lean."""
    move = _pack_move(now, CODE[event], state)
    if not raw:
        return (_ONE if event is _CLAIMED else _ZERO) + move
    head = _pack_head(min(_unpack_head(raw)[0] + 1, 0xFFFFFFFF)) if event is _CLAIMED else raw[:4]
    moves = raw[4:] + move
    return head + (moves if len(moves) <= KEPT_BYTES else moves[-KEPT_BYTES:])


def described(raw: bytes) -> dict:
    """{"fetches": n, "moves": [{"time", "at", "event", "state"}, ...]} oldest first."""
    if not raw:
        return {"fetches": 0, "moves": []}
    out = []
    for offset in range(HEAD.size, len(raw), MOVE.size):
        when, code, state = MOVE.unpack_from(raw, offset)
        out.append({"time": when, "at": iso(when), "event": EVENTS[code].name, "state": UrlState(state).name})
    return {"fetches": HEAD.unpack_from(raw)[0], "moves": out}


def iso(when: float) -> str:
    """A time as ISO 8601 UTC, to the millisecond."""
    return datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
