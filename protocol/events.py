# The messages of both protocols as plain data (msgspec Structs). Connection
# objects turn bytes into these and these into bytes; nothing here does I/O.
"""Events: what a connection reports and what an application sends."""

from __future__ import annotations

import msgspec

from .codes import AckResult, ErrorCode, Specific, Status


class _Event(msgspec.Struct, frozen=True, gc=False):
    pass


# -- handshake (both protocols) ---------------------------------------------


class Hello(_Event):
    """Server greeting: protocol version, which service, server nonce."""

    service: str
    nonce: str
    version: int = 1


class Auth(_Event):
    """Client's proof of the shared secret over both nonces; to a store, also
    the crawl id the spider works for ("" when it knows none, 6.1); to the
    urlserver, the capabilities the spider has (caps=, 3.1), in sent order."""

    role: str
    name: str
    nonce: str
    mac: str
    version: int = 1
    crawl: str = ""
    caps: tuple[str, ...] = ()


class Ready(_Event):
    """WELCOME (server's proof) + SET lines + READY: the connection is open."""

    settings: dict[str, str]
    mac: str = ""


class Error(_Event):
    """The sender is closing the connection because of `code`."""

    code: ErrorCode
    reason: str = ""


# -- control protocol: spider -> urlserver ------------------------------------


class Get(_Event):
    """Grant the server `count` more credits: send up to that many URLs."""

    count: int


class Working(_Event):
    """These transactions are still in flight; keep their claims."""

    trans_ids: tuple[int, ...]


class Done(_Event):
    """A transaction's result, sent after the store acked its record."""

    trans_id: int
    status: Status
    http_code: int  # literal HTTP status code, 0 if no response
    specific: Specific
    ms: int
    outlinks: tuple[str, ...] = ()
    new_url: str | None = None  # redirect or meta refresh target
    retry_after: int | None = None  # seconds, from Retry-After
    reason: str = ""
    extra: dict[str, str] = {}
    body: bytes | None = None  # only when the assignment asked (body=<max>)
    known: int = 0  # outlinks left out as committed before (known=, docs/protocol.txt 5.5.1)


# -- control protocol: urlserver -> spider ------------------------------------


class Assignment(_Event):
    """One URL to fetch (docs/protocol.txt 5.3): TRANS_ID DOC_ID HOST_IP HOST_NAME URL."""

    trans_id: int
    doc_id: int
    host_ip: str
    host_name: str
    url: str
    extra: dict[str, str] = {}


class Idle(_Event):
    """Nothing is ready now; credits stand. A hint, not a request."""

    retry_ms: int


class Cancel(_Event):
    """Abandon this transaction: its claim was withdrawn."""

    trans_id: int


class Committed(_Event):
    """These DONEs were applied and their commit is durable (docs/protocol.txt
    5.5.1): the links they carried may be left out of later DONEs."""

    trans_ids: tuple[int, ...]


class Bye(_Event):
    """The server is closing this connection cleanly (e.g. 'done')."""

    reason: str


# -- store protocol ----------------------------------------------------------


class Packed(_Event):
    """A record's document sent as the store would keep it (docs/protocol.txt
    6.7, extension fields ZSTD and DIGEST): one zstd frame made with the
    store's dictionary `dict_id`, of a document of `doc_len` bytes whose
    first `head_len` are its header block, and the first 16 bytes of the
    SHA-256 of the body after it (b"" when the body is empty)."""

    dict_id: int
    doc_len: int
    head_len: int
    digest: bytes = b""


class Record(_Event):
    """One fetch record (docs/protocol.txt 6.2), spider -> store. With
    `packed`, `document` is the zstd frame it describes (6.7)."""

    doc_id: int
    success: bool
    specific: Specific
    http: int  # HTTP code enumeration (codes.http_enum), not the literal
    ms: int
    url: str
    new_url: str | None
    document: bytes  # response status line + headers, blank line, body
    # Extension fields (6.3), for the archive; sent with flags EXT when any is set.
    request: bytes = b""  # the final request's header block as sent
    ip: str = ""  # the address connected to
    truncated: str = ""  # "length", "time" or "disconnect" when the body was cut
    outlinks: tuple[str, ...] = ()  # the links found in the document
    # A record-only transaction (the assignment's nofetch=, 5.3): why nothing
    # was fetched, as the urlserver said, and the addresses it refused.
    nofetch: str = ""
    refused: tuple[str, ...] = ()
    via: str = ""  # the URL this one was first found on (the assignment's via=, 5.3)
    hops: str = ""  # its hop path from the seed, "-" for a seed (the assignment's hops=)
    packed: Packed | None = None  # the document is a zstd frame with the store's dictionary (6.7)


class Ack(_Event):
    """The record for doc_id is durable on the store."""

    doc_id: int
    result: AckResult


class Dictionary(_Event):
    """Store -> spider, to a spider that announced caps=zstd (6.7): the
    store's zstd dictionary `dict_id` and the level it compresses at; the
    spider may from now on send documents compressed so."""

    dict_id: int
    level: int
    data: bytes


class Notice(_Event):
    """Store -> spider, not fatal: e.g. the store is full and holds acks."""

    code: int
    text: str


class ConnectionClosed(_Event):
    """The peer closed its side cleanly at a message boundary."""


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA = _NeedData()
"""Returned by next_event() when more bytes are needed."""


# -- peer link: urlserver partition <-> urlserver partition (docs/protocol.txt 5.10)


class PeerLink(_Event):
    """One forwarded link: a URL of the receiver's hosts, its depth from the
    seeds, and extension fields (key=value) an older receiver ignores."""

    url: str
    depth: int
    extra: dict[str, str] = {}


class Links(_Event):
    """A batch of links from the dialling partition, numbered SEQ (from 1,
    one more for each batch to the same receiver)."""

    seq: int
    links: tuple[PeerLink, ...]


class LinksAck(_Event):
    """The receiver committed batch SEQ (or had before: a resend)."""

    seq: int
