"""Politeness survives a restart, even a kill -9 (issue 14, finding 9): in
the engine without sockets and with an injected clock, a host handed out
just before the kill is not served again sooner than its delay after that
handout, or after the restart if the transaction was still in flight."""

from __future__ import annotations

from wreck.protocol import Done, Specific, Status
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.dns import Resolution
from wreck.urlserver.politeness import Politeness
from wreck.urlserver.settings import Settings


def _open(tmp_path, now: float, **kw) -> Crawl:
    base = dict(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False)
    base.update(kw)
    return Crawl.open(Settings(**base), clock=lambda: now)


def _take(c: Crawl, now: float):
    """The next assignment at `now`, DNS answered on the way (None: nothing due)."""
    a = c.take("s", now)
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), now)
    return a if a is not None else c.take("s", now)


def _ok(a, *links, body=None):
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links, body=body)


def _kill(c: Crawl) -> None:
    """What a kill -9 leaves: the last commit, nothing else."""
    c.abandon()


def _crawl_to_handout(tmp_path, robots: bytes | None, **kw) -> tuple[Crawl, object]:
    """robots.txt fetched at t=90, the seed page handed out at t=100."""
    c = _open(tmp_path, 90.0, **kw)
    c.add_seed("http://a.test/")
    robots_a = _take(c, 90.0)
    assert robots_a.url == "http://a.test/robots.txt"
    if robots is None:
        c.done("s", Done(robots_a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 90.0)
    else:
        c.done("s", _ok(robots_a, body=robots), 90.0)
    page = _take(c, 100.0)
    assert page.url == "http://a.test/"
    return c, page


def test_a_host_handed_out_before_a_kill_waits_its_delay_after_the_restart(tmp_path):
    c, page = _crawl_to_handout(tmp_path, None, delay=2.0)
    c.done("s", _ok(page, "http://a.test/b"), 100.0)  # answered at once; the next page is queued
    c.commit()
    _kill(c)
    c = _open(tmp_path, 100.5, delay=2.0)
    assert _take(c, 100.5) is None
    assert _take(c, 101.99) is None
    assert _take(c, 102.0).url == "http://a.test/b"
    c.close()


def test_a_transaction_in_flight_at_the_kill_counts_from_the_restart(tmp_path):
    # Crawl-delay from the cached robots.txt, not --delay; the page was still being
    # fetched at the kill: it may have reached the web as late as the restart itself
    c, _page = _crawl_to_handout(tmp_path, b"User-agent: *\nCrawl-delay: 3\n")
    c.commit()
    _kill(c)
    c = _open(tmp_path, 101.0)
    assert _take(c, 101.0) is None
    assert _take(c, 103.5) is None  # handout + 3 has passed, restart + 3 has not
    assert _take(c, 104.0).url == "http://a.test/"  # the claim, requeued after the restart
    c.close()


def test_a_restart_long_after_the_last_handout_serves_at_once(tmp_path):
    c, page = _crawl_to_handout(tmp_path, None, delay=2.0)
    c.done("s", _ok(page, "http://a.test/b"), 100.0)
    c.commit()
    _kill(c)
    c = _open(tmp_path, 500.0, delay=2.0)
    assert _take(c, 500.0).url == "http://a.test/b"
    c.close()


def test_the_ip_slot_survives_a_restart_when_the_ip_delay_is_set(tmp_path):
    c, page = _crawl_to_handout(tmp_path, None, ip_delay=4.0)
    c.done("s", _ok(page), 100.0)
    c.add_seed("http://b.test/")  # another name, on the same address
    c.commit()
    _kill(c)
    c = _open(tmp_path, 101.0, ip_delay=4.0)
    for now in (101.0, 103.9):
        assert _take(c, now) is None
    robots_b = _take(c, 104.0)  # b.test's first request, on a.test's address
    assert robots_b.url == "http://b.test/robots.txt"
    c.close()


def test_the_restore_rule_slot_by_slot():
    """Politeness.restore alone: saved (is_ip, key, next_ok, delay, in_flight) at a restart at t=100."""
    pol = Politeness(delay=1.0, host_concurrency=1, ip_concurrency=4, ip_delay=0.0)
    held = pol.restore([
        (False, "done.test", 101.0, 2.0, False),  # answered: last handout/end + delay
        (False, "busy.test", 101.0, 2.0, True),  # in flight at the kill: restart + delay
        (False, "old.test", 50.0, 2.0, False),  # its turn came long ago: no slot
        (False, "ahead.test", 900.0, 2.0, False),  # a wall clock stepped back: at most one delay
        (False, "slower.test", 100.25, 0.5, False),  # handed out at 99.75; this run's --delay (1 s) is longer
        (True, "10.0.0.1", 101.0, 2.0, True),  # no --ip-delay this run: IP slots are not held
    ], 100.0)
    next_ok = {key: slot.next_ok for key, slot in pol.names.items()}
    assert next_ok == {"done.test": 101.0, "busy.test": 102.0, "ahead.test": 102.0, "slower.test": 100.75}
    assert held == 4 and not pol.ips
