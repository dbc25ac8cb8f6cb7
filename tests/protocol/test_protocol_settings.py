"""Crawl settings survive the handshake exactly, and bad ones are refused."""

import pytest

from wreck.protocol import RemoteProtocolError
from wreck.protocol.settings import CrawlSettings

from tests.protocol_helpers import open_pair

SETTINGS = CrawlSettings(
    store=("127.0.0.1:7002", "[::1]:7003"), timeout_update_ms=30_000, timeout_req_ms=60_000,
    max_doc_size=10_000_000, user_agent="WRECK/0.1 (+https://example.org/wreck; ops@example.org)",
    allow_net=("127.0.0.0/8",), spider_id="s7", crawl_id="00ff" * 8,
)  # fmt: skip


def test_settings_round_trip_through_a_real_handshake():
    server, client = open_pair(settings=SETTINGS.to_wire())
    assert CrawlSettings.from_wire(client.settings) == SETTINGS


@pytest.mark.parametrize(
    "change",
    [
        {"store": ""},
        {"store": "nohostport"},
        {"store": "h:99999"},
        {"timeout_update_ms": "0"},
        {"timeout_req_ms": "-5"},
        {"max_doc_size": "lots"},
        {"max_doc_size": "\u00b2"},
        {"timeout_req_ms": "0100"},
        {"allow_net": "10.0.0.0/33"},
        {"crawl_id": "00FF" * 8},
        {"crawl_id": "00ff" * 7},
        {"cookies": "off"},
        {"cookies": ""},
        {"raw_again": "yes"},
    ],
)
def test_bad_settings_are_refused_with_the_key_named(change):
    wire = SETTINGS.to_wire() | change
    with pytest.raises(RemoteProtocolError) as err:
        CrawlSettings.from_wire(wire)
    assert next(iter(change)).split("_")[0] in str(err.value)


def test_missing_required_settings_are_named():
    wire = SETTINGS.to_wire()
    del wire["user_agent"], wire["store"]
    with pytest.raises(RemoteProtocolError, match="store, user_agent"):
        CrawlSettings.from_wire(wire)


def test_unknown_settings_are_ignored():
    assert CrawlSettings.from_wire(SETTINGS.to_wire() | {"future_knob": "1"}) == SETTINGS


def test_cookies_off_is_announced_and_on_is_left_unsaid_for_older_spiders():
    # docs/protocol.txt 5.1: an older spider ignores the key, and asks nothing again with a cookie anyway
    assert "cookies" not in SETTINGS.to_wire()
    off = CrawlSettings(**{f: getattr(SETTINGS, f) for f in SETTINGS.__struct_fields__} | {"cookies": False})
    server, client = open_pair(settings=off.to_wire())
    assert client.settings["cookies"] == "0"
    assert CrawlSettings.from_wire(client.settings) == off and not off.cookies and SETTINGS.cookies


def test_raw_again_is_announced_only_by_an_urlserver_that_hands_pages_out_again_raw():
    # docs/protocol.txt 5.1, 5.5: absent (an older urlserver), a spider asks such a page again at once itself
    assert "raw_again" not in SETTINGS.to_wire() and not SETTINGS.raw_again
    on = CrawlSettings(**{f: getattr(SETTINGS, f) for f in SETTINGS.__struct_fields__} | {"raw_again": True})
    server, client = open_pair(settings=on.to_wire())
    assert client.settings["raw_again"] == "1"
    assert CrawlSettings.from_wire(client.settings) == on
