"""The store protocol: binary records and frames, byte by byte."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wreck.protocol import (
    Ack, AckResult, Error, ErrorCode, LocalProtocolError, Notice, Record,
    RemoteProtocolError, Role, Specific, State, StoreConnection, http_enum, limits,
)  # fmt: skip
from wreck.protocol.record import RECORD_HEADER

from tests.protocol_helpers import CLIENT_NONCE, SECRET, SERVER_NONCE, bytewise, feed, open_store_pair
from tests.protocol_strategies import chunkings, frames, records

RECORD = Record(1000, True, Specific.OK, http_enum(200), 42, "http://example.com/", None,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>")  # fmt: skip


@given(st.lists(records, max_size=6), chunkings)
def test_records_round_trip_at_any_split(recs, chunks):
    server, client = open_store_pair()
    data = b"".join(client.send(r) for r in recs)
    assert feed(server, data, chunks) == recs


@given(st.lists(frames, max_size=10), chunkings)
def test_store_frames_round_trip_at_any_split(events, chunks):
    server, client = open_store_pair()
    data = b"".join(server.send(e) for e in events)
    assert feed(client, data, chunks) == events


@pytest.mark.parametrize("chunk", [1000, 7, 65536 + 3, None])
def test_large_documents_arrive_whole_and_immutable_however_the_stream_is_cut(chunk):
    # Documents of 16 KiB and more are copied out through a memoryview, and
    # the buffer compacts (drops consumed bytes) between them: every record
    # must still come out byte for byte, as bytes, whatever the read sizes.
    server, client = open_store_pair()
    recs = [Record(i, True, Specific.OK, http_enum(200), 1, f"http://example.com/{i}", None,
                   bytes([i]) * size) for i, size in enumerate((16 * 1024, 40_000, 16 * 1024 - 1, 70_000, 0, 200_000))]
    data = b"".join(client.send(r) for r in recs)
    chunks = None if chunk is None else [chunk] * (len(data) // chunk + 1)
    got = feed(server, data, chunks)
    assert got == recs
    assert all(type(r.document) is bytes for r in got)


def test_the_record_is_the_seeds_004_layout_in_network_byte_order():
    server, client = open_store_pair()
    data = client.send(RECORD)
    assert data[:20] == struct.pack(">IBBBBIHHI", 1000, 1, 0, http_enum(200), 0, 42, 19, 0, len(RECORD.document))
    assert data[20:] == b"http://example.com/" + RECORD.document
    assert bytewise(server, data) == [RECORD]


def test_an_error_frame_closes_the_connection_with_a_reason():
    server, client = open_store_pair()
    [err] = feed(client, server.send(Error(ErrorCode.LIMIT, "record too large")))
    assert err == Error(ErrorCode.LIMIT, "record too large")
    assert client.state is State.CLOSED


def header(**over):
    fields = dict(doc_id=1, success=1, specific=0, http=http_enum(200), pad=0, ms=1, url_len=8, new_len=0, doc_len=0)
    fields.update(over)
    return RECORD_HEADER.pack(*fields.values())


BAD_RECORDS = [
    (header(success=2) + b"http://h", ErrorCode.SYNTAX),
    (header(specific=len(Specific)) + b"http://h", ErrorCode.SYNTAX),
    (header(http=7) + b"http://h", ErrorCode.SYNTAX),  # a gap in the enumeration
    (header(http=255) + b"http://h", ErrorCode.SYNTAX),
    (header(pad=2) + b"http://h", ErrorCode.SYNTAX),  # a flag bit the spec does not name
    (header(url_len=0), ErrorCode.LIMIT),
    (header(url_len=limits.MAX_URL_LEN + 1), ErrorCode.LIMIT),
    (header(new_len=limits.MAX_URL_LEN + 1) + b"http://h", ErrorCode.LIMIT),
    (header() + b"http://\x00", ErrorCode.SYNTAX),
    (header() + b"http:// h", ErrorCode.SYNTAX),
    (header(new_len=3) + b"http://h\xff\xfe\xfd", ErrorCode.SYNTAX),
]


@pytest.mark.parametrize("data, code", BAD_RECORDS)
def test_malformed_records_get_a_typed_error(data, code):
    server, _ = open_store_pair()
    with pytest.raises(RemoteProtocolError) as err:
        bytewise(server, data)
    assert err.value.code is code
    assert server.state is State.ERROR
    # The store answers with an error frame, in the binary framing.
    assert server.send(Error(err.value.code, str(err.value)))[:1] == b"E"


def test_an_oversized_record_is_refused_from_its_header_alone():
    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE, max_doc_len=1_000_000)
    client = StoreConnection(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE)
    feed(client, server.hello()), feed(server, client.authenticate()), feed(client, server.welcome({}))
    with pytest.raises(RemoteProtocolError) as err:
        feed(server, header(doc_len=4_000_000_000))  # 20 bytes claiming 4 GB
    assert err.value.code is ErrorCode.LIMIT
    assert len(server._buf) == RECORD_HEADER.size  # nothing more was awaited


BAD_FRAMES = [
    (b"Z\x00\x00\x00", ErrorCode.SYNTAX),  # unknown frame type
    (b"A\x07\x00\x00\x00\x00\x00\x01", ErrorCode.SYNTAX),  # unknown ack result
    (b"A\x00\x00\x01\x00\x00\x00\x01", ErrorCode.SYNTAX),  # reserved not zero
    (b"N\x01\xff\xff", ErrorCode.LIMIT),  # text longer than a frame may carry
    (b"E\x05\x00\x02\xff\xfe", ErrorCode.SYNTAX),  # bad UTF-8
    (b"E\x63\x00\x00", ErrorCode.SYNTAX),  # unknown error code
]


@pytest.mark.parametrize("data, code", BAD_FRAMES)
def test_malformed_store_frames_get_a_typed_error(data, code):
    _, client = open_store_pair()
    with pytest.raises(RemoteProtocolError) as err:
        bytewise(client, data)
    assert err.value.code is code


@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.sampled_from(AckResult)), max_size=20))
def test_a_commits_acks_sent_at_once_are_the_bytes_of_one_ack_at_a_time(pairs):
    server, client = open_store_pair()
    one_by_one, _ = open_store_pair()
    data = server.send_acks(pairs)
    assert data == b"".join(one_by_one.send(Ack(doc_id, result)) for doc_id, result in pairs)
    assert feed(client, data, None) == [Ack(doc_id, result) for doc_id, result in pairs]


def test_acks_at_once_are_refused_where_one_ack_would_be():
    server, client = open_store_pair()
    with pytest.raises(LocalProtocolError, match="out of range"):
        server.send_acks([(1, AckResult.STORED), (2**32, AckResult.STORED)])
    with pytest.raises(LocalProtocolError):
        client.send_acks([(1, AckResult.STORED)])  # a spider sends no ACK
    server.send(Error(ErrorCode.LIMIT, "bye"))
    with pytest.raises(LocalProtocolError):
        server.send_acks([(1, AckResult.STORED)])  # nothing but an ERROR after an ERROR


def test_a_spider_cannot_send_frames_or_a_bad_record():
    server, client = open_store_pair()
    with pytest.raises(LocalProtocolError):
        client.send(Ack(1, AckResult.STORED))
    with pytest.raises(LocalProtocolError):
        client.send(Record(2**32, True, Specific.OK, 0, 0, "http://h/", None, b""))
    with pytest.raises(LocalProtocolError):
        client.send(Record(1, True, Specific.OK, 0, 0, "http://h/é", None, b""))


def test_records_before_the_handshake_are_refused():
    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    server.hello()
    _, client = open_store_pair()
    with pytest.raises(RemoteProtocolError):
        feed(server, client.send(RECORD))


def test_notice_text_is_cut_at_a_character_boundary():
    server, client = open_store_pair()
    [notice] = feed(client, server.send(Notice(1, "é" * 1000)))
    assert notice.text == "é" * (limits.MAX_FRAME_TEXT // 2)
