"""Feeds and sitemaps in the urlserver's engine, without sockets: a feed's
DONE leads to new stories, redundant fetches and an adaptive next fetch;
sitemaps are admitted from robots.txt within their bounds."""

from __future__ import annotations

import logging

from wreck.protocol import Done, Specific, Status
from wreck.spider import feeds as spider_feeds
from wreck.urlserver import seeds
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.db import fingerprint
from wreck.urlserver.feeds import saved_feeds
from wreck.urlserver.settings import Settings

from tests.urlserver_helpers import take_resolving

FEED = "http://news.test/feed.rss"


def _crawl(tmp_path, **kw):
    base = dict(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False,
                retry_delay=100.0, max_retries=3, feed_min_interval=10.0, feed_max_interval=80.0,
                feed_backoff=2.0)
    base.update(kw)
    return Crawl.open(Settings(**base), clock=lambda: 0.0)


def _take(c, now):
    """The next assignment, answering DNS and robots.txt (404: allow all) on the way."""
    while True:
        a = take_resolving(c, now)
        if a is None or not a.url.endswith("/robots.txt"):
            return a
        c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), now)


def _feed_done(a, stories):
    links = [f"http://news.test/story/{k}" for k in stories]
    guids = ",".join(spider_feeds.fingerprint(link) for link in links)
    extra = {"feed": "rss", "feedsum": spider_feeds.checksum(links), **({"guids": guids} if guids else {})}
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=tuple(links), extra=extra)


def _next_feed_fetch(c, now):
    """Fetch stories until only the feed's next fetch is left; return that time."""
    while (a := _take(c, now)) is not None:
        assert a.url != FEED, "the feed came back before its time"
        c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), now)
    return c.frontier.next_delayed()


def test_a_feed_is_polled_with_adaptive_backoff_and_new_stories_fetched_once(tmp_path):
    c = _crawl(tmp_path)
    assert c.add_feed(FEED) == "queued"
    now, stories, fetched_stories, gaps = 0.0, [0, 1], [], []
    for round_ in range(9):
        a = _take(c, now)
        assert a.url == FEED and a.extra == {"kind": "feed", "hops": "-"}  # a seed (lineage.py)
        if round_ in (4, 7):
            stories.append(len(stories))  # a new story appears
        c.done("s", _feed_done(a, stories), now)
        while (s := _take(c, now)) is not None:
            fetched_stories.append(s.url)
            c.done("s", Done(s.trans_id, Status.FETCHED, 200, Specific.OK, 1), now)
        due = c.frontier.next_delayed()
        gaps.append(due - now)
        assert c.frontier.lookup(FEED)["state"] == "PENDING"
        assert _take(c, due - 0.5) is None  # not a moment early
        now = due
    # new stories (rounds 0, 4, 7): back to the minimum; nothing new: doubling, capped
    assert gaps == [10, 20, 40, 80, 10, 20, 40, 10, 20]
    assert sorted(fetched_stories) == [f"http://news.test/story/{k}" for k in range(4)]
    state = saved_feeds_of(c)
    assert state.fetches == 9 and state.stories == 4 and state.redundant == 6 and state.marked
    assert c.finished()  # only the feed's future fetch is left
    c.close()


def saved_feeds_of(c, url=FEED):
    return c.feeds.state(c.frontier.txn, fingerprint(url))


def test_redundant_fetch_skips_the_stories_and_guids_are_known_per_source(tmp_path):
    c = _crawl(tmp_path)
    c.add_feed(FEED)
    c.add_feed("http://news.test/feed.atom")
    a = _take(c, 0.0)
    c.done("s", _feed_done(a, [0, 1]), 0.0)
    b = _take(c, 0.0)
    assert b.url == "http://news.test/feed.atom"
    # same stories under other links (tracking parameters), same guids: nothing new
    links = ("http://news.test/story/0?utm=x", "http://news.test/story/1?utm=x")
    guids = ",".join(spider_feeds.fingerprint(f"http://news.test/story/{k}") for k in (0, 1))
    c.done("s", Done(b.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links,
                     extra={"feed": "atom", "feedsum": spider_feeds.checksum(links), "guids": guids}), 0.0)
    urls = []
    while (s := _take(c, 0.0)) is not None:
        urls.append(s.url)
        c.done("s", Done(s.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    assert sorted(urls) == ["http://news.test/story/0", "http://news.test/story/1"]
    assert c.stats["feed_stories"] == 2


def test_a_failing_feed_is_retried_with_the_fetch_error_backoff_then_polled_again(tmp_path):
    c = _crawl(tmp_path)
    c.add_feed(FEED)
    a = _take(c, 0.0)
    c.done("s", Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1), 0.0)
    assert c.frontier.lookup(FEED)["state"] == "FETCH_ERROR" and c.frontier.next_delayed() == 100.0
    a = _take(c, 100.0)
    c.done("s", _feed_done(a, [0]), 100.0)
    assert c.frontier.lookup(FEED)["tries"] == 0 and c.frontier.next_delayed() == 110.0


def test_a_feed_found_by_its_content_is_polled_too(tmp_path):
    c = _crawl(tmp_path)
    c.add_seed("http://news.test/")
    a = _take(c, 0.0)
    c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=(FEED,)), 0.0)
    a = _take(c, 0.0)
    assert a.url == FEED and a.extra == {"hops": "L", "via": "http://news.test/"}  # a link of the seed
    c.done("s", _feed_done(a, [0]), 0.0)
    _next_feed_fetch(c, 0.0)
    assert c.frontier.next_delayed() == 10.0
    again = _take(c, 10.0)
    assert again.url == FEED and again.extra == {"kind": "feed", "hops": "L", "via": "http://news.test/"}
    assert not saved_feeds_of(c).marked


