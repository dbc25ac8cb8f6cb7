# The store protocol's binary frames, every integer in network byte order.
#
# spider -> store: fetch records as docs/protocol.txt 6.2 lays them out
#   (docs/protocol.txt section 6.2), one after another, no other framing.
# store -> spider: a type byte, then ACK (doc_id durable), NOTICE (not
#   fatal) or ERROR (the store closes the connection after it).
#
# Each header is checked as soon as its bytes are in, before the body is
# awaited, so a record that claims 4 GB is refused having buffered 20 bytes.
# With flags EXT the header is 24 bytes (ext_len after it) and the extension
# fields (6.3: tag u8, length u32, value) follow the document.
# Compression on the spider (6.7): a store sends a spider that announced
# caps=zstd its dictionary in a DICT frame; such a spider may send a document
# as the zstd frame the store would have written, described by the extension
# fields ZSTD (dictionary, lengths) and DIGEST (the body's hash, the store's
# duplicate key). This module checks the fields' syntax; the store checks the
# frame against its dictionaries (storeserver/compress.py).
"""Binary fetch records and store frames: layouts and codecs."""

from __future__ import annotations

import hashlib
import struct

from . import limits
from . import textfields as f
from .buffer import ReceiveBuffer
from .codes import AckResult, ErrorCode, Specific, is_valid_http_enum
from .errors import LocalProtocolError, RemoteProtocolError
from .syntax import CONTROL as _CONTROL
from .events import NEED_DATA, Ack, Dictionary, Error, Notice, Packed, Record

# Section 6.2: doc_id u32, success u8, specific u8, http enum u8, flags u8,
# milliseconds u32, url_len u16, new_url_len u16, doc_len u32.
RECORD_HEADER = struct.Struct("!IBBBBIHHI")
# With flags EXT: the header, then ext_len u32.
RECORD_HEADER_EXT = struct.Struct("!IBBBBIHHII")
EXT = 0x01
# Section 6.3, Table 7a: one extension field is a tag u8 and a length u32.
EXT_FIELD = struct.Struct("!BI")
TAG_REQUEST, TAG_IP, TAG_TRUNCATED, TAG_OUTLINKS, TAG_VIA, TAG_HOPS = 1, 2, 3, 4, 5, 6
TAG_NOFETCH, TAG_REFUSED = 7, 8  # a record-only transaction (nofetch=, 5.3)
TAG_ZSTD, TAG_DIGEST = 9, 10  # the document is a zstd frame (6.7)
TRUNCATIONS = ("length", "time", "disconnect")  # WARC 1.1 5.13's reasons, but "unspecified"
# ZSTD's value: the store's dictionary id u32, the document's length before
# compression u32, its header block's length u32 (6.7).
ZSTD_FIELD = struct.Struct("!III")
DIGEST_BYTES = 16  # the first 16 bytes of the body's SHA-256 (docs/storage.txt, format 3)
# Section 6.4: 'A', result u8, reserved u16 (0), doc_id u32.
ACK_FRAME = struct.Struct("!BBHI")
# Section 6.4: 'N' or 'E', code u8, text length u16, then UTF-8.
TEXT_FRAME = struct.Struct("!BBH")

# Section 6.7: 'D', level u8, reserved u16 (0), dict_id u32, length u32, then the dictionary.
DICT_FRAME = struct.Struct("!BBHII")
MAX_ZSTD_LEVEL = 22  # zstd's highest level (RFC 8878 leaves levels to the encoder; zstd stops at 22)

ACK_TYPE = 0x41  # 'A'
DICT_TYPE = 0x44  # 'D'
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
    ext = encode_ext(r)
    fixed = (r.doc_id, 1 if r.success else 0, int(r.specific), r.http)
    sizes = (r.ms, len(url), len(new), len(r.document))
    if not ext:
        return b"".join((RECORD_HEADER.pack(*fixed, 0, *sizes), url, new, r.document))
    header = RECORD_HEADER_EXT.pack(*fixed, EXT, *sizes, len(ext))
    return b"".join((header, url, new, r.document, ext))


