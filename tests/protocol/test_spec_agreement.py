"""Where a client written from docs/protocol.txt alone found the servers and
the spec parting ways (issue 14): each case, decided, here and in the spec."""

from __future__ import annotations

import pytest

from wreck.protocol import ErrorCode, LocalProtocolError, RemoteProtocolError
from wreck.protocol.errors import shown
from wreck.protocol.handshake import parse_setting
from wreck.urlserver.settings import Settings
from wreck.options import SettingsError

from tests.protocol_helpers import open_pair

DONE_OK = b"DONE 1 FETCHED 200 OK 5 0 0"


def test_a_set_value_is_bounded_in_octets_on_both_sides():
    wide = "\u00e9" * 600  # 600 characters, 1,200 octets: over the 1,024 of MAX_SETTING_VALUE_LEN
    with pytest.raises(LocalProtocolError, match="at most 1024 octets"):
        open_pair(settings={"store": "127.0.0.1:7002", "user_agent": wide})
    with pytest.raises(RemoteProtocolError) as info:
        parse_setting(f"SET user_agent {wide}")
    assert info.value.code is ErrorCode.LIMIT
    assert parse_setting("SET user_agent " + "\u00e9" * 512) == ("user_agent", "\u00e9" * 512)  # 1,024 octets


@pytest.mark.parametrize("agent", ["\u00e9" * 600, "A" * 1030, "WRECK\x01bot", "WRECK\tbot"])
def test_a_user_agent_that_cannot_be_sent_is_refused_at_start(tmp_path, agent):
    with pytest.raises(SettingsError, match="--user-agent"):
        Settings(data=str(tmp_path), user_agent=agent)


@pytest.mark.parametrize("reason", [b"%ZZ", b"50%", b"%4", b"a%g0b"])
def test_a_reason_with_a_percent_not_followed_by_two_hex_digits_is_refused(reason):
    server, _ = open_pair()
    server.receive_data(DONE_OK + b" reason=" + reason + b"\n")
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.code is ErrorCode.SYNTAX and "two hex digits" in str(info.value)


def test_error_texts_quote_a_peers_bytes_without_python_reprs():
    server, _ = open_pair()
    server.receive_data(b"FOO bar\n")
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert str(info.value) == 'unknown message "FOO" from a spider'
    assert shown(b"a\xff\x01\"") == '"a\\xff\\x01\\""'
