"""wreck-crawl end to end on the second round of edge-case hosts
(tests/web/edges2.py): content types and their absence, status codes and
Locations browsers treat specially, URL spellings in hrefs, text that looks
like links but is not, and robots.txt corners of RFC 9309. One crawl, as a
user runs it; the test web's request log says what WRECK asked for, the
store (wreck-dump) what it kept."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_beyond, asked_by_host, asked_of, crawl_logged, dump_all, never_asked
from tests.web import SiteSpec, duplicate_requests, robots_first
from tests.web.edges2 import BIG_HREF, ODD, Edges2Host

pytestmark = pytest.mark.e2e
EDGES2 = SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges2=True)
# --scope any: the IPv4 number forms name a host by its address, outside every registered domain;
# --sitemaps: robots2-sitemaps' Sitemap: lines (every host's /sitemap.xml is asked too: a 404)
CRAWL = ["--scope", "any", "--delay", "0.01", "--concurrency", "10", "--sitemaps"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges2")
    run, records, web = crawl_logged(tmp, EDGES2, Edges2Host.seeds, CRAWL)
    stored = {"/" + record["url"].split(f"{ODD}:", 1)[1].split("/", 1)[1]: record
              for record in dump_all(tmp / "crawl") if f"//{ODD}:" in record["url"]}
    return run, asked_by_host(records), web.edges2, stored, records


def test_the_crawl_of_the_second_edges_ends_cleanly(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_robots_txt_comes_first_on_every_host_and_no_page_is_fetched_twice(crawled):
    *_, records = crawled
    assert {host for host, first in robots_first(records).items() if not first} == set()
    twice = {(name, path) for name, paths in Edges2Host.asked_twice().items() for path in paths}
    assert {key: n for key, n in duplicate_requests(records).items()
            if not key[1].startswith("/robots") and (key not in twice or n > 2)} == {}


def test_every_page_a_browser_reaches_is_asked_and_none_it_or_robots_txt_refuses(crawled):
    _, asked, host, *_ = crawled
    assert never_asked(asked, host.expected()) == {}  # missed
    assert asked_of(asked, host.forbidden()) == {}  # asked though refused
    names = {*host.addresses(), *host.expected()}  # and nothing beyond what is served (a wrong resolution)
    known = {name: host.expected().get(name, set()) | host.tolerated().get(name, set()) | {"/robots.txt", "/sitemap.xml"}
             for name in names}
    assert asked_beyond(asked, known) == {}


def test_a_huge_href_is_never_requested(crawled):
    _, asked, *_ = crawled
    assert not [t for t in asked[ODD] if len(t) > BIG_HREF]


def test_odd_but_complete_answers_are_stored_as_received(crawled):
    _, _, _, stored, _ = crawled
    for path, status in (("/st/304", 304), ("/ct/empty", 200), ("/ct/none-pdf", 200), ("/st/204", 204), ("/st/cookies", 200),
                         ("/st/fold", 200), ("/ct/no-semicolon", 200), ("/ct/html-png", 200),
                         ("/st/trailers", 200), ("/st/space-colon", 200)):
        assert (stored[path]["status"], stored[path]["success"]) == (status, True), stored[path]
    assert stored["/st/304"]["outcome"] == "OK"  # unasked: not a revisit of an earlier copy (there is none)


def test_a_redirect_to_another_scheme_is_a_dead_end_not_a_link(crawled):
    _, _, _, stored, _ = crawled
    for name in ("ftp", "file", "javascript", "data", "mailto"):
        record = stored[f"/st/{name}"]
        assert not record["success"] and record["status"] == 302, record
