"""Issue 18, docs/protocol.txt 5.3 nofetch=: the URLs of a host whose DNS
failed for good, or that resolved only to refused addresses, are handed to
a spider that announced caps=record as record-only transactions (it
connects nowhere and stores what was tried), each once; a spider without
the capability never sees them, and they end in ERROR as before."""

from __future__ import annotations

import asyncio

from wreck.protocol import Done, Specific, Status
from wreck.protocol.handshake import CAP_AFTER, CAP_RECORD
from wreck.protocol.textfields import decode_reason
from wreck.urlserver.dns import Resolution, Resolver
from wreck.urlserver.errorkind import ErrorKind
from tests.urlserver_helpers import crawl_engine

RECORD = frozenset({CAP_AFTER, CAP_RECORD})  # what this version's spider announces (3.1)
URLS = ["http://nx.test/a", "http://nx.test/b", "http://nx.test/c"]
NXDOMAIN = Resolution(None, "dns: NXDOMAIN", 1e12, terminal=True, kind=ErrorKind.DNS_NXDOMAIN)
REFUSED = Resolution(None, "forbidden address 10.1.2.3 (private)", 1e12, terminal=True,
                     kind=ErrorKind.FORBIDDEN_ADDRESS, refused=("10.1.2.3", "192.168.0.7"))


def _engine(tmp_path, **kw):
    c = crawl_engine(tmp_path, scope="any", delay=5.0, **kw)
    for url in URLS:
        c.add_seed(url)
    return c


def _answer_dns(c, res, now=0.0):
    for host in c.dns_requests():
        c.dns_result(host, res, now)


def _recorded(a) -> Done:
    """What this version's spider answers a record-only assignment with (5.3)."""
    specific = Specific.FORBIDDEN_ADDRESS if a.extra["nofetch"] == "refused" else Specific.DNS_FAILED
    return Done(a.trans_id, Status.ERROR, 0, specific, 0, reason=decode_reason(a.extra["why"]))


def test_each_url_of_a_host_that_does_not_resolve_is_handed_once_to_be_recorded_not_fetched(tmp_path):
    c = _engine(tmp_path)
    assert c.take("s", 0.0, RECORD) is None  # its name is looked up first
    _answer_dns(c, NXDOMAIN)
    # no robots.txt, no politeness delay (--delay 5): nothing is fetched
    handed = [c.take("s", 0.0, RECORD) for _ in URLS]
    assert c.take("s", 0.0, RECORD) is None
    assert sorted(a.url for a in handed) == URLS
    for a in handed:
        assert a.host_ip == "0.0.0.0" and a.host_name == "nx.test"
        assert a.extra == {"nofetch": "dns", "why": "dns:%20NXDOMAIN", "hops": "-"}  # seeds: hops=- (lineage.py)
        assert c.frontier.lookup(a.url)["state"] == "IN_FLIGHT"
    for a in handed:
        c.done("s", _recorded(a), 0.0)
    for url in URLS:
        rec = c.frontier.lookup(url)
        assert (rec["state"], rec["reason"]) == ("ERROR", "dns: NXDOMAIN")
    assert c.errors_by_kind == {"DNS_NXDOMAIN": 3}  # counted as before, by the urlserver's kind
    assert c.finished()
    c.close()


def test_a_spider_without_caps_record_is_never_handed_them_and_they_end_as_before(tmp_path):
    c = _engine(tmp_path)
    c.take("old", 0.0, frozenset({CAP_AFTER}))
    _answer_dns(c, NXDOMAIN)
    assert c.take("old", 0.0, frozenset({CAP_AFTER})) is None
    for url in URLS:
        rec = c.frontier.lookup(url)
        assert (rec["state"], rec["reason"]) == ("ERROR", "dns: NXDOMAIN")  # drained, unrecorded
    assert c.errors_by_kind == {"DNS_NXDOMAIN": 3} and c.finished()
    c.close()


def test_a_host_of_refused_addresses_names_them(tmp_path):
    c = _engine(tmp_path)
    c.take("s", 0.0, RECORD)
    _answer_dns(c, REFUSED)
    a = c.take("s", 0.0, RECORD)
    assert a.host_ip == "0.0.0.0"
    assert a.extra == {"nofetch": "refused", "why": "forbidden%20address%2010.1.2.3%20(private)",
                       "refused": "10.1.2.3,192.168.0.7", "hops": "-"}
    c.done("s", _recorded(a), 0.0)
    assert c.frontier.lookup(a.url)["reason"] == "forbidden address 10.1.2.3 (private)"
    assert c.errors_by_kind == {"FORBIDDEN_ADDRESS": 1}
    c.close()


def test_dns_that_keeps_failing_is_recorded_once_the_urlservers_retries_are_spent(tmp_path):
    """--max-retries 2 (crawl_engine): two timeouts, then the URLs are recorded."""
    c = _engine(tmp_path)
    c.take("s", 0.0, RECORD)
    _answer_dns(c, Resolution(None, "dns: timeout", 1.0))
    assert c.take("s", 0.0, RECORD) is None  # a retry of the lookup waits
    assert c.take("s", 1.0, RECORD) is None  # looked up again
    _answer_dns(c, Resolution(None, "dns: timeout", 2.0), now=1.0)
    a = c.take("s", 1.0, RECORD)
    assert a.extra == {"nofetch": "dns", "why": "dns:%20timeout", "hops": "-"}
    c.close()


def test_an_expired_record_only_claim_is_handed_again_with_its_doc_id(tmp_path):
    c = _engine(tmp_path, timeout_update=5.0)
    c.take("s", 0.0, RECORD)
    _answer_dns(c, NXDOMAIN)
    first = c.take("s", 0.0, RECORD)
    c.spider_gone("s", 1.0)  # its claims go back: none held a politeness slot
    assert c.frontier.lookup(first.url)["state"] == "PENDING"
    again = [c.take("t", 1.0, RECORD) for _ in URLS]
    same = next(a for a in again if a.url == first.url)
    assert same.doc_id == first.doc_id and same.trans_id != first.trans_id
    assert all(a.extra["nofetch"] == "dns" for a in again)
    c.close()


def test_the_resolver_keeps_every_refused_address_in_wire_form():
    resolver = Resolver(nameserver=None, hosts={"intra.test": "10.1.2.3", "mapped.test": "::ffff:192.168.0.7"},
                        allow_net=(), timeout=1.0, tries=1, min_ttl=1.0, max_ttl=60.0, negative_ttl=1.0)
    res = asyncio.run(resolver.resolve("intra.test"))
    assert (res.ip, res.kind, res.refused) == (None, ErrorKind.FORBIDDEN_ADDRESS, ("10.1.2.3",))
    assert asyncio.run(resolver.resolve("mapped.test")).refused == ("192.168.0.7",)  # never its mapped form
