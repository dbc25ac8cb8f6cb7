"""docs/protocol.txt agrees with protocol/: worked examples and tables.

Every "Example N.M" hex dump in the spec is rebuilt here from events: the
sending end must produce exactly the dumped bytes, and the receiving end,
fed the dumped bytes whole and one byte at a time, must decode exactly those
events. The tables of limits, states and codes are parsed from the text and
compared with the constants in protocol/.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

import pytest

from wreck.protocol import (
    NEED_DATA, Ack, AckResult, Assignment, Auth, Bye, Cancel, Committed, ControlConnection, Dictionary, Done, Packed,
    Error, ErrorCode, Get, Hello, Idle, Links, LinksAck, Notice, NoticeCode, PeerConnection, PeerLink,
    Ready, Record, Role, Specific, State, Status, StoreConnection, Working, http_enum,
)  # fmt: skip
from wreck.protocol import codes, limits, state
from wreck.protocol.errors import RemoteProtocolError
from wreck.protocol.iptokens import IpGrant, IpRecall, IpReturn, IpWant
from wreck.protocol import record
from wreck.protocol.record import RECORD_HEADER
from wreck.protocol.settings import CrawlSettings
from wreck.protocol.store import other_crawl

SPEC = Path(__file__).resolve().parents[2] / "docs" / "protocol.txt"

# The example parameters stated in the spec (section 9).
SECRET = b"example-secret"
SERVER_NONCE = bytes([0x11]) * 32
CLIENT_NONCE = bytes([0x22]) * 32
NAME = "box1-4242"
CRAWL_ID = "5f0c2e8a91d34b7e8c6a0f1d2b3e4c5a"  # the crawl of examples 9.3 and 9.19
KEPT_CRAWL_ID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"  # the store's other crawl of example 9.20
CAPS = ("after", "record")  # the spider capabilities of example 9.25
CRAWL = CrawlSettings(
    store=("10.0.0.5:7002", "10.0.0.6:7002"),
    timeout_update_ms=30_000,
    timeout_req_ms=60_000,
    max_doc_size=limits.DEFAULT_MAX_DOC_SIZE,
    user_agent="WRECK/0.1 (+https://example.org/bot; bot@example.org)",
    crawl_id=CRAWL_ID,
)
SETTINGS = CRAWL.to_wire()
# A store's WELCOME with its Unix-domain socket (example 9.48, 6.6).
STORE_WELCOME = {"max_doc_len": "268435456", "unix": "/var/lib/wreck/crawl/store.sock"}
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
DOCUMENT = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/html\r\n"
    b"Content-Length: 21\r\n"
    b"\r\n"
    b"<p>Hello, world!</p>\n"
)
EXT_DOCUMENT = b"HTTP/1.1 200 OK\r\n\r\n<a href=/a></a>"
EXT_REQUEST = b'GET / HTTP/1.1\r\nHost: example.com\r\nIf-None-Match: "x1"\r\n\r\n'
REDIRECT_DOCUMENT = (
    b"HTTP/1.1 301 Moved Permanently\r\n"
    b"Location: https://example.com/\r\n"
    b"\r\n"
)


def independent_mac(direction: str, service: str) -> str:
    """The proof of section 3.2, computed without the protocol package."""
    msg = f"WRECK/1 {direction} {service} {SERVER_NONCE.hex()} {CLIENT_NONCE.hex()}"
    return hmac.new(SECRET, msg.encode("ascii"), hashlib.sha256).hexdigest()


# -- connection pairs positioned just before each example ---------------------


def drain(conn) -> list:
    events = []
    while conn.state is not State.CLOSED:
        event = conn.next_event()
        if event is NEED_DATA:
            break
        events.append(event)
    return events


def fresh(kind, *, server_secret=SECRET, crawl_id="", caps=()):
    server = kind(Role.SERVER, secret=server_secret, nonce=SERVER_NONCE)
    extra = {"crawl_id": crawl_id} if crawl_id else {}
    if caps:
        extra["caps"] = caps
    client = kind(Role.CLIENT, secret=SECRET, nonce=CLIENT_NONCE, name=NAME, **extra)
    return server, client


def after_hello(kind, **kw):
    server, client = fresh(kind, **kw)
    client.receive_data(server.hello())
    assert len(drain(client)) == 1
    return server, client


def after_auth(kind, **kw):
    server, client = after_hello(kind, **kw)
    server.receive_data(client.authenticate())
    assert len(drain(server)) == 1
    return server, client


def auth_failed(kind):
    """The server's secret differs: it rejects the client's proof."""
    server, client = after_hello(kind, server_secret=b"another-secret")
    server.receive_data(client.authenticate())
    with pytest.raises(RemoteProtocolError) as info:
        server.next_event()
    assert info.value.code is ErrorCode.AUTH and server.state is State.ERROR
    # The example's text is the server's own (issue 14: they had parted ways).
    assert str(info.value) == f"client {NAME} failed authentication (wrong or missing shared secret)"
    return server, client


def opened(kind, *, credit=0, **kw):
    server, client = after_auth(kind, **kw)
    client.receive_data(server.welcome(SETTINGS if kind is ControlConnection else {}))
    assert [type(e) for e in drain(client)] == [Ready]
    if credit:
        server.receive_data(client.send(Get(credit)))
        assert drain(server) == [Get(credit)]
    return server, client


C, S = ControlConnection, StoreConnection

# A partition link (5.10): partition 1 dials partition 0 of two.
PARTITIONS = {"partitions": "10.0.0.5:7001,10.0.0.6:7001", "partition": "0"}


def peer_after_hello():
    server = ControlConnection(Role.SERVER, secret=SECRET, nonce=SERVER_NONCE)
    client = PeerConnection(secret=SECRET, nonce=CLIENT_NONCE, name="1")
    client.receive_data(server.hello())
    assert len(drain(client)) == 1
    return server, client


def peer_opened():
    server, client = peer_after_hello()
    server.receive_data(client.authenticate())
    assert [e.role for e in drain(server)] == ["partition"]
    client.receive_data(server.welcome(PARTITIONS))
    assert [type(e) for e in drain(client)] == [Ready]
    return server, client

# id -> (sender, setup, events). The sender is "server" or "client".
EXAMPLES = {
    "9.1": ("server", lambda: fresh(C), [Hello("urlserver", SERVER_NONCE.hex())]),
    "9.2": ("client", lambda: after_hello(C), [
        Auth("spider", NAME, CLIENT_NONCE.hex(), independent_mac("client", "urlserver")),
    ]),
    "9.3": ("server", lambda: after_auth(C), [
        Ready(SETTINGS, independent_mac("server", "urlserver")),
    ]),
    "9.4": ("server", lambda: auth_failed(C), [
        Error(ErrorCode.AUTH, f"client {NAME} failed authentication (wrong or missing shared secret)"),
    ]),
    "9.5": ("client", lambda: opened(C), [Get(16)]),
    "9.6": ("server", lambda: opened(C, credit=2), [
        Assignment(7, 1000, "192.0.2.10", "example.com", "http://example.com/"),
        Assignment(8, 1001, "2001:db8::1", "[2001:db8::1]", "http://[2001:db8::1]:8080/robots.txt",
                   {"body": str(limits.MAX_DONE_BODY)}),
    ]),
    "9.7": ("client", lambda: opened(C), [Working((7, 8))]),
    "9.8": ("client", lambda: opened(C), [
        Done(7, Status.REDIRECTION, 200, Specific.META_REFRESH, 412,
             outlinks=("http://example.com/a", "http://example.com/b?x=1", "https://example.org/"),
             new_url="http://example.com/new", reason="meta refresh after 5 s"),
    ]),
    "9.9": ("client", lambda: opened(C), [
        Done(8, Status.FETCHED, 200, Specific.OK, 38, body=ROBOTS),
    ]),
    "9.10": ("client", lambda: opened(C), [
        Done(9, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 87, retry_after=120,
             reason="Service Unavailable (\u00fcberlastet)"),
    ]),
    "9.11": ("server", lambda: opened(C), [Idle(5000)]),
    "9.12": ("server", lambda: opened(C), [Cancel(10)]),
    "9.13": ("server", lambda: opened(C), [Bye("done")]),
    "9.14": ("client", lambda: opened(S), [
        Record(1000, True, Specific.OK, http_enum(200), 123, "http://example.com/", None, DOCUMENT),
    ]),
    "9.15": ("client", lambda: opened(S), [
        Record(1002, False, Specific.REDIRECT, http_enum(301), 45, "http://example.com/",
               "https://example.com/", REDIRECT_DOCUMENT),
    ]),
    "9.21": ("client", lambda: opened(S), [
        Record(1004, True, Specific.OK, http_enum(200), 120, "http://example.com/", None, EXT_DOCUMENT,
               request=EXT_REQUEST, ip="192.0.2.10", outlinks=("http://example.com/a",)),
    ]),
    "9.22": ("server", lambda: opened(C, credit=1), [
        Assignment(11, 1005, "192.0.2.10", "example.com", "http://example.com/a",
                   {"via": "http://example.com/", "hops": "LL"}),
    ]),
    "9.23": ("server", lambda: opened(C, credit=1), [
        Assignment(12, 1006, "192.0.2.10", "example.com", "http://example.com/", {"hops": "-"}),
    ]),
    "9.24": ("client", lambda: opened(S), [
        Record(1005, False, Specific.REDIRECT, http_enum(301), 30, "http://example.com/a",
               "http://example.com/b", b"HTTP/1.1 301 Moved Permanently\r\n\r\n",
               via="http://example.com/", hops="LL"),
    ]),
    "9.16": ("server", lambda: opened(S), [
        Ack(1000, AckResult.STORED), Ack(1002, AckResult.DUPLICATE),
    ]),
    "9.17": ("server", lambda: opened(S), [Notice(NoticeCode.FULL, "disk full; acks held")]),
    "9.18": ("server", lambda: opened(S), [
        Error(ErrorCode.LIMIT, "record 1003: document of 300000000 bytes exceeds 268435456"),
    ]),
    "9.19": ("client", lambda: after_hello(S, crawl_id=CRAWL_ID), [
        Auth("spider", NAME, CLIENT_NONCE.hex(), independent_mac("client", "storeserver"), crawl=CRAWL_ID),
    ]),
    "9.20": ("server", lambda: opened(S, crawl_id=CRAWL_ID), [other_crawl(KEPT_CRAWL_ID, CRAWL_ID, NAME)]),
    "9.48": ("server", lambda: after_auth(S), [Ready(STORE_WELCOME, independent_mac("server", "storeserver"))]),
    # partition links (5.10)
    "9.30": ("client", peer_after_hello, [
        Auth("partition", "1", CLIENT_NONCE.hex(), independent_mac("client", "urlserver")),
    ]),
    "9.31": ("client", peer_opened, [
        Links(1, (PeerLink("http://b.example/", 2), PeerLink("http://www.b.example/x?p=1", 3, {"hops": "1"}))),
    ]),
    "9.32": ("server", peer_opened, [LinksAck(1)]),
    "9.33": ("server", peer_opened, [Error(ErrorCode.PARTITION, "partition 0 does not own c.example")]),
    # IP tokens on the partition link (5.11)
    "9.40": ("client", peer_opened, [IpWant("192.0.2.10")]),
    "9.41": ("server", peer_opened, [IpGrant("192.0.2.10", 0)]),
    "9.42": ("server", peer_opened, [IpRecall("192.0.2.10")]),
    "9.43": ("client", peer_opened, [IpReturn("192.0.2.10", 750)]),
    "9.44": ("server", peer_opened, [IpGrant("192.0.2.10", 748)]),
}
# warc4's examples (9.25-9.29): spider capabilities, record-only assignments.
EXAMPLES.update({
    "9.25": ("client", lambda: after_hello(C, caps=CAPS), [
        Auth("spider", NAME, CLIENT_NONCE.hex(), independent_mac("client", "urlserver"), caps=CAPS),
    ]),
    "9.26": ("server", lambda: opened(C, credit=1, caps=CAPS), [
        Assignment(11, 1005, "0.0.0.0", "nowhere.invalid", "http://nowhere.invalid/",
                   {"nofetch": "dns", "why": "dns:%20NXDOMAIN"}),
    ]),
    "9.27": ("server", lambda: opened(C, credit=1, caps=CAPS), [
        Assignment(12, 1006, "0.0.0.0", "intranet.example.com", "http://intranet.example.com/wiki",
                   {"nofetch": "refused", "why": "forbidden%20address%2010.1.2.3%20(private)",
                    "refused": "10.1.2.3,192.168.0.7"}),
    ]),
    "9.28": ("client", lambda: opened(S), [
        Record(1006, False, Specific.FORBIDDEN_ADDRESS, 0, 0, "http://intranet.example.com/wiki", None, b"",
               nofetch="forbidden address 10.1.2.3 (private)", refused=("10.1.2.3", "192.168.0.7")),
    ]),
    "9.29": ("client", lambda: opened(C), [
        Done(11, Status.ERROR, 0, Specific.DNS_FAILED, 0, reason="dns: NXDOMAIN"),
    ]),
})

# linkcache's examples (9.54-9.57): COMMITTED and the links a DONE leaves out (5.5.1).
COMMITTED_CAPS = ("after", "record", "committed")
MENU = ("http://example.com/", "http://example.com/about")
EXAMPLES.update({
    "9.54": ("client", lambda: after_hello(C, caps=COMMITTED_CAPS), [
        Auth("spider", NAME, CLIENT_NONCE.hex(), independent_mac("client", "urlserver"), caps=COMMITTED_CAPS),
    ]),
    "9.55": ("client", lambda: opened(C, caps=COMMITTED_CAPS), [
        Done(13, Status.FETCHED, 200, Specific.OK, 25, outlinks=(*MENU, "http://example.com/p/1")),
    ]),
    "9.56": ("server", lambda: opened(C, caps=COMMITTED_CAPS), [Committed((13,))]),
    "9.57": ("client", lambda: opened(C, caps=COMMITTED_CAPS), [
        Done(14, Status.FETCHED, 200, Specific.OK, 31, outlinks=("http://example.com/p/2",), known=2),
    ]),
})


# spidercomp's examples (9.49-9.52): compression on the spider (6.7). The
# dictionary is a raw-content one, short for the example (a trained one is
# about 1 MiB and starts with zstd's dictionary magic); the frame is zstd's
# output for ZSTD_DOCUMENT at level 3 with it, written out so the example
# does not move with the zstd version.
ZSTD_CAPS = ("zstd",)
ZSTD_DICT = b"<!DOCTYPE html><html><head><meta charset=utf-8><title>"
ZSTD_DOCUMENT = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
                 b"<!DOCTYPE html><html><head><meta charset=utf-8><title>Hi</title>")
ZSTD_FRAME = bytes.fromhex(
    "28b52ffd246ced01005403485454502f312e3120323030204f4b0d0a436f6e74656e742d547970653a2074"
    "6578742f68746d6c0d0a0d0a693c2f7469746c653e010064798632fb4c044c")
ZSTD_DIGEST = hashlib.sha256(ZSTD_DOCUMENT[44:]).digest()[:16]
EXAMPLES.update({
    "9.49": ("client", lambda: after_hello(S, caps=ZSTD_CAPS), [
        Auth("spider", NAME, CLIENT_NONCE.hex(), independent_mac("client", "storeserver"), caps=ZSTD_CAPS),
    ]),
    "9.50": ("server", lambda: opened(S, caps=ZSTD_CAPS), [Dictionary(1, 3, ZSTD_DICT)]),
    "9.51": ("client", lambda: opened(S, caps=ZSTD_CAPS), [
        Record(1007, True, Specific.OK, http_enum(200), 95, "http://example.com/", None, ZSTD_FRAME,
               packed=Packed(1, len(ZSTD_DOCUMENT), 44, ZSTD_DIGEST)),
    ]),
    "9.52": ("server", lambda: opened(S, caps=ZSTD_CAPS), [
        Error(ErrorCode.FRAME, "record 1008: dictionary 2 is not one this store gave"),
    ]),
})


def test_the_zstd_example_frame_is_the_example_document():
    """Example 9.51's frame is what 6.7 says: the document, compressed with
    9.50's dictionary, its content size and checksum in the header."""
    import zstandard

    d = zstandard.ZstdCompressionDict(ZSTD_DICT)
    params = zstandard.get_frame_parameters(ZSTD_FRAME)
    assert (params.content_size, params.has_checksum) == (len(ZSTD_DOCUMENT), True)
    assert zstandard.ZstdDecompressor(dict_data=d).decompress(ZSTD_FRAME) == ZSTD_DOCUMENT
    assert ZSTD_DOCUMENT[:44].endswith(b"\r\n\r\n")


