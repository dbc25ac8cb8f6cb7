# An origin's robots.txt state, as one table (the manner of urlstate.py).
# An origin starts UNKNOWN; its rules come from the LMDB cache (LOADED) or
# from a robots.txt transaction (FETCH_STARTED, then LEARNED or
# FOUND_UNREACHABLE, or FETCH_ABANDONED when the claim ends without DONE).
# KNOWN rules (parsed, or allow-all) and UNREACHABLE (nothing may be
# fetched, RFC 9309 2.3.1.4) both last until their record expires: EXPIRED
# makes the origin UNKNOWN again, and its next turn fetches robots.txt anew.
# Every change goes through RobotsState.move(); an illegal one raises.
"""RobotsPhase, RobotsEvent and the robots.txt state of one origin."""

from __future__ import annotations

import enum


class RobotsPhase(enum.Enum):
    """Where an origin's robots.txt stands."""

    UNKNOWN = "unknown"  # never fetched, or the rules expired
    FETCHING = "fetching"  # a robots.txt transaction (maybe through redirects) is out
    KNOWN = "known"  # rules in force (parsed, or allow-all) until they expire
    UNREACHABLE = "unreachable"  # nothing may be fetched until the retry time


class RobotsEvent(enum.Enum):
    """What happened to an origin's robots.txt."""

    LOADED = "usable rules read from the LMDB cache"
    LOADED_UNREACHABLE = "an unreachable outcome read from the LMDB cache"
    FETCH_STARTED = "a robots.txt transaction was handed out"
    FETCH_ABANDONED = "that transaction ended without a DONE (expired, its spider gone)"
    LEARNED = "rules parsed, or allow-all (4xx, too many redirects, unsendable)"
    FOUND_UNREACHABLE = "5xx, a timeout or no answer: disallow all until a retry"
    EXPIRED = "the cached outcome is past its expiry"


P, E = RobotsPhase, RobotsEvent
ROBOTS_MOVES: dict[tuple[RobotsPhase, RobotsEvent], RobotsPhase] = {
    (P.UNKNOWN, E.LOADED): P.KNOWN,
    (P.UNKNOWN, E.LOADED_UNREACHABLE): P.UNREACHABLE,
    (P.UNKNOWN, E.FETCH_STARTED): P.FETCHING,
    (P.FETCHING, E.FETCH_ABANDONED): P.UNKNOWN,
    (P.FETCHING, E.LEARNED): P.KNOWN,
    (P.FETCHING, E.FOUND_UNREACHABLE): P.UNREACHABLE,
    (P.KNOWN, E.EXPIRED): P.UNKNOWN,
    (P.UNREACHABLE, E.EXPIRED): P.UNKNOWN,
}  # fmt: skip
del P, E


class IllegalRobotsMove(Exception):
    """An event the robots.txt table does not allow from an origin's phase."""

    def __init__(self, origin: str, phase: RobotsPhase, event: RobotsEvent) -> None:
        self.origin, self.phase, self.event = origin, phase, event
        super().__init__(f"robots.txt of {origin} is {phase.name} and cannot take the event {event.name}")


class RobotsState:
    """One origin's robots.txt: its phase, its rules (robots.RobotsRules, set
    while KNOWN or UNREACHABLE) and its consecutive unreachable outcomes."""

    __slots__ = ("origin", "phase", "rules", "tries")

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.phase = RobotsPhase.UNKNOWN
        self.rules = None
        self.tries = 0

    def move(self, event: RobotsEvent, rules=None) -> None:
        """Apply `event`; LOADED*, LEARNED and FOUND_UNREACHABLE bring `rules`,
        whose record counts the consecutive unreachable outcomes."""
        new = ROBOTS_MOVES.get((self.phase, event))
        if new is None:
            raise IllegalRobotsMove(self.origin, self.phase, event)
        self.phase = new
        if new is RobotsPhase.KNOWN or new is RobotsPhase.UNREACHABLE:
            self.rules, self.tries = rules, rules.record.tries
        elif new is RobotsPhase.UNKNOWN:
            self.rules = None  # tries stay: the next unreachable outcome counts on

    @property
    def fetching(self) -> bool:
        return self.phase is RobotsPhase.FETCHING
