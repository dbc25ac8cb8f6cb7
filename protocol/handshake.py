# The handshake both protocols open with, as pure functions on lines.
#
#   server: WRECK/1 HELLO <service> <server-nonce>
#   client: WRECK/1 AUTH <role> <name> <client-nonce> <client-mac> [crawl=<id>] [caps=<a,b>]
#   server: WELCOME <server-mac> / SET <key> <value> ... / READY
#
# Each MAC is HMAC-SHA256 over both nonces with the shared secret (the empty
# string when none is configured), so each side proves it holds the secret
# without sending it, and fresh nonces on both sides defeat replay. The
# direction word keeps a client's proof from being reflected as a server's.
# The optional crawl= field tells a store which crawl the spider works for
# (docs/protocol.txt 6.1): a store holds one crawl and refuses another's.
# The optional caps= field lists what the spider can do beyond the base
# protocol (3.1), so the urlserver sends a key such as after= only to a
# spider that announced it; names it does not know are kept and ignored.
"""Handshake line codecs and the challenge-response proofs."""

from __future__ import annotations

import hashlib
import hmac
import re

from . import limits
from .syntax import CONTROL as _CONTROL
from .syntax import KEY as _KEY
from .codes import ErrorCode
from .errors import LocalProtocolError, RemoteProtocolError, shown
from .events import Auth, Error, Hello

VERSION = 1
MAGIC = b"WRECK/"
NONCE_BYTES = 32  # 256 bits: collisions across a crawl's lifetime are moot
SERVICES = ("urlserver", "storeserver")
ROLES = ("spider", "partition")  # a partition dials the others (docs/protocol.txt 5.10)

_HEX64 = re.compile(r"[0-9a-f]{64}")
# A crawl id: 128 random bits as 32 lowercase hex digits (docs/protocol.txt
# 5.1); drawn once by the urlserver, so two crawls never share one.
CRAWL_ID_BYTES = 16
_CRAWL_ID = re.compile(r"[0-9a-f]{%d}" % (2 * CRAWL_ID_BYTES))
CRAWL_FIELD = "crawl="
_NAME = re.compile(r"[A-Za-z0-9._:@-]{1,%d}" % limits.MAX_NAME_LEN)
CAPS_FIELD = "caps="
_CAP = re.compile(r"[a-z][a-z0-9_]{0,15}")  # docs/protocol.txt 3.1 cap
# The capabilities this version defines (docs/protocol.txt 3.1):
CAP_AFTER = "after"  # honours after= on assignments (5.3)
CAP_RECORD = "record"  # honours nofetch= on assignments (5.3)
CAP_COMMITTED = "committed"  # reads COMMITTED lines, may send known= on DONE (5.5.1)


def proof(secret: bytes, direction: str, service: str, server_nonce: str, client_nonce: str) -> str:
    """HMAC-SHA256 proof, as 64 lowercase hex digits (docs/protocol.txt 3.2)."""
    msg = f"WRECK/{VERSION} {direction} {service} {server_nonce} {client_nonce}"
    return hmac.new(secret, msg.encode("ascii"), hashlib.sha256).hexdigest()


def proofs_match(expected: str, got: str) -> bool:
    """Constant-time comparison, so timing leaks nothing about the secret."""
    return hmac.compare_digest(expected.encode("ascii"), got.encode("ascii"))


def is_hex64(token: str) -> bool:
    return _HEX64.fullmatch(token) is not None


def is_crawl_id(token: str) -> bool:
    """A crawl id as the wire writes it: 32 lowercase hex digits."""
    return _CRAWL_ID.fullmatch(token) is not None


def check_nonce(nonce: str) -> None:
    if not _HEX64.fullmatch(nonce):
        raise RemoteProtocolError("nonce must be 64 lowercase hex digits")


def check_text(text: str, what: str, limit: int = limits.MAX_REASON_LEN) -> None:
    """Free text fields: bounded, no control characters."""
    if len(text) > limit:
        raise RemoteProtocolError(f"{what} longer than {limit} characters", ErrorCode.LIMIT)
    if _CONTROL.search(text):
        raise RemoteProtocolError(f"{what} contains a control character")


