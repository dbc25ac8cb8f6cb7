# The enumerations both wire formats share. Numbers are on the wire and never
# change meaning; names are what the text protocol and operators see.
# docs/protocol.txt publishes each table; tests check they agree.
"""Status, specific response code, HTTP code enumeration, error codes."""

from __future__ import annotations

import enum


class Status(enum.Enum):
    """A fetch's outcome for scheduling (docs/protocol.txt 5.6)."""

    FETCHED = "FETCHED"  # a document was received (2xx, or 304 on a recrawl)
    REDIRECTION = "REDIRECTION"  # 3xx or meta refresh: the target is scheduled
    FETCH_ERROR = "FETCH_ERROR"  # possibly transient: retry later
    ERROR = "ERROR"  # terminal for this URL


class Specific(enum.IntEnum):
    """What exactly happened; one byte in the binary record."""

    OK = 0  # a 2xx response received in full, or as far as the server sent it before closing (docs/protocol.txt 5.6)
    REDIRECT = 1  # a 3xx response with a usable Location
    META_REFRESH = 2  # a 2xx HTML page whose meta refresh names a target
    NOT_MODIFIED = 3  # 304 to a conditional request
    HTTP_ERROR = 4  # a 4xx or 5xx response received in full
    TOO_BIG = 5  # aborted at Max_Doc_Size (Content-Length or decoded bytes)
    TIMEOUT = 6  # the whole transfer reached Timeout_Req
    CONNECT_TIMEOUT = 7  # no connection within the connect timeout
    TOO_SLOW = 8  # below the low-speed limit for too long
    CONNECT_FAILED = 9  # refused, unreachable
    RESET = 10  # connection reset or closed before the response was complete
    TLS_ERROR = 11  # TLS handshake or certificate failure
    BAD_RESPONSE = 12  # malformed status line, headers or framing
    HEADERS_TOO_BIG = 13  # response headers beyond the spider's bound
    FORBIDDEN_ADDRESS = 14  # the address is not admitted by allow_net
    UNWANTED_TYPE = 15  # the content type is filtered out; transfer aborted
    BAD_URL = 16  # unparseable URL or scheme other than http/https
    DECODE_ERROR = 17  # corrupt Content-Encoding
    TOO_MANY_REDIRECTS = 18  # a redirect chain longer than allowed
    INTERNAL = 19  # a bug in the spider, caught and reported
    DNS_FAILED = 20  # the host name did not resolve (a record-only transaction, nofetch=dns)


class ErrorCode(enum.IntEnum):
    """Why a connection is being closed (ERROR line, error frame)."""

    SYNTAX = 1  # bytes that do not parse
    LIMIT = 2  # a length or count beyond a published limit
    STATE = 3  # a message not allowed in the connection's state
    VERSION = 4  # a protocol version this side does not speak
    AUTH = 5  # wrong or missing proof of the shared secret
    BUSY = 6  # too many connections; try again later
    UNAVAILABLE = 7  # the server cannot serve now (e.g. shutting down)
    INTERNAL = 8  # a bug on the sender's side
    CRAWL = 9  # the peer belongs to another crawl: a store of one crawl refuses another's spider (6.1)
    PARTITION = 10  # a partition link between urlservers that disagree on the partitions (5.10)
    FRAME = 11  # a compressed document a store cannot take: unknown dictionary, or not the frame it says (6.7)


class AckResult(enum.IntEnum):
    """The store's answer for one doc_id, sent after its commit."""

    STORED = 0  # committed now
    DUPLICATE = 1  # this doc_id was already stored; the earlier record stands
    REFUSED = 2  # this doc_id holds another URL here (another crawl's store, a forged record): nothing stored


class Role(enum.Enum):
    """Which end of a connection an object plays."""

    CLIENT = "client"  # the spider, on both protocols
    SERVER = "server"  # the urlserver or the store server


# The HTTP response code as an enumeration (docs/protocol.txt 7.2): one byte standing for
# a registered status code (IANA HTTP Status Code Registry). Codes that are
# not registered map to their class's OTHER entry; the literal code is still
# in the stored header block and on the DONE line.
HTTP_NONE = 0  # no HTTP response was received
HTTP_OTHER_BY_CLASS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 5}  # 1xx..5xx not listed
HTTP_OTHER = 6  # a code outside 100-599
_REGISTERED = (
    100, 101, 102, 103,
    200, 201, 202, 203, 204, 205, 206, 207, 208, 226,
    300, 301, 302, 303, 304, 305, 307, 308,
    400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413,
    414, 415, 416, 417, 418, 421, 422, 423, 424, 425, 426, 428, 429, 431, 451,
    500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
)  # fmt: skip
HTTP_FIRST_REGISTERED = 10
HTTP_CODE_TO_ENUM: dict[int, int] = {
    code: HTTP_FIRST_REGISTERED + i for i, code in enumerate(_REGISTERED)
}
HTTP_ENUM_TO_CODE: dict[int, int] = {v: k for k, v in HTTP_CODE_TO_ENUM.items()}
HTTP_ENUM_MAX = HTTP_FIRST_REGISTERED + len(_REGISTERED) - 1


def http_enum(code: int) -> int:
    """The one-byte enumeration for a literal HTTP status code (0: none)."""
    if code == 0:
        return HTTP_NONE
    found = HTTP_CODE_TO_ENUM.get(code)
    if found is not None:
        return found
    return HTTP_OTHER_BY_CLASS.get(code // 100, HTTP_OTHER)


def http_code(enum_value: int) -> int | None:
    """The literal code for a registered entry; 0 for none; None for OTHER."""
    if enum_value == HTTP_NONE:
        return 0
    return HTTP_ENUM_TO_CODE.get(enum_value)


def is_valid_http_enum(value: int) -> bool:
    return 0 <= value <= HTTP_OTHER or HTTP_FIRST_REGISTERED <= value <= HTTP_ENUM_MAX


class NoticeCode(enum.IntEnum):
    """Store -> spider notices: state changes that are not errors."""

    FULL = 1  # the store cannot commit (disk or map full): acks are held
    RESUMED = 2  # commits succeed again: held records are being acked
