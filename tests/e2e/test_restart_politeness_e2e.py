"""Politeness survives a kill -9 of the urlserver (issue 14, finding 9): the
real store server, urlserver and spider crawl one host whose robots.txt says
Crawl-delay; the urlserver is killed right after a request reached the host
and restarted at once, and the web's own request log shows no two requests
to the host closer than the Crawl-delay."""

from __future__ import annotations

import os
import signal

from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES, Trio, stored_urls
from tests.web import RunningWeb, SiteSpec, compute_truth, gaps_by_host
from tests.web.robots import CRAWL_DELAY

CRAWL_DELAY_S = 3.0  # longer than a restart takes, so a forgetful urlserver is caught
CLOCK_RESOLUTION = 1e-6  # float rounding of two wall-clock readings (as test_crawl_rules_e2e)


def test_no_request_comes_sooner_than_the_crawl_delay_across_a_kill_9(tmp_path):
    spec = SiteSpec(hosts=1, pages_per_host=4, hostile=False, robots_variants=(CRAWL_DELAY,),
                    crawl_delay=CRAWL_DELAY_S)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test")]
        trio = Trio(tmp_path, web, seeds, ["--allow-net", "127.0.0.0/8", "--delay", "0", *FAST_RETRIES])
        try:
            # robots.txt, then the first page: the urlserver handed it out just now
            web.log.wait_for(lambda records: len(records) >= 2, timeout=CRAWL_TIMEOUT)
            os.kill(trio.urlserver.proc.pid, signal.SIGKILL)
            assert trio.urlserver.proc.wait(10) == -signal.SIGKILL
            before = len(web.log.records())
            trio.urlserver = trio.start_urlserver()
            assert trio.wait() == 0, trio.logs()
        finally:
            trio.stop()
        records = web.log.records()
        truth = compute_truth(web.site, seeds)
    assert before < len(records), "the crawl went on after the restart"
    # pages only: the Crawl-delay is not known before robots.txt is, so the first
    # page follows it at once (before any kill; a matter of its own)
    pages = [r for r in records if r.target != "/robots.txt"]
    gaps = gaps_by_host(pages, clock="wall_time")["h0.wreck.test"]
    assert min(gaps) >= CRAWL_DELAY_S - CLOCK_RESOLUTION, [(r.wall_time, r.target) for r in records]
    assert set(stored_urls(tmp_path)) == set(truth.fetched)
