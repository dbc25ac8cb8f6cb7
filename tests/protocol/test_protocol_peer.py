"""The peer link between urlserver partitions (protocol/peer.py,
docs/protocol.txt 5.10): a dialler's AUTH partition turns the listening
urlserver's control connection into a link that carries LINKS batches one
way and ACKs the other, decoded byte by byte as whole; anything else is
refused with an error that closes only that link."""

from __future__ import annotations

import pytest

from tests.protocol_helpers import CLIENT_NONCE, SECRET, SERVER_NONCE, bytewise, feed
from wreck.protocol import (
    Auth, ControlConnection, Done, Error, ErrorCode, Get, Links, LinksAck, LocalProtocolError, PeerConnection,
    PeerLink, RemoteProtocolError, Role, State, Status, Specific,
)  # fmt: skip

BATCH = Links(7, (PeerLink("http://b.example/", 1), PeerLink("http://b.example/x?y=1", 3, {"hops": "2"})))
BATCH_BYTES = b"LINKS 7 2\n1 http://b.example/\n3 http://b.example/x?y=1 hops=2\n"


def link_pair(name="1"):
    server = ControlConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = PeerConnection(secret=SECRET, nonce=CLIENT_NONCE, name=name)
    feed(client, server.hello())
    auth = client.authenticate()
    assert auth.startswith(b"WRECK/1 AUTH partition " + name.encode() + b" ")
    [event] = feed(server, auth)
    assert type(event) is Auth and event.role == "partition" and server.auth_role == "partition"
    feed(client, server.welcome({"partition": "0", "partitions": "127.0.0.1:7001,127.0.0.1:7011"}))
    assert client.state is State.OPEN and server.state is State.OPEN
    return server, client


def test_a_batch_and_its_ack_are_exact_octets_and_decode_byte_by_byte():
    server, client = link_pair()
    assert client.settings["partition"] == "0"
    assert client.send(BATCH) == BATCH_BYTES
    assert bytewise(server, BATCH_BYTES) == [BATCH]
    assert server.send(LinksAck(7)) == b"ACK 7\n"
    assert bytewise(client, b"ACK 7\n") == [LinksAck(7)]


def test_a_spider_keeps_the_control_protocol_and_may_not_send_links():
    server = ControlConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = ControlConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name="box-1")
    feed(client, server.hello())
    feed(server, client.authenticate())
    feed(client, server.welcome({"store": "127.0.0.1:7002"}))
    assert server.peer is None and feed(server, b"GET 3\n") == [Get(3)]
    with pytest.raises(RemoteProtocolError):
        feed(server, BATCH_BYTES)


def test_a_partition_may_not_speak_the_spiders_protocol():
    server, client = link_pair()
    with pytest.raises(RemoteProtocolError, match="unknown message"):
        feed(server, b"GET 3\n")
    server, client = link_pair()
    with pytest.raises(LocalProtocolError):
        client.send(Done(1, Status.FETCHED, 200, Specific.OK, 5))
    with pytest.raises(LocalProtocolError):
        server.send(BATCH)  # batches go from the dialler only


@pytest.mark.parametrize("data, words", [
    (b"LINKS 0 1\n0 http://a.example/\n", "at least 1"),
    (b"LINKS 1 0\n", "at least 1"),
    (b"LINKS 1 10001\n", "link count"),
    (b"LINKS 1\n", "expected 'LINKS"),
    (b"LINKS 1 1\nhttp://a.example/\n", "link line"),
    (b"LINKS 1 1\n70000 http://a.example/\n", "depth"),
    (b"LINKS 1 1\n1 http://a.example/\x01\n", "URL"),
    (b"TOKEN 1.2.3.4\n", "unknown message"),
])  # fmt: skip
def test_a_bad_batch_is_refused_naming_what_is_wrong(data, words):
    server, _ = link_pair()
    with pytest.raises(RemoteProtocolError, match=words):
        feed(server, data)
    assert server.state is State.ERROR


def test_a_link_closed_in_the_middle_of_a_batch_is_an_error_not_a_short_batch():
    server, _ = link_pair()
    feed(server, BATCH_BYTES[:-10])
    server.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="middle"):
        server.next_event()


def test_the_receiver_refuses_a_link_with_the_partition_error_code():
    server, client = link_pair()
    data = server.send(Error(ErrorCode.PARTITION, "partition 1 does not own b.example"))
    assert data == b"ERROR partition partition 1 does not own b.example\n"
    [event] = feed(client, data)
    assert event == Error(ErrorCode.PARTITION, "partition 1 does not own b.example")

