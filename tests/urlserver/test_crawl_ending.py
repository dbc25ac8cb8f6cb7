"""How a one-shot crawl ends, in the engine without sockets: done; nothing
fetchable within --linger with retries deferred (kept with their due times,
picked up by the next run); a feed found by content fetched once; a
Retry-After as the retry time; each global limit, and a resume with a
higher one."""

from __future__ import annotations

from tests.urlserver_helpers import run_until_idle
from wreck.protocol import Done, Specific, Status
from wreck.spider import feeds as spider_feeds
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.dns import Resolution
from wreck.urlserver.settings import Settings

FEED = "http://news.test/feed.rss"


def _crawl(tmp_path, now=0.0, **kw):
    base = dict(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False,
                exit_when_done=True, retry_delay=100.0, max_retries=3, robots_retry=50.0, linger=10.0)
    base.update(kw)
    return Crawl.open(Settings(**base), clock=lambda: now)


def _ok(a, *links, **extra):
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links, extra=extra)


def _web(a):
    """robots.txt 404 everywhere but on down.test (500); /busy answers 503."""
    if a.url == "http://down.test/robots.txt":
        return Done(a.trans_id, Status.FETCH_ERROR, 500, Specific.HTTP_ERROR, 1)
    if a.url.endswith("/robots.txt"):
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    if a.url.endswith("/busy"):
        return Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1)
    return _ok(a, "http://up.test/b", "http://up.test/busy")


def test_a_one_shot_crawl_ends_with_its_retries_deferred_and_the_next_run_fetches_them(tmp_path):
    c = _crawl(tmp_path)
    c.add_seed("http://up.test/")
    c.add_seed("http://down.test/")
    fetched = run_until_idle(c, 0.0, _web)
    assert "http://up.test/b" in fetched and "http://down.test/" not in fetched
    assert c.finish_reason(0.0) == "deferred retries"  # the retries are due after --linger
    deferred = c.deferred(0.0)
    assert deferred["urls"] == 2 and deferred["until"] == 50.0  # down.test's robots.txt retry first
    assert [s["url"] for s in deferred["sample"]] == ["http://up.test/busy"]
    assert deferred["hosts"][0]["origin"] == "http://down.test" and deferred["hosts"][0]["why"] == "robots retry"
    c.close()

    # the same crawl started again after their due times: both are fetched
    c = _crawl(tmp_path, now=200.0)
    fixed = lambda a: (Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
                       if a.url.endswith("/robots.txt") else _ok(a))
    again = run_until_idle(c, 200.0, fixed)
    assert "http://up.test/busy" in again and "http://down.test/" in again
    assert c.finish_reason(200.0) == "done"
    c.close()


def test_a_retry_due_within_the_linger_time_is_waited_for(tmp_path):
    c = _crawl(tmp_path, linger=150.0)
    c.add_seed("http://up.test/")
    run_until_idle(c, 0.0, _web)
    assert c.finish_reason(0.0) is None  # /busy is due at 100 s, within 150 s
    assert run_until_idle(c, 100.0, _web) == ["http://up.test/busy"]


def test_retry_after_is_the_retry_time_bounded_by_backoff_max(tmp_path):
    c = _crawl(tmp_path, backoff_max=30.0)
    c.add_seed("http://up.test/")
    c.add_seed("http://other.test/")

    def answer(a):
        if a.url.endswith("/robots.txt"):
            return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
        retry = 5 if a.url.startswith("http://up.test") else 86400
        return Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1, retry_after=retry)

    run_until_idle(c, 0.0, answer)
    deferred = c.deferred(0.0)
    assert sorted(s["due"] for s in deferred["sample"]) == [5.0, 30.0]  # not 100 s, not a day


def test_a_feed_found_by_its_content_is_fetched_once_in_a_one_shot_crawl(tmp_path):
    c = _crawl(tmp_path)
    c.add_seed("http://news.test/")
    stories = ("http://news.test/story/1", "http://news.test/story/2")

    def answer(a):
        if a.url.endswith("/robots.txt"):
            return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
        if a.url == FEED:
            return _ok(a, *stories, feed="rss", feedsum=spider_feeds.checksum(list(stories)))
        return _ok(a, FEED) if a.url == "http://news.test/" else _ok(a)

    fetched = run_until_idle(c, 0.0, answer)
    assert set(stories) <= set(fetched) and fetched.count(FEED) == 1
    assert c.frontier.lookup(FEED)["state"] == "FETCHED" and not c.frontier.delayed_total
    assert c.finish_reason(0.0) == "done"


def _pages(a):
    if a.url.endswith("/robots.txt"):
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    return _ok(a, *(f"http://up.test/{k}" for k in range(10)), size="1000")


