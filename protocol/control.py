# The control protocol between a spider (client) and the urlserver (server):
# after the handshake, LF-terminated lines, except that a DONE header is
# followed by a length-prefixed block of outlinks so a page's hundreds of
# links cost one read, one validation and one split, and, when the
# assignment asked for it (body=<max>, e.g. robots.txt), a block of body.
#
#   spider:    GET <n> | WORKING <id>... | DONE <header> LF <links> [<body>]
#   urlserver: <TRANS_ID> <DOC_ID> <HOST_IP> <HOST_NAME> <URL> [k=v...]
#              | IDLE <ms> | CANCEL <id> | COMMITTED <id>... | BYE <reason>
#              | ERROR <code> <text>
#
# The connection also keeps the credit count: a server never sends more
# assignments than the spider has asked for with GET. COMMITTED (5.5.1)
# names DONEs whose commit is durable, so that a spider may leave their
# links out of later DONEs (known=N); it goes only to a spider that
# announced caps=committed.
"""ControlConnection: the spider <-> urlserver line protocol, sans-I/O."""

from __future__ import annotations

import msgspec

from . import limits
from . import textfields as f
from .codes import ErrorCode, Role, Specific, Status
from .connection import Connection
from .errors import LocalProtocolError, RemoteProtocolError, shown
from .events import NEED_DATA, Assignment, Auth, Bye, Cancel, Committed, Done, Error, Get, Idle, Working
from .handshake import CAP_AFTER, CAP_COMMITTED, CAP_RECORD, decode_text, encode_error, parse_error
from .peer import PeerCodec
from .state import CONTROL_TABLE, PEER_TABLE

_STATUS = {s.value.encode(): s for s in Status}
_SPECIFIC = {s.name.encode(): s for s in Specific}
_BYE_REASON_MAX = 32
# A DONE whose links are a feed's or a sitemap's never leaves links out
# (known=): their guids= and listed= count the links as sent (5.5.1).
_WHOLE_LINKS = ("feed", "sitemap")
# Assignment keys a spider MUST honour, so sent only to one that announced
# the capability in its AUTH (docs/protocol.txt 3.1, 5.3): an older spider
# would ignore them (fetch a chain at once, connect where it must not).
GATED_KEYS = {"after": CAP_AFTER, "nofetch": CAP_RECORD}
# HOST_IP of a record-only assignment (nofetch=, 5.3): "this host" of RFC
# 1122 3.2.1.3, never a destination, which every spider refuses besides.
NO_ADDRESS = "0.0.0.0"
# (IP, host name) pairs of assignments already checked, as sent: bounded, cleared when full
_ADDRESSES: dict[tuple[str, str], bytes] = {}
_ADDRESSES_MAX = 4096


