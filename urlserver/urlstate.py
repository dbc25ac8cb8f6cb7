# A URL's life, as one table. Rule (after h11's _state.py): everything that
# moves a URL record's state lives in this file. The engine names what
# happened -- an UrlEvent -- and move() looks up (state, event) in MOVES to
# find the next state; a pair that is not in the table raises IllegalMove,
# naming both. A URL not yet recorded has the state None ("new"): its first
# event (DISCOVERED or FILTERED) creates the record. docs/url-states.md
# prints the same table; tests/urlserver/test_url_states.py checks that the
# two agree.
"""UrlState, UrlEvent and the transition table of a URL record."""

from __future__ import annotations

import enum


class UrlState(enum.IntEnum):
    """Where a known URL stands. Numbers are on disk; never reuse one."""

    PENDING = 1  # in a host queue or waiting for a retry
    IN_FLIGHT = 2  # claimed by a spider
    FETCHED = 3
    REDIRECTED = 4
    FETCH_ERROR = 5  # failed transiently, a retry is scheduled
    ERROR = 6  # terminal, with a reason
    DISALLOWED = 7  # robots.txt forbids it
    FILTERED = 8  # scope, include/exclude, depth, length or trap rules
    BLOCKED = 9  # its host was blocked by the operator (POST /api/hosts/HOST/block)


# A state's name by its number, for the per-state counts: UrlState(n).name
# runs four Python-level calls of enum.py, twice per handout and per DONE.
STATE_NAME: dict[int, str] = {s.value: s.name for s in UrlState}

TERMINAL = frozenset((UrlState.FETCHED, UrlState.REDIRECTED, UrlState.ERROR,
                      UrlState.DISALLOWED, UrlState.FILTERED, UrlState.BLOCKED))  # fmt: skip


class UrlEvent(enum.Enum):
    """What happened to a URL; each value says when the engine reports it.
    A URL's history (history.py) stores events by their position here: new
    members go at the end, and none is removed or moved."""

    DISCOVERED = "a new URL passed every admission rule and joined its origin's queue"
    FILTERED = "a new URL was refused by scope, a filter, the page budget or the redirect limit"
    CLAIMED = "handed to a spider in a page transaction"
    FETCHED = "DONE FETCHED"
    REDIRECTED = "DONE REDIRECTION (the target is discovered one hop further)"
    FETCH_FAILED = "DONE FETCH_ERROR with tries left: a retry is delayed"
    RETRIES_EXHAUSTED = "DONE FETCH_ERROR on the last allowed try"
    FAILED = "DONE ERROR (terminal), or DONE FETCH_ERROR that is the server's own answer (retry.py)"
    FEED_FETCHED = "DONE FETCHED of a feed: it waits for its next poll"
    DUE = "its delayed entry came due (a retry, a feed's poll or a recrawl) and it is queued again"
    DISALLOWED = "robots.txt forbids it (found when its turn came)"
    DRAINED = "its origin is unusable (DNS failure, forbidden address, robots.txt unreachable too often)"
    CLAIM_EXPIRED = "its claim expired or its spider went away: back to the head of its queue"
    EXPIRIES_EXHAUSTED = "its claim expired once too often (--max-expiries)"
    UNSENDABLE = "the protocol refused to encode its assignment"
    REQUEUED_AFTER_RESTART = "it was in flight when the urlserver stopped"
    MARKED_AS_FEED = "the operator added it as a feed after it was fetched as a page"
    RETRY_REQUESTED = ("the operator asked for its retry (--retry-errors, POST /api/retry): queued again with its "
                       "full tries")
    BLOCKED = "its host is blocked by the operator (POST /api/hosts/HOST/block): taken out of its queue"
    UNBLOCKED = "its host was unblocked (POST /api/hosts/HOST/unblock): queued again"
    CLAIMED_UNFETCHED = ("handed to a spider to record, without fetching, why its host cannot be fetched "
                         "(nofetch=: its DNS failed for good, or it resolved only to refused addresses)")
    UNFETCHED_RECORDED = ("DONE of a record-only transaction: the store holds what was tried; the URL ends as "
                          "its host's failure")

    # Members are singletons: hash by identity, in C. Enum's own __hash__ is
    # Python code, and a (state, event) lookup is on every handout and DONE.
    __hash__ = object.__hash__


