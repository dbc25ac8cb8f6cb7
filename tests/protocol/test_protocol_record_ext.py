"""Fetch records with extension fields (docs/protocol.txt 6.2, 6.3), byte by byte."""

import struct

import pytest

from wreck.protocol import ErrorCode, LocalProtocolError, Record, RemoteProtocolError, Specific, State, http_enum, limits
from wreck.protocol import textfields
from wreck.protocol.record import EXT, RECORD_HEADER, RECORD_HEADER_EXT

from tests.protocol_helpers import bytewise, open_store_pair

PLAIN = Record(7, True, Specific.OK, http_enum(200), 5, "http://h/", None, b"HTTP/1.1 200 OK\r\n\r\nx")
REQUEST = b"GET / HTTP/1.1\r\nHost: h\r\nIf-Modified-Since: Tue, 01 Jan 2030 00:00:00 GMT\r\n\r\n"
FULL = Record(7, True, Specific.OK, http_enum(200), 5, "http://h/", None, b"HTTP/1.1 200 OK\r\n\r\nx",
              request=REQUEST, ip="127.0.0.9", truncated="time", outlinks=("http://h/a", "http://h/b"))


def ext_record(ext: bytes, doc: bytes = b"") -> bytes:
    head = RECORD_HEADER_EXT.pack(7, 1, 0, http_enum(200), EXT, 5, 9, 0, len(doc), len(ext))
    return head + b"http://h/" + doc + ext


def test_a_record_without_fields_keeps_the_20_octet_layout_and_flags_0():
    _, client = open_store_pair()
    data = client.send(PLAIN)
    assert data[7] == 0 and len(data) == RECORD_HEADER.size + 9 + len(PLAIN.document)


def test_every_field_crosses_the_wire_one_byte_at_a_time():
    server, client = open_store_pair()
    data = client.send(FULL)
    assert data[7] == EXT
    ext_len = struct.unpack_from("!I", data, 20)[0]
    assert len(data) == 24 + 9 + len(FULL.document) + ext_len
    # the first field is REQUEST, tag 1, its length, then the octets as sent
    assert data[24 + 9 + len(FULL.document) :][:5] == struct.pack("!BI", 1, len(REQUEST))
    assert bytewise(server, data + client.send(PLAIN)) == [FULL, PLAIN]


def test_an_unknown_tag_is_skipped_so_later_fields_need_no_new_flag():
    server, _ = open_store_pair()
    ext = struct.pack("!BI", 99, 3) + b"new" + struct.pack("!BI", 2, 9) + b"127.0.0.1"
    [got] = bytewise(server, ext_record(ext))
    assert got.ip == "127.0.0.1" and got.request == b""


@pytest.mark.parametrize("ext, why", [
    (struct.pack("!BI", 2, 50) + b"1.2.3.4", "runs past"),
    (struct.pack("!BI", 2, 1) + b"1" + struct.pack("!BI", 2, 1) + b"2", "twice"),
    (struct.pack("!BI", 3, 4) + b"size", "truncation"),
    (struct.pack("!BI", 4, 8) + b"http://h", "LF"),
    (b"\x01\x00", "cut short"),
    (struct.pack("!BI", 5, 10) + b"http://h h", "printable ASCII"),  # VIA: a URL token
    (struct.pack("!BI", 6, 2) + b"L-", "hop path"),  # HOPS: the hops-path grammar of 5.3
    (struct.pack("!BI", 6, 3) + b"0+L", "hop path"),
])
def test_malformed_extension_fields_are_syntax_errors(ext, why):
    server, _ = open_store_pair()
    with pytest.raises(RemoteProtocolError, match=why) as err:
        bytewise(server, ext_record(ext))
    assert err.value.code is ErrorCode.SYNTAX and server.state is State.ERROR


def test_an_ext_len_over_its_bound_is_refused_with_the_24_octet_header():
    server, _ = open_store_pair()
    head = RECORD_HEADER_EXT.pack(7, 1, 0, http_enum(200), EXT, 5, 9, 0, 0, limits.MAX_EXT_LEN + 1)
    with pytest.raises(RemoteProtocolError) as err:
        server.receive_data(head)
        server.next_event()
    assert err.value.code is ErrorCode.LIMIT


def test_a_sender_refuses_an_unknown_truncation_reason():
    _, client = open_store_pair()
    with pytest.raises(LocalProtocolError):
        client.send(Record(7, True, Specific.OK, http_enum(200), 5, "http://h/", None, b"", truncated="size"))


# -- a record-only transaction (5.3 nofetch=; 6.3 NOFETCH and REFUSED) ---------------

UNFETCHED = Record(8, False, Specific.FORBIDDEN_ADDRESS, 0, 0, "http://h/", None, b"",
                   nofetch="forbidden address 10.1.2.3 (private) \u2014 intranet", refused=("10.1.2.3", "fd00::7"))


def test_why_nothing_was_fetched_crosses_the_wire_one_byte_at_a_time():
    server, client = open_store_pair()
    data = client.send(UNFETCHED)
    ext = data[24 + 9 :]
    nofetch = UNFETCHED.nofetch.encode("utf-8")
    assert ext == (struct.pack("!BI", 7, len(nofetch)) + nofetch
                   + struct.pack("!BI", 8, len(b"10.1.2.3,fd00::7")) + b"10.1.2.3,fd00::7")
    assert bytewise(server, data) == [UNFETCHED]