class ControlConnection(Connection):
    """One end of a spider <-> urlserver connection."""

    _table = CONTROL_TABLE

    def __init__(self, role: Role, *, secret: bytes, nonce: bytes, name: str = "spider",
                 caps: tuple[str, ...] = ()) -> None:
        super().__init__(role, service="urlserver", secret=secret, nonce=nonce, name=name, caps=caps)
        self.credit = 0  # assignments the server may still send
        self._done_header: Done | None = None  # DONE line read, links pending
        self._links_count = 0
        self._links_size = 0
        self._body_size = -1  # -1: no body block follows the links
        self.peer = None  # a PeerCodec once a client said AUTH partition (docs/protocol.txt 5.10)

    def _received(self, event: object) -> None:
        super()._received(event)
        if type(event) is Auth and event.role == "partition":  # another urlserver partition: its link's codec
            self.peer = PeerCodec(self.our_role)
            self._use_table(PEER_TABLE)

    # -- decoding ------------------------------------------------------------

    def _decode_open(self) -> object:
        if self.peer is not None:
            return self.peer.decode(self._buf)
        buf = self._buf
        if self._done_header is not None:
            return self._finish_done()
        line = buf.take_line(limits.MAX_LINE)
        if line is None:
            return NEED_DATA
        parts = line.split(b" ")
        word = parts[0]
        if self.our_role is Role.CLIENT:
            if word[:1].isdigit():
                event = _parse_assignment(parts)
                if self.credit <= 0:
                    raise RemoteProtocolError("assignment sent without credit", ErrorCode.STATE)
                self.credit -= 1
                return event
            return _parse_server_word(word, parts, line)
        if word == b"DONE":
            self._done_header, self._links_count, self._links_size, self._body_size = _parse_done_header(parts)
            return self._finish_done()
        if word == b"WORKING":
            if not 2 <= len(parts) <= limits.MAX_WORKING_IDS + 1:
                raise RemoteProtocolError(f"WORKING takes 1 to {limits.MAX_WORKING_IDS} ids")
            return Working(tuple(f.uint(p, "transaction id") for p in parts[1:]))
        if word == b"GET":
            if len(parts) != 2:
                raise RemoteProtocolError("expected 'GET <count>'")
            count = f.uint(parts[1], "GET count", limits.MAX_GET)
            if count == 0:
                raise RemoteProtocolError("GET count must be at least 1")
            if self.credit + count > limits.MAX_CREDIT:
                raise RemoteProtocolError(f"more than {limits.MAX_CREDIT} credits outstanding", ErrorCode.LIMIT)
            self.credit += count
            return Get(count)
        if word == b"ERROR":
            return parse_error(decode_text(line, "ERROR line"))
        raise RemoteProtocolError(f"unknown message {shown(word, 16)} from a spider")

    def _mid_message(self) -> bool:
        if self.peer is not None:
            return self.peer.mid_message or super()._mid_message()
        return self._done_header is not None or super()._mid_message()

    def _finish_done(self) -> object:
        """The links block, then the body block if the header announced one."""
        header, count, body_size = self._done_header, self._links_count, self._body_size
        if count == 0 and body_size < 0:
            self._done_header = None
            return header
        fields = self._buf.take_fields(0, (self._links_size, max(body_size, 0)))
        if fields is None:
            return NEED_DATA
        self._done_header = None
        links = f.link_block(fields[0], count) if count else ()
        return msgspec.structs.replace(
            header, outlinks=links, body=fields[1] if body_size >= 0 else None
        )

    # -- encoding ------------------------------------------------------------

    def _encode_open(self, event: object) -> bytes:
        if self.peer is not None:
            return self.peer.encode(event)
        kind = type(event)
        if kind is Assignment:
            if self.credit <= 0:
                raise LocalProtocolError("no credit: the spider has not asked for more URLs")
            if event.extra:
                for key in GATED_KEYS.keys() & event.extra.keys():
                    if GATED_KEYS[key] not in self.caps:
                        raise LocalProtocolError(f"{key}= needs a spider that announced caps={GATED_KEYS[key]}")
            data = _encode_assignment(event)
            self.credit -= 1
            return data
        if kind is Done:
            return _encode_done(event)
        if kind is Get:
            if not 1 <= event.count <= limits.MAX_GET:
                raise LocalProtocolError(f"GET count must be 1..{limits.MAX_GET}")
            if self.credit + event.count > limits.MAX_CREDIT:
                raise LocalProtocolError(f"more than {limits.MAX_CREDIT} credits outstanding")
            self.credit += event.count
            return b"GET %d\n" % event.count
        if kind is Working:
            if not 1 <= len(event.trans_ids) <= limits.MAX_WORKING_IDS:
                raise LocalProtocolError(f"WORKING takes 1 to {limits.MAX_WORKING_IDS} ids")
            return ("WORKING " + " ".join(map(str, event.trans_ids)) + "\n").encode("ascii")
        if kind is Idle:
            return b"IDLE %d\n" % event.retry_ms
        if kind is Cancel:
            return b"CANCEL %d\n" % event.trans_id
        if kind is Committed:
            if CAP_COMMITTED not in self.caps:
                raise LocalProtocolError(f"COMMITTED needs a spider that announced caps={CAP_COMMITTED}")
            if not 1 <= len(event.trans_ids) <= limits.MAX_WORKING_IDS:
                raise LocalProtocolError(f"COMMITTED takes 1 to {limits.MAX_WORKING_IDS} ids")
            return ("COMMITTED " + " ".join(map(str, event.trans_ids)) + "\n").encode("ascii")
        if kind is Bye:
            if not event.reason.isidentifier() or len(event.reason) > _BYE_REASON_MAX:
                raise LocalProtocolError("BYE reason must be a short identifier")
            return b"BYE %s\n" % event.reason.encode("ascii")
        if kind is Error:
            return encode_error(event)
        raise LocalProtocolError(f"{kind.__name__} is not a control protocol message")


