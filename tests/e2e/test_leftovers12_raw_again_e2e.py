"""A page whose Content-Encoding names a coding no browser knows
('Content-Encoding: utf-8', tests/web/edges3.py's /c/utf8-coding) is stored
as a browser shows it, and its host is never asked twice inside the
politeness delay: the request log shows the page asked twice, the second
time at least --delay after the first (was: at once, the spider asking
again with its decoding off), and wreck-dump shows it stored whole with
its link followed."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_by_host, crawl_logged, dump_all
from tests.web import SiteSpec, gaps_by_host
from tests.web.edges3 import ENC

pytestmark = pytest.mark.e2e
DELAY = 0.5
CLOCK_RESOLUTION = 1e-6  # as tests/e2e/test_crawl_e2e.py


def test_a_page_in_a_coding_no_browser_knows_is_asked_again_only_after_the_delay_and_stored_as_sent(tmp_path):
    run, records, _ = crawl_logged(tmp_path, SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges3=True),
                                   lambda port: [f"http://{ENC}:{port}/c/utf8-coding"],
                                   ["--delay", f"{DELAY}s", "--linger", "1"])
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert asked_by_host(records)[ENC] == ["/robots.txt", "/c/utf8-coding", "/c/utf8-coding", "/t/utf8-coding"]
    gaps = gaps_by_host(records, clock="wall_time")[ENC]
    assert min(gaps) >= DELAY - CLOCK_RESOLUTION, gaps
    kept = [r for r in dump_all(tmp_path / "crawl") if r["url"].endswith("/c/utf8-coding")]
    assert [(r["status"], r["success"], r["outcome"]) for r in kept][-1] == (200, True, "OK"), kept
    assert '<a href="/t/utf8-coding">' in kept[-1]["body"]