@pytest.mark.parametrize("ext", [
    struct.pack("!BI", 7, 3) + b"a\x00b",  # a control character
    struct.pack("!BI", 7, 2) + b"\xff\xfe",  # not UTF-8
    struct.pack("!BI", 8, 9) + b"127.000.1",  # not canonical
    struct.pack("!BI", 8, 16) + b"::ffff:127.0.0.1",  # IPv4-mapped: sent as IPv4
    struct.pack("!BI", 8, 8) + b"1.2.3.4,",  # an empty item
])
def test_a_malformed_nofetch_or_refused_field_is_a_syntax_error(ext):
    server, _ = open_store_pair()
    with pytest.raises(RemoteProtocolError) as err:
        bytewise(server, ext_record(ext))
    assert err.value.code is ErrorCode.SYNTAX and server.state is State.ERROR


@pytest.mark.parametrize("fields", [{"nofetch": "a\nb"}, {"refused": ("127.1",)}, {"refused": ("host",)},
                                    {"nofetch": "x" * (limits.MAX_REASON_LEN + 1)}])
def test_a_sender_refuses_a_nofetch_or_refused_field_that_cannot_be_sent(fields):
    _, client = open_store_pair()
    with pytest.raises(LocalProtocolError):
        client.send(Record(8, False, Specific.DNS_FAILED, 0, 0, "http://h/", None, b"", **fields))
def test_via_and_hops_cross_the_wire_after_the_other_fields():
    server, client = open_store_pair()
    sent = FULL.__replace__(via="http://h/from", hops="3+" + "L" * 50)
    data = client.send(sent)
    assert data.endswith(struct.pack("!BI", 5, 13) + b"http://h/from" + struct.pack("!BI", 6, 52) + b"3+" + b"L" * 50)
    assert bytewise(server, data) == [sent]
    seed = PLAIN.__replace__(hops="-")  # a seed: HOPS alone, so EXT is set
    assert bytewise(server, client.send(seed)) == [seed]


def test_a_sender_refuses_a_hop_path_that_breaks_the_grammar():
    _, client = open_store_pair()
    with pytest.raises(LocalProtocolError):
        client.send(PLAIN.__replace__(hops="L" * 51))


# -- OUTLINKS checked over the whole block (textfields.url_lines) ----------------

def _one_by_one(block: bytes) -> tuple[str, ...]:
    """The reference: every URL through textfields.url, as the store once did."""
    if not block.endswith(b"\n"):
        raise RemoteProtocolError("outlinks do not end with LF")
    return tuple(textfields.url(u, "outlink") for u in block[:-1].split(b"\n"))


def _outcome(check, *args):
    try:
        return check(*args)
    except (RemoteProtocolError, LocalProtocolError) as exc:
        return type(exc), exc.code


EDGE_BLOCKS = [
    b"\n", b"\n\n", b"a\n", b"a", b"a\n\n", b"\na\n", b"a\n\nb\n", b"a\nb\n", b"a b\n", b"a\tb\n",
    b"a\r\n", b"a\x7f\n", b"\x21\x7e\n", b"\x20\n", b"a\nb", b"x" * limits.MAX_URL_LEN + b"\n",
    b"a\n" + b"x" * (limits.MAX_URL_LEN + 1) + b"\n", b"\xc3\xa9\n", b"a\nb\x00\n",
]


@pytest.mark.parametrize("block", EDGE_BLOCKS)
def test_an_outlinks_block_is_accepted_or_refused_as_url_by_url(block):
    assert _outcome(textfields.url_lines, block, "outlink") == _outcome(_one_by_one, block)


@pytest.mark.parametrize("block", EDGE_BLOCKS)
def test_a_done_outlinks_block_is_accepted_or_refused_as_url_by_url(block):
    # the control protocol's block (5.5): the same URLs, their count given by the DONE header
    count = block.count(b"\n")
    assert _outcome(textfields.link_block, block, count) == _outcome(_one_by_one, block)
    if count:
        assert _outcome(textfields.link_block, block, count + 1)[0] is RemoteProtocolError


@pytest.mark.parametrize("where", [0, 5, 9])
def test_every_byte_value_in_an_outlink_is_judged_as_url_by_url(where):
    for byte in range(256):
        url = bytearray(b"http://h/a")
        url[where] = byte
        block = b"http://h/first\n" + bytes(url) + b"\nhttp://h/last\n"
        assert _outcome(textfields.url_lines, block, "outlink") == _outcome(_one_by_one, block), byte
        assert _outcome(textfields.link_block, block, block.count(b"\n")) == _outcome(_one_by_one, block), byte


@pytest.mark.parametrize("urls", [
    (), ("http://h/a",), ("http://h/a", "http://h/b"), ("",), ("a", ""), ("", "a"), ("a\nb",), ("a b",),
    ("a\tb",), ("\u00e9",), ("a", "x" * limits.MAX_URL_LEN), ("x" * (limits.MAX_URL_LEN + 1),), ("a\x7f",),
    ("a\n",), ("\na",),
])
def test_outlinks_about_to_be_sent_are_judged_as_url_by_url(urls):
    def one_by_one(urls):
        return b"".join(textfields.check_url_out(u, "outlink") + b"\n" for u in urls)
    assert _outcome(textfields.encode_url_lines, urls, "outlink") == _outcome(one_by_one, urls)


def test_a_sender_refuses_an_outlink_holding_an_lf_rather_than_sending_two():
    _, client = open_store_pair()
    with pytest.raises(LocalProtocolError):
        client.send(FULL.__replace__(outlinks=("http://h/a\nhttp://h/b",)))


def test_a_block_of_outlinks_decodes_to_the_urls_sent():
    server, client = open_store_pair()
    sent = FULL.__replace__(outlinks=tuple(f"http://h/{i}?q=%20" for i in range(300)))
    assert bytewise(server, client.send(sent)) == [sent]