def encode(example_id: str) -> bytes:
    """The bytes the sending end produces for an example (used to write the spec)."""
    sender, setup, events = EXAMPLES[example_id]
    server, client = setup()
    conn = server if sender == "server" else client
    return b"".join(conn.send(event) for event in events)


# -- reading the spec ----------------------------------------------------------

_DUMP_LINE = re.compile(r"    ([0-9a-f]{4})  (.{23})  (.{23})  \|(.{1,16})\|")


def spec_text() -> str:
    return SPEC.read_text(encoding="utf-8")


def spec_examples() -> dict[str, tuple[str, bytes]]:
    """Example id -> (title, bytes) for every hex dump in the spec."""
    found: dict[str, tuple[str, bytes]] = {}
    lines = spec_text().splitlines()
    for i, line in enumerate(lines):
        m = re.fullmatch(r"Example (\d+\.\d+): (.+)", line.strip())
        if not m:
            continue
        assert m.group(1) not in found, f"Example {m.group(1)} appears twice"
        data = bytearray()
        for row in lines[i + 1 :]:
            if not row.strip():
                break
            d = _DUMP_LINE.fullmatch(row)
            assert d, f"Example {m.group(1)}: bad dump line {row!r}"
            assert int(d.group(1), 16) == len(data), f"Example {m.group(1)}: offset {d.group(1)}"
            chunk = bytes.fromhex(d.group(2) + d.group(3))
            ascii_col = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
            assert d.group(4) == ascii_col, f"Example {m.group(1)}: ASCII column of {d.group(1)}"
            assert len(data) % 16 == 0, f"Example {m.group(1)}: a short line before the last"
            data += chunk
        assert data, f"Example {m.group(1)} has no dump"
        found[m.group(1)] = (m.group(2), bytes(data))
    return found