def setting_problem(value: str) -> str | None:
    """Why `value` cannot be a SET line's value, or None: a value is at most
    MAX_SETTING_VALUE_LEN octets of UTF-8, without control characters
    (docs/protocol.txt 3.1). A daemon checks its settings with this at start,
    so none is refused at every handshake instead."""
    if _CONTROL.search(value):
        return "must hold no control character (it is sent in the handshake's SET lines)"
    if len(value.encode("utf-8")) > limits.MAX_SETTING_VALUE_LEN:
        return f"must be at most {limits.MAX_SETTING_VALUE_LEN} octets of UTF-8 (the handshake's limit)"
    return None


def decode_text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RemoteProtocolError(f"{what} is not valid UTF-8") from None


def _version(token: str) -> int:
    if not token.startswith("WRECK/"):
        raise RemoteProtocolError(f"not a WRECK peer (it said {shown(token, 40)})")
    number = token[6:]
    if number != str(VERSION):
        raise RemoteProtocolError(
            f"peer speaks {token[:20]}, this side speaks WRECK/{VERSION}", ErrorCode.VERSION
        )
    return VERSION


# -- lines -> events ----------------------------------------------------------


def parse_error(text: str) -> Error:
    """`ERROR <code> [<reason>]`, the text form used by both protocols."""
    _, _, rest = text.partition(" ")
    code_name, _, reason = rest.partition(" ")
    try:
        code = ErrorCode[code_name.upper()] if code_name.islower() else None
    except KeyError:
        code = None
    if code is None:
        raise RemoteProtocolError(f"unknown error code {shown(code_name, 20)}")
    check_text(reason, "error reason")
    return Error(code, reason)


def parse_hello(line: bytes) -> Hello | Error:
    text = decode_text(line, "greeting")
    if text.startswith("ERROR "):
        return parse_error(text)
    parts = text.split(" ")
    version = _version(parts[0])
    if len(parts) != 4 or parts[1] != "HELLO":
        raise RemoteProtocolError("greeting must be 'WRECK/1 HELLO <service> <nonce>'")
    if parts[2] not in SERVICES:
        raise RemoteProtocolError(f"unknown service {shown(parts[2], 20)}")
    check_nonce(parts[3])
    return Hello(parts[2], parts[3], version)


def parse_auth(line: bytes) -> Auth | Error:
    text = decode_text(line, "AUTH line")
    if text.startswith("ERROR "):
        return parse_error(text)
    parts = text.split(" ")
    version = _version(parts[0])
    if not 6 <= len(parts) <= 8 or parts[1] != "AUTH":
        raise RemoteProtocolError("expected 'WRECK/1 AUTH <role> <name> <nonce> <mac> [crawl=<id>] [caps=<names>]'")
    _, _, role, name, nonce, mac = parts[:6]
    crawl, caps, fields = "", (), parts[6:]
    if fields and fields[0].startswith(CRAWL_FIELD):
        crawl = fields.pop(0)[len(CRAWL_FIELD):]
        if not is_crawl_id(crawl):
            raise RemoteProtocolError(f"expected crawl=<32 lowercase hex digits> after the MAC, "
                                      f"got {shown(CRAWL_FIELD + crawl, 40)}")
    if fields and fields[0].startswith(CAPS_FIELD):
        caps = parse_caps(fields.pop(0)[len(CAPS_FIELD):])
    if fields:
        raise RemoteProtocolError(f"expected crawl=<id> then caps=<names> after the MAC, got {shown(fields[0], 40)}")
    if role not in ROLES:
        raise RemoteProtocolError(f"unknown role {shown(role, 20)}")
    if not _NAME.fullmatch(name):
        raise RemoteProtocolError("name must be 1-64 of A-Z a-z 0-9 . _ : @ -")
    check_nonce(nonce)
    if not _HEX64.fullmatch(mac):
        raise RemoteProtocolError("MAC must be 64 lowercase hex digits", ErrorCode.AUTH)
    return Auth(role, name, nonce, mac, version, crawl, caps)