def test_max_total_pages_ends_the_crawl_and_a_higher_limit_continues(tmp_path):
    c = _crawl(tmp_path, max_total_pages=3)
    c.add_seed("http://up.test/")
    assert len(run_until_idle(c, 0.0, _pages)) == 4  # robots.txt and 3 pages
    assert c.finish_reason(0.0) == "limit reached: --max-total-pages 3"
    assert c.frontier.counts["FETCHED"] == 3 and c.frontier.queued_total
    c.close()
    c = _crawl(tmp_path, max_total_pages=5)
    assert len(run_until_idle(c, 1.0, _pages)) == 2
    assert c.finish_reason(1.0) == "limit reached: --max-total-pages 5"


def test_max_bytes_counts_the_size_of_fetched_pages_across_runs(tmp_path):
    c = _crawl(tmp_path, max_bytes=2500)
    c.add_seed("http://up.test/")
    run_until_idle(c, 0.0, _pages)
    assert c.frontier.counts["FETCHED"] == 3 and c.bytes_fetched == 3000
    assert c.finish_reason(0.0) == "limit reached: --max-bytes 2500"
    c.close()
    c = _crawl(tmp_path, max_bytes=4500)
    run_until_idle(c, 1.0, _pages)
    assert c.frontier.counts["FETCHED"] == 5


def test_max_time_ends_the_handouts_and_in_flight_work_finishes_first(tmp_path):
    c = _crawl(tmp_path, max_time=60.0)
    c.add_seed("http://up.test/")
    assert c.take("s", 0.0) is None  # its name is resolved first
    for h in c.dns_requests():
        c.dns_result(h, Resolution("127.0.0.2", "", 1e12), 0.0)
    robots = c.take("s", 0.0)
    c.done("s", Done(robots.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
    a = c.take("s", 1.0)
    assert a is not None
    assert c.next_wakeup() <= 60.0  # the pump wakes for the deadline
    assert c.take("s", 61.0) is None and c.finish_reason(61.0) is None  # `a` is still in flight
    c.done("s", _ok(a), 61.0)
    assert c.finish_reason(61.0) == "limit reached: --max-time 60"


def test_a_host_paced_by_its_delay_is_waited_for_however_long(tmp_path):
    c = _crawl(tmp_path, delay=100.0)  # longer than --linger: still the crawl's pace, not a deferral
    c.add_seed("http://up.test/")
    assert run_until_idle(c, 0.0, _pages) == ["http://up.test/robots.txt"]
    assert c.finish_reason(0.0) is None
    assert run_until_idle(c, 100.0, _pages) == ["http://up.test/"]
    assert c.finish_reason(100.0) is None


def test_the_rate_falls_to_zero_when_nothing_is_fetched():
    from wreck.urlserver.statusview import rates

    samples = [(t, 10 * t, 10 * t, 50 * t) for t in range(100, 131)]  # 10 pages/s until t=130
    stats = {"handouts": 1300, "done": 1300, "discovered": 6500}
    assert rates(samples, stats, 130.0)["done_per_s"] == 10.0
    assert rates(samples, stats, 200.0)["done_per_s"] == 0.0  # nothing since: no frozen figure


def test_the_server_ends_a_one_shot_crawl_with_its_reason_and_status_says_it(tmp_path):
    import asyncio

    from tests.urlserver_helpers import FakeSpider, running, settings_for, until
    from wreck.urlserver.statusview import status

    def answer(a):
        if a.url.endswith("/robots.txt"):
            return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
        if a.url.endswith("/busy"):
            return Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1, retry_after=3600)
        return _ok(a)

    async def main():
        settings = settings_for(tmp_path, exit_when_done=True, linger=1.0, hosts_file=None)
        async with running(settings, ["http://127.0.0.1:9/", "http://127.0.0.1:9/busy"]) as (server, addr):
            spider = FakeSpider(addr, respond=answer)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await until(lambda: spider.byes)
            st = status(server)
            await spider.close()
            return st

    st = asyncio.run(main())
    assert st["finish_reason"] == "deferred retries" and st["urls"]["FETCHED"] == 1
    assert st["deferred"]["urls"] == 1 and st["deferred"]["sample"][0]["url"] == "http://127.0.0.1:9/busy"


def test_a_crawl_stopped_from_outside_says_interrupted(tmp_path):
    import asyncio

    from tests.urlserver_helpers import running, settings_for
    from wreck.urlserver.statusview import status

    async def main():
        async with running(settings_for(tmp_path, exit_when_done=True), ["http://127.0.0.1:9/"]) as (server, _):
            await server.stop()
            return status(server)

    assert asyncio.run(main())["finish_reason"] == "interrupted"


def test_max_time_counts_each_run_so_a_resume_continues(tmp_path):
    c = _crawl(tmp_path, max_time=60.0)
    c.add_seed("http://up.test/")
    assert c.take("s", 61.0) is None and c.finish_reason(61.0) == "limit reached: --max-time 60"
    c.close()
    c = _crawl(tmp_path, now=100.0, max_time=600.0)  # started again, with a higher limit
    assert "http://up.test/" in run_until_idle(c, 100.0, _pages)
