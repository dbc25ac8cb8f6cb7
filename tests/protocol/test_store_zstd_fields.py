"""Compression on the spider, sans-I/O (docs/protocol.txt 6.4 and 6.7): the
DICT frame goes only to a spider that announced caps=zstd and its header is
checked before the dictionary is buffered; the ZSTD and DIGEST extension
fields are checked as the spec says."""

from __future__ import annotations

import pytest

from wreck.protocol import (
    Dictionary, ErrorCode, LocalProtocolError, Packed, Record, RemoteProtocolError, Role, Specific,
    StoreConnection, http_enum,
)  # fmt: skip
from wreck.protocol import limits
from wreck.protocol.record import (
    DICT_FRAME, DICT_TYPE, EXT, EXT_FIELD, RECORD_HEADER_EXT, TAG_DIGEST, TAG_ZSTD, ZSTD_FIELD, body_digest,
    head_length,
)  # fmt: skip

SECRET = b"s" * 16
URL = b"http://example.com/"
DOC = b"HTTP/1.1 200 OK\r\n\r\n<p>hello</p>"


def pair(caps=("zstd",)) -> tuple[StoreConnection, StoreConnection]:
    server = StoreConnection(Role.SERVER, secret=SECRET, nonce=b"\x11" * 32)
    client = StoreConnection(Role.CLIENT, secret=SECRET, nonce=b"\x22" * 32, caps=caps)
    client.receive_data(server.hello())
    client.next_event()
    server.receive_data(client.authenticate())
    server.next_event()
    client.receive_data(server.welcome({}))
    client.next_event()
    return server, client


def raw_record(*fields: tuple[int, bytes], frame: bytes = b"(\xb5/\xfdframe") -> bytes:
    ext = b"".join(EXT_FIELD.pack(tag, len(value)) + value for tag, value in fields)
    head = RECORD_HEADER_EXT.pack(9, 1, 0, http_enum(200), EXT, 5, len(URL), 0, len(frame), len(ext))
    return head + URL + frame + ext


def decode(data: bytes, *, max_doc_len: int = limits.MAX_DOC_LEN):
    server, _ = pair()
    server.max_doc_len = max_doc_len
    server.receive_data(data)
    return server.next_event()


HEAD = head_length(DOC)
ZSTD = (TAG_ZSTD, ZSTD_FIELD.pack(1, len(DOC), HEAD))
DIGEST = (TAG_DIGEST, body_digest(DOC, HEAD))


def test_a_packed_record_decodes_to_its_fields():
    record = decode(raw_record(ZSTD, DIGEST))
    assert record.packed == Packed(1, len(DOC), HEAD, body_digest(DOC, HEAD))


@pytest.mark.parametrize("fields, code", [
    ((DIGEST,), ErrorCode.SYNTAX),  # DIGEST without ZSTD
    ((ZSTD,), ErrorCode.SYNTAX),  # a body, and no DIGEST
    (((TAG_ZSTD, ZSTD_FIELD.pack(1, len(DOC), HEAD)[:-1]), DIGEST), ErrorCode.SYNTAX),  # 11 octets
    (((TAG_ZSTD, ZSTD_FIELD.pack(0, len(DOC), HEAD)), DIGEST), ErrorCode.SYNTAX),  # dictionary 0
    (((TAG_ZSTD, ZSTD_FIELD.pack(1, 10, 20)), DIGEST), ErrorCode.SYNTAX),  # head_len beyond the document
    (((TAG_ZSTD, ZSTD_FIELD.pack(1, HEAD, HEAD)), DIGEST), ErrorCode.SYNTAX),  # empty body, yet a DIGEST
    (((TAG_DIGEST, b"x" * 15), ZSTD), ErrorCode.SYNTAX),  # not 16 octets
])  # fmt: skip
def test_bad_zstd_fields_are_protocol_errors(fields, code):
    with pytest.raises(RemoteProtocolError) as info:
        decode(raw_record(*fields))
    assert info.value.code is code


def test_a_document_longer_than_the_store_takes_is_a_limit_error_even_compressed():
    with pytest.raises(RemoteProtocolError) as info:
        decode(raw_record(ZSTD, DIGEST), max_doc_len=len(DOC) - 1)
    assert info.value.code is ErrorCode.LIMIT


def test_a_spider_cannot_send_packed_fields_that_lie():
    _, client = pair()
    bad = Record(9, True, Specific.OK, http_enum(200), 5, URL.decode(), None, b"frame",
                 packed=Packed(1, len(DOC), HEAD, b""))  # a body, no digest
    with pytest.raises(LocalProtocolError):
        client.send(bad)


def test_no_dictionary_for_a_spider_that_did_not_announce_zstd():
    server, _ = pair(caps=())
    with pytest.raises(LocalProtocolError, match="caps=zstd"):
        server.send(Dictionary(1, 3, b"dictionary"))


def test_a_dict_frame_is_checked_before_its_dictionary_is_buffered():
    _, client = pair()
    client.receive_data(DICT_FRAME.pack(DICT_TYPE, 3, 0, 1, limits.MAX_DICT_LEN + 1))
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert info.value.code is ErrorCode.LIMIT
    _, client = pair()
    client.receive_data(DICT_FRAME.pack(DICT_TYPE, 0, 0, 1, 4) + b"dict")  # level 0
    with pytest.raises(RemoteProtocolError) as info:
        client.next_event()
    assert info.value.code is ErrorCode.SYNTAX


def test_a_dict_frame_arrives_whole_however_it_is_cut():
    server, client = pair()
    data = server.send(Dictionary(2, 19, bytes(range(256)) * 4))
    events = []
    for i in range(len(data)):
        client.receive_data(data[i : i + 1])
        event = client.next_event()
        if type(event) is Dictionary:
            events.append(event)
    assert events == [Dictionary(2, 19, bytes(range(256)) * 4)]
