"""The handshake both protocols open with: authentication and its failures."""

import pytest

from wreck.protocol import (
    NEED_DATA, Auth, ControlConnection, Error, ErrorCode, Get, Hello, LocalProtocolError, Ready,
    RemoteProtocolError, Role, State, StoreConnection,
)  # fmt: skip
from wreck.protocol import limits

from tests.protocol_helpers import CLIENT_NONCE, SECRET, SERVER_NONCE, bytewise, drain, feed, open_pair


def endpoints(kind=ControlConnection, client_secret=SECRET, server_secret=SECRET):
    server = kind(Role.SERVER, secret=server_secret, nonce=SERVER_NONCE)
    client = kind(Role.CLIENT, secret=client_secret, nonce=CLIENT_NONCE, name="box-1")
    return server, client


@pytest.mark.parametrize("kind", [ControlConnection, StoreConnection])
def test_handshake_opens_both_ends_and_carries_settings(kind):
    server, client = endpoints(kind)
    assert bytewise(client, server.hello()) == [Hello(server.service, SERVER_NONCE.hex())]
    [auth] = bytewise(server, client.authenticate())
    assert isinstance(auth, Auth) and auth.name == "box-1"
    settings = {"store": "10.0.0.1:7002,10.0.0.2:7002", "user_agent": "WRECK/0.1 (+https://example.org/bot)", "empty": ""}
    [ready] = bytewise(client, server.welcome(settings))
    assert isinstance(ready, Ready) and ready.settings == settings
    assert server.state is State.OPEN and client.state is State.OPEN
    assert server.name == "box-1"


@pytest.mark.parametrize("client_secret, server_secret", [(b"wrong", SECRET), (b"", SECRET)])
def test_a_wrong_or_missing_client_secret_is_refused_with_an_auth_error(client_secret, server_secret):
    server, client = endpoints(client_secret=client_secret, server_secret=server_secret)
    feed(client, server.hello())
    with pytest.raises(RemoteProtocolError) as err:
        feed(server, client.authenticate())
    assert err.value.code is ErrorCode.AUTH
    assert server.state is State.ERROR
    # The server tells the client why, and the client sees a clear error event.
    [event] = feed(client, server.send(Error(ErrorCode.AUTH, "authentication failed")))
    assert event == Error(ErrorCode.AUTH, "authentication failed")
    assert client.state is State.CLOSED


def test_a_client_detects_a_server_that_does_not_hold_the_secret():
    server, client = endpoints(server_secret=b"", client_secret=SECRET)
    feed(client, server.hello())
    # A server without the secret cannot verify the client; a rogue server
    # that skips the check and welcomes anyway is caught by the client.
    server._received = lambda event: None
    feed(server, client.authenticate())
    with pytest.raises(RemoteProtocolError) as err:
        feed(client, server.welcome({}))
    assert err.value.code is ErrorCode.AUTH and "failed authentication" in str(err.value)


def test_no_secret_on_either_side_still_authenticates():
    server, client = open_pair(client_secret=b"", server_secret=b"")
    assert server.state is State.OPEN and client.state is State.OPEN


def test_wrong_version_is_a_version_error():
    server, client = endpoints()
    with pytest.raises(RemoteProtocolError) as err:
        feed(client, server.hello().replace(b"WRECK/1", b"WRECK/2"))
    assert err.value.code is ErrorCode.VERSION and "WRECK/2" in str(err.value)


def test_a_spider_pointed_at_the_wrong_service_is_told_so():
    store = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = ControlConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE)
    with pytest.raises(RemoteProtocolError, match="expected a urlserver, but this is a storeserver"):
        feed(client, store.hello())


def test_a_spider_pointed_at_a_web_server_gets_a_clear_error():
    _, client = endpoints()
    with pytest.raises(RemoteProtocolError, match="not a WRECK peer"):
        feed(client, b"HTTP/1.1 400 Bad Request\r\n\r\n")


def test_an_oversized_handshake_line_is_refused_before_it_is_buffered():
    server, _ = endpoints()
    server.hello()
    server.receive_data(b"A" * (limits.MAX_HANDSHAKE_LINE + 1))
    with pytest.raises(RemoteProtocolError) as err:
        server.next_event()
    assert err.value.code is ErrorCode.LIMIT


