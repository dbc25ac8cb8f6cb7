"""Feeds and sitemaps end to end: one wreck-crawl (store, urlserver, spider)
against the test web's hostile host, whose feeds gain a story every
ITEM_EVERY seconds and whose sitemaps list pages linked from nowhere; the
web's request log says what was fetched, and when, and the urlserver's log
when it scheduled each feed's next fetch. (One crawl for both, as starting
wreck-crawl costs seconds on a loaded machine.)"""

from __future__ import annotations

import collections
import re
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

from tests.web import HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec
from wreck.urlserver.feeds import saved_feeds

ITEM_EVERY = 2.0  # seconds between two stories of the growing feeds
MIN_INTERVAL, MAX_INTERVAL = 0.25, 2.0  # --feed-min-interval, --feed-max-interval (backoff 2)
NEW_STORIES = 2  # the feed crawl runs until this many stories appeared and were fetched
STORY = re.compile(r"^/story/(\d+)$")
FEEDS = ("/feed.rss", "/feed.atom", "/feed.json")
# The float rounding of two wall-clock readings near today's epoch (an ulp is
# 2.4e-7 s); the only slack the feed schedule check allows.
CLOCK_RESOLUTION = 1e-6
# The urlserver's line for each FETCHED feed (urlserver/feeds.py): what the
# fetch found and how long until the next one.
FEED_FETCHED = re.compile(r"event=feed_fetched url=(\S+) result=(.+?) next_in=(\S+)$", re.M)
NEW = re.compile(r"^([1-9]\d*) new$")  # a fetch that found stories; "0 new", "redundant" did not


def _wreck_crawl(web, tmp, *args) -> list[str]:
    dns_ip, dns_port = web.dns_address
    return [sys.executable, "-m", "wreck.local.cli", *args, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--delay", "0.02", "--procs", "1", "--concurrency", "10"]


class GrowthClock:
    """The feeds' clock: stands still until start(), so the feeds begin to grow
    only once the crawl has fetched them (its start-up time does not count)."""

    def __init__(self) -> None:
        self.t0: float | None = None

    def start(self) -> None:
        self.t0 = time.monotonic()

    def __call__(self) -> float:
        return 0.0 if self.t0 is None else time.monotonic() - self.t0


def _schedule(log: str) -> dict[str, list[tuple[bool, str]]]:
    """Feed path -> (found a new story?, next_in as logged), one per FETCHED DONE, in order."""
    schedule: dict[str, list[tuple[bool, str]]] = collections.defaultdict(list)
    for url, result, next_in in FEED_FETCHED.findall(log):
        schedule["/" + url.rpartition("/")[2]].append((NEW.match(result) is not None, next_in))
    return schedule


def _intervals(found: list[bool]) -> list[float]:
    """The waits the feed rule gives (urlserver/feeds.py): the minimum after a
    fetch that found a story, else the last wait doubled, up to the maximum."""
    waits, wait = [], 0.0
    for new in found:
        wait = MIN_INTERVAL if new else min(max(wait, MIN_INTERVAL / 2) * 2, MAX_INTERVAL)
        waits.append(wait)
    return waits


def _backed_off_and_back(schedule) -> bool:
    """Some feed waited 4x the minimum after fetches that found nothing, and
    some feed's wait fell back to the minimum after a longer one."""
    waits = [_intervals([new for new, _ in fetched]) for fetched in schedule.values()]
    return any(w >= 4 * MIN_INTERVAL for ws in waits for w in ws) and any(
        a > MIN_INTERVAL == b for ws in waits for a, b in zip(ws, ws[1:]))


def _stories(records) -> collections.Counter:
    return collections.Counter(int(m.group(1)) for r in records if (m := STORY.match(r.target)))


SITEMAP_MAX_URLS, SITEMAPS_PER_HOST = 10, 4


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("feeds")
    urlserver_log = tmp / "crawl" / "logs" / "urlserver.log"  # where wreck-crawl puts it
    hostile = HostileSpec(feed_item_interval=ITEM_EVERY, feed_initial_items=3)
    clock = GrowthClock()
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile_spec=hostile), log_path=tmp / "web.jsonl",
                    clock=clock) as web:
        feeds = tmp / "feeds.txt"
        feeds.write_text("".join(web.url(HOSTILE_NAME, path) + "\n" for path in FEEDS))
        cmd = _wreck_crawl(web, tmp, "--feeds", str(feeds), "--feed-min-interval", str(MIN_INTERVAL),
                           "--feed-max-interval", str(MAX_INTERVAL),
                           web.url(HOSTILE_NAME, "/target"), "--sitemaps",  # a page without links
                           "--sitemap-max-urls", str(SITEMAP_MAX_URLS), "--sitemaps-per-host", str(SITEMAPS_PER_HOST))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            web.log.wait_for(lambda rs: all(any(r.target == p for r in rs) for p in FEEDS), timeout=60)
            clock.start()
            last = hostile.feed_initial_items + NEW_STORIES - 1
            web.log.wait_for(lambda rs: last in _stories(rs) and _backed_off_and_back(_schedule(_read(urlserver_log))),
                             timeout=60)
        finally:
            proc.send_signal(signal.SIGINT)  # a continuous crawl runs until Ctrl-C
            output = proc.communicate(timeout=60)[0]
        records = web.log.records()
    return proc.returncode, output, records, saved_feeds(str(tmp / "crawl" / "frontier")), hostile, \
        _schedule(_read(urlserver_log))


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def test_a_crawl_runs_until_interrupted(crawl):
    code, output, _, states, *_ = crawl
    assert code == 130, output  # interrupted, not finished: feeds were still scheduled
    assert "refetched until Ctrl-C" in output
    assert "feeds: 3, fetched" in output  # the summary
    assert sorted(s.url.rpartition("/")[2] for s in states) == ["feed.atom", "feed.json", "feed.rss"]
    assert {s.kind for s in states} == {"rss", "atom", "json"} and all(s.marked for s in states)


