"""Pure logic of the urlserver, without sockets: seen-set, politeness heap,
scope, robots outcomes, the retry rule, frontier queues, DNS admission, seeds."""

from __future__ import annotations


import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import robots as r
from wreck.urlserver.db import fingerprint
from wreck.urlserver.urlstate import UrlEvent, UrlState, next_state
from wreck import hostsfile
from wreck.netpolicy import AddressPolicy
from wreck.urlserver.dns import Resolution
from wreck.urlserver.politeness import Origin, Politeness, Waiting
from wreck.urlserver.retry import after_done
from wreck.urlserver.scope import Scope, registered_domain, split_host
from wreck.urlserver.seen import SeenSet

from tests.urlserver_helpers import crawl_engine, fetched, serve_robots


def test_seen_set_has_no_false_negatives_and_few_false_positives():
    seen = SeenSet(10_000)
    fps = [fingerprint(f"http://h{i}.test/p") for i in range(10_000)]
    for fp in fps:
        seen.add(fp)
    assert all(seen.might_contain(fp) for fp in fps)
    others = [fingerprint(f"http://x{i}.test/q") for i in range(10_000)]
    assert sum(seen.might_contain(fp) for fp in others) < 100
    seen.rebuild(fps[:10], capacity=10)
    assert all(seen.might_contain(fp) for fp in fps[:10])


def _host(name, ip="1.2.3.4"):
    h = Origin(f"http://{name}", name, 1, 0, 1, 0)
    h.ip = ip
    return h


def test_heap_serves_hosts_by_next_allowed_time():
    pol = Politeness(delay=1.0, host_concurrency=1, ip_concurrency=10, ip_delay=0.0)
    a, b, c = _host("a"), _host("b"), _host("c")
    pol.schedule(a, 5.0)
    pol.schedule(b, 1.0)
    pol.schedule(c, 3.0)
    pol.schedule(b, 4.0)  # rescheduling replaces the earlier entry
    assert pol.pop_due(10.0) is c and pol.pop_due(10.0) is b and pol.pop_due(10.0) is a
    assert pol.pop_due(10.0) is None and pol.next_time() is None


def test_host_delay_and_ip_cap():
    pol = Politeness(delay=2.0, host_concurrency=1, ip_concurrency=1, ip_delay=0.5)
    a, b = _host("a"), _host("b")
    assert pol.blocked_until(a, 0.0) is None
    pol.started(a, 0.0)
    assert pol.blocked_until(a, 0.1) == float("inf")  # one in flight per host
    assert pol.blocked_until(b, 0.1) == float("inf") and b.waiting is Waiting.IP  # IP at its cap
    assert pol.finished(a, "1.2.3.4", 0.1) == [a, b]  # parked on the host name and on the IP
    assert pol.blocked_until(b, 0.2) == 0.6  # the IP delay, from the end of a's transaction
    assert pol.blocked_until(a, 1.0) == 2.1  # the host delay, likewise


def test_scope_rules():
    s = Scope(mode="domain", seed_hosts={"www.example.co.uk"}, exclude=[r"\.pdf$"], max_depth=3,
              max_url_len=100, max_path_repeats=3)
    assert s.filter_reason("http://news.example.co.uk/", "news.example.co.uk", 1) is None
    assert s.filter_reason("http://other.co.uk/", "other.co.uk", 1) == "out of scope (domain)"
    assert s.filter_reason("http://www.example.co.uk/a.pdf", "www.example.co.uk", 1) == "excluded"
    assert s.filter_reason("http://www.example.co.uk/", "www.example.co.uk", 4) == "too deep"
    assert s.filter_reason("http://www.example.co.uk/" + "x" * 100, "www.example.co.uk", 1) == "url too long"
    assert s.filter_reason("http://www.example.co.uk/a/b/a/b/a/b/a/", "www.example.co.uk", 1).startswith("repeated")
    assert registered_domain("h1.wreck.test") == "wreck.test"  # not in the PSL: default rule
    assert split_host("http://[::1]:8080/x") == ("http://[::1]:8080", "[::1]")
    # a platform's sites are their owners': a seed on GitHub Pages keeps the crawl on that site
    pages = Scope(mode="domain", seed_hosts={"alice.github.io"}, max_depth=9, max_url_len=99, max_path_repeats=3)
    assert pages.filter_reason("http://docs.alice.github.io/", "docs.alice.github.io", 1) is None
    assert pages.filter_reason("http://bob.github.io/", "bob.github.io", 1) == "out of scope (domain)"
    assert registered_domain("127.0.0.1") == "127.0.0.1" and registered_domain("[::1]") == "[::1]"
    host_scope = Scope(mode="host", seed_hosts={"a.test"}, max_depth=9, max_url_len=99, max_path_repeats=3)
    assert host_scope.filter_reason("http://b.test/", "b.test", 1) == "out of scope (host)"


