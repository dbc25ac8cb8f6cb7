"""A robots.txt asking 'Crawl-delay: 100000000' (tests/web/edges.py,
robots-slow.wreck.test) held a one-shot wreck-crawl for three years a page,
'waiting for crawl-delay'. --max-crawl-delay caps it: the crawl fetches the
host's pages, that far apart, and ends."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import wreck_crawl
from tests.web import RunningWeb, SiteSpec, gaps_by_host
from tests.web.edges import SLOW_PAGES, robots_name

pytestmark = pytest.mark.e2e
CAP = 0.2  # seconds: --max-crawl-delay
CLOCK_RESOLUTION = 1e-6  # as tests/e2e/test_crawl_e2e.py


def test_a_huge_crawl_delay_is_capped_and_the_crawl_ends(tmp_path):
    slow = robots_name("slow")
    spec = SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges=True)
    with RunningWeb(spec, log_path=tmp_path / "web.jsonl") as web:
        run = wreck_crawl(tmp_path, web, [f"http://{slow}:{web.port}/"],
                          ["--delay", "0.01", "--max-crawl-delay", str(CAP), "--concurrency", "10"])
        records = [r for r in web.log.records() if r.host == slow]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert records[0].target == "/robots.txt"
    assert sorted(r.target for r in records[1:]) == sorted(SLOW_PAGES)
    # the cap is a delay, not an exemption: arrivals are CAP apart on the
    # urlserver's clock (see tests/e2e/test_crawl_e2e.py's delay test)
    assert min(gaps_by_host(records, clock="wall_time")[slow]) >= CAP - CLOCK_RESOLUTION
