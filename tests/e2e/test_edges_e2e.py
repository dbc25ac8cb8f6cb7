"""wreck-crawl end to end on the edge-case hosts (tests/web/edges.py): robots.txt
corners of RFC 9309, odd HTTP framing and codings, HTML link corners, URL
spellings and encodings a browser treats specially. One crawl, as a user runs
it; the test web's request log says what WRECK asked for, the store what it kept."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_beyond, asked_by_host, asked_of, crawl_logged, dump_all, never_asked
from tests.web import SiteSpec, duplicate_requests, robots_first
from tests.web.edges import EDGE, LONG_QUERY, EdgesHost, robots_name

pytestmark = pytest.mark.e2e
EDGES = SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges=True)
# every seed's registered domain is wreck.test: --scope domain lets the
# crawl reach edge2, the IDN host and robots-target; robots-503 waits an hour
CRAWL = ["--scope", "domain", "--delay", "0.01", "--robots-retry", "1h", "--concurrency", "10"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges")
    run, records, web = crawl_logged(tmp, EDGES, EdgesHost.seeds, CRAWL)
    return run, asked_by_host(records), web.edges, dump_all(tmp / "crawl"), records


def test_robots_txt_comes_first_on_every_host_and_no_page_is_fetched_twice(crawled):
    *_, records = crawled
    assert {host for host, first in robots_first(records).items() if not first} == set()
    # /ce/x-foo: a coding no browser knows, asked again with libcurl's decoding off (spider/fetch.py)
    assert {key: n for key, n in duplicate_requests(records).items()
            if not key[1].startswith("/robots") and (key[1] != "/ce/x-foo" or n > 2)} == {}


def test_the_crawl_of_the_edges_ends_cleanly(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_every_page_a_browser_would_reach_is_fetched(crawled):
    _, asked, host, *_ = crawled
    assert never_asked(asked, host.expected()) == {}


def test_nothing_a_browser_or_robots_txt_would_refuse_is_requested(crawled):
    _, asked, host, *_ = crawled
    assert asked_of(asked, host.forbidden()) == {}


def test_no_request_misses_a_served_path(crawled):
    _, asked, host, *_ = crawled
    known = {name: host.expected().get(name, set()) | host.tolerated().get(name, set())
             | {"/robots.txt", "/robots-b.txt"} for name in host.addresses()}
    assert asked_beyond(asked, known) == {}


def test_a_robots_txt_answering_503_keeps_the_host_closed(crawled):
    _, asked, *_ = crawled
    assert set(asked[robots_name("503")]) == {"/robots.txt"}


def test_a_robots_txt_redirect_loop_is_followed_a_bounded_number_of_times(crawled):
    _, asked, *_ = crawled
    robots = [t for t in asked[robots_name("loop")] if t.startswith("/robots")]
    assert 1 <= len(robots) <= 6  # RFC 9309 2.3.1.2: five redirects, then "unavailable"


def test_a_url_past_the_length_bound_is_never_requested(crawled):
    _, asked, *_ = crawled
    assert not [t for t in asked[EDGE] if LONG_QUERY in t]


def test_pages_framed_or_coded_oddly_are_stored_whole(crawled):
    _, _, _, stored, _ = crawled
    by_path = {record["url"].split(f"{EDGE}:", 1)[-1].split("/", 1)[-1]: record for record in stored
               if f"//{EDGE}:" in record["url"]}
    for path in ("http/early-hints", "http/continue", "http/http10", "http/te-and-cl", "http/dup-cl-same",
                 "ce/br", "ce/gzip-gzip", "ce/deflate-raw", "ce/deflate-zlib", "ce/gzip-no-trailer"):
        record = by_path[path]
        assert (record["status"], record["success"]) == (200, True), record
        assert record["body"].rstrip().endswith("</html>"), record


def test_a_response_with_two_different_content_lengths_is_not_stored_as_a_page(crawled):
    _, _, _, stored, _ = crawled
    [record] = [r for r in stored if r["url"].endswith("/http/dup-cl-differ")]
    assert not record["success"], record
