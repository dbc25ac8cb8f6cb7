"""wreck-crawl end to end on the third round of edge-case hosts
(tests/web/edges3.py): charset labels only Python knows and labels of the
Encoding Standard w3lib lacks, a query character the page's encoding cannot
write, a BOM against the header, <base> corners, gzip with trailing bytes, a
Latin-1 Location, a redirect into another host's disallowed path, and
robots.txt answering 429, reset after its headers, holding two groups for
WRECK, gzip-encoded with bytes after its end, or five redirects away. One crawl, as a user runs
it; the test web's request log says what WRECK asked for, the store
(wreck-dump) what it kept."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_beyond, asked_by_host, asked_of, crawl_logged, dump_all, never_asked
from tests.web import SiteSpec, duplicate_requests, robots_first
from tests.web.edges3 import ENC, ENC_CASES, ROBOTS_HOPS, Edges3Host, robots3_name

pytestmark = pytest.mark.e2e
EDGES3 = SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges3=True)
# every host's registered domain is wreck.test: --scope domain lets the redirect reach robots3-deny;
# robots3-429 and robots3-reset are retried in an hour: the crawl ends before
CRAWL = ["--scope", "domain", "--delay", "0.01", "--robots-retry", "1h", "--concurrency", "10"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges3")
    run, records, web = crawl_logged(tmp, EDGES3, Edges3Host.seeds, CRAWL)
    stored = {"/" + record["url"].split(f"{ENC}:", 1)[1].split("/", 1)[1]: record
              for record in dump_all(tmp / "crawl") if f"//{ENC}:" in record["url"]}
    return run, asked_by_host(records), web.edges3, stored, records


def test_the_crawl_of_the_third_edges_ends_cleanly(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_robots_txt_comes_first_on_every_host_and_no_page_is_fetched_twice(crawled):
    *_, records = crawled
    assert {host for host, first in robots_first(records).items() if not first} == set()
    assert {key: n for key, n in duplicate_requests(records).items() if not key[1].startswith("/robots")} == {}


def test_every_page_a_browser_reaches_is_asked_and_none_it_or_robots_txt_refuses(crawled):
    _, asked, host, *_ = crawled
    assert never_asked(asked, host.expected()) == {}  # missed
    assert asked_of(asked, host.forbidden()) == {}  # asked though refused
    robots = {"/robots.txt", *(f"/robots-{n}.txt" for n in range(1, ROBOTS_HOPS + 1))}
    known = {name: host.expected().get(name, set()) | host.tolerated().get(name, set()) | robots
             for name in host.addresses()}
    assert asked_beyond(asked, known) == {}  # nothing beyond what is served (a wrong resolution)


def test_a_redirect_to_another_host_waits_for_that_hosts_robots_txt(crawled):
    *_, records = crawled
    deny = [r.target for r in records if r.host == robots3_name("deny")]
    assert deny == ["/robots.txt"]  # asked, obeyed: /private/p never


def test_a_robots_txt_five_redirects_away_is_reached_and_obeyed(crawled):
    *_, records = crawled
    asked = [r.target for r in records if r.host == robots3_name("chain5")]
    assert asked[:ROBOTS_HOPS + 1] == ["/robots.txt", *(f"/robots-{n}.txt" for n in range(1, ROBOTS_HOPS + 1))]


def test_a_robots_txt_answering_429_or_reset_keeps_its_host_closed(crawled):
    _, asked, *_ = crawled
    for kind in ("429", "reset"):
        assert set(asked[robots3_name(kind)]) == {"/robots.txt"}, kind


def test_pages_with_a_charset_no_browser_knows_are_stored_whole_as_served(crawled):
    _, _, _, stored, _ = crawled
    for name in ("label-base64", "label-undefined", "label-utf-32", "label-cp037", "mac-cyrillic", "hebrew-i"):
        record = stored[f"/e/{name}"]
        assert (record["status"], record["success"]) == (200, True), record
        assert record["content_type"] == ENC_CASES[name][0], record


@pytest.mark.parametrize(("name", "charset", "word"), [
    ("label-base64", "cp1252", "café"), ("label-undefined", "cp1252", "café"), ("label-utf-32", "cp1252", "café"),
    ("label-cp037", "cp1252", "café"), ("mac-cyrillic", "mac-cyrillic", "дом"), ("hebrew-i", "iso8859-8", "שלום"),
    ("big5", "big5hkscs", "中文"), ("bom-wins", "utf-8", "дом"), ("meta-utf16", "utf-8", "é"),
    ("meta-label", "cp1251", "дом"),
])
def test_wreck_dump_shows_each_page_in_the_encoding_a_browser_reads_it_in(crawled, name, charset, word):
    _, _, _, stored, _ = crawled
    record = stored[f"/e/{name}"]
    assert record["charset"] == charset and f">{word}</a>" in record["body"], record


def test_gzip_with_bytes_after_its_member_is_stored_and_followed(crawled):
    _, _, _, stored, _ = crawled
    assert (stored["/c/gzip-garbage"]["status"], stored["/c/gzip-garbage"]["success"]) == (200, True)