def encode_ext(r: Record) -> bytes:
    """The extension fields of `r` (6.3), b"" when it has none."""
    fields = []
    if r.truncated and r.truncated not in TRUNCATIONS:
        raise LocalProtocolError(f"record {r.doc_id}: truncated={r.truncated!r} is not one of {TRUNCATIONS}")
    if r.hops and not f.HOPS_PATH.fullmatch(r.hops):
        raise LocalProtocolError(f"record {r.doc_id}: hops={r.hops[:60]!r} is not a hop path")
    links = f.encode_url_lines(r.outlinks, "outlink")
    via = f.check_url_out(r.via, "via") if r.via else b""
    fields_of = ((TAG_REQUEST, r.request), (TAG_IP, r.ip.encode("ascii")),
                 (TAG_TRUNCATED, r.truncated.encode("ascii")), (TAG_OUTLINKS, links),
                 (TAG_VIA, via), (TAG_HOPS, r.hops.encode("ascii")))
    if r.nofetch or r.refused:
        fields_of += _unfetched_fields(r)
    if r.packed is not None:
        fields_of += _packed_fields(r)
    for tag, value in fields_of:
        if value:
            fields.append(EXT_FIELD.pack(tag, len(value)))
            fields.append(value)
    ext = b"".join(fields)
    if len(ext) > limits.MAX_EXT_LEN:
        raise LocalProtocolError(f"record {r.doc_id}: extension fields larger than {limits.MAX_EXT_LEN}")
    return ext


def _unfetched_fields(r: Record) -> tuple[tuple[int, bytes], ...]:
    """NOFETCH (the urlserver's reason, UTF-8 text) and REFUSED (addresses,
    comma-separated) of a record-only transaction (6.3)."""
    if _CONTROL.search(r.nofetch) or len(r.nofetch) > limits.MAX_REASON_LEN:
        raise LocalProtocolError(f"record {r.doc_id}: nofetch reason is not text of at most "
                                 f"{limits.MAX_REASON_LEN} characters")
    for ip in r.refused:
        try:
            if f.ip(ip.encode("ascii")) != ip:
                raise RemoteProtocolError("not canonical")
        except (UnicodeEncodeError, RemoteProtocolError):
            raise LocalProtocolError(f"record {r.doc_id}: refused address {ip[:50]!r} is not canonical") from None
    return ((TAG_NOFETCH, r.nofetch.encode("utf-8")), (TAG_REFUSED, ",".join(r.refused).encode("ascii")))


def _packed_fields(r: Record) -> tuple[tuple[int, bytes], ...]:
    """ZSTD and DIGEST of a record whose document is a zstd frame (6.7)."""
    p = r.packed
    body = p.head_len < p.doc_len
    if (not 0 < p.dict_id <= f.MAX_U32 or not 0 <= p.head_len <= p.doc_len <= limits.MAX_DOC_LEN
            or len(p.digest) != (DIGEST_BYTES if body else 0) or not r.document):
        raise LocalProtocolError(f"record {r.doc_id}: packed fields out of range ({p.dict_id}, {p.doc_len}, "
                                 f"{p.head_len}, digest of {len(p.digest)} bytes)")
    return ((TAG_ZSTD, ZSTD_FIELD.pack(p.dict_id, p.doc_len, p.head_len)), (TAG_DIGEST, p.digest))


def head_length(document: bytes) -> int:
    """Bytes of a document's status line + headers + blank line (6.3); 0 if
    there are none (no response), all of it if it has no blank line."""
    if not document.startswith(b"HTTP/"):
        return 0
    end = document.find(b"\r\n\r\n")
    if end >= 0:
        return end + 4
    end = document.find(b"\n\n")  # a tolerant reading of a bare-LF response
    return end + 2 if end >= 0 else len(document)


def body_digest(document: bytes, head_len: int) -> bytes:
    """DIGEST (6.7): the first 16 bytes of the SHA-256 of the body after the
    header block, hashed in place (a copy would cost as much as the hash);
    b"" for an empty body."""
    if head_len >= len(document):
        return b""
    return hashlib.sha256(memoryview(document)[head_len:]).digest()[:DIGEST_BYTES]