@pytest.mark.parametrize(
    "line",
    [
        b"WRECK/1 AUTH spider box-1 " + b"2" * 64 + b"\n",  # no MAC
        b"WRECK/1 AUTH robot box-1 " + b"22" * 32 + b" " + b"ab" * 32 + b"\n",  # unknown role
        b"WRECK/1 AUTH spider b\xffx " + b"22" * 32 + b" " + b"ab" * 32 + b"\n",  # bad UTF-8
        b"WRECK/1 AUTH spider box 1234 " + b"ab" * 32 + b"\n",  # short nonce
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"AB" * 32 + b"\n",  # uppercase MAC
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" extra\n",  # extra field
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" crawl=" + b"AB" * 16 + b"\n",  # uppercase id
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" crawl=" + b"ab" * 15 + b"\n",  # short id
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" crawl=\n",  # empty id
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" crawl=" + b"ab" * 16 + b" x\n",  # 8 fields
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=\n",  # empty caps
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=after,,record\n",  # empty name
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=After\n",  # uppercase
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=after,after\n",  # twice
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=" + b"a" * 17 + b"\n",  # too long
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=after crawl=" + b"ab" * 16 + b"\n",
        b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=after caps=record\n",
        b"GET 10\n",  # skipping the handshake
    ],
)
def test_malformed_auth_lines_are_remote_errors(line):
    server, _ = endpoints()
    server.hello()
    with pytest.raises(RemoteProtocolError):
        feed(server, line)
    assert server.state is State.ERROR


def test_sending_out_of_turn_is_a_local_error_naming_event_role_and_state():
    server, client = endpoints()
    with pytest.raises(LocalProtocolError, match="Auth from the client is not allowed in state GREETING"):
        client.authenticate()


def test_a_nonce_must_be_32_bytes():
    with pytest.raises(LocalProtocolError):
        ControlConnection(Role.SERVER, secret=b"", nonce=b"short")


def test_end_of_stream_mid_handshake_is_an_error_and_at_a_boundary_a_close():
    server, client = endpoints()
    client.receive_data(server.hello()[:10])
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="middle of a message"):
        client.next_event()


def test_long_settings_pass_the_handshake():
    settings = {"store": ",".join(f"10.0.{i}.1:7002" for i in range(60)), "allow_net": "x" * limits.MAX_SETTING_VALUE_LEN}
    server, client = open_pair(settings=settings)
    assert client.settings == settings and client.state is State.OPEN


def test_end_of_stream_between_welcome_and_ready_is_an_error():
    server, client = endpoints()
    feed(client, server.hello())
    feed(server, client.authenticate())
    data = server.welcome({"store": "h:1"})
    client.receive_data(data[: data.index(b"READY")])
    assert client.next_event() is NEED_DATA
    client.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="middle of a message"):
        client.next_event()


def test_a_handshake_error_line_fits_the_peers_line_bound():
    server, client = endpoints()
    feed(client, server.hello())
    line = client.send(Error(ErrorCode.AUTH, "é" * 2000))
    assert len(line) <= limits.MAX_HANDSHAKE_LINE and line.endswith(b"\n")
    [event] = feed(server, line)
    assert event.code is ErrorCode.AUTH and event.reason.startswith("éé")


def test_a_spider_that_rejects_the_stores_proof_just_closes():
    server, client = endpoints(StoreConnection, server_secret=b"", client_secret=SECRET)
    feed(client, server.hello())
    server._received = lambda event: None  # a store that skips verification
    feed(server, client.authenticate())
    with pytest.raises(RemoteProtocolError):
        feed(client, server.welcome({}))
    # The store is already speaking binary: a text ERROR would be garbage there.
    with pytest.raises(LocalProtocolError, match="close the connection"):
        client.send(Error(ErrorCode.AUTH, "store failed authentication"))


def test_a_server_error_out_of_turn_reaches_the_client():
    # The client is to send AUTH, but the server gave up waiting (timeout).
    server, client = endpoints()
    feed(client, server.hello())
    [event] = feed(client, b"ERROR unavailable handshake timed out after 10 s\n")
    assert event == Error(ErrorCode.UNAVAILABLE, "handshake timed out after 10 s")
    assert client.state is State.CLOSED


def test_pipelined_messages_wait_for_their_turn():
    server, client = endpoints()
    feed(client, server.hello())
    feed(server, client.authenticate())  # server's turn now: WELCOME
    assert feed(server, b"GET 5\n") == []  # kept, not decoded yet
    feed(client, server.welcome({}))
    assert drain(server) == [Get(5)]


CRAWL_ID = "0123456789abcdef" * 2
OTHER_CRAWL_ID = "fedcba9876543210" * 2