def _done(status, code, specific=Specific.OK, **kw):
    return Done(1, status, code, specific, 1, **kw)


@pytest.mark.parametrize("done, kind", [
    (_done(Status.FETCHED, 200, body=b"User-agent: *\nDisallow: /"), r.PARSE),
    (_done(Status.ERROR, 404, Specific.HTTP_ERROR), r.ALLOW_ALL),
    (_done(Status.ERROR, 403, Specific.HTTP_ERROR), r.ALLOW_ALL),
    (_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 429, Specific.HTTP_ERROR), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 0, Specific.TIMEOUT), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 0, Specific.CONNECT_FAILED), r.UNREACHABLE),
    (_done(Status.REDIRECTION, 301, Specific.REDIRECT, new_url="http://b.test/robots.txt"), r.FOLLOW),
    # issue 14, finding 3: cut at max_doc_size, the bytes that arrived are parsed; a 2xx
    # that stalled, timed out or was cut with nothing kept is never an empty robots.txt
    (_done(Status.ERROR, 200, Specific.TOO_BIG, body=b"User-agent: *\nDisallow: /"), r.PARSE),
    (_done(Status.ERROR, 200, Specific.TOO_BIG, body=b""), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 200, Specific.TOO_SLOW, body=b""), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 200, Specific.TIMEOUT, body=b"User-agent: *\nDis"), r.UNREACHABLE),
    (_done(Status.FETCH_ERROR, 200, Specific.RESET, body=b""), r.UNREACHABLE),
])  # fmt: skip
def test_robots_outcomes(done, kind):
    assert r.outcome(done, hops=0).kind == kind


def test_a_robots_txt_cut_at_size_is_parsed_from_what_arrived():
    cut = r.outcome(_done(Status.ERROR, 200, Specific.TOO_BIG, body=b"User-agent: *\nDisallow: /\n"), hops=0)
    rules = r.RobotsRules(r.record_for(cut, 0.0, ttl=86400, retry=60, tries=0), "wreck")
    assert not rules.allowed("http://a.test/") and "cut at max_doc_size" in cut.why


def test_robots_redirect_limit_means_allow_all_and_unreachable_disallows():
    redirect = _done(Status.REDIRECTION, 301, Specific.REDIRECT, new_url="http://b.test/robots.txt")
    assert r.outcome(redirect, hops=5).kind == r.ALLOW_ALL
    rec = r.record_for(r.RobotsOutcome(r.UNREACHABLE, retry_after=500), 0.0, ttl=86400, retry=60, tries=2)
    assert rec.expires == 500.0  # Retry-After beats the 120 s backoff
    rules = r.RobotsRules(rec, "wreck")
    assert not rules.usable and not rules.allowed("http://a.test/")
    parsed = r.record_for(r.RobotsOutcome(r.PARSE, body="User-agent: wreck\nDisallow: /x\nCrawl-delay: 3\n"),
                          0.0, ttl=86400, retry=60, tries=0)
    rules = r.RobotsRules(parsed, "wreck")
    assert not rules.allowed("http://a.test/x/1") and rules.allowed("http://a.test/y")
    assert rules.crawl_delay() == 3.0 and parsed.expires == 86400


def _after(step) -> UrlState:
    """The state a page's DONE leaves its URL in (it was IN_FLIGHT)."""
    return next_state(UrlState.IN_FLIGHT, step.event)


