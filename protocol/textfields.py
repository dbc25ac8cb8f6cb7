# Field codecs for the line protocol, written for the hot path: validation
# uses C-level primitives (bytes.translate, isdigit, dict lookups) rather than
# per-character Python loops.
"""Decimal ids, URLs, host names, IPs and key=value extensions on a line."""

from __future__ import annotations

import ipaddress
import re
import string
from urllib.parse import quote, unquote

from . import limits
from .codes import ErrorCode
from .errors import LocalProtocolError, RemoteProtocolError, shown
from .handshake import check_text
from .syntax import CONTROL as _CONTROL_CHARS
from .syntax import KEY_BYTES as _KEY

# Bytes a URL token or extension value may hold: printable ASCII, no space.
_TOKEN_BYTES = bytes(range(0x21, 0x7F))
_LINK_BLOCK_BYTES = _TOKEN_BYTES + b"\n"
_TOKEN_OR_SPACE = _TOKEN_BYTES + b" "
_HOST = re.compile(rb"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\]")
# Reasons keep most punctuation readable; only space, '%', controls and
# non-ASCII are percent-encoded.
_REASON_SAFE = "".join(c for c in string.punctuation if c != "%")

MAX_U32 = 2**32 - 1
# A hop path (docs/protocol.txt 5.3 hops=, 6.3 HOPS): "-" for a seed, else
# the count of the oldest hops dropped and "+" (a path of more than 50
# hops), then at most 50 hop letters.
HOPS_PATH = re.compile(r"-|(?:[1-9][0-9]{0,4}\+)?[A-Z]{1,50}")


def uint(token: bytes, what: str, maximum: int = limits.MAX_ID) -> int:
    """A canonical decimal: ASCII digits, no sign, no leading zero."""
    if not token.isdigit() or (token[0] == 0x30 and len(token) > 1) or len(token) > 19:
        raise RemoteProtocolError(f"{what} must be a decimal number, got {shown(token, 24)}")
    value = int(token)
    if value > maximum:
        raise RemoteProtocolError(f"{what} {value} is larger than {maximum}", ErrorCode.LIMIT)
    return value


def is_token(data: bytes) -> bool:
    """Non-empty printable ASCII without space."""
    return bool(data) and not data.translate(None, _TOKEN_BYTES)


def url(token: bytes, what: str = "URL") -> str:
    if len(token) > limits.MAX_URL_LEN:
        raise RemoteProtocolError(f"{what} longer than {limits.MAX_URL_LEN} bytes", ErrorCode.LIMIT)
    if not is_token(token):
        raise RemoteProtocolError(f"{what} must be printable ASCII without spaces")
    return token.decode("ascii")


def url_lines(block: bytes, what: str = "URL") -> tuple[str, ...]:
    """URL tokens each ending in LF (6.3 OUTLINKS), checked as url() checks
    one, in a handful of C calls over the whole block rather than one
    Python call per URL (a page's outlinks are most of a record's fields);
    a block that fails is checked again URL by URL for url()'s error."""
    if block[-1:] == b"\n" and not block.translate(None, _LINK_BLOCK_BYTES):
        links = block[:-1].decode("ascii").split("\n")
        # all(): no empty line (a search for LF LF costs more); a block no
        # longer than one URL may be holds no URL too long.
        if all(links) and (len(block) <= limits.MAX_URL_LEN or max(map(len, links)) <= limits.MAX_URL_LEN):
            return tuple(links)
    if block[-1:] != b"\n":
        raise RemoteProtocolError(f"{what}s do not end with LF")
    return tuple(url(u, what) for u in block[:-1].split(b"\n"))


def host(token: bytes) -> str:
    if len(token) > limits.MAX_HOST_LEN or not _HOST.fullmatch(token):
        raise RemoteProtocolError(f"bad host name {shown(token, 40)}")
    return token.decode("ascii")


# Validated IP tokens: a crawl hands out many URLs per address, and parsing
# one costs microseconds. Bounded; cleared when full.
_IP_CACHE: dict[bytes, str] = {}
_IP_CACHE_MAX = 4096