def table(caption: str) -> list[list[str]]:
    """The data rows (cells stripped) of the ASCII table after `Table N: caption`."""
    lines = spec_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if re.fullmatch(rf"\s*Table \d+: {re.escape(caption)}", ln))
    rows: list[list[str]] = []
    borders = 0
    for line in lines[start + 1 :]:
        s = line.strip()
        if s.startswith("+"):
            borders += 1
            continue
        if not s.startswith("|"):
            if rows or borders:
                break
            continue
        if borders >= 2:  # skip the heading row(s) above the second border
            rows.append([c.strip() for c in s.strip("|").split("|")])
    assert rows, f"table {caption!r} is empty"
    return rows


# -- the examples ---------------------------------------------------------------


def test_every_example_is_in_the_spec_and_checked():
    assert set(spec_examples()) == set(EXAMPLES)


def test_spec_lines_fit_78_columns():
    for number, line in enumerate(spec_text().splitlines(), 1):
        assert len(line) <= 78, f"line {number} is {len(line)} columns"
        assert line.isascii(), f"line {number} is not ASCII"


@pytest.mark.parametrize("example_id", sorted(EXAMPLES, key=lambda k: tuple(map(int, k.split(".")))))
def test_example(example_id):
    sender, setup, events = EXAMPLES[example_id]
    _, data = spec_examples()[example_id]
    assert encode(example_id) == data, "the codec does not produce the dumped bytes"

    server, client = setup()
    receiver = client if sender == "server" else server
    receiver.receive_data(data)
    assert drain(receiver) == events, "decoding the dump whole"

    server, client = setup()
    receiver = client if sender == "server" else server
    decoded = []
    for i in range(len(data)):
        receiver.receive_data(data[i : i + 1])
        decoded += drain(receiver)
    assert decoded == events, "decoding the dump one byte at a time"