def test_feed_prefix_and_feeds_file(tmp_path):
    c = _crawl(tmp_path)
    seed_file = tmp_path / "seeds.txt"
    seed_file.write_text("http://a.test/\nfeed:http://a.test/rss\n")
    feed_file = tmp_path / "feeds.txt"
    feed_file.write_text("http://b.test/atom\nfeed:http://b.test/rss\nnot a url\n")
    counts = seeds.load(c, str(seed_file), [], logging.getLogger("urlserver"), feeds=str(feed_file))
    assert counts == {"queued": 4, "known": 0, "bad": 1, "filtered": 0}
    for url in ("http://a.test/rss", "http://b.test/atom", "http://b.test/rss"):
        assert saved_feeds_of(c, url).marked
    assert saved_feeds_of(c, "http://a.test/") is None
    c.close()
    assert sorted(f.url for f in saved_feeds(str(tmp_path / "d"))) == [
        "http://a.test/rss", "http://b.test/atom", "http://b.test/rss"]
    assert seeds.has_feeds(str(seed_file), []) and not seeds.has_feeds(None, ["http://a.test/"])


def _robots(c, now, body):
    a = take_resolving(c, now)
    assert a.url.endswith("/robots.txt")
    c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, body=body), now)


def test_sitemaps_from_robots_txt_and_their_bounds(tmp_path):
    c = _crawl(tmp_path, sitemaps=True, sitemap_max_urls=3, sitemaps_per_host=3, sitemap_depth=1)
    c.add_seed("http://s.test/")
    _robots(c, 0.0, b"User-agent: *\nAllow: /\nSitemap: http://s.test/news.xml\n")
    handed = {}
    while (a := c.take("s", 0.0)) is not None:
        handed[a.url] = a.extra.get("kind")
        if a.url == "http://s.test/sitemap.xml":  # an index of three (one too many for the cap)
            links, extra = (f"http://s.test/child{k}.xml" for k in range(3)), {"sitemap": "index", "listed": "3"}
        elif a.url == "http://s.test/news.xml":
            links, extra = (f"http://s.test/p{k}" for k in range(10)), {"sitemap": "urlset", "listed": "10"}
        elif a.url == "http://s.test/child0.xml":  # an index one level too deep
            links, extra = ("http://s.test/deeper.xml",), {"sitemap": "index", "listed": "1"}
        else:
            links, extra = (), {}
        c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=tuple(links), extra=extra), 0.0)
    assert {u for u, k in handed.items() if k == "sitemap"} == {
        "http://s.test/news.xml", "http://s.test/sitemap.xml", "http://s.test/child0.xml"}
    assert {u for u in handed if "/p" in u} == {"http://s.test/p0", "http://s.test/p1", "http://s.test/p2"}
    assert c.stats["sitemaps_fetched"] == 3 and c.finished()


def test_sitemaps_are_not_fetched_unless_asked(tmp_path):
    c = _crawl(tmp_path)
    c.add_seed("http://s.test/")
    _robots(c, 0.0, b"User-agent: *\nAllow: /\nSitemap: http://s.test/news.xml\n")
    a = c.take("s", 0.0)
    assert a.url == "http://s.test/" and a.extra == {"hops": "-"}
    c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    assert c.take("s", 0.0) is None and c.finished()


def test_a_feed_that_was_not_modified_counts_as_redundant(tmp_path):
    c = _crawl(tmp_path)
    c.add_feed(FEED)
    a = _take(c, 0.0)
    c.done("s", Done(a.trans_id, Status.FETCHED, 304, Specific.NOT_MODIFIED, 1), 0.0)
    assert saved_feeds_of(c).redundant == 1 and c.frontier.next_delayed() == 10.0


def test_a_moved_sitemap_is_still_a_sitemap(tmp_path):
    c = _crawl(tmp_path, sitemaps=True)
    c.add_seed("http://s.test/")
    _robots(c, 0.0, b"User-agent: *\nAllow: /\n")
    while (a := c.take("s", 0.0)) is not None:
        if a.url == "http://s.test/sitemap.xml":
            c.done("s", Done(a.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1,
                             new_url="http://s.test/sitemap_index.xml"), 0.0)
            continue
        if a.url == "http://s.test/sitemap_index.xml":
            # found by a redirect of the well-known /sitemap.xml (lineage.py: I, then R)
            assert a.extra == {"kind": "sitemap", "hops": "IR", "via": "http://s.test/sitemap.xml"}
            c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=("http://s.test/p",),
                             extra={"sitemap": "urlset", "listed": "1"}), 0.0)
            continue
        c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    assert c.frontier.lookup("http://s.test/p")["state"] == "FETCHED"


def test_a_page_marked_as_a_feed_while_its_recrawl_waits_is_never_out_twice(tmp_path):
    """--recrawl delays a fetched page; marking it as a feed queues it too. The
    second entry (the recrawl's) is stale when it comes due or its turn comes:
    it is dropped, never a second transaction for a URL already in hand."""
    c = _crawl(tmp_path, recrawl=5.0, recrawl_min=5.0, host_concurrency=2)
    c.add_seed(FEED)
    a = _take(c, 0.0)
    c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), 0.0)
    assert c.lookup(FEED)["state"] == "FETCHED" and c.frontier.next_delayed() == 5.0  # its recrawl
    assert c.add_feed(FEED) == "known"
    first = _take(c, 1.0)
    assert first.url == FEED and c.lookup(FEED)["state"] == "IN_FLIGHT"
    assert _take(c, 6.0) is None  # the recrawl came due while the feed is out: nothing else to hand out
    assert len(c.claims) == 1
    c.done("s", _feed_done(first, []), 6.0)
    assert c.lookup(FEED)["state"] == "PENDING"  # waiting for its next poll, once
    c.close()
