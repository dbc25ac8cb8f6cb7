"""wreck-crawl follows <link rel=next|prev|canonical> as Heritrix and Nutch
do: an archive paginated only by rel=next (paged.traps.test in
tests/web/crawltraps.py) is crawled to its last page, and its stylesheet,
icon and alternate stylesheet (<link>s that are resources, not pages) are
never requested. It was crawled to its first page only."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import wreck_crawl
from tests.web import RunningWeb, SiteSpec
from tests.web.crawltraps import PAGED, PAGED_PAGES

pytestmark = pytest.mark.e2e


def test_an_archive_paginated_only_by_link_rel_next_is_crawled_to_its_end_and_its_css_never(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False, crawltraps=True),
                    log_path=tmp_path / "web.jsonl") as web:
        done = wreck_crawl(tmp_path, web, [f"http://{PAGED}:{web.port}/"], ["--delay", "0", "--linger", "1"])
        asked = [r.target for r in web.log.records() if r.host == PAGED]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(t for t in asked if t.startswith("/archive/")) == [f"/archive/{n}" for n in range(1, PAGED_PAGES + 1)]
    assert not {"/style.css", "/dark.css", "/favicon.ico"} & set(asked), asked
    assert len(asked) == len(set(asked))  # each page once: a canonical link to itself adds nothing
