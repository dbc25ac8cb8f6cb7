"""Issue 16, docs/protocol.txt 5.3 after=: at --delay 0 a busy host's next
URLs are handed ahead to the spider fetching it, each to start when the
transfer before it ends; a chain is one transfer on the wire, so it holds
one place of the host's slot until its last transaction has ended."""

from __future__ import annotations

import asyncio

from wreck.protocol.handshake import CAP_AFTER
from wreck.urlserver.chains import SCAN, Chains
from tests.urlserver_helpers import (
    FakeSpider, crawl_engine, fetched, running, serve_robots, settings_for, site_responder, until,
)
from tests.web import write_hosts_file

PAGES = [f"http://a.test/{i}" for i in range(8)]
AFTER = frozenset({CAP_AFTER})  # the spider's AUTH announced caps=after (docs/protocol.txt 3.1)


def _crawl(tmp_path, first_at=0.0, **kw):
    c = crawl_engine(tmp_path, scope="any", **kw)
    c.add_seed("http://a.test/")
    serve_robots(c, "http://a.test")
    first = c.take("s", first_at, AFTER)
    c.done("s", fetched(first, *PAGES), first_at)
    return c


def test_a_busy_hosts_next_urls_are_handed_ahead_each_after_the_one_before(tmp_path):
    c = _crawl(tmp_path, host_lookahead=3)
    got = [c.take("s", 0.0, AFTER) for _ in range(5)]
    assert got[4] is None  # the running one and three ahead of it
    head, *ahead = got[:4]
    assert "after" not in head.extra
    assert [a.extra["after"] for a in ahead] == [str(a.trans_id) for a in got[:3]]
    c.done("s", fetched(head), 0.0)  # one ended: room for one more, after the last
    more = c.take("s", 0.0, AFTER)
    assert more.extra["after"] == str(got[3].trans_id)
    c.close()


def test_a_spider_that_did_not_announce_after_is_handed_no_url_ahead(tmp_path):
    """An older spider ignores after= and would start the chain at once:
    several transfers to one host. It gets one URL of the host at a time."""
    c = _crawl(tmp_path, host_lookahead=3)
    head = c.take("old", 0.0)
    assert head is not None and "after" not in head.extra
    assert c.take("old", 0.0) is None  # the host's one transfer is under way
    c.done("old", fetched(head), 0.0)
    following = c.take("old", 0.0)
    assert following is not None and "after" not in following.extra
    c.close()


def test_a_chain_holds_the_hosts_slot_until_its_last_transaction_ends(tmp_path):
    c = _crawl(tmp_path, host_lookahead=1)
    head, ahead = c.take("s", 0.0, AFTER), c.take("s", 0.0, AFTER)
    assert c.take("t", 0.0, AFTER) is None  # another spider: the host's one transfer is under way
    c.done("s", fetched(head), 0.0)
    assert c.take("t", 0.0, AFTER) is None  # the chain goes on in spider s
    c.done("s", fetched(ahead), 0.0)
    fresh = c.take("t", 0.0, AFTER)
    assert fresh is not None and "after" not in fresh.extra
    c.close()


def test_nothing_is_handed_ahead_where_a_delay_spaces_requests(tmp_path):
    c = _crawl(tmp_path, first_at=1.0, host_lookahead=4, delay=0.0, ip_delay=0.5)
    assert c.take("s", 2.0, AFTER) is not None
    assert c.take("s", 2.0, AFTER) is None
    c.close()


def test_a_chain_whose_last_transaction_ended_first_grows_no_more(tmp_path):
    """Were it extended after a tail that ended, the new one would start at
    once beside the transfer still running."""
    c = _crawl(tmp_path, host_lookahead=4, timeout_update=5.0)
    head, ahead = c.take("s", 0.0, AFTER), c.take("s", 0.0, AFTER)
    c.working("s", [head.trans_id], 4.0)
    assert [claim.trans_id for claim in c.expire(6.0)] == [ahead.trans_id]  # the tail expired
    assert c.take("s", 6.0, AFTER) is None
    c.done("s", fetched(head), 6.0)
    assert c.take("s", 6.0, AFTER) is not None  # the chain ended: the slot is free
    c.close()


def test_a_take_looks_at_a_bounded_number_of_chains_in_turn():
    """A spider may hold a chain per host in flight; a take() that finds
    nothing to hand ahead looks at SCAN of them, the next one at the others."""
    chains = Chains(lookahead=2)
    for trans_id in range(SCAN + 8):
        chains.started(trans_id, host=f"h{trans_id}", ip="127.0.0.2", spider="s")
    first = chains.candidates("s")
    second = chains.candidates("s")
    assert len(first) == SCAN
    assert [c.tail for c in second[:8]] == list(range(SCAN, SCAN + 8))  # the ones not looked at yet come first
    assert chains.candidates("t") == []


def _assignments_over_the_wire(tmp_path, caps):
    """A crawl of one host at --delay 0 by one fake spider whose AUTH names
    `caps`; every assignment it was sent."""
    pages = {"http://a.test/": tuple(PAGES)} | {url: () for url in PAGES}
    tmp_path.mkdir()
    hosts = write_hosts_file({"a.test": "127.0.0.2"}, tmp_path / "hosts")
    settings = settings_for(tmp_path, hosts_file=str(hosts), exit_when_done=True, host_lookahead=4)

    async def main():
        async with running(settings, ["http://a.test/"]) as (server, addr):
            spider = FakeSpider(addr, respond=site_responder(pages), caps=caps, answer_delay=0.02)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 20)
            await until(lambda: spider.byes)
            await spider.close()
            return [a for _, a in spider.assignments]

    return asyncio.run(main())


def test_over_the_wire_a_spider_whose_auth_has_no_caps_is_sent_no_after(tmp_path):
    """docs/protocol.txt 3.1 and 5.3: after= goes only to a spider that
    announced caps=after; an older spider would fetch the chain at once."""
    old = _assignments_over_the_wire(tmp_path / "old", caps=())
    assert sorted(a.url for a in old if not a.url.endswith("robots.txt")) == sorted(["http://a.test/", *PAGES])
    assert not [a for a in old if "after" in a.extra]
    new = _assignments_over_the_wire(tmp_path / "new", caps=(CAP_AFTER,))
    assert [a for a in new if "after" in a.extra]  # the same crawl chains for a spider that honours it
