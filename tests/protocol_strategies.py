"""Hypothesis strategies for every protocol message."""

from hypothesis import strategies as st

from wreck.protocol import (
    Ack, AckResult, Assignment, Cancel, Done, Error, ErrorCode, Get, Idle, Notice,
    Record, Specific, Status, Working, limits,
)  # fmt: skip
from wreck.protocol.codes import HTTP_ENUM_TO_CODE, http_enum

MAX_U32 = 2**32 - 1
ids = st.integers(0, limits.MAX_ID)
doc_ids = st.integers(0, MAX_U32)
urls = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=300)
hosts = st.from_regex(r"[a-z0-9_-]{1,20}(\.[a-z0-9_-]{1,20}){0,3}", fullmatch=True)
# IPv4-mapped IPv6 is never sent (spec 5.3).
ips = st.ip_addresses().filter(lambda a: not getattr(a, "ipv4_mapped", None)).map(str)
keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
extras = st.dictionaries(keys.filter(lambda k: k not in ("new", "retry", "reason", "body")), urls, max_size=4)
reasons = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=limits.MAX_REASON_LEN)
http_codes = st.sampled_from([0, *HTTP_ENUM_TO_CODE.values(), 199, 299, 599, 999])

gets = st.builds(Get, st.integers(1, limits.MAX_GET))
workings = st.builds(Working, st.lists(ids, min_size=1, max_size=50).map(tuple))
dones = st.builds(
    Done, ids, st.sampled_from(Status), http_codes, st.sampled_from(Specific),
    st.integers(0, MAX_U32), st.lists(urls, max_size=120).map(tuple),
    st.none() | urls, st.none() | st.integers(0, MAX_U32), reasons, extras,
    st.none() | st.binary(max_size=3000),
)  # fmt: skip
client_messages = st.one_of(gets, workings, dones)

assignments = st.builds(Assignment, ids, doc_ids, ips, hosts, urls, extras)
server_messages = st.one_of(
    assignments,
    st.builds(Idle, st.integers(0, MAX_U32)),
    st.builds(Cancel, ids),
)
errors = st.builds(Error, st.sampled_from(ErrorCode), reasons.map(str.strip))

http_enums = http_codes.map(http_enum)
records = st.builds(
    Record, doc_ids, st.booleans(), st.sampled_from(Specific), http_enums,
    st.integers(0, MAX_U32), urls, st.none() | urls, st.binary(max_size=5000),
    request=st.binary(max_size=300), ip=st.sampled_from(("", "127.0.0.1", "::1")),
    truncated=st.sampled_from(("", "length", "time", "disconnect")), outlinks=st.lists(urls, max_size=5).map(tuple),
)  # fmt: skip
frames = st.one_of(
    st.builds(Ack, doc_ids, st.sampled_from(AckResult)),
    st.builds(Notice, st.integers(0, 255), st.text(max_size=300)),
)
chunkings = st.none() | st.lists(st.integers(1, 64), max_size=400)