def ip(token: bytes) -> str:
    """An IP address in canonical text form (no '127.1', no leading zeros)."""
    known = _IP_CACHE.get(token)
    if known is not None:
        return known
    text = token.decode("ascii", "replace")
    try:
        parsed = ipaddress.ip_address(text)
        # IPv4-mapped IPv6 is printed differently across Python versions and
        # hides an IPv4 address from checks; a zone index ("%eth0", which
        # ipaddress accepts with any characters) names an interface of the
        # sender's machine: neither is ever sent (spec 5.3).
        hidden = getattr(parsed, "ipv4_mapped", None) or getattr(parsed, "scope_id", None)
        canonical = None if hidden or not token.isascii() else str(parsed)
    except ValueError:
        canonical = None
    if canonical != text:
        raise RemoteProtocolError(f"bad IP address {shown(text, 40)} (canonical form required)")
    if len(_IP_CACHE) >= _IP_CACHE_MAX:
        _IP_CACHE.clear()
    _IP_CACHE[token] = text
    return text


# Extension keys already checked against KEY: a DONE carries the same few
# (size, digest, etag, known...) on every page, and a regex match a key was
# half of a DONE header's decode (issue 16). Bounded against a peer that
# sends new keys without end; cleared when full.
_KEY_NAMES: dict[bytes, str] = {}
_KEY_TEXTS: set[str] = set()  # the same keys, as text (encode_extras)
_KEY_NAMES_MAX = 1024


def extras(tokens: list[bytes]) -> dict[str, str]:
    """`key=value` extension fields; values verbatim printable ASCII."""
    # one C pass checks every value's bytes (keys are checked by _KEY_NAMES);
    # anything unusual is decided, and its error worded, by _checked_extras
    if len(tokens) > limits.MAX_EXTRAS or b"".join(tokens).translate(None, _TOKEN_BYTES):
        return _checked_extras(tokens)
    found: dict[str, str] = {}
    for token in tokens:
        key, _, value = token.partition(b"=")
        name = _KEY_NAMES.get(key)
        if name is None or not value or name in found:
            return _checked_extras(tokens)
        found[name] = value.decode("ascii")
    return found


def _checked_extras(tokens: list[bytes]) -> dict[str, str]:
    """extras(), each field checked on its own: the keys found good are remembered."""
    if len(tokens) > limits.MAX_EXTRAS:
        raise RemoteProtocolError(f"more than {limits.MAX_EXTRAS} extension fields", ErrorCode.LIMIT)
    found: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition(b"=")
        if not sep or not _KEY.fullmatch(key) or not is_token(value):
            raise RemoteProtocolError(f"bad extension field {shown(token, 40)}")
        name = key.decode("ascii")
        if name in found:
            raise RemoteProtocolError(f"extension field {name} given twice")
        found[name] = value.decode("ascii")
        _remember_key(key, name)
    return found


def _remember_key(key: bytes, name: str) -> None:
    """`key` (`name` decoded) matched KEY: remembered in _KEY_NAMES and _KEY_TEXTS."""
    if len(_KEY_NAMES) >= _KEY_NAMES_MAX:
        _KEY_NAMES.clear()
        _KEY_TEXTS.clear()
    _KEY_NAMES[key] = name
    _KEY_TEXTS.add(name)


def encode_extras(fields: dict[str, str]) -> str:
    """` key=value` for each field, refusing what the peer would refuse (extras())."""
    # every assignment carries hops= and via=: the keys checked once are
    # remembered (_KEY_NAMES), the values checked in a few C passes over the
    # joined text; anything unusual is decided, and worded, by _checked_encode_extras
    text = "".join([f" {key}={value}" for key, value in fields.items()])
    if (
        text.isascii() and all(fields.values()) and text.count(" ") == len(fields)
        and not text.encode("ascii").translate(None, _TOKEN_OR_SPACE)
        and _KEY_TEXTS.issuperset(fields)
        and (len(text) <= limits.MAX_URL_LEN or max(map(len, fields.values())) <= limits.MAX_URL_LEN)
    ):  # fmt: skip
        return text
    return _checked_encode_extras(fields)