def test_retry_rule_steps():
    kw = dict(retry_delay=10.0, max_retries=3)
    step = after_done(_done(Status.FETCHED, 200), 1, 0.0, **kw)
    assert step.event is UrlEvent.FETCHED and _after(step) == UrlState.FETCHED
    step = after_done(_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR), 2, 100.0, **kw)
    assert step.event is UrlEvent.FETCH_FAILED and _after(step) == UrlState.FETCH_ERROR
    assert step.retry_at == 120.0  # 10 s doubled
    step = after_done(_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, retry_after=60), 1, 0.0, **kw)
    assert step.retry_at == 60.0
    # Retry-After, when sent, is the retry time, bounded to [1 s, --backoff-max]
    step = after_done(_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, retry_after=2), 3 - 1, 0.0, **kw)
    assert step.retry_at == 2.0  # not the 20 s of the doubled retry delay
    step = after_done(_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, retry_after=0), 1, 0.0, **kw)
    assert step.retry_at == 1.0
    step = after_done(_done(Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, retry_after=86400), 1, 0.0,
                      backoff_max=600.0, **kw)
    assert step.retry_at == 600.0
    step = after_done(_done(Status.FETCH_ERROR, 0, Specific.TIMEOUT), 3, 0.0, **kw)
    assert step.event is UrlEvent.RETRIES_EXHAUSTED and _after(step) == UrlState.ERROR
    step = after_done(_done(Status.REDIRECTION, 301, Specific.REDIRECT, new_url="http://a/b"), 1, 0.0, **kw)
    assert _after(step) == UrlState.REDIRECTED and step.follow == "http://a/b"
    step = after_done(_done(Status.ERROR, 404, Specific.HTTP_ERROR), 1, 0, **kw)
    assert step.event is UrlEvent.FAILED and _after(step) == UrlState.ERROR
    assert "HTTP_ERROR (HTTP 404)" in step.reason


def test_admission():
    public = AddressPolicy()
    assert public.refusal("93.184.216.34") is None
    for ip in ("127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.1.1", "224.0.0.1", "0.0.0.0",
               "240.0.0.1", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "100.64.0.1"):
        assert public.refusal(ip) is not None, ip
    loop = AddressPolicy(["127.0.0.0/8"])
    assert loop.refusal("127.0.0.5") is None and loop.refusal("::ffff:127.0.0.5") is None
    assert loop.refusal("10.0.0.1") is not None
    assert hostsfile.parse("# c\n127.0.0.2 a.test A2.test\n\n") == {"a.test": "127.0.0.2", "a2.test": "127.0.0.2"}
    with pytest.raises(hostsfile.HostsFileError, match="line 3: 'bad' is not an IP address"):
        hostsfile.parse("# c\n127.0.0.2 a.test A2.test\nbad line\n")


def test_frontier_fifo_persists_and_retries_with_backoff(tmp_path):
    c = crawl_engine(tmp_path)
    for i in range(5):
        assert c.add_seed(f"http://a.test/{i}") == "queued"
    assert c.add_seed("http://a.test/0#frag") == "known"
    serve_robots(c, "http://a.test")
    a0 = c.take("s", 0.0)
    assert a0.url == "http://a.test/0"
    c.done("s", Done(a0.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1), 0.0)
    assert c.take("s", 0.0) is None  # the 503 slowed the whole host down
    got = [c.take("s", 0.5) for _ in range(2)]
    assert got[0].url == "http://a.test/1" and got[1] is None  # one in flight per host
    c.close()
    c = crawl_engine(tmp_path)  # reopen: the claim of /1 was in flight and is requeued first
    assert c.frontier.lookup("http://a.test/0")["state"] == "FETCH_ERROR"
    c.frontier.origins["http://a.test"].addr_state = Resolution("127.0.0.2", "", 1e12)
    order = []
    while (a := c.take("s", 1.0)) is not None:
        order.append(a.url)
        c.done("s", fetched(a), 1.0)
    assert order == [f"http://a.test/{i}" for i in range(1, 5)]
    retry = c.take("s", 10.5)  # the first retry is due 10 s after the failure
    assert retry.url == "http://a.test/0" and retry.doc_id != a0.doc_id
    c.done("s", Done(retry.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1), 10.5)
    rec = c.frontier.lookup("http://a.test/0")
    assert rec["state"] == "ERROR" and rec["tries"] == 2
    assert c.finished()
    c.close()


def test_budget_depth_and_redirect_hops(tmp_path):
    c = crawl_engine(tmp_path, max_pages=3, max_redirects=1)
    c.add_seed("http://a.test/")
    serve_robots(c, "http://a.test")
    a = c.take("s", 0.0)
    c.done("s", fetched(a, *[f"http://a.test/{i}" for i in range(5)]), 0.0)
    assert c.frontier.lookup("http://a.test/4")["reason"] == "host page budget exhausted"
    b = c.take("s", 0.0)
    c.done("s", Done(b.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1, new_url="http://a.test/r1"), 0.0)
    assert c.frontier.lookup("http://a.test/r1")["hops"] == 1
    assert c.frontier.lookup(b.url)["state"] == "REDIRECTED"
    c.close()


