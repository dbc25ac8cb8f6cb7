# The peer link between two urlserver partitions (docs/protocol.txt 5.10):
# the control handshake with role "partition", then LF-ended lines, each
# message named by its first word and dispatched by it (WORDS), so more
# kinds of message can join the link (an unknown word is an error):
#
#   dialler:  LINKS <SEQ> <N> LF, then N lines <DEPTH> <URL>[ <key>=<value>...]
#             | IPWANT <ip> | IPRETURN <ip> <ms>        (IP tokens, 5.11: iptokens.py)
#   receiver: ACK <SEQ> | IPGRANT <ip> <ms> | IPRECALL <ip> | ERROR <code> <text>
#
# The dialler's end is a PeerConnection; the listening urlserver's end is
# its ControlConnection, which takes up this codec when AUTH says
# "partition" (protocol/control.py). Both keep a PeerCodec: LINKS is the
# one message of several lines, so the codec remembers a batch in progress.
"""PeerConnection and the peer link's codec, sans-I/O."""

from __future__ import annotations

from collections.abc import Callable

from . import limits
from . import textfields as f
from .buffer import ReceiveBuffer
from .codes import Role
from .connection import Connection
from .errors import LocalProtocolError, RemoteProtocolError, shown
from .events import NEED_DATA, Error, Links, LinksAck, PeerLink
from .handshake import decode_text, encode_error, parse_error
from .iptokens import IpGrant, IpRecall, IpReturn, IpWant, encode_token, parse_token
from .state import PEER_TABLE

MAX_DEPTH = 65535  # what a urlserver keeps of a URL's depth (a u16)


def _ack(parts: list[bytes], line: bytes) -> LinksAck:
    if len(parts) != 2:
        raise RemoteProtocolError("expected 'ACK <seq>'")
    return LinksAck(f.uint(parts[1], "batch sequence"))


def _error(parts: list[bytes], line: bytes) -> Error:
    return parse_error(decode_text(line, "ERROR line"))


# The one-line messages each end may receive, by first word (a message
# joins the link by an entry here and one in protocol/state.py's PEER_TABLE).
# LINKS spans lines: PeerCodec reads it itself.
def _token(parts: list[bytes], line: bytes) -> object:
    return parse_token(line)


FROM_RECEIVER: dict[bytes, Callable[[list[bytes], bytes], object]] = {
    b"ACK": _ack, b"ERROR": _error, b"IPGRANT": _token, b"IPRECALL": _token}
FROM_DIALLER: dict[bytes, Callable[[list[bytes], bytes], object]] = {
    b"ERROR": _error, b"IPWANT": _token, b"IPRETURN": _token}
_TOKENS = (IpWant, IpGrant, IpRecall, IpReturn)


class PeerCodec:
    """Decode and encode the peer link's messages for one end."""

    def __init__(self, our_role: Role) -> None:
        self.our_role = our_role
        self._seq = 0  # the LINKS batch being read, its links so far and how many remain
        self._links: list[PeerLink] = []
        self._remaining = 0

    @property
    def mid_message(self) -> bool:
        return self._remaining > 0

    def decode(self, buf: ReceiveBuffer) -> object:
        """The next message from the other end, or NEED_DATA."""
        while (line := buf.take_line(limits.MAX_LINE)) is not None:
            if self._remaining:
                self._links.append(_parse_link(line))
                self._remaining -= 1
                if not self._remaining:
                    links, self._links = tuple(self._links), []
                    return Links(self._seq, links)
                continue
            parts = line.split(b" ")
            word = parts[0]
            if self.our_role is Role.SERVER and word == b"LINKS":
                if len(parts) != 3:
                    raise RemoteProtocolError("expected 'LINKS <seq> <count>'")
                self._seq = f.uint(parts[1], "batch sequence")
                count = f.uint(parts[2], "link count", limits.MAX_PEER_LINKS)
                if self._seq == 0 or count == 0:
                    raise RemoteProtocolError("LINKS needs a sequence and a count of at least 1")
                self._remaining = count
                continue
            parse = (FROM_RECEIVER if self.our_role is Role.CLIENT else FROM_DIALLER).get(word)
            if parse is None:
                raise RemoteProtocolError(f"unknown message {shown(word, 16)} on a partition link")
            return parse(parts, line)
        return NEED_DATA

    def encode(self, event: object) -> bytes:
        """The octets of a message this end sends."""
        kind = type(event)
        if kind is Links:
            if not 1 <= len(event.links) <= limits.MAX_PEER_LINKS:
                raise LocalProtocolError(f"a LINKS batch holds 1 to {limits.MAX_PEER_LINKS} links")
            if not 1 <= event.seq <= limits.MAX_ID:
                raise LocalProtocolError(f"batch sequence {event.seq} is not 1 to {limits.MAX_ID}")
            lines = [b"LINKS %d %d\n" % (event.seq, len(event.links))]
            for link in event.links:
                if not 0 <= link.depth <= MAX_DEPTH:
                    raise LocalProtocolError(f"depth {link.depth} is not 0 to {MAX_DEPTH}")
                extra = f.encode_extras(link.extra).encode("ascii") if link.extra else b""
                lines.append(b"%d %s%s\n" % (link.depth, f.check_url_out(link.url), extra))
            return b"".join(lines)
        if kind is LinksAck:
            return b"ACK %d\n" % event.seq
        if kind in _TOKENS:
            return encode_token(event)
        if kind is Error:
            return encode_error(event)
        raise LocalProtocolError(f"{kind.__name__} is not a partition link message")


def _parse_link(line: bytes) -> PeerLink:
    parts = line.split(b" ")
    if len(parts) < 2:
        raise RemoteProtocolError("expected a link line '<depth> <url>'")
    depth = f.uint(parts[0], "depth", MAX_DEPTH)
    return PeerLink(f.url(parts[1]), depth, f.extras(parts[2:]) if len(parts) > 2 else {})


class PeerConnection(Connection):
    """The dialling partition's end of a partition link (docs/protocol.txt
    5.10): AUTH with role "partition" and its index as name, then LINKS out,
    ACK in."""

    _table = PEER_TABLE
    _auth_role = "partition"

    def __init__(self, *, secret: bytes, nonce: bytes, name: str) -> None:
        super().__init__(Role.CLIENT, service="urlserver", secret=secret, nonce=nonce, name=name)
        self._codec = PeerCodec(Role.CLIENT)

    def _decode_open(self) -> object:
        return self._codec.decode(self._buf)

    def _mid_message(self) -> bool:
        return self._codec.mid_message or super()._mid_message()

    def _encode_open(self, event: object) -> bytes:
        return self._codec.encode(event)