def _parse_assignment(parts: list[bytes]) -> Assignment:
    if len(parts) < 5:
        raise RemoteProtocolError("assignment needs TRANS_ID DOC_ID HOST_IP HOST_NAME URL")
    return Assignment(
        f.uint(parts[0], "transaction id"),
        f.uint(parts[1], "doc id", f.MAX_U32),
        f.ip(parts[2]),
        f.host(parts[3]),
        f.url(parts[4]),
        f.extras(parts[5:]) if len(parts) > 5 else {},
    )


def _parse_server_word(word: bytes, parts: list[bytes], line: bytes) -> object:
    if word == b"IDLE" and len(parts) == 2:
        return Idle(f.uint(parts[1], "IDLE delay", f.MAX_U32))
    if word == b"CANCEL" and len(parts) == 2:
        return Cancel(f.uint(parts[1], "transaction id"))
    if word == b"COMMITTED" and 2 <= len(parts) <= limits.MAX_WORKING_IDS + 1:
        return Committed(tuple(f.uint(p, "transaction id") for p in parts[1:]))
    if word == b"BYE" and len(parts) == 2:
        reason = parts[1].decode("ascii", "replace")
        if not reason.isidentifier() or len(reason) > _BYE_REASON_MAX:
            raise RemoteProtocolError("BYE reason must be a short identifier")
        return Bye(reason)
    if word == b"ERROR":
        return parse_error(decode_text(line, "ERROR line"))
    raise RemoteProtocolError(f"unknown or malformed message {shown(word, 16)} from the urlserver")


def _parse_done_header(parts: list[bytes]) -> tuple[Done, int, int, int]:
    if len(parts) < 8:
        raise RemoteProtocolError(
            "expected 'DONE <trans> <status> <http> <specific> <ms> <links> <bytes> [k=v...]'"
        )
    status = _STATUS.get(parts[2])
    specific = _SPECIFIC.get(parts[4])
    if status is None or specific is None:
        raise RemoteProtocolError(f"unknown status {shown(parts[2], 20)} or specific code {shown(parts[4], 20)}")
    http = f.uint(parts[3], "HTTP code", 999)
    if 0 < http < 100:
        raise RemoteProtocolError(f"HTTP code {http} is not a three-digit code")
    count = f.uint(parts[6], "outlink count", limits.MAX_OUTLINKS)
    size = f.uint(parts[7], "outlinks size", limits.MAX_OUTLINKS_BYTES)
    if (count == 0) != (size == 0) or size < 2 * count or size > count * (limits.MAX_URL_LEN + 1):
        raise RemoteProtocolError(f"outlinks size {size} impossible for {count} links")
    extra = f.extras(parts[8:]) if len(parts) > 8 else {}
    new_url = retry = None
    reason = ""
    body_size = -1
    known = 0
    if extra:  # the fields this header decodes are taken out of the rest (popped: no copy a DONE)
        if (raw := extra.pop("known", None)) is not None:
            known = f.uint(raw.encode("ascii"), "links left out", limits.MAX_OUTLINKS)
            if known == 0 or any(k in extra for k in _WHOLE_LINKS):
                raise RemoteProtocolError("known= is at least 1, and never with feed= or sitemap=")
        if (raw := extra.pop("body", None)) is not None:
            body_size = f.uint(raw.encode("ascii"), "body size", limits.MAX_DONE_BODY)
        if (raw := extra.pop("new", None)) is not None:
            new_url = f.url(raw.encode("ascii"), "redirect target")
        if (raw := extra.pop("retry", None)) is not None:
            retry = f.uint(raw.encode("ascii"), "retry-after", f.MAX_U32)
        if (raw := extra.pop("reason", None)) is not None:
            reason = f.decode_reason(raw)
    header = Done(
        f.uint(parts[1], "transaction id"), status, http, specific,
        f.uint(parts[5], "milliseconds", f.MAX_U32), (), new_url, retry, reason, extra, known=known,
    )  # fmt: skip
    return header, count, size, body_size


