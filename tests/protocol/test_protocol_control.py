"""The control protocol: round trips at every split, and malformed input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wreck.protocol import (
    NEED_DATA, Assignment, Bye, ConnectionClosed, Done, Error, ErrorCode, Get, LocalProtocolError, RemoteProtocolError, Specific, State, Status, Working, limits,
)  # fmt: skip

from tests.protocol_helpers import bytewise, feed, open_pair
from tests.protocol_strategies import chunkings, client_messages, errors, server_messages

settings.register_profile("wreck", deadline=None, max_examples=150)
settings.load_profile("wreck")


@given(st.lists(client_messages, max_size=8), chunkings)
def test_spider_messages_round_trip_at_any_split(messages, chunks):
    server, client = open_pair()
    data = b"".join(client.send(m) for m in messages)
    assert feed(server, data, chunks) == messages


@given(st.lists(server_messages, max_size=8), chunkings)
def test_urlserver_messages_round_trip_at_any_split(messages, chunks):
    server, client = open_pair()
    feed(server, client.send(Get(limits.MAX_GET)))
    data = b"".join(server.send(m) for m in messages)
    assert feed(client, data, chunks) == messages


@given(errors)
def test_error_lines_round_trip_and_close_the_connection(error):
    server, client = open_pair()
    assert feed(client, server.send(error)) == [error]
    assert client.state is State.CLOSED and server.state is State.CLOSED
    client.receive_data(b"")
    assert client.next_event() == ConnectionClosed()


def test_seeds_004_assignment_line_is_exactly_five_fields():
    server, client = open_pair()
    feed(server, client.send(Get(1)))
    a = Assignment(17, 1000, "93.184.215.14", "example.com", "http://example.com/a?b=c")
    assert server.send(a) == b"17 1000 93.184.215.14 example.com http://example.com/a?b=c\n"


def test_a_done_with_hundreds_of_outlinks_is_one_header_and_one_block():
    server, client = open_pair()
    links = tuple(f"http://h{i}.test/p/{i}" for i in range(300))
    data = client.send(Done(9, Status.FETCHED, 200, Specific.OK, 15, links))
    header, _, block = data.partition(b"\n")
    assert header == b"DONE 9 FETCHED 200 OK 15 300 %d" % len(block)
    assert bytewise(server, data)[0].outlinks == links


def test_a_robots_done_carries_the_body_after_the_links():
    server, client = open_pair()
    body = b"User-agent: *\nDisallow: /private/\n"
    data = client.send(Done(4, Status.FETCHED, 200, Specific.OK, 3, ("http://h/sitemap.xml",), body=body))
    assert data == b"DONE 4 FETCHED 200 OK 3 1 21 body=%d\nhttp://h/sitemap.xml\n" % len(body) + body
    [done] = bytewise(server, data)
    assert done.body == body and done.outlinks == ("http://h/sitemap.xml",)
    [empty] = feed(server, client.send(Done(5, Status.FETCHED, 200, Specific.OK, 3, body=b"")))
    assert empty.body == b""


def test_credit_bounds_what_the_server_may_send():
    server, client = open_pair()
    a = Assignment(1, 1, "127.0.0.1", "h", "http://h/")
    with pytest.raises(LocalProtocolError, match="no credit"):
        server.send(a)
    feed(server, client.send(Get(1)))
    feed(client, server.send(a))
    assert server.credit == 0 and client.credit == 0
    # A server that ignores credit is caught by the spider.
    server.credit = 1
    with pytest.raises(RemoteProtocolError) as err:
        feed(client, server.send(a))
    assert err.value.code is ErrorCode.STATE


def test_bye_closes_cleanly():
    server, client = open_pair()
    assert feed(client, server.send(Bye("done"))) == [Bye("done")]
    assert client.state is State.CLOSED


def test_end_of_stream_at_a_boundary_is_a_clean_close():
    server, client = open_pair()
    server.receive_data(client.send(Get(3)))
    server.receive_data(b"")
    assert [server.next_event(), server.next_event()] == [Get(3), ConnectionClosed()]


DONE_OK = b"DONE 1 FETCHED 200 OK 5 0 0"
# (bytes a spider sends after the handshake, the error code expected)
FROM_SPIDER = [
    (b"GET 0\n", ErrorCode.SYNTAX),
    (b"GET -1\n", ErrorCode.SYNTAX),
    (b"GET 01\n", ErrorCode.SYNTAX),
    (b"GET +1\n", ErrorCode.SYNTAX),
    (b"GET 1_0\n", ErrorCode.SYNTAX),
    (b"GET \xd9\xa1\n", ErrorCode.SYNTAX),  # an Arabic-Indic digit one
    (b"GET %d\n" % (limits.MAX_GET + 1), ErrorCode.LIMIT),
    (b"GET\n", ErrorCode.SYNTAX),
    (b"GET 1 2\n", ErrorCode.SYNTAX),
    (b"WORKING\n", ErrorCode.SYNTAX),
    (b"WORKING 1 x\n", ErrorCode.SYNTAX),
    (b"WORKING 99999999999999999999\n", ErrorCode.SYNTAX),
    (b"WORKING 9223372036854775808\n", ErrorCode.LIMIT),
    (b"WORKING" + b" 1" * (limits.MAX_WORKING_IDS + 1) + b"\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 200 OK 5 0\n", ErrorCode.SYNTAX),
    (b"DONE 1 GOOD 200 OK 5 0 0\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 200 FINE 5 0 0\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 99 OK 5 0 0\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 1000 OK 5 0 0\n", ErrorCode.LIMIT),
    (b"DONE 1 FETCHED 200 OK 5 1 0\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 200 OK 5 0 4\n", ErrorCode.SYNTAX),
    (b"DONE 1 FETCHED 200 OK 5 1 99999999\n", ErrorCode.LIMIT),
    (b"DONE 1 FETCHED 200 OK 5 %d 99999\n" % (limits.MAX_OUTLINKS + 1), ErrorCode.LIMIT),
    (b"DONE 1 FETCHED 200 OK 5 2 8\nhttp://a\n", ErrorCode.SYNTAX),  # short block
    (b"DONE 1 FETCHED 200 OK 5 1 10\nhttp://a b\n", ErrorCode.SYNTAX),  # space in URL
    (b"DONE 1 FETCHED 200 OK 5 1 10\nhttp://\xc3\xa9\n", ErrorCode.SYNTAX),  # not ASCII
    (b"DONE 1 FETCHED 200 OK 5 2 10\nhttp://a\n\n", ErrorCode.SYNTAX),  # empty URL
    (DONE_OK + b" reason=%ff\n", ErrorCode.SYNTAX),  # bad UTF-8 once decoded
    (DONE_OK + b" reason=%07bell\n", ErrorCode.SYNTAX),  # control character
    (DONE_OK + b" retry=soon\n", ErrorCode.SYNTAX),
    (DONE_OK + b" x=1 x=2\n", ErrorCode.SYNTAX),
    (DONE_OK + b" =1\n", ErrorCode.SYNTAX),
    (DONE_OK + b" body=%d\n" % (limits.MAX_DONE_BODY + 1), ErrorCode.LIMIT),
    (DONE_OK + b" body=x\n", ErrorCode.SYNTAX),
    (DONE_OK + b" noequals\n", ErrorCode.SYNTAX),
    (DONE_OK + b"".join(b" k%d=1" % i for i in range(limits.MAX_EXTRAS + 1)) + b"\n", ErrorCode.LIMIT),
    (b"DONE 1 FETCHED\t200 OK 5 0 0\n", ErrorCode.SYNTAX),
    (b"HELLO\n", ErrorCode.SYNTAX),
    (b"1 2 127.0.0.1 h http://h/\n", ErrorCode.SYNTAX),  # assignments go the other way
    (b"ERROR nope whatever\n", ErrorCode.SYNTAX),
    (b"ERROR auth \xff\n", ErrorCode.SYNTAX),
    (b"G" * (limits.MAX_LINE + 1), ErrorCode.LIMIT),  # no line end in sight
]

FROM_URLSERVER = [
    (b"1 2 127.1 h http://h/\n", ErrorCode.SYNTAX),  # non-canonical address
    (b"1 2 127.000.0.1 h http://h/\n", ErrorCode.SYNTAX),
    (b"1 2 2130706433 h http://h/\n", ErrorCode.SYNTAX),  # decimal spelling
    (b"1 2 localhost h http://h/\n", ErrorCode.SYNTAX),
    # zone indexes (found by tests/fuzz/control_client.py: a non-ASCII zone was accepted)
    (b"1 2 fe80::1%eth0 h http://h/\n", ErrorCode.SYNTAX),
    (b"1 2 2001:db8::12%8\x890 h http://h/\n", ErrorCode.SYNTAX),
    (b"1 4294967296 127.0.0.1 h http://h/\n", ErrorCode.LIMIT),  # doc id beyond u32
    (b"1 2 127.0.0.1 H.test http://h/\n", ErrorCode.SYNTAX),  # host not lowercase
    (b"1 2 127.0.0.1 h\n", ErrorCode.SYNTAX),
    (b"1 2 127.0.0.1 h http://h/\x01\n", ErrorCode.SYNTAX),
    (b"1 2 127.0.0.1 h http://h/ k\n", ErrorCode.SYNTAX),
    (b"1 2 127.0.0.1 h " + b"u" * (limits.MAX_URL_LEN + 1) + b"\n", ErrorCode.LIMIT),
    (b"IDLE soon\n", ErrorCode.SYNTAX),
    (b"CANCEL\n", ErrorCode.SYNTAX),
    (b"BYE 1done\n", ErrorCode.SYNTAX),
    (b"BYE done now\n", ErrorCode.SYNTAX),
    (b"GET 1\n", ErrorCode.SYNTAX),
    (b"ERROR\n", ErrorCode.SYNTAX),
]


@pytest.mark.parametrize("data, code", FROM_SPIDER)
def test_malformed_spider_input_gets_a_typed_error(data, code):
    server, client = open_pair()
    with pytest.raises(RemoteProtocolError) as err:
        feed(server, data)
    assert err.value.code is code
    assert server.state is State.ERROR
    with pytest.raises(RemoteProtocolError):
        server.next_event()  # stays in the error state
    # ... and can still tell the peer why before closing.
    assert server.send(Error(err.value.code, str(err.value))).startswith(b"ERROR ")


@pytest.mark.parametrize("data, code", FROM_URLSERVER)
def test_malformed_urlserver_input_gets_a_typed_error(data, code):
    server, client = open_pair()
    feed(server, client.send(Get(10)))
    with pytest.raises(RemoteProtocolError) as err:
        bytewise(client, data)
    assert err.value.code is code


def test_a_flood_without_line_ends_is_refused_within_one_line_of_buffer():
    server, client = open_pair()
    with pytest.raises(RemoteProtocolError):
        for _ in range(1000):
            server.receive_data(b"x" * 1024)
            server.next_event()
    assert len(server._buf) <= limits.MAX_LINE + 1024


@pytest.mark.parametrize(
    "event",
    [
        Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://a b/",)),
        Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://é/",)),
        Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://a/\nhttp://b/",)),  # one outlink would read as two
        Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://a/", "")),
        Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://a/" + "x" * limits.MAX_URL_LEN,)),
        Done(1, Status.FETCHED, 200, Specific.OK, 1, (), new_url="http://x/\n"),
        Get(0),
        Working(()),
    ],
)
def test_what_would_break_framing_cannot_be_sent(event):
    server, client = open_pair()
    with pytest.raises(LocalProtocolError):
        client.send(event)


def test_a_long_reason_is_truncated_not_refused():
    server, client = open_pair()
    [done] = feed(server, client.send(Done(1, Status.ERROR, 0, Specific.INTERNAL, 1, reason="x" * 5000)))
    assert done.reason == "x" * limits.MAX_REASON_LEN


def test_a_reason_with_control_characters_arrives_with_spaces():
    server, client = open_pair()
    [done] = feed(server, client.send(Done(1, Status.FETCH_ERROR, 0, Specific.RESET, 9, reason="recv\tfailed\r\nagain")))
    assert done.reason == "recv failed  again"


@pytest.mark.parametrize("cut", [1, 10])
def test_end_of_stream_inside_a_done_block_is_an_error_not_a_close(cut):
    server, client = open_pair()
    data = client.send(Done(1, Status.FETCHED, 200, Specific.OK, 1, ("http://a/",), body=b"robots"))
    server.receive_data(data[:-cut])
    assert server.next_event() is NEED_DATA
    server.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="middle of a message"):
        server.next_event()


def test_ipv4_mapped_addresses_are_never_accepted():
    server, client = open_pair()
    feed(server, client.send(Get(1)))
    with pytest.raises(RemoteProtocolError, match="bad IP address"):
        feed(client, b"1 2 ::ffff:7f00:1 h http://h/\n")
    with pytest.raises(LocalProtocolError):
        server.send(Assignment(1, 2, "::ffff:127.0.0.1", "h", "http://h/"))


def test_a_host_checked_once_is_sent_alike_and_a_bad_name_on_its_address_still_refused():
    # issue 16: an assignment's address and host name are checked once per pair
    server, client = open_pair()
    feed(server, client.send(Get(3)))
    first = server.send(Assignment(1, 2, "127.0.0.9", "h.test", "http://h.test/a"))
    again = server.send(Assignment(3, 4, "127.0.0.9", "h.test", "http://h.test/b"))
    assert (first, again) == (b"1 2 127.0.0.9 h.test http://h.test/a\n", b"3 4 127.0.0.9 h.test http://h.test/b\n")
    with pytest.raises(LocalProtocolError):
        server.send(Assignment(5, 6, "127.0.0.9", "h test", "http://h.test/c"))
    assert [a.url for a in feed(client, first + again)] == ["http://h.test/a", "http://h.test/b"]


@pytest.mark.parametrize("fields, why", [
    (b"digest=", "bad extension field"),  # no value
    (b"digest=1a digest=2b", "given twice"),
    (b"digest=1\x7fa", "bad extension field"),  # not printable
    (b"Digest=1a", "bad extension field"),  # not a key
    (b"digest", "bad extension field"),  # no '='
])
def test_a_done_extension_key_seen_before_is_decoded_alike_and_its_bad_fields_still_refused(fields, why):
    # issue 16: keys checked once are remembered (textfields.extras); every
    # field is still checked, and the errors are the same words
    server, client = open_pair()
    good = b"DONE 7 FETCHED 200 OK 12 0 0 size=100 digest=1a known=3\n"
    first, again = feed(server, good + good)
    assert first == again and first.extra == {"size": "100", "digest": "1a"} and first.known == 3
    with pytest.raises(RemoteProtocolError, match=why) as err:
        feed(server, b"DONE 8 FETCHED 200 OK 12 0 0 size=100 " + fields + b"\n")
    assert err.value.code is ErrorCode.SYNTAX


@pytest.mark.parametrize("extra", [{"via": "http://h.test/a b"}, {"via": ""}, {"via": "http://h.test/\u00e9"},
                                   {"Via": "http://h.test/"}, {"via": "http://h.test/" + "a" * limits.MAX_URL_LEN}])
def test_an_assignment_extension_key_sent_before_still_has_its_value_checked(extra):
    # issue 16: keys checked once are remembered (textfields.encode_extras); every value is still checked
    server, client = open_pair()
    feed(server, client.send(Get(3)))
    sent = server.send(Assignment(1, 2, "127.0.0.9", "h.test", "http://h.test/a", {"hops": "L", "via": "http://h.test/"}))
    assert sent == b"1 2 127.0.0.9 h.test http://h.test/a hops=L via=http://h.test/\n"
    with pytest.raises(LocalProtocolError, match="cannot be sent"):
        server.send(Assignment(3, 4, "127.0.0.9", "h.test", "http://h.test/b", {"hops": "L", **extra}))