def caps_problem(caps: tuple[str, ...]) -> str | None:
    """Why `caps` cannot be an AUTH's caps= list (docs/protocol.txt 3.1), or None."""
    if len(caps) > limits.MAX_CAPS:
        return f"names more than {limits.MAX_CAPS} capabilities"
    for cap in caps:
        if not _CAP.fullmatch(cap):
            return f"has {shown(cap, 20)}, not a capability name ([a-z][a-z0-9_]*, at most 16)"
    if len(set(caps)) != len(caps):
        return "names a capability twice"
    return None


def parse_caps(value: str) -> tuple[str, ...]:
    """The names of a caps= field, in order; RemoteProtocolError if malformed."""
    caps = tuple(value.split(",", limits.MAX_CAPS))
    if (problem := caps_problem(caps)) is not None:
        code = ErrorCode.LIMIT if len(caps) > limits.MAX_CAPS else ErrorCode.SYNTAX
        raise RemoteProtocolError(f"caps= {problem}", code)
    return caps


def parse_setting(text: str) -> tuple[str, str]:
    """`SET <key> <value>`; the value is the rest of the line, maybe empty."""
    _, _, rest = text.partition(" ")
    key, sep, value = rest.partition(" ")
    if not sep or not _KEY.fullmatch(key):
        raise RemoteProtocolError("expected 'SET <key> <value>' with key [a-z][a-z0-9_]*")
    check_text(value, f"setting {key}", limits.MAX_SETTING_VALUE_LEN)
    if len(value.encode("utf-8")) > limits.MAX_SETTING_VALUE_LEN:  # octets, as the line bound counts
        raise RemoteProtocolError(f"setting {key} longer than {limits.MAX_SETTING_VALUE_LEN} octets", ErrorCode.LIMIT)
    return key, value


# -- events -> lines ----------------------------------------------------------


def encode_hello(event: Hello) -> bytes:
    if event.service not in SERVICES:
        raise LocalProtocolError(f"unknown service {event.service!r}")
    return f"WRECK/{VERSION} HELLO {event.service} {event.nonce}\n".encode("ascii")


def encode_auth(event: Auth) -> bytes:
    if not _NAME.fullmatch(event.name):
        raise LocalProtocolError(f"bad spider name {event.name!r}")
    if event.crawl and not is_crawl_id(event.crawl):
        raise LocalProtocolError(f"bad crawl id {event.crawl!r}")
    if event.caps and (problem := caps_problem(event.caps)) is not None:
        raise LocalProtocolError(f"caps {event.caps!r} cannot be sent: it {problem}")
    crawl = f" {CRAWL_FIELD}{event.crawl}" if event.crawl else ""
    caps = f" {CAPS_FIELD}{','.join(event.caps)}" if event.caps else ""
    return (
        f"WRECK/{VERSION} AUTH {event.role} {event.name} {event.nonce} {event.mac}{crawl}{caps}\n"
    ).encode("ascii")


def encode_ready(settings: dict[str, str], mac: str) -> bytes:
    if len(settings) > limits.MAX_SETTINGS:
        raise LocalProtocolError(f"more than {limits.MAX_SETTINGS} settings")
    lines = [f"WELCOME {mac}\n"]
    for key, value in settings.items():
        if not _KEY.fullmatch(key):
            raise LocalProtocolError(f"setting key {key!r} cannot be sent")
        if (problem := setting_problem(value)) is not None:
            raise LocalProtocolError(f"setting {key} cannot be sent: it {problem}")
        lines.append(f"SET {key} {value}\n")
    lines.append("READY\n")
    return "".join(lines).encode("utf-8")


def encode_error(event: Error, limit: int = limits.MAX_LINE) -> bytes:
    """An ERROR line no longer than `limit` bytes (the peer's line bound)."""
    reason = _CONTROL.sub(" ", event.reason)[: limits.MAX_REASON_LEN]
    line = f"ERROR {event.code.name.lower()} {reason}".encode("utf-8")[: limit - 1]
    return line.decode("utf-8", "ignore").encode("utf-8") + b"\n"