def test_convenience_methods_match_examples():
    examples = spec_examples()
    server, client = fresh(C)
    assert server.hello() == examples["9.1"][1]
    server, client = after_hello(C)
    assert client.authenticate() == examples["9.2"][1]
    server, client = after_auth(C)
    assert server.welcome(SETTINGS) == examples["9.3"][1]


def test_example_settings_are_what_a_spider_reads():
    assert CrawlSettings.from_wire(SETTINGS) == CRAWL


def test_proofs_printed_in_the_spec():
    text = spec_text()
    for direction in ("client", "server"):
        mac = independent_mac(direction, "urlserver")
        assert re.search(rf"{direction} proof:\s+{mac}", text), f"{direction} proof missing"


# -- the tables -------------------------------------------------------------------


def _int(cell: str) -> int:
    m = re.fullmatch(r"(\d+)\^(\d+)-1", cell)
    return int(m.group(1)) ** int(m.group(2)) - 1 if m else int(cell)


def test_limits_table():
    rows = [r for r in table("Limits") if r[0]]
    published = {r[0]: _int(r[1]) for r in rows}
    actual = {k: v for k, v in vars(limits).items() if k.isupper()}
    assert published == actual


def test_specific_table():
    rows = table("Specific response codes")
    assert {int(r[0]): r[1] for r in rows if r[0]} == {s.value: s.name for s in Specific}
    statuses = {s.value for s in Status} | {"(5.6)"}
    assert all(r[2] in statuses for r in rows if r[0])


