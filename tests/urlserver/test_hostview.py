"""The hosts as /status and the dashboard see them (issue 14 finding 8, issue
17): counts by waiting reason, top-N tables and the search are kept as the
crawl goes, so a look walks no host; the tables and counts say what the
engine did."""

from __future__ import annotations

import random
from types import SimpleNamespace

from wreck.urlserver.hostview import HostBoard, TopN
from wreck.urlserver.politeness import Origin, Waiting
from wreck.urlserver.statusview import RobotsHeld, hosts_found, status

from tests.urlserver_helpers import CountingDict, crawl_engine


def _server(c):
    return SimpleNamespace(crawl=c, samples=[], spiders=[], resolver=SimpleNamespace(cache={}), finish_reason=None)


def test_a_status_walks_no_host_however_many_are_held(tmp_path):
    c = crawl_engine(tmp_path)
    for i in range(2000):
        c.add_seed(f"http://h{i}.test/")
    assert c.take("s", 0.0) is None  # every origin now waits for its name to resolve
    c.frontier.origins = origins = CountingDict(c.frontier.origins)
    robots = RobotsHeld(clock=lambda: 0.0)
    looks = [status(_server(c), robots_held=robots) for _ in range(50)]
    assert looks[-1]["hosts"]["waiting"] == {"dns": 2000}
    assert looks[-1]["waiting_due"][0] == {"why": "dns", "origins": 2000, "next_due": None, "exact": True}
    assert len(looks[-1]["host_tables"]["blocked"]) == 20  # a screenful, not 2000
    assert origins.walks == 1  # the robots.txt figure's one scan, not one per look
    c.close()


def test_waiting_counts_follow_every_move_of_an_origin():
    board = HostBoard()
    origins = [Origin(f"http://h{i}.test", f"h{i}.test", i, 0, 0, 0, board) for i in range(50)]
    rng = random.Random(7)
    for _ in range(2000):
        rng.choice(origins).waiting = rng.choice(list(Waiting))
    expected: dict[str, int] = {}
    for o in origins:
        if o.waiting is not Waiting.NONE:
            expected[o.waiting.value] = expected.get(o.waiting.value, 0) + 1
    assert board.waiting_counts() == expected


def test_top_n_of_a_growing_key_is_exact():
    rng = random.Random(3)
    top = TopN(5)
    keys = {f"o{i}": 0 for i in range(40)}
    origins = {name: Origin(name, name, i, 0, 0, 0) for i, name in enumerate(keys)}
    for _ in range(3000):
        name = rng.choice(list(keys))
        keys[name] += rng.randint(1, 3)
        top.offer(origins[name], keys[name])
    held = {o.origin: k for o, k in top.held.items()}
    assert sorted(held.values(), reverse=True) == sorted(keys.values(), reverse=True)[:5]
    assert all(keys[name] == k for name, k in held.items())


def test_the_tables_show_the_busiest_erroring_and_slowest_hosts(tmp_path):
    from wreck.urlserver.dns import Resolution

    from tests.urlserver_helpers import fetched, not_found

    c = crawl_engine(tmp_path)
    for url in ("http://busy.test/", "http://busy.test/2", "http://bad.test/"):
        c.add_seed(url)
    now = 0.0
    while c.frontier.counts["PENDING"] or len(c.claims):
        for h in c.dns_requests():
            c.dns_result(h, Resolution("127.0.0.2", "", 1e12), now)
        a = c.take("s", now)
        if a is None:
            now += 1.0
            continue
        bad = a.url.startswith("http://bad.test/") and not a.url.endswith("/robots.txt")
        took = 4.0 if bad else 0.5  # bad.test answers slowly, and with an error
        c.done("s", not_found(a) if bad or a.url.endswith("/robots.txt") else fetched(a), now + took)
        now += took
    tables = status(_server(c))["host_tables"]
    assert [(r["origin"], r["fetched"]) for r in tables["busiest"]] == [("http://busy.test", 2)]
    assert [(r["origin"], r["errors"], r["last_error"]) for r in tables["erroring"]] == [
        ("http://bad.test", 1, "HTTP_ERROR (HTTP 404)")]
    assert tables["slowest"][0]["origin"] == "http://bad.test" and tables["slowest"][0]["slowest_s"] == 4.0
    c.close()


def test_the_search_finds_hosts_by_name_prefix_in_order(tmp_path):
    c = crawl_engine(tmp_path)
    for name in ("zeta.test", "alpha.test", "alpine.test", "beta.test", "al.test"):
        c.add_seed(f"http://{name}/")
    c.add_seed("https://alpha.test/")
    found = hosts_found(_server(c), "ALP")
    assert [r["origin"] for r in found["hosts"]] == ["http://alpha.test", "https://alpha.test", "http://alpine.test"]
    assert hosts_found(_server(c), "https://al")["hosts"][0]["origin"] == "https://alpha.test"
    assert hosts_found(_server(c), "")["hosts"] == [] and hosts_found(_server(c), "nothing")["hosts"] == []
    c.add_seed("http://alpaca.test/")  # a host found later joins the index
    assert hosts_found(_server(c), "alpa")["hosts"][0]["origin"] == "http://alpaca.test"
    c.close()


def test_a_look_counts_deferred_urls_of_a_bounded_sample_and_the_last_line_of_every_host(tmp_path):
    from wreck.urlserver.hostview import HELD_SCAN
    from wreck.urlserver.statusview import summary

    c = crawl_engine(tmp_path)
    for i in range(HELD_SCAN + 100):
        c.add_seed(f"http://h{i}.test/")
    for origin in c.frontier.origins.values():
        origin.waiting = Waiting.BACKOFF  # each answered 503: its one queued URL waits for the back-off
    assert status(_server(c))["deferred"]["urls"] == HELD_SCAN  # a look: bounded
    assert summary(_server(c))["deferred"]["urls"] == HELD_SCAN + 100  # the last line: every host
    c.close()