def decode_record(buf: ReceiveBuffer, max_doc_len: int) -> Record | object:
    """The next record from `buf`, or NEED_DATA."""
    header = buf.unpack(RECORD_HEADER)
    if header is None:
        return NEED_DATA
    doc_id, success, specific, http, flags, ms, url_len, new_len, doc_len = header
    if success > 1 or specific >= len(_SPECIFICS) or not is_valid_http_enum(http) or flags not in (0, EXT):
        raise RemoteProtocolError(
            f"record {doc_id}: bad header (success={success} specific={specific} http={http} flags={flags})"
        )
    if not 0 < url_len <= limits.MAX_URL_LEN or new_len > limits.MAX_URL_LEN:
        raise RemoteProtocolError(f"record {doc_id}: URL length {url_len}/{new_len} out of range", ErrorCode.LIMIT)
    if doc_len > max_doc_len:
        raise RemoteProtocolError(
            f"record {doc_id}: document of {doc_len} bytes exceeds {max_doc_len}", ErrorCode.LIMIT
        )
    if flags:
        full = buf.unpack(RECORD_HEADER_EXT)
        if full is None:
            return NEED_DATA
        ext_len = full[-1]
        if ext_len > limits.MAX_EXT_LEN:
            raise RemoteProtocolError(
                f"record {doc_id}: extension of {ext_len} bytes exceeds {limits.MAX_EXT_LEN}", ErrorCode.LIMIT
            )
        fields = buf.take_fields(RECORD_HEADER_EXT.size, (url_len, new_len, doc_len, ext_len))
    else:
        fields = buf.take_fields(RECORD_HEADER.size, (url_len, new_len, doc_len))
    if fields is None:
        return NEED_DATA
    url, new, document = fields[:3]
    ext = _decode_ext(doc_id, fields[3]) if flags else {}
    if "packed" in ext:
        _check_packed(doc_id, ext, document, max_doc_len)
    return Record(
        doc_id, success == 1, _SPECIFICS[specific], http, ms,
        f.url(url), f.url(new, "new URL") if new_len else None, document, **ext,
    )  # fmt: skip


def _check_packed(doc_id: int, ext: dict, document: bytes, max_doc_len: int) -> None:
    """ZSTD's lengths and DIGEST's presence (6.7), once both may be in."""
    dict_id, doc_len, head_len = ext["packed"]
    digest = ext.pop("digest", b"")
    if not dict_id or head_len > doc_len or not document:
        raise RemoteProtocolError(f"record {doc_id}: ZSTD field ({dict_id}, {doc_len}, {head_len}) is not a "
                                  f"dictionary and lengths, or the frame is empty")
    if doc_len > max_doc_len:
        raise RemoteProtocolError(f"record {doc_id}: compressed document of {doc_len} bytes exceeds {max_doc_len}",
                                  ErrorCode.LIMIT)
    if len(digest) != (DIGEST_BYTES if head_len < doc_len else 0):
        raise RemoteProtocolError(f"record {doc_id}: DIGEST must be {DIGEST_BYTES} bytes exactly when the body "
                                  f"is not empty")
    ext["packed"] = Packed(dict_id, doc_len, head_len, digest)


