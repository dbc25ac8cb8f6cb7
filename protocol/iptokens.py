# The IP-token messages of the peer link between urlserver partitions
# (docs/protocol.txt, "IP tokens"): four LF-ended lines, dispatched by their
# first word beside the link's LINKS/ACK. Each names one address in canonical
# text form; IPGRANT and IPRETURN carry a relative time in milliseconds.
#
#   holder -> owner:  IPWANT <ip> | IPRETURN <ip> <due-ms>
#   owner -> holder:  IPGRANT <ip> <wait-ms> | IPRECALL <ip>
"""IpWant, IpGrant, IpRecall, IpReturn: encode and parse, sans-I/O."""

from __future__ import annotations

import msgspec

from . import textfields as f
from .errors import RemoteProtocolError, shown

# The longest token line: "IPRETURN " + an IPv6 address (45) + " " + 10 digits.
MAX_TOKEN_LINE = 64


class IpWant(msgspec.Struct, frozen=True, gc=False):
    """A partition asks the owner of `ip` for its token."""

    ip: str


class IpGrant(msgspec.Struct, frozen=True, gc=False):
    """The owner gives the token of `ip`: no hand-out to it before `wait_ms` from arrival."""

    ip: str
    wait_ms: int


class IpRecall(msgspec.Struct, frozen=True, gc=False):
    """The owner wants the token of `ip` back (another partition asked for it)."""

    ip: str


class IpReturn(msgspec.Struct, frozen=True, gc=False):
    """The holder gives the token of `ip` back: the address is next due `due_ms` from arrival."""

    ip: str
    due_ms: int


TokenMessage = IpWant | IpGrant | IpRecall | IpReturn
KEYWORDS = {b"IPWANT": (IpWant, 2), b"IPGRANT": (IpGrant, 3), b"IPRECALL": (IpRecall, 2),
            b"IPRETURN": (IpReturn, 3)}


def encode_token(message: TokenMessage) -> bytes:
    """One line, LF included."""
    if isinstance(message, IpGrant):
        return f"IPGRANT {message.ip} {message.wait_ms}\n".encode("ascii")
    if isinstance(message, IpReturn):
        return f"IPRETURN {message.ip} {message.due_ms}\n".encode("ascii")
    word = "IPWANT" if isinstance(message, IpWant) else "IPRECALL"
    return f"{word} {message.ip}\n".encode("ascii")


def parse_token(line: bytes) -> TokenMessage:
    """A token line without its LF; RemoteProtocolError if it is not one."""
    if len(line) > MAX_TOKEN_LINE:
        raise RemoteProtocolError(f"IP token line of {len(line)} octets (at most {MAX_TOKEN_LINE})")
    parts = line.split(b" ")
    kind = KEYWORDS.get(parts[0])
    if kind is None:
        raise RemoteProtocolError(f"not an IP token message: {shown(line, 24)}")
    cls, fields = kind
    if len(parts) != fields:
        raise RemoteProtocolError(f"{parts[0].decode()} takes {fields - 1} field(s), got {len(parts) - 1}")
    ip = f.ip(parts[1])
    if fields == 2:
        return cls(ip)
    return cls(ip, f.uint(parts[2], "milliseconds", f.MAX_U32))