def test_done_for_unknown_transaction_is_ignored(tmp_path):
    c = crawl_engine(tmp_path)
    c.done("s", Done(999, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    assert c.stats["ignored_done"] == 1
    c.close()


def test_bad_seed_lines_reported_with_line_numbers(tmp_path, caplog):
    from wreck.urlserver import seeds

    path = tmp_path / "seeds.txt"
    path.write_text("http://a.test/\n# comment\nnot a url\n\nftp://x/\nhttp://a.test/\n")
    c = crawl_engine(tmp_path)
    import logging

    counts = seeds.load(c, str(path), ["http://b.test/"], logging.getLogger("urlserver"))
    assert counts == {"queued": 2, "known": 1, "bad": 2, "filtered": 0}
    assert "line=3" in caplog.text and "line=5" in caplog.text
    c.close()


def test_a_robots_fetch_keeps_its_doc_id_across_expiry_and_restart(tmp_path):
    c = crawl_engine(tmp_path, timeout_update=5.0)
    c.add_seed("http://a.test/")
    c.take("s", 0.0)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), 0.0)
    first = c.take("s", 0.0)
    assert first.url == "http://a.test/robots.txt"
    assert [x.trans_id for x in c.expire(6.0)] == [first.trans_id]
    again = c.take("s", 6.0)
    assert again.url == first.url and again.doc_id == first.doc_id and again.trans_id != first.trans_id
    c.close()  # as after a kill -9: the assignment was committed before it was sent
    c = crawl_engine(tmp_path)
    c.take("s", 0.0)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), 0.0)
    third = c.take("s", 0.0)
    assert third.url == first.url and third.doc_id == first.doc_id
    c.done("s", Done(third.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
    assert c.db.robots_doc_id(c.frontier.txn, first.url) is None  # consumed
    page = c.take("s", 0.0)
    assert page.url == "http://a.test/" and page.doc_id != first.doc_id
    c.close()


def test_origins_of_one_host_name_share_its_politeness():
    """http:// and https:// of one name are one server: one transaction at a
    time and the delay between them, whichever scheme a link used."""
    pol = Politeness(delay=2.0, host_concurrency=1, ip_concurrency=10, ip_delay=0.0)
    plain, tls = _host("a"), Origin("https://a", "a", 2, 0, 1, 0)
    tls.ip = plain.ip
    pol.started(plain, 0.0)
    assert pol.blocked_until(tls, 0.5) == float("inf") and tls.waiting is Waiting.HOST
    assert pol.finished(plain, plain.ip, 1.0) == [tls]
    assert pol.blocked_until(tls, 1.5) == 3.0  # the name's delay, from the end of plain's transaction
    other = _host("b")
    assert pol.blocked_until(other, 1.5) is None  # another name is not held


def test_recently_seen_links_are_trusted_only_once_committed(tmp_path):
    """A page's repeated links end at the recent-links cache, but what a
    dropped transaction recorded is not trusted, and is admitted again."""
    c = crawl_engine(tmp_path, scope="any")
    c.add_seed("http://a.test/")
    c.commit()
    fr = c.frontier
    assert fr.discover_links(["http://a.test/x", "http://a.test/x", "http://a.test/y"], depth=1) == 2
    assert "http://a.test/x" in fr.recent  # pending, inside the open transaction
    fr.abort()  # e.g. the disk filled before commit; the crawl must be reopened
    assert "http://a.test/x" not in fr.recent
    c.close()
    c = crawl_engine(tmp_path, scope="any")
    fr = c.frontier
    assert fr.lookup("http://a.test/x") is None
    assert fr.discover_links(["http://a.test/x"], depth=1) == 1
    c.commit()
    assert "http://a.test/x" in fr.recent
    assert fr.discover_links(["http://a.test/x", "http://a.test/y"], depth=1) == 1  # y is new again
    assert fr.lookup("http://a.test/x")["state"] == "PENDING"
    c.close()


def test_the_seen_filter_is_reloaded_only_when_nothing_was_committed_since(tmp_path, monkeypatch):
    c = crawl_engine(tmp_path, scope="any")
    c.frontier.discover_links([f"http://a.test/{i}" for i in range(100)], depth=1)
    c.close()  # a clean stop saves the filter
    rebuilds = []
    monkeypatch.setattr(SeenSet, "rebuild", lambda self, *a, **k: rebuilds.append(1))
    c = crawl_engine(tmp_path, scope="any")
    assert rebuilds == [] and c.frontier.seen.might_contain(fingerprint("http://a.test/7"))
    assert c.frontier.discover("http://a.test/7", depth=1) == "known"
    c.frontier.discover("http://a.test/new", depth=1)
    c.commit()
    c.db.close()  # as after a kill -9: committed since the save, not saved again
    monkeypatch.undo()
    c = crawl_engine(tmp_path, scope="any")  # the stale filter is not used: rebuilt from LMDB
    assert c.frontier.seen.might_contain(fingerprint("http://a.test/new"))
    assert c.frontier.discover("http://a.test/new", depth=1) == "known"
    c.close()


def test_a_spider_death_charges_only_the_url_that_surely_killed_it(tmp_path):
    """Three deaths of a spider holding several claims end nothing; a URL
    that keeps killing the spiders it is handed to alone ends as ERROR."""
    c = crawl_engine(tmp_path, scope="any", host_concurrency=10, max_expiries=3)
    c.add_seed("http://a.test/")
    host = serve_robots(c, "http://a.test")
    page = c.take("s", 0.0)
    c.done("s", fetched(page, *[f"http://a.test/{i}" for i in range(3)]), 0.0)
    urls = {f"http://a.test/{i}" for i in range(3)}
    for death in range(3):  # spiders killed from outside while holding all three
        spider = f"killed-{death}"
        taken = [c.take(spider, 0.0) for _ in range(3)]
        if death == 0:
            assert {a.url for a in taken} == urls
        else:  # suspects now: one per spider at a time
            assert sum(a is not None for a in taken) == 1
            c.spider_gone(spider, 0.0)
            break
        c.spider_gone(spider, 0.0)
    assert all(c.frontier.lookup(u)["state"] == "PENDING" for u in urls)
    assert sum(c.frontier.lookup(u)["expiries"] for u in urls) == 1  # the one held alone
    # /1 kills every spider: each holds it as its only suspect, so it is blamed.
    killer = "http://a.test/1"
    for n in range(6):
        spider = f"s{n}"
        got = []
        for _ in range(10):
            a = c.take(spider, 1.0 + n)
            if a is not None:
                got.append(a)
        held = {a.url for a in got}
        if killer in held:
            c.spider_gone(spider, 1.0 + n)
        for a in got:
            if a.url != killer and killer in held:
                continue
            if a.url != killer:
                c.done(spider, fetched(a), 1.0 + n)
        if c.frontier.lookup(killer)["state"] == "ERROR":
            break
    assert c.frontier.lookup(killer)["state"] == "ERROR"
    assert "claim expired 3 times (spider gone)" in c.frontier.lookup(killer)["reason"]
    assert all(c.frontier.lookup(u)["state"] != "ERROR" for u in urls - {killer})
    # what is neither fetched nor ended waits in the host's queue again: /0,
    # handed back when the last spider holding the killer died; queued once
    pending = sum(c.frontier.lookup(u)["state"] == "PENDING" for u in urls)
    assert host.queued == pending == 1 and c.frontier.queued_total == pending
    c.close()


def test_host_concurrency_hands_out_that_many_at_once(tmp_path):
    c = crawl_engine(tmp_path, scope="any", host_concurrency=2, host_lookahead=0)  # chains: test_chains.py
    c.add_seed("http://a.test/")
    serve_robots(c, "http://a.test")
    page = c.take("s", 0.0)
    c.done("s", fetched(page, *[f"http://a.test/{i}" for i in range(5)]), 0.0)
    got = [c.take("s", 0.0) for _ in range(3)]
    assert [a is not None for a in got] == [True, True, False]
    c.done("s", fetched(got[0]), 0.0)
    assert c.take("s", 0.0) is not None
    c.close()


def test_a_crawl_delay_counts_from_the_robots_txt_request_too(tmp_path):
    """The first page waits the Crawl-delay after robots.txt's DONE, not the
    shorter --delay the robots.txt transaction was handed out under."""
    c = crawl_engine(tmp_path, delay=0.0)
    c.add_seed("http://a.test/")
    c.take("s", 0.0)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), 0.0)
    robots = c.take("s", 0.0)
    assert robots.url.endswith("/robots.txt")
    c.done("s", fetched(robots, body=b"User-agent: *\nCrawl-delay: 5\n"), 0.1)
    assert c.take("s", 5.0) is None
    page = c.take("s", 5.1)
    assert page is not None and page.url == "http://a.test/"
    c.close()