def test_http_enumeration_tables():
    special = {int(r[0]): r[1] for r in table("HTTP code enumeration, special values")}
    assert set(special) == {0, *codes.HTTP_OTHER_BY_CLASS.values(), codes.HTTP_OTHER}
    for klass, value in codes.HTTP_OTHER_BY_CLASS.items():
        assert special[value].startswith(f"other {klass}xx")
    registered = {}
    for row in table("HTTP code enumeration, registered codes"):
        for enum_cell, code_cell in zip(row[0::2], row[1::2]):
            if enum_cell:
                registered[int(enum_cell)] = int(code_cell)
    assert registered == codes.HTTP_ENUM_TO_CODE
    assert all(http_enum(code) == value for value, code in registered.items())


def test_error_code_table():
    rows = table("Error codes")
    assert {int(r[0]): r[1] for r in rows if r[0]} == {c.value: c.name.lower() for c in ErrorCode}


def test_ack_and_notice_tables():
    acks = {int(r[0]): r[1] for r in table("ACK results") if r[0]}
    notices = {int(r[0]): r[1] for r in table("NOTICE codes") if r[0]}
    assert acks == {a.value: a.name for a in AckResult}
    assert notices == {n.value: n.name for n in NoticeCode}


def test_record_layout_table():
    rows = [r for r in table("Fetch record header") if r[0]]
    sizes = {"u8": 1, "u16": 2, "u32": 4}
    fmt = {"u8": "B", "u16": "H", "u32": "I"}
    offset = 0
    layout = "!"
    for row in rows:
        assert int(row[0]) == offset, f"offset of {row[2]}"
        assert int(row[1]) == sizes[row[3]]
        offset += sizes[row[3]]
        layout += fmt[row[3]]
    assert layout == RECORD_HEADER.format and offset == RECORD_HEADER.size