def _decode_ext(doc_id: int, data: bytes) -> dict:
    """Record keyword arguments from extension fields (6.3); unknown tags skipped."""
    seen: set[int] = set()
    out: dict = {}
    pos = 0
    while pos < len(data):
        if len(data) - pos < EXT_FIELD.size:
            raise RemoteProtocolError(f"record {doc_id}: extension field header cut short")
        tag, length = EXT_FIELD.unpack_from(data, pos)
        pos += EXT_FIELD.size
        if length > len(data) - pos:
            raise RemoteProtocolError(f"record {doc_id}: extension field {tag} runs past ext_len")
        if tag in seen:
            raise RemoteProtocolError(f"record {doc_id}: extension field {tag} given twice")
        seen.add(tag)
        value = data[pos : pos + length]
        pos += length
        try:
            if tag == TAG_REQUEST:
                out["request"] = value
            elif tag == TAG_IP:
                out["ip"] = value.decode("ascii")
            elif tag == TAG_TRUNCATED:
                out["truncated"] = value.decode("ascii")
                if out["truncated"] not in TRUNCATIONS:
                    raise RemoteProtocolError(f"record {doc_id}: unknown truncation {value[:16]!r}")
            elif tag == TAG_OUTLINKS:
                if not value.endswith(b"\n"):
                    raise RemoteProtocolError(f"record {doc_id}: outlinks do not end with LF")
                out["outlinks"] = f.url_lines(value, "outlink")
            elif tag == TAG_NOFETCH:
                try:
                    out["nofetch"] = value.decode("utf-8")
                except UnicodeDecodeError:
                    raise RemoteProtocolError(f"record {doc_id}: nofetch reason is not UTF-8") from None
                if _CONTROL.search(out["nofetch"]) or len(out["nofetch"]) > limits.MAX_REASON_LEN:
                    raise RemoteProtocolError(f"record {doc_id}: nofetch reason is not text")
            elif tag == TAG_REFUSED:
                out["refused"] = tuple(f.ip(ip) for ip in value.split(b","))
            elif tag == TAG_VIA:
                out["via"] = f.url(value, "via")
            elif tag == TAG_HOPS:
                out["hops"] = f.hops_path(value)
            elif tag == TAG_ZSTD:
                if len(value) != ZSTD_FIELD.size:
                    raise RemoteProtocolError(f"record {doc_id}: ZSTD field of {len(value)} bytes, not {ZSTD_FIELD.size}")
                out["packed"] = ZSTD_FIELD.unpack(value)
            elif tag == TAG_DIGEST:
                out["digest"] = value
        except UnicodeDecodeError:
            raise RemoteProtocolError(f"record {doc_id}: extension field {tag} is not ASCII") from None
    if "digest" in out and "packed" not in out:
        raise RemoteProtocolError(f"record {doc_id}: DIGEST without ZSTD")
    return out


_pack_ack = ACK_FRAME.pack


def encode_acks(acks: list[tuple[int, AckResult]]) -> bytes:
    """ACK frames (6.4) for (doc_id, result) pairs, in one buffer: what a
    store sends after a commit, without an Ack event per record."""
    try:
        return b"".join([_pack_ack(ACK_TYPE, result, 0, doc_id) for doc_id, result in acks])
    except struct.error as exc:
        bad = next((doc_id for doc_id, _ in acks if not 0 <= doc_id <= f.MAX_U32), None)
        raise LocalProtocolError(f"doc id {bad} out of range" if bad is not None else f"bad ACK: {exc}") from None


def encode_frame(event: object) -> bytes:
    kind = type(event)
    if kind is Ack:
        if not 0 <= event.doc_id <= f.MAX_U32:
            raise LocalProtocolError(f"doc id {event.doc_id} out of range")
        return ACK_FRAME.pack(ACK_TYPE, int(event.result), 0, event.doc_id)
    if kind is Dictionary:
        if not 0 < event.dict_id <= f.MAX_U32 or not 1 <= event.level <= MAX_ZSTD_LEVEL:
            raise LocalProtocolError(f"dictionary {event.dict_id} at level {event.level} out of range")
        if not 0 < len(event.data) <= limits.MAX_DICT_LEN:
            raise LocalProtocolError(f"dictionary of {len(event.data)} bytes: 1 to {limits.MAX_DICT_LEN} can be sent")
        return DICT_FRAME.pack(DICT_TYPE, event.level, 0, event.dict_id, len(event.data)) + event.data
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
    if kind == DICT_TYPE:
        return _decode_dict(buf)
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


def _decode_dict(buf: ReceiveBuffer) -> Dictionary | object:
    """A DICT frame (6.7), its header checked before the dictionary is awaited."""
    fields = buf.unpack(DICT_FRAME)
    if fields is None:
        return NEED_DATA
    _, level, reserved, dict_id, length = fields
    if reserved or not dict_id or not 1 <= level <= MAX_ZSTD_LEVEL:
        raise RemoteProtocolError(f"bad DICT frame (level={level} reserved={reserved} dict_id={dict_id})")
    if not 0 < length <= limits.MAX_DICT_LEN:
        raise RemoteProtocolError(f"dictionary of {length} bytes: 1 to {limits.MAX_DICT_LEN} allowed", ErrorCode.LIMIT)
    data = buf.take_fields(DICT_FRAME.size, (length,))
    if data is None:
        return NEED_DATA
    return Dictionary(dict_id, level, data[0])
