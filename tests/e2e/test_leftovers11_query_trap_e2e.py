"""wreck-crawl on a site whose queries grow by a repeated parameter, as
calendars and session-appending sites grow them (growq.traps.test in
tests/web/crawltraps.py: ?p=1&s=2&p=1&s=2... and ?a=1&a=1...): the crawl
ends by itself after a handful of pages, never asks for a query with a name
repeated past --max-query-repeats (3), and its summary names the rule. It
took the per-host budget (--max-pages, 100,000 by default) to end it."""

from __future__ import annotations

import collections
import urllib.parse

import pytest

from tests.e2e_helpers import wreck_crawl
from tests.web import RunningWeb, SiteSpec
from tests.web.crawltraps import GROWQ

pytestmark = pytest.mark.e2e
BOUND = 3  # --max-query-repeats' default (urlserver/settings.py)


def _most_repeated(target: str) -> int:
    names = collections.Counter(name for name, _ in urllib.parse.parse_qsl(urllib.parse.urlsplit(target).query,
                                                                            keep_blank_values=True))
    return max(names.values(), default=0)


def test_a_query_grown_by_a_repeated_parameter_ends_at_the_bound_and_the_summary_names_it(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False, crawltraps=True),
                    log_path=tmp_path / "web.jsonl") as web:
        done = wreck_crawl(tmp_path, web, [f"http://{GROWQ}:{web.port}/"], ["--delay", "0", "--linger", "1"])
        asked = [r.target for r in web.log.records() if r.host == GROWQ and r.target != "/robots.txt"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "finish reason: done" in done.stdout, done.stdout[-3000:]
    # '/', then each chain up to the bound: ?p=1&s=2 once, twice, three times; ?a=1 likewise
    assert len(asked) == 1 + 2 * BOUND, asked
    assert max(map(_most_repeated, asked)) == BOUND, asked
    assert "filtered this run: repeated query parameter (trap) 2" in done.stdout, done.stdout[-3000:]