def test_extension_fields_table():
    rows = table("Extension fields")
    tags = {int(r[0]): r[1] for r in rows if r[0]}
    assert tags == {record.TAG_REQUEST: "REQUEST", record.TAG_IP: "IP",
                    record.TAG_TRUNCATED: "TRUNCATED", record.TAG_OUTLINKS: "OUTLINKS",
                    record.TAG_VIA: "VIA", record.TAG_HOPS: "HOPS",
                    record.TAG_NOFETCH: "NOFETCH", record.TAG_REFUSED: "REFUSED",
                    record.TAG_ZSTD: "ZSTD", record.TAG_DIGEST: "DIGEST"}


_MESSAGES = {
    "HELLO": Hello, "AUTH": Auth, "WELCOME": Ready, "GET": Get, "WORKING": Working,
    "DONE": Done, "assignment": Assignment, "IDLE": Idle, "CANCEL": Cancel, "BYE": Bye, "COMMITTED": Committed,
    "record": Record, "ACK": Ack, "NOTICE": Notice, "DICT": Dictionary,
}  # fmt: skip


def _transitions(caption: str) -> dict:
    found = {}
    for current, sender, message, new in table(caption):
        role = Role.SERVER if sender in ("urlserver", "store", "server") else Role.CLIENT
        found[(role, State[current], _MESSAGES[message])] = State[new]
    return found


def test_state_tables():
    handshake = _transitions("Handshake transitions")
    assert handshake | _transitions("Control protocol transitions") == state.CONTROL_TABLE
    assert handshake | _transitions("Store protocol transitions") == state.STORE_TABLE


def test_partition_link_table():
    found = {(Role.CLIENT if sender == "dialler" else Role.SERVER, State[current], {"LINKS": Links, "ACK": LinksAck, "IPWANT": IpWant, "IPRETURN": IpReturn,
                                                                  "IPGRANT": IpGrant, "IPRECALL": IpRecall}[m]):
             State[new] for current, sender, m, new in table("Partition link transitions")}
    assert _transitions("Handshake transitions") | found == state.PEER_TABLE


def test_error_is_allowed_in_every_state_but_closed():
    for current in State:
        if current is State.CLOSED:
            continue
        new = state.transition(state.CONTROL_TABLE, Role.SERVER, current, Error(ErrorCode.BUSY), local=True)
        assert new is State.CLOSED
