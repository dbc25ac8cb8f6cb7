# The store protocol's binary frames, every integer in network byte order.
#
# spider -> store: fetch records as docs/protocol.txt 6.2 lays them out
#   (docs/protocol.txt section 6.2), one after another, no other framing.
# store -> spider: a type byte, then ACK (doc_id durable), NOTICE (not
#   fatal) or ERROR (the store closes the connection after it).
#
# Each header is checked as soon as its bytes are in, before the body is
# awaited, so a record that claims 4 GB is refused having buffered 20 bytes.
"""Binary fetch records and store frames: layouts and codecs."""

from __future__ import annotations

import struct

from . import limits
from . import textfields as f
from .buffer import ReceiveBuffer
from .codes import AckResult, ErrorCode, Specific, is_valid_http_enum
from .errors import LocalProtocolError, RemoteProtocolError
from .events import NEED_DATA, Ack, Error, Notice, Record

# Section 6.2: doc_id u32, success u8, specific u8, http enum u8, pad u8,
# milliseconds u32, url_len u16, new_url_len u16, doc_len u32.
RECORD_HEADER = struct.Struct("!IBBBBIHHI")
# Section 6.4: 'A', result u8, reserved u16 (0), doc_id u32.
ACK_FRAME = struct.Struct("!BBHI")
# Section 6.4: 'N' or 'E', code u8, text length u16, then UTF-8.
TEXT_FRAME = struct.Struct("!BBH")

ACK_TYPE = 0x41  # 'A'
NOTICE_TYPE = 0x4E  # 'N'
ERROR_TYPE = 0x45  # 'E'

_SPECIFICS = tuple(Specific)  # values are 0..n-1, so index by value
_ACK_RESULTS = tuple(AckResult)


def encode_record(r: Record) -> bytes:
    url = f.check_url_out(r.url)
    new = f.check_url_out(r.new_url, "new URL") if r.new_url else b""
    if not 0 <= r.doc_id <= f.MAX_U32 or not is_valid_http_enum(r.http) or not 0 <= r.ms <= f.MAX_U32:
        raise LocalProtocolError(f"record {r.doc_id} has a field out of range")
    if len(r.document) > limits.MAX_DOC_LEN:
        raise LocalProtocolError(f"record {r.doc_id}: document larger than {limits.MAX_DOC_LEN}")
    header = RECORD_HEADER.pack(
        r.doc_id, 1 if r.success else 0, int(r.specific), r.http, 0, r.ms,
        len(url), len(new), len(r.document),
    )  # fmt: skip
    return b"".join((header, url, new, r.document))


def decode_record(buf: ReceiveBuffer, max_doc_len: int) -> Record | object:
    """The next record from `buf`, or NEED_DATA."""
    header = buf.unpack(RECORD_HEADER)
    if header is None:
        return NEED_DATA
    doc_id, success, specific, http, pad, ms, url_len, new_len, doc_len = header
    if success > 1 or specific >= len(_SPECIFICS) or not is_valid_http_enum(http) or pad:
        raise RemoteProtocolError(
            f"record {doc_id}: bad header (success={success} specific={specific} http={http} pad={pad})"
        )
    if not 0 < url_len <= limits.MAX_URL_LEN or new_len > limits.MAX_URL_LEN:
        raise RemoteProtocolError(f"record {doc_id}: URL length {url_len}/{new_len} out of range", ErrorCode.LIMIT)
    if doc_len > max_doc_len:
        raise RemoteProtocolError(
            f"record {doc_id}: document of {doc_len} bytes exceeds {max_doc_len}", ErrorCode.LIMIT
        )
    fields = buf.take_fields(RECORD_HEADER.size, (url_len, new_len, doc_len))
    if fields is None:
        return NEED_DATA
    url, new, document = fields
    return Record(
        doc_id, success == 1, _SPECIFICS[specific], http, ms,
        f.url(url), f.url(new, "new URL") if new_len else None, document,
    )  # fmt: skip


def encode_frame(event: object) -> bytes:
    kind = type(event)
    if kind is Ack:
        if not 0 <= event.doc_id <= f.MAX_U32:
            raise LocalProtocolError(f"doc id {event.doc_id} out of range")
        return ACK_FRAME.pack(ACK_TYPE, int(event.result), 0, event.doc_id)
    if kind is Notice or kind is Error:
        text = (event.text if kind is Notice else event.reason).encode("utf-8")[: limits.MAX_FRAME_TEXT]
        text = text.decode("utf-8", "ignore").encode("utf-8")  # never cut a character in two
        kind_byte = NOTICE_TYPE if kind is Notice else ERROR_TYPE
        return TEXT_FRAME.pack(kind_byte, int(event.code), len(text)) + text
    raise LocalProtocolError(f"{kind.__name__} is not a store frame")


def decode_frame(buf: ReceiveBuffer) -> object:
    """The next store -> spider frame from `buf`, or NEED_DATA."""
    head = buf.unpack(TEXT_FRAME)  # the first 4 bytes of every frame
    if head is None:
        return NEED_DATA
    kind, code, length = head
    if kind == ACK_TYPE:
        fields = buf.unpack(ACK_FRAME)
        if fields is None:
            return NEED_DATA
        if code >= len(_ACK_RESULTS) or length:
            raise RemoteProtocolError(f"bad ACK frame (result={code} reserved={length})")
        buf.take_block(ACK_FRAME.size)
        return Ack(fields[3], _ACK_RESULTS[code])
    if kind not in (NOTICE_TYPE, ERROR_TYPE):
        raise RemoteProtocolError(f"unknown store frame type 0x{kind:02x}")
    if length > limits.MAX_FRAME_TEXT:
        raise RemoteProtocolError(f"frame text of {length} bytes exceeds {limits.MAX_FRAME_TEXT}", ErrorCode.LIMIT)
    fields = buf.take_fields(TEXT_FRAME.size, (length,))
    if fields is None:
        return NEED_DATA
    try:
        text = fields[0].decode("utf-8")
    except UnicodeDecodeError:
        raise RemoteProtocolError("frame text is not valid UTF-8") from None
    if kind == NOTICE_TYPE:
        return Notice(code, text)
    try:
        error_code = ErrorCode(code)
    except ValueError:
        raise RemoteProtocolError(f"unknown error code {code}") from None
    return Error(error_code, text)



