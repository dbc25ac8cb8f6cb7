"""Recrawl, HEAD and slow-down decisions without sockets: the wire fields
byte by byte, the interval policy, the urlserver engine's assignments, the
type filter and the politeness slow-down."""

from __future__ import annotations

import pytest

from wreck.protocol import Assignment, ControlConnection, Done, Get, Specific, Status
from wreck.mediatype import accepts
from wreck.protocol.settings import CrawlSettings
from wreck.protocol.errors import RemoteProtocolError
from wreck.protocol.textfields import decode_reason
from wreck.urlserver.bandwidth import Bandwidth
from wreck.urlserver.politeness import Origin, Politeness
from wreck.urlserver.recrawl import parse_duration, policy_for

from tests.urlserver_helpers import crawl_engine as _crawl, serve_robots as _serve_robots
from tests.protocol_helpers import open_pair


def test_assignment_with_validators_and_head_is_exact_on_the_wire():
    a = Assignment(7, 1000, "192.0.2.10", "example.com", "http://example.com/a.pdf",
                   {"etag": "%22abc%22", "last_modified": "Thu,%2001%20Jan%202026%2000:00:00%20GMT", "head": "1"})
    wire = (b"7 1000 192.0.2.10 example.com http://example.com/a.pdf etag=%22abc%22 "
            b"last_modified=Thu,%2001%20Jan%202026%2000:00:00%20GMT head=1\n")
    for i in range(1, len(wire)):  # any split of the bytes gives the same event
        server, client = open_pair(ControlConnection)
        server.receive_data(client.send(Get(1)))
        server.next_event()
        assert server.send(a) == wire
        client.receive_data(wire[:i])
        client.receive_data(wire[i:])
        assert client.next_event() == a
    assert decode_reason("Thu,%2001%20Jan%202026%2000:00:00%20GMT") == "Thu, 01 Jan 2026 00:00:00 GMT"


def test_accept_type_setting_round_trips_and_refuses_garbage():
    s = CrawlSettings(store=("127.0.0.1:7002",), timeout_update_ms=1, timeout_req_ms=1, max_doc_size=1,
                      user_agent="u", accept_type=("text/html", "image/*"))
    wire = s.to_wire()
    assert wire["accept_type"] == "text/html,image/*"
    assert CrawlSettings.from_wire(wire) == s
    assert "accept_type" not in CrawlSettings(store=("a:1",), timeout_update_ms=1, timeout_req_ms=1,
                                              max_doc_size=1, user_agent="u").to_wire()
    with pytest.raises(RemoteProtocolError, match="accept_type"):
        CrawlSettings.from_wire({**wire, "accept_type": "text/html; charset=utf-8"})


def test_media_type_filter():
    ranges = ("text/html", "application/xhtml+xml", "image/*")
    assert accepts(ranges, "text/html; charset=UTF-8") and accepts(ranges, b"IMAGE/PNG")
    assert accepts(ranges, None) and accepts((), "application/pdf")
    assert not accepts(ranges, "application/pdf") and not accepts(ranges, "text/plain")


def test_durations_and_interval_policy():
    assert [parse_duration(t) for t in ("30s", "6h", "7d", "1.5m", "90")] == [30, 21600, 604800, 90, 90]
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon")
    p = policy_for(10.0, 0.0, 0.0, 2.0)
    assert (p.least, p.most) == (10.0, 30 * 86400.0)  # defaults bracket --recrawl
    p = policy_for(10.0, 4.0, 40.0, 2.0)
    assert p.next_interval(0.0, True) == 10.0  # the first fetch: --recrawl
    assert p.next_interval(10.0, False) == 20.0 and p.next_interval(40.0, False) == 40.0
    assert p.next_interval(10.0, True) == 5.0 and p.next_interval(5.0, True) == 4.0


def test_recrawl_sends_validators_back_and_adapts_to_changes(tmp_path):
    c = _crawl(tmp_path, recrawl=10.0, recrawl_min=5.0, recrawl_max=40.0)
    c.add_seed("http://a.test/")
    _serve_robots(c, "http://a.test")
    first = c.take("s", 0.0)
    assert "etag" not in first.extra and not c.finished()
    c.done("s", Done(first.trans_id, Status.FETCHED, 200, Specific.OK, 1,
                     extra={"etag": "%22v1%22", "digest": "00aa"}), 0.0)
    assert c.frontier.lookup("http://a.test/")["state"] == "FETCHED"
    assert c.finished()  # one round done: --exit-when-done would stop here, the next visit stays in LMDB
    assert c.take("s", 9.0) is None  # not before the interval
    second = c.take("s", 10.5)
    assert second.extra == {"etag": "%22v1%22", "hops": "-"} and second.doc_id != first.doc_id
    c.done("s", Done(second.trans_id, Status.FETCHED, 304, Specific.NOT_MODIFIED, 1), 10.5)
    assert c.take("s", 29.0) is None  # unchanged: 20 s now
    third = c.take("s", 31.0)
    assert third.extra == {"etag": "%22v1%22", "hops": "-"}  # a 304 without validators keeps ours
    c.done("s", Done(third.trans_id, Status.FETCHED, 200, Specific.OK, 1,
                     extra={"etag": "%22v2%22", "digest": "00bb"}), 31.0)
    fourth = c.take("s", 41.5)  # changed: 10 s again
    assert fourth.extra == {"etag": "%22v2%22", "hops": "-"}
    assert c.recrawl.stats == {"revisits": 2, "not_modified": 1, "changed": 1, "unchanged": 1}
    shown = c.lookup("http://a.test/")["recrawl"]  # what GET /url?u= shows
    assert shown == {"interval_s": 10.0, "visits": 3, "changes": 2, "etag": '"v2"', "last_modified": None}
    c.close()


def test_head_first_only_for_unwanted_extensions_until_the_host_proves_it_unusable():
    bw = Bandwidth(("text/html",))
    assert bw.extras(1, "http://a.test/f.PDF") == {"head": "1"}
    assert bw.extras(1, "http://a.test/page.html") == {} and bw.extras(1, "http://a.test/x") == {}
    bw.head_unusable(1)
    assert bw.extras(1, "http://a.test/f.pdf") == {} and bw.extras(2, "http://a.test/f.pdf") == {"head": "1"}
    assert Bandwidth(()).extras(1, "http://a.test/f.pdf") == {}


def test_a_host_is_slowed_down_by_429_and_5xx_and_recovers():
    pol = Politeness(delay=0.5, host_concurrency=1, ip_concurrency=4, ip_delay=0.0, backoff_max=3.0)
    host = Origin("http://a.test", "a.test", 1, 0, 0, 0)
    host.ip = "127.0.0.2"
    delays = []
    for _ in range(4):
        pol.started(host, 0.0)
        pol.finished(host, host.ip, 0.0)
        pol.slow_down(host, 0.0, None)
        delays.append(host.slow)
    assert delays == [1.0, 2.0, 3.0, 3.0]  # doubling, capped
    pol.slow_down(host, 100.0, 60)
    assert host.next_ok == 103.0  # Retry-After, within the cap
    for expected in (1.5, 0.75, 0.0):
        pol.recover(host)
        assert host.slow == expected