def test_a_spider_names_its_crawl_in_its_auth_and_the_store_reads_it_byte_by_byte():
    kind = StoreConnection
    server = kind(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = kind(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1", crawl_id=CRAWL_ID)
    feed(client, server.hello())
    line = client.authenticate()
    assert line.endswith(b" crawl=" + CRAWL_ID.encode() + b"\n")
    [auth] = bytewise(server, line)
    assert auth.crawl == CRAWL_ID and server.crawl_id == CRAWL_ID
    [ready] = feed(client, server.welcome({}))
    assert isinstance(ready, Ready) and server.state is State.OPEN


def test_an_auth_without_a_crawl_id_is_the_line_of_section_3_and_names_no_crawl():
    server, client = endpoints(StoreConnection)
    feed(client, server.hello())
    line = client.authenticate()
    assert b"crawl=" not in line and line.count(b" ") == 5
    [auth] = feed(server, line)
    assert auth.crawl == "" and server.crawl_id == ""


def test_a_crawl_id_that_cannot_be_sent_is_a_local_error():
    with pytest.raises(LocalProtocolError):
        StoreConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, crawl_id="not-hex")


def test_a_store_refuses_another_crawl_with_one_error_frame_after_its_welcome():
    from wreck.protocol.store import other_crawl

    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = StoreConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1", crawl_id=CRAWL_ID)
    feed(client, server.hello())
    feed(server, client.authenticate())
    data = server.welcome({}) + server.send(other_crawl(OTHER_CRAWL_ID, server.crawl_id, server.name))
    events = bytewise(client, data)
    assert [type(e) for e in events] == [Ready, Error]
    assert events[1].code is ErrorCode.CRAWL
    assert CRAWL_ID in events[1].reason and OTHER_CRAWL_ID in events[1].reason and "box-1" in events[1].reason
    assert server.state is State.CLOSED and client.state is State.CLOSED


# -- spider capabilities (docs/protocol.txt 3.1, caps=) ---------------------------


def test_a_spider_announces_its_capabilities_and_the_urlserver_reads_them_byte_by_byte():
    server = ControlConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = ControlConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1",
                               caps=("after", "record"))
    feed(client, server.hello())
    line = client.authenticate()
    assert line.endswith(b" caps=after,record\n")
    [auth] = bytewise(server, line)
    assert auth.caps == ("after", "record") and server.caps == {"after", "record"}
    [ready] = feed(client, server.welcome({}))
    assert isinstance(ready, Ready) and server.state is State.OPEN


def test_an_auth_without_caps_announces_none():
    server, client = endpoints()
    feed(client, server.hello())
    line = client.authenticate()
    assert b"caps=" not in line and line.count(b" ") == 5
    [auth] = feed(server, line)
    assert auth.caps == () and server.caps == frozenset()


def test_crawl_and_caps_together_in_that_order_and_unknown_names_are_kept_not_refused():
    line = (b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" crawl=" + CRAWL_ID.encode()
            + b" caps=record,zeta_9\n")
    from wreck.protocol.handshake import parse_auth

    auth = parse_auth(line[:-1])
    assert auth.crawl == CRAWL_ID and auth.caps == ("record", "zeta_9")


def test_more_capabilities_than_max_caps_is_a_limit_error():
    names = b",".join(b"c%d" % i for i in range(limits.MAX_CAPS + 1))
    server, _ = endpoints()
    server.hello()
    with pytest.raises(RemoteProtocolError) as err:
        feed(server, b"WRECK/1 AUTH spider box " + b"22" * 32 + b" " + b"ab" * 32 + b" caps=" + names + b"\n")
    assert err.value.code is ErrorCode.LIMIT


def test_the_longest_auth_fits_the_handshake_line():
    """A longest name, a crawl id and MAX_CAPS longest capability names fit MAX_HANDSHAKE_LINE."""
    from wreck.protocol.handshake import encode_auth, parse_auth

    caps = tuple(chr(ord("a") + i) * 16 for i in range(limits.MAX_CAPS))
    auth = Auth("spider", "n" * limits.MAX_NAME_LEN, "22" * 32, "ab" * 32, crawl=CRAWL_ID, caps=caps)
    line = encode_auth(auth)
    assert len(line) - 1 <= limits.MAX_HANDSHAKE_LINE
    assert parse_auth(line[:-1]) == auth


@pytest.mark.parametrize("caps", [("After",), ("after", "after"), ("",), tuple(f"c{i}" for i in range(9))])
def test_capabilities_that_cannot_be_sent_are_a_local_error(caps):
    with pytest.raises(LocalProtocolError):
        ControlConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, caps=caps)


@pytest.mark.parametrize("key, cap", [("after", "after"), ("nofetch", "record")])
def test_a_urlserver_cannot_send_a_must_honour_key_to_a_spider_that_did_not_announce_it(key, cap):
    from wreck.protocol import Assignment

    for caps, allowed in (((), False), ((cap,), True)):
        server = ControlConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
        client = ControlConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1", caps=caps)
        feed(client, server.hello())
        feed(server, client.authenticate())
        feed(client, server.welcome({}))
        feed(server, client.send(Get(1)))
        assignment = Assignment(7, 1000, "192.0.2.10", "example.com", "http://example.com/", {key: "1"})
        if allowed:
            assert bytewise(client, server.send(assignment)) == [assignment]
        else:
            with pytest.raises(LocalProtocolError, match=f"caps={cap}"):
                server.send(assignment)
            assert server.credit == 1  # nothing was sent: the credit stands