def _address(a: Assignment) -> bytes:
    """`IP SP host` of an assignment, checked (a name and address checked once
    are remembered: a crawl hands out many URLs per host)."""
    key = (a.host_ip, a.host_name)
    known = _ADDRESSES.get(key)
    if known is None:
        try:
            ip, host = a.host_ip.encode("ascii"), a.host_name.encode("ascii")
            f.ip(ip), f.host(host)
        except (UnicodeEncodeError, RemoteProtocolError) as exc:
            raise LocalProtocolError(f"assignment {a.trans_id} cannot be sent: {exc}") from None
        if len(_ADDRESSES) >= _ADDRESSES_MAX:
            _ADDRESSES.clear()
        known = _ADDRESSES[key] = b"%s %s" % (ip, host)
    return known


def _encode_assignment(a: Assignment) -> bytes:
    address = _address(a)
    if not 0 <= a.doc_id <= f.MAX_U32:
        raise LocalProtocolError(f"doc id {a.doc_id} does not fit in 32 bits")
    line = b"%d %d %s %s" % (a.trans_id, a.doc_id, address, f.check_url_out(a.url))
    if a.extra:
        line += f.encode_extras(a.extra).encode("ascii")
    return line + b"\n"


def _encode_done(d: Done) -> bytes:
    extra = dict(d.extra)
    if d.new_url is not None:
        extra["new"] = d.new_url
        f.check_url_out(d.new_url, "redirect target")
    if d.retry_after is not None:
        extra["retry"] = str(d.retry_after)
    if d.reason:
        extra["reason"] = f.encode_reason(d.reason)
    if d.body is not None:
        if len(d.body) > limits.MAX_DONE_BODY:
            raise LocalProtocolError(f"a DONE body is at most {limits.MAX_DONE_BODY} bytes; truncate first")
        extra["body"] = str(len(d.body))
    if d.known:
        if not 0 < d.known <= limits.MAX_OUTLINKS or any(k in extra for k in _WHOLE_LINKS):
            raise LocalProtocolError("known= is 1 to MAX_OUTLINKS, never with feed= or sitemap=")
        extra["known"] = str(d.known)
    # checked as the urlserver will (link_block) without splitting the
    # block again: an LF counted per URL (bench/results/2026-11-25-s12-server12.md)
    block = f.encode_url_lines(d.outlinks, "outlink")
    if len(d.outlinks) > limits.MAX_OUTLINKS or len(block) > limits.MAX_OUTLINKS_BYTES:
        raise LocalProtocolError("too many outlinks for one DONE; truncate first")
    head = "DONE %d %s %d %s %d %d %d%s\n" % (
        d.trans_id, d.status.value, d.http_code, d.specific.name, d.ms,
        len(d.outlinks), len(block), f.encode_extras(extra) if extra else "",
    )  # fmt: skip
    if d.body is None:
        return head.encode("ascii") + block
    return b"".join((head.encode("ascii"), block, d.body))