def _checked_encode_extras(fields: dict[str, str]) -> str:
    """encode_extras(), field by field: the keys found good are remembered."""
    parts = []
    for key, value in fields.items():
        raw = value.encode("ascii", "replace")
        if (
            not value.isascii() or not _KEY.fullmatch(key.encode("ascii", "replace"))
            or not is_token(raw) or len(raw) > limits.MAX_URL_LEN
        ):  # fmt: skip
            raise LocalProtocolError(f"extension field {key}={value[:40]!r} cannot be sent")
        parts.append(f" {key}={value}")
        _remember_key(key.encode("ascii"), key)
    return "".join(parts)


def check_url_out(value: str, what: str = "URL") -> bytes:
    """Encode a URL we are about to send, refusing what would break framing."""
    raw = value.encode("ascii", "replace")
    if len(raw) > limits.MAX_URL_LEN or not is_token(raw) or not value.isascii():
        raise LocalProtocolError(f"{what} cannot be sent: {value[:80]!r}")
    return raw


def encode_url_lines(urls: tuple[str, ...] | list[str], what: str = "URL") -> bytes:
    """URLs about to be sent, each ending in LF (6.3 OUTLINKS); b"" for
    none. Checked as check_url_out() checks one, over the joined block."""
    if not urls:
        return b""
    text = "\n".join(urls)
    if text.isascii():
        block = text.encode("ascii") + b"\n"
        if (
            all(urls) and not block.translate(None, _LINK_BLOCK_BYTES)
            and block.count(b"\n") == len(urls)  # no URL holds an LF of its own
            and (len(block) <= limits.MAX_URL_LEN or max(map(len, urls)) <= limits.MAX_URL_LEN)
        ):  # fmt: skip
            return block
    return b"".join(check_url_out(u, what) + b"\n" for u in urls)


def encode_reason(reason: str) -> str:
    """Percent-encoded reason; control characters become spaces first."""
    return quote(_CONTROL_CHARS.sub(" ", reason[: limits.MAX_REASON_LEN]), safe=_REASON_SAFE)


# A "%" not followed by two hex digits: the spec's %XX and nothing else, so
# "%ZZ" is an error, never guessed at (docs/protocol.txt 5.5, section 8).
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def decode_reason(value: str) -> str:
    if "%" in value and _BAD_PERCENT.search(value):
        raise RemoteProtocolError("reason has a % not followed by two hex digits")
    try:
        text = unquote(value, errors="strict") if "%" in value else value
    except UnicodeDecodeError:
        raise RemoteProtocolError("reason is not valid UTF-8 once percent-decoded") from None
    check_text(text, "reason")
    return text


def link_block(block: bytes, count: int) -> tuple[str, ...]:
    """The outlinks block: `count` URLs, each ending in LF."""
    # Every DONE's links pass here (the spider checks what it sends, the
    # urlserver what it reads): all() finds an empty line for a tenth of
    # what a search for LF LF over the block costs, and a block no longer
    # than one URL may be holds no URL too long, so the crawl's pages (a
    # few KB of links) skip the pass over every length, as url_lines()
    # does (bench/results/2026-11-25-s12-server12.md: 100 links, 4.3 KB,
    # 158k -> 112k instructions, callgrind).
    if block.translate(None, _LINK_BLOCK_BYTES):
        raise RemoteProtocolError("outlinks must be printable ASCII URLs, one per line")
    links = block.decode("ascii").split("\n")
    last = links.pop()
    if not all(links):  # an LF first, or two in a row
        raise RemoteProtocolError("outlinks must be printable ASCII URLs, one per line")
    if last != "" or len(links) != count:
        raise RemoteProtocolError(f"outlinks block does not hold {count} lines ending in LF")
    if len(block) > limits.MAX_URL_LEN and max(map(len, links)) > limits.MAX_URL_LEN:
        raise RemoteProtocolError(f"an outlink is longer than {limits.MAX_URL_LEN} bytes", ErrorCode.LIMIT)
    return tuple(links)


def hops_path(value: bytes) -> str:
    """A hop path (5.3 hops=, 6.3 HOPS), checked against its grammar."""
    text = value.decode("ascii", "replace")
    if not HOPS_PATH.fullmatch(text):
        raise RemoteProtocolError(f"bad hop path {shown(value, 60)}")
    return text
