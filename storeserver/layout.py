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
# fetch: key DOC_KEY, value FetchInfo (zstd of msgpack): what the spider kept for
#        the archive (request as sent, address, truncation, outlinks; for a
#        record-only transaction, why nothing was fetched and what was
#        refused; via and hop path; fields added at the array's end, so older
#        values decode).
# journal: key JOURNAL_KEY (commit sequence, u64), value DOC_KEY: every
#        stored doc in commit order, so a WARC writer (or an incremental
#        export) resumes after the last sequence it wrote; doc ids arrive
#        in any order, sequences only grow.
# Pure functions, no LMDB: what every reader and writer agrees on.
"""Key/value encodings of the store."""

from __future__ import annotations

import hashlib
import struct
import threading
from typing import NamedTuple

import msgspec
import zstandard

from wreck.protocol.codes import Specific
from wreck.protocol.record import head_length  # noqa: F401 (the document's layout is the wire's, 6.3)

# Specific codes of a transaction in which no connection was made (6.2).
NOT_CONNECTED = frozenset({Specific.DNS_FAILED, Specific.FORBIDDEN_ADDRESS})

# The store's format (meta "format"): 2 added journal and fetch; 3 keys
# `bodies` by SHA-256 instead of BLAKE2b (body_key). A format 1 store is read
# (no journal: its docs are exported in doc order) but never written, since
# its documents would be missing from the journal. A format 2 store is
# written on as format 2, with BLAKE2b body hashes, so that a resumed crawl's
# new pages are still compared with its old ones; a new store is format 3.
FORMAT_VERSION = 3
WRITABLE_FORMATS = (2, 3)
READABLE_FORMATS = (1, 2, 3)
# The first format whose body hashes are SHA-256: hashlib's SHA-256 runs on
# the CPU's SHA extensions where it has them (8.8 us per 15 KB page here,
# against 16.4 for BLAKE2b-128; issue 16), and 16 bytes of it keep
# collisions out of reach as BLAKE2b-128 did.
SHA256_BODIES_FROM = 3
# The docs value's own layout byte, unchanged by format 2.
DOC_LAYOUT = 1

DOC_KEY = struct.Struct("!I")
DICT_KEY = struct.Struct("!I")
# version u8, success u8, specific u8, http enum u8, ms u32, url_len u16,
# new_url_len u16, doc_len u32 (uncompressed), head_len u32 (bytes of the
# header block inside the document, blank line included), stored_at f64
# (Unix seconds), dict_id u32 (0: zstd without a dictionary).
DOC_HEAD = struct.Struct("!BBBBIHHIIdI")
URL_HASH_BYTES = 16
BODY_HASH_BYTES = 16  # collisions are out of reach for any crawl

DB_DOCS = b"docs"
DB_URLS = b"urls"
DB_META = b"meta"
DB_DICTS = b"dicts"
DB_FPRINTS = b"fprints"  # doc key -> FPRINT
DB_BODIES = b"bodies"  # body hash -> doc key of the first doc with that body
DB_BANDS = b"bands"  # BAND_KEY -> BAND_ENTRY, dupsort: the near-duplicate index
DB_EXTRA = b"extra"  # doc key -> JSON object from document hooks (plugins)
DB_FETCH = b"fetch"  # doc key -> FetchInfo (msgpack)
DB_JOURNAL = b"journal"  # JOURNAL_KEY -> doc key, in commit order
JOURNAL_KEY = struct.Struct("!Q")

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
META_SEQ = b"seq"  # JOURNAL_KEY: the last commit sequence given (absent: none yet)
META_EXPORTED = b"exported_seq"  # JOURNAL_KEY: the last sequence wreck-dump --since-last-export wrote
META_WARC_POS = b"warc_pos"  # WarcPosition (msgpack): where --warc-dir's writer stands

NO_DICT = 0


class Fingerprint(NamedTuple):
    """A page's content fingerprint (fingerprint.py computes the simhash)."""

    body_hash: bytes  # BODY_HASH_BYTES: body_key
    simhash: int | None  # None: not text, or too little of it


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

    @property
    def attempted(self) -> bool:
        """False for the record of a URL no spider connected for (a record-only
        transaction, docs/protocol.txt 5.3 nofetch=, or an address the spider
        itself refused): the archive's note of what was tried, not a fetch."""
        return self.specific not in NOT_CONNECTED


class FetchInfo(msgspec.Struct, frozen=True, array_like=True):
    """What the spider kept about a fetch, for the archive (docs/protocol.txt 6.3)."""

    request: bytes = b""  # the request's header block as sent
    ip: str = ""  # the address connected to
    truncated: str = ""  # "length", "time" or "disconnect": the body was cut
    outlinks: tuple[str, ...] = ()
    # A record-only transaction (docs/protocol.txt 5.3 nofetch=, 6.3 NOFETCH
    # and REFUSED): why nothing was fetched, and the addresses refused. New
    # trailing fields: values written before them decode with the defaults.
    nofetch: str = ""
    refused: tuple[str, ...] = ()
    via: str = ""  # the URL this one was first found on ("" for a seed, or not known)
    hops: str = ""  # its hop path from the seed: "-" a seed, "" not known (a spider or urlserver before them)


_FETCH_ENCODER = msgspec.msgpack.Encoder()
_FETCH_DECODER = msgspec.msgpack.Decoder(FetchInfo)
# zstd without a dictionary: a page's outlinks (most of the value) share
# their scheme and host, so they shrink about fivefold. Level 1: on the
# crawl bench's values (2.3 KB) as small as level 3 (461.9 against 461.4
# bytes) for 9 % fewer instructions, one value a page
# (bench/results/2026-11-25-s12-server12.md). Any level reads back alike.
FETCH_ZSTD_LEVEL = 1
_zstd = threading.local()  # zstandard's (de)compressor objects are one thread's each


def encode_fetch(info: FetchInfo) -> bytes:
    """The fetch database's value: a zstd frame of the MessagePack array."""
    if not hasattr(_zstd, "c"):
        _zstd.c = zstandard.ZstdCompressor(level=FETCH_ZSTD_LEVEL)
    return _zstd.c.compress(_FETCH_ENCODER.encode(info))


def decode_fetch(value: bytes) -> FetchInfo:
    if not hasattr(_zstd, "d"):
        _zstd.d = zstandard.ZstdDecompressor()
    return _FETCH_DECODER.decode(_zstd.d.decompress(value))


def body_key(body: bytes | memoryview, store_format: int = FORMAT_VERSION) -> bytes:
    """The `bodies` key of a page body: its hash in the store's format,
    BODY_HASH_BYTES long (SHA-256 from format 3, BLAKE2b before)."""
    if store_format >= SHA256_BODIES_FROM:
        return hashlib.sha256(body).digest()[:BODY_HASH_BYTES]
    return hashlib.blake2b(body, digest_size=BODY_HASH_BYTES).digest()


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
        DOC_LAYOUT, success, specific, http, ms, len(u), len(n),
        doc_len, head_len, stored_at, dict_id,
    )  # fmt: skip
    return b"".join((head, u, n, payload))


def decode_doc(doc_id: int, value: bytes) -> tuple[StoredDoc, memoryview]:
    """Metadata and the compressed payload (a view into `value`)."""
    version, success, specific, http, ms, ulen, nlen, doc_len, head_len, stored_at, dict_id = (
        DOC_HEAD.unpack_from(value)
    )
    if version != DOC_LAYOUT:
        raise ValueError(f"document {doc_id} has layout version {version}, this reader knows {DOC_LAYOUT}")
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