def test_each_new_story_is_fetched_exactly_once(crawl):
    _, _, records, states, *_ = crawl
    stories = _stories(records)
    assert set(stories) == set(range(max(stories) + 1))  # every story published so far...
    assert set(stories.values()) == {1}  # ...once, though three feeds list it
    assert all(r.status == 200 for r in records if STORY.match(r.target))
    assert len(stories) <= sum(s.stories for s in states) <= len(stories) + 1  # +1: found, not yet fetched


def test_redundant_fetches_are_recorded_and_lead_nowhere(crawl):
    _, _, records, states, *_ = crawl
    by_path = {s.url.rpartition("/")[2]: s for s in states}
    for path in FEEDS:
        fetches = [r for r in records if r.target == path]
        unchanged = sum(a.bytes_sent == b.bytes_sent for a, b in zip(fetches, fetches[1:]))
        state = by_path[path[1:]]
        assert unchanged >= 2 and state.redundant in (unchanged - 1, unchanged), (path, unchanged, state)
        assert state.fetches in (len(fetches) - 1, len(fetches))  # the last may be cut short by Ctrl-C


def test_backoff_shows_in_the_gaps_between_a_feeds_fetches(crawl):
    """The urlserver's schedule, from its log: each feed's wait doubles while
    its fetches find nothing, up to the maximum, and is back at the minimum
    after one that finds a story. The web's log: no fetch of a feed came
    sooner after the previous one than that wait (the wait counts from the
    DONE, which left the spider after the request arrived; so this holds on
    the urlserver's clock, wall time, however loaded the machine is)."""
    _, _, records, _, _, schedule = crawl
    assert sorted(schedule) == sorted(FEEDS)
    assert _backed_off_and_back(schedule), schedule
    for path in FEEDS:
        found = [new for new, _ in schedule[path]]
        waits = _intervals(found)
        assert [logged for _, logged in schedule[path]] == [f"{w:.3g}" for w in waits], (path, schedule[path])
        fetches = [r for r in records if r.target == path]
        assert len(schedule[path]) in (len(fetches) - 1, len(fetches))  # the last may be cut short by Ctrl-C
        gaps = [b.wall_time - a.wall_time for a, b in zip(fetches, fetches[1:])]
        assert all(gap >= wait - CLOCK_RESOLUTION for gap, wait in zip(gaps, waits)), (path, gaps, waits)


def test_a_sitemap_index_and_its_gzipped_child_lead_to_unlinked_pages(crawl):
    _, _, records, _, spec, _ = crawl
    hidden = collections.Counter(r.target for r in records if r.target.startswith("/hidden/"))
    assert hidden == {f"/hidden/{k}": 1 for k in range(spec.sitemap_hidden_pages)}


def test_sitemap_limits_hold(crawl):
    _, _, records, _, spec, _ = crawl
    sitemaps = [r.target for r in records if r.target.startswith("/sitemap")]
    # robots.txt's Sitemap: line, /sitemap.xml, then the index's children up to the per-host cap
    assert sorted(sitemaps) == ["/sitemap-bulk.xml", "/sitemap-many/0.xml", "/sitemap-pages.xml.gz",
                                "/sitemap.xml"]
    bulk = [r.target for r in records if r.target.startswith("/bulk/")]
    assert spec.sitemap_bulk_urls > SITEMAP_MAX_URLS
    assert sorted(bulk) == sorted(f"/bulk/{k}" for k in range(SITEMAP_MAX_URLS))
    assert [r.target for r in records if r.target.startswith("/many/")] == ["/many/0"]
