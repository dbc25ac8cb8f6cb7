"""docs/url-states.md agrees with urlserver/urlstate.py, and the table is enforced.

The states, events and transition tables are parsed from the page and
compared with UrlState, UrlEvent and MOVES, as tests/protocol/test_spec_examples.py
does for docs/protocol.txt.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.urlserver_helpers import markdown_table

from wreck.urlserver.db import UrlRecord
from wreck.urlserver.urlstate import MOVES, TERMINAL, IllegalMove, UrlEvent, UrlState, move, next_state

DOC = Path(__file__).resolve().parents[2] / "docs" / "url-states.md"


def _table(heading: str) -> list[list[str]]:
    return markdown_table(DOC, heading)


def _state(name: str) -> UrlState | None:
    return None if name == "(new)" else UrlState[name]


def test_the_documented_states_are_the_codes_states_with_their_numbers():
    rows = _table("States")
    assert [(name, int(number)) for name, number, *_ in rows] == [(s.name, s.value) for s in UrlState]
    assert {name for name, _, terminal, _ in rows if terminal == "yes"} == {s.name for s in TERMINAL}


def test_the_documented_events_are_the_codes_events():
    assert [(name, when) for name, when in _table("Events")] == [(e.name, e.value) for e in UrlEvent]


def test_the_documented_transition_table_is_the_codes_table():
    documented = {(_state(src), UrlEvent[event]): UrlState[dst] for src, event, dst in _table("Transitions")}
    assert len(documented) == len(_table("Transitions"))  # no row twice
    assert documented == MOVES


def test_every_state_is_reachable_and_every_event_is_used():
    assert {dst for dst in MOVES.values()} == set(UrlState)
    assert {event for _, event in MOVES} == set(UrlEvent)


def test_the_fetch_error_section_names_every_move_that_follows():
    """The prose answer to "from FETCH_ERROR, what can happen next?" stays true."""
    section = DOC.read_text().split("## From FETCH_ERROR, what can happen next?", 1)[1]
    from_fetch_error = [event for (src, event) in MOVES if src == UrlState.FETCH_ERROR]
    assert from_fetch_error == [UrlEvent.DUE, UrlEvent.RETRY_REQUESTED]
    for event in from_fetch_error:
        assert re.search(rf"\b{event.name}\b", section), event.name
    for state in (UrlState.PENDING, UrlState.IN_FLIGHT):
        for (src, event) in MOVES:
            if src == state:
                assert re.search(rf"\b{event.name}\b", section), (state.name, event.name)


def test_an_illegal_move_raises_naming_the_state_and_the_event():
    rec = UrlRecord("http://a.test/", state=UrlState.FETCHED)
    with pytest.raises(IllegalMove, match=r"FETCHED.*CLAIMED.*http://a\.test/") as caught:
        move(rec, UrlEvent.CLAIMED)
    assert caught.value.state is UrlState.FETCHED and caught.value.event is UrlEvent.CLAIMED
    assert rec.state == UrlState.FETCHED  # unchanged
    with pytest.raises(IllegalMove, match="new.*FETCHED"):
        next_state(None, UrlEvent.FETCHED)


def test_a_move_sets_state_and_reason_and_returns_the_old_state():
    rec = UrlRecord("http://a.test/")
    assert move(rec, UrlEvent.DISCOVERED) is None and rec.state == UrlState.PENDING
    assert move(rec, UrlEvent.CLAIMED, "kept?") == UrlState.PENDING and rec.reason == "kept?"
    assert move(rec, UrlEvent.FETCH_FAILED, "TIMEOUT") == UrlState.IN_FLIGHT
    assert rec.state == UrlState.FETCH_ERROR and rec.reason == "TIMEOUT"
    move(rec, UrlEvent.DUE, "retry")
    move(rec, UrlEvent.CLAIMED, None)  # None keeps the reason
    assert rec.state == UrlState.IN_FLIGHT and rec.reason == "retry"
    rec2 = UrlRecord.unpack(UrlRecord("http://b.test/", state=UrlState.FETCHED).pack())
    assert move(rec2, UrlEvent.MARKED_AS_FEED) == UrlState.FETCHED  # a state read from disk is an int
