"""An origin's robots.txt state moves only by its table; the waiting reasons keep their words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.urlserver_helpers import markdown_table

from wreck.urlserver import robots as r
from wreck.urlserver.politeness import Waiting
from wreck.urlserver.robotsstate import (
    ROBOTS_MOVES, IllegalRobotsMove, RobotsEvent, RobotsPhase, RobotsState,
)  # fmt: skip


DOC = Path(__file__).resolve().parents[2] / "docs" / "url-states.md"


def _rules(kind: str, tries: int = 0) -> r.RobotsRules:
    return r.RobotsRules(r.RobotsRecord(kind=kind, expires=100.0, tries=tries), "wreck")


def test_a_fetch_that_finds_robots_txt_unreachable_counts_tries_across_expiry():
    state = RobotsState("http://a.test")
    assert state.phase is RobotsPhase.UNKNOWN and state.rules is None
    state.move(RobotsEvent.FETCH_STARTED)
    assert state.fetching
    state.move(RobotsEvent.FOUND_UNREACHABLE, _rules(r.UNREACHABLE, tries=1))
    assert state.phase is RobotsPhase.UNREACHABLE and state.tries == 1 and not state.rules.usable
    state.move(RobotsEvent.EXPIRED)
    assert state.phase is RobotsPhase.UNKNOWN and state.rules is None and state.tries == 1  # counts on
    state.move(RobotsEvent.FETCH_STARTED)
    state.move(RobotsEvent.LEARNED, _rules(r.ALLOW_ALL))
    assert state.phase is RobotsPhase.KNOWN and state.tries == 0 and state.rules.allowed("http://a.test/x")


def test_an_abandoned_fetch_leaves_the_origin_unknown_to_fetch_again():
    state = RobotsState("http://a.test")
    state.move(RobotsEvent.FETCH_STARTED)
    state.move(RobotsEvent.FETCH_ABANDONED)
    assert state.phase is RobotsPhase.UNKNOWN
    state.move(RobotsEvent.FETCH_STARTED)
    assert state.fetching


def test_cached_rules_are_loaded_only_while_unknown():
    state = RobotsState("http://a.test")
    state.move(RobotsEvent.LOADED_UNREACHABLE, _rules(r.UNREACHABLE, tries=3))
    assert state.phase is RobotsPhase.UNREACHABLE and state.tries == 3
    with pytest.raises(IllegalRobotsMove, match=r"http://a\.test.*UNREACHABLE.*LOADED") as caught:
        state.move(RobotsEvent.LOADED, _rules(r.PARSE))
    assert caught.value.phase is RobotsPhase.UNREACHABLE and caught.value.event is RobotsEvent.LOADED
    assert state.phase is RobotsPhase.UNREACHABLE  # unchanged


def test_an_outcome_without_a_fetch_out_is_illegal():
    state = RobotsState("http://a.test")
    with pytest.raises(IllegalRobotsMove, match="UNKNOWN.*LEARNED"):
        state.move(RobotsEvent.LEARNED, _rules(r.PARSE))


def test_every_phase_is_reachable_and_every_event_is_used():
    assert set(ROBOTS_MOVES.values()) == set(RobotsPhase)
    assert {event for _, event in ROBOTS_MOVES} == set(RobotsEvent)


def test_waiting_reasons_keep_the_words_status_shows():
    assert [w.value for w in Waiting] == ["", "dns", "robots", "robots retry", "host", "ip", "backoff", "crawl-delay",
                                       "paused", "ip token"]


def test_the_documented_robots_tables_are_the_codes():
    section = "An origin's robots.txt"
    assert [row[0] for row in markdown_table(DOC, section, "Phase")] == [p.name for p in RobotsPhase]
    assert [tuple(row) for row in markdown_table(DOC, section, "Robots event")] == [
        (e.name, e.value) for e in RobotsEvent]
    assert {(RobotsPhase[a], RobotsEvent[e]): RobotsPhase[b]
            for a, e, b in markdown_table(DOC, section, "Phase before")} == ROBOTS_MOVES


def test_the_documented_waiting_reasons_are_the_codes():
    rows = markdown_table(DOC, "Why an origin waits")
    assert [(name, word) for name, word, _ in rows] == [(w.name, w.value or "(none)") for w in Waiting]
