# How a stored document is laid out as LMDB keys and values (docs/storage.txt).
#
# docs:  key DOC_KEY (doc_id, u32 big-endian, so a cursor walks doc order);
#        value DOC_HEAD, then url, new url, compressed document.
# urls:  key = 16-byte BLAKE2b of the URL (LMDB keys stop at 511 bytes, URLs
#        at 8 KiB), dupsort values = DOC_KEY of every doc with that URL.
# meta:  crawl-level facts, ASCII keys, UTF-8 or struct values; among them
#        the id of the one crawl whose records the store keeps (6.1).
# dicts: key DICT_KEY (dict id, u32 big-endian), value = the raw dictionary.
# fprints, bodies, bands: content fingerprints and the duplicate indexes
#        (dedup.py); extra: plugin metadata per doc (JSON object).
# Pure functions, no LMDB: what every reader and writer agrees on.
"""Key/value encodings of the store."""

from __future__ import annotations

import hashlib
import struct

import msgspec

FORMAT_VERSION = 1

DOC_KEY = struct.Struct("!I")
DICT_KEY = struct.Struct("!I")
# version u8, success u8, specific u8, http enum u8, ms u32, url_len u16,
# new_url_len u16, doc_len u32 (uncompressed), head_len u32 (bytes of the
# header block inside the document, blank line included), stored_at f64
# (Unix seconds), dict_id u32 (0: zstd without a dictionary).
DOC_HEAD = struct.Struct("!BBBBIHHIIdI")
URL_HASH_BYTES = 16

DB_DOCS = b"docs"
DB_URLS = b"urls"
DB_META = b"meta"
DB_DICTS = b"dicts"
DB_FPRINTS = b"fprints"  # doc key -> FPRINT
DB_BODIES = b"bodies"  # body hash -> doc key of the first doc with that body
DB_BANDS = b"bands"  # BAND_KEY -> BAND_ENTRY, dupsort: the near-duplicate index
DB_EXTRA = b"extra"  # doc key -> JSON object from document hooks (plugins)

# fprints value: flags u8 (FP_*), distance u8 (to near_of), pad u16, simhash
# u64, duplicate_of u32, near_of u32, body hash (16 bytes).
FPRINT = struct.Struct("!BBHQII16s")
FP_SIMHASH = 1  # the simhash field is set (the page had enough text)
FP_EXACT = 2  # duplicate_of is set: an earlier doc had the same body
FP_NEAR = 4  # near_of is set: an earlier doc's simhash is within the distance
# bands: key band number u8 + the band's 16 bits; value simhash u64 + doc_id u32
BAND_KEY = struct.Struct("!BH")
BANDS = 4  # 16-bit bands of the 64-bit simhash (dedup.py)
MAX_DISTANCE = BANDS - 1  # the largest distance the banded index is sure to find
DEFAULT_DISTANCE = 3  # Manku et al.: 3 bits of 64 separates copies from other pages
BAND_ENTRY = struct.Struct("!QI")

META_FORMAT = b"format"  # FORMAT_VERSION as ASCII
META_CREATED = b"created"  # Unix seconds as ASCII
META_DICT = b"dict_id"  # the dictionary new documents use, DICT_KEY; absent: none
# The crawl whose records this store keeps (docs/protocol.txt 6.1), 32 hex
# digits; absent until a spider first named one (stores made before crawl ids too).
META_CRAWL = b"crawl_id"

NO_DICT = 0


class StoredDoc(msgspec.Struct, frozen=True):
    """One stored document's metadata, and its document once decompressed."""

    doc_id: int
    success: bool
    specific: int
    http: int  # the wire enumeration (protocol.codes.http_enum)
    ms: int
    url: str
    new_url: str | None
    doc_len: int
    head_len: int
    stored_at: float
    dict_id: int
    stored_len: int  # compressed bytes on disk


def head_length(document: bytes) -> int:
    """Bytes of the status line + headers + blank line; 0 if there are none."""
    if not document.startswith(b"HTTP/"):
        return 0
    end = document.find(b"\r\n\r\n")
    if end >= 0:
        return end + 4
    end = document.find(b"\n\n")  # a tolerant reading of a bare-LF response
    return end + 2 if end >= 0 else len(document)


def url_key(url: str) -> bytes:
    return hashlib.blake2b(url.encode("utf-8"), digest_size=URL_HASH_BYTES).digest()


def encode_doc(
    doc_id: int, success: bool, specific: int, http: int, ms: int, url: str,
    new_url: str | None, doc_len: int, head_len: int, stored_at: float,
    dict_id: int, payload: bytes,
) -> bytes:  # fmt: skip
    u = url.encode("utf-8")
    n = new_url.encode("utf-8") if new_url else b""
    head = DOC_HEAD.pack(
        FORMAT_VERSION, success, specific, http, ms, len(u), len(n),
        doc_len, head_len, stored_at, dict_id,
    )  # fmt: skip
    return b"".join((head, u, n, payload))


def decode_doc(doc_id: int, value: bytes) -> tuple[StoredDoc, memoryview]:
    """Metadata and the compressed payload (a view into `value`)."""
    version, success, specific, http, ms, ulen, nlen, doc_len, head_len, stored_at, dict_id = (
        DOC_HEAD.unpack_from(value)
    )
    if version != FORMAT_VERSION:
        raise ValueError(f"document {doc_id} has layout version {version}, this reader knows {FORMAT_VERSION}")
    pos = DOC_HEAD.size
    url = bytes(value[pos : pos + ulen]).decode("utf-8")
    pos += ulen
    new = bytes(value[pos : pos + nlen]).decode("utf-8") if nlen else None
    pos += nlen
    payload = memoryview(value)[pos:]
    meta = StoredDoc(
        doc_id, bool(success), specific, http, ms, url, new, doc_len, head_len,
        stored_at, dict_id, len(payload),
    )  # fmt: skip
    return meta, payload


def doc_url(value: bytes) -> str:
    """The URL a stored document value was fetched from (no decompression)."""
    ulen = DOC_HEAD.unpack_from(value)[5]
    return bytes(value[DOC_HEAD.size : DOC_HEAD.size + ulen]).decode("utf-8")