S, E = UrlState, UrlEvent

# (state, event) -> next state. None is a URL not yet recorded.
MOVES: dict[tuple[UrlState | None, UrlEvent], UrlState] = {
    (None, E.DISCOVERED): S.PENDING,
    (None, E.FILTERED): S.FILTERED,
    (S.PENDING, E.CLAIMED): S.IN_FLIGHT,
    (S.PENDING, E.DISALLOWED): S.DISALLOWED,
    (S.PENDING, E.DRAINED): S.ERROR,
    (S.PENDING, E.DUE): S.PENDING,  # a feed's next poll
    (S.IN_FLIGHT, E.FETCHED): S.FETCHED,
    (S.IN_FLIGHT, E.REDIRECTED): S.REDIRECTED,
    (S.IN_FLIGHT, E.FETCH_FAILED): S.FETCH_ERROR,
    (S.IN_FLIGHT, E.RETRIES_EXHAUSTED): S.ERROR,
    (S.IN_FLIGHT, E.FAILED): S.ERROR,
    (S.IN_FLIGHT, E.FEED_FETCHED): S.PENDING,
    (S.IN_FLIGHT, E.CLAIM_EXPIRED): S.PENDING,
    (S.IN_FLIGHT, E.EXPIRIES_EXHAUSTED): S.ERROR,
    (S.IN_FLIGHT, E.UNSENDABLE): S.ERROR,
    (S.IN_FLIGHT, E.REQUEUED_AFTER_RESTART): S.PENDING,
    (S.FETCH_ERROR, E.DUE): S.PENDING,  # the retry
    (S.FETCH_ERROR, E.RETRY_REQUESTED): S.PENDING,  # --retry-errors: now, not at its due time
    (S.FETCHED, E.DUE): S.PENDING,  # --recrawl: the next visit
    (S.FETCHED, E.MARKED_AS_FEED): S.PENDING,
    (S.ERROR, E.RETRY_REQUESTED): S.PENDING,  # --retry-errors
    (S.PENDING, E.BLOCKED): S.BLOCKED,  # at the block, or at its host's turn (what joined the queue since)
    (S.BLOCKED, E.UNBLOCKED): S.PENDING,
    (S.PENDING, E.CLAIMED_UNFETCHED): S.IN_FLIGHT,  # a record-only transaction (docs/protocol.txt 5.3)
    (S.IN_FLIGHT, E.UNFETCHED_RECORDED): S.ERROR,
}  # fmt: skip

del S, E

# A new URL's state, for Frontier.discover_links, which packs PENDING
# records in bulk without a record object (its hot path).
DISCOVERED_STATE = MOVES[(None, UrlEvent.DISCOVERED)]


class IllegalMove(Exception):
    """An event that the table does not allow from a URL's current state."""

    def __init__(self, state: int | None, event: UrlEvent, url: str = "") -> None:
        self.state = None if state is None else UrlState(state)
        self.event = event
        name = "(new)" if state is None else self.state.name
        super().__init__(f"a URL in state {name} cannot take the event {event.name}" + (f": {url}" if url else ""))


def can(state: int | None, event: UrlEvent) -> bool:
    """Whether the table moves a URL in `state` by `event`. For the entries
    that may be stale: a URL can be queued or delayed twice (a page marked as
    a feed while its recrawl waits), and the second entry, met while the URL
    is in hand already, is dropped rather than moved."""
    return (state, event) in MOVES


def next_state(state: int | None, event: UrlEvent) -> UrlState:
    """The state after `event` from `state`; IllegalMove if the table has no such move."""
    new = MOVES.get((state, event))
    if new is None:
        raise IllegalMove(state, event)
    return new


def move(rec, event: UrlEvent, reason: str | None = "") -> int | None:
    """Move the URL record `rec` (db.UrlRecord) by `event` and set its reason
    (None keeps it); the old state (None for a new record). The only writer
    of `rec.state`."""
    old = rec.state
    new = MOVES.get((old, event))
    if new is None:
        raise IllegalMove(old, event, rec.url)
    rec.state = new
    if reason is not None:
        rec.reason = reason
    return old
