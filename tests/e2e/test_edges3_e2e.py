"""wreck-crawl end to end on the third round of edge-case hosts
(tests/web/edges3.py), two crawls as a user runs them.

The first: charset labels only Python knows and labels of the Encoding
Standard w3lib lacks, a query character the page's encoding cannot write, a
BOM against the header, <base> corners, gzip with trailing bytes,
'Content-Encoding: utf-8', a Latin-1 Location, redirects into another
host's disallowed path and out of scope, and robots.txt answering 429,
reset after its headers, holding two groups for WRECK, gzip-encoded with
bytes after its end, or five redirects away.

The second, hang3.wreck.test: a server that accepts and never answers, one
that sends its head and stalls the body, one that resets after its head,
one that closes with no response. Each ends with a clear status, each is
asked once (no retry storm), the crawl ends, and the pages of another host
(flow3's chain, reached through hang3's home page) keep flowing while
hang3's requests hang.

The test web's request log says what WRECK asked for, the store (wreck-dump)
what it kept."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import (asked_beyond, asked_by_host, asked_of, crawl_logged, dump_all, never_asked,
                                repeated_pages)
from tests.web import SiteSpec, robots_first
from tests.web.edges3 import (ENC, ENC_CASES, FLOW, FLOW_PAGES, HANG, HANG_PATHS, ROBOTS_HOPS, Edges3Host,
                              robots3_name)

pytestmark = pytest.mark.e2e
# every host's registered domain is wreck.test: --scope domain lets the redirect reach robots3-deny;
# robots3-429 and robots3-reset are retried in an hour: the crawl ends before; in the second crawl a
# 3 s transfer bound ends the hanging answers (the default is 2 minutes)
COMMON = ["--scope", "domain", "--delay", "0.01", "--concurrency", "10"]


def _crawl(tmp_path_factory, seeds, host: str, args: list[str]):
    """(the run, the request records, the test web's Edges3Host, path -> what wreck-dump prints of `host`)."""
    tmp = tmp_path_factory.mktemp(f"edges3-{host.split('.')[0]}")
    run, records, web = crawl_logged(tmp, SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges3=True), seeds,
                                     COMMON + args)
    stored = {"/" + record["url"].split(f"{host}:", 1)[1].split("/", 1)[1]: record
              for record in dump_all(tmp / "crawl") if f"//{host}:" in record["url"]}
    return run, records, web.edges3, stored


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    run, records, edges3, stored = _crawl(tmp_path_factory, Edges3Host.seeds, ENC, ["--robots-retry", "1h"])
    return run, asked_by_host(records), edges3, stored, records


@pytest.fixture(scope="module")
def hung(tmp_path_factory):
    run, records, _, stored = _crawl(tmp_path_factory, Edges3Host.hang_seeds, HANG, ["--timeout-req", "3s"])
    return run, records, stored


def test_the_crawl_ends_cleanly_robots_txt_first_on_every_host_and_no_page_twice(crawled):
    run, *_, records = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not [host for host, first in robots_first(records).items() if not first]
    assert repeated_pages(records, Edges3Host.asked_twice()) == {}


def test_every_page_a_browser_reaches_is_asked_and_none_it_or_robots_txt_refuses(crawled):
    _, asked, host, *_ = crawled
    robots = {"/robots.txt", *(f"/robots-{n}.txt" for n in range(1, ROBOTS_HOPS + 1))}
    known = {name: host.expected().get(name, set()) | host.tolerated().get(name, set()) | robots
             for name in host.addresses()}
    wrong = {"missed": never_asked(asked, host.expected()), "asked though refused": asked_of(asked, host.forbidden()),
             "asked beyond what is served (a wrong resolution)": asked_beyond(asked, known)}
    assert wrong == dict.fromkeys(wrong, {}), wrong


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
    ("meta-label", "cp1251", "дом"), ("header-latin-1", "utf-8", "дом"), ("meta-utf_8", "cp1252", "café"),
])
def test_wreck_dump_shows_each_page_in_the_encoding_a_browser_reads_it_in(crawled, name, charset, word):
    _, _, _, stored, _ = crawled
    record = stored[f"/e/{name}"]
    assert record["charset"] == charset and f">{word}</a>" in record["body"], record


def test_gzip_with_bytes_after_its_member_and_a_coding_no_browser_knows_are_stored_as_browsers_show_them(crawled):
    _, _, _, stored, _ = crawled
    for path in ("/c/gzip-garbage", "/c/utf8-coding"):
        assert (stored[path]["status"], stored[path]["success"], stored[path]["outcome"]) == (200, True, "OK")
    assert '<a href="/t/utf8-coding">' in stored["/c/utf8-coding"]["body"]


def test_a_crawl_with_hanging_answers_ends_cleanly_and_says_what_waits(hung):
    run, *_ = hung
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    # the summary: the four in error, waiting for a retry a later run makes
    assert "fetch_error 4" in out and "deferred: 4 URLs wait for a retry" in out, out[-3000:]


def test_each_broken_answer_is_asked_once_and_the_other_hosts_pages_all(hung):
    _, records, _ = hung
    asked = asked_by_host(records)
    assert sorted(t for t in asked[HANG] if t.startswith("/h/")) == sorted(HANG_PATHS)  # once each: no storm
    assert sorted(asked[FLOW]) == sorted(["/robots.txt", *(f"/c/{n}" for n in range(FLOW_PAGES))])


def test_each_broken_answer_is_stored_as_a_failure_the_user_can_read(hung):
    _, _, stored = hung
    outcomes = {path: (stored[path]["success"], stored[path]["outcome"]) for path in HANG_PATHS}
    stalled = {(False, "TIMEOUT"), (False, "TOO_SLOW")}  # the transfer bound, or the low-speed rule first
    assert outcomes["/h/never"] in stalled and outcomes["/h/stall-body"] in stalled, outcomes
    assert outcomes["/h/reset-head"] == outcomes["/h/close-empty"] == (False, "RESET"), outcomes


def test_other_hosts_pages_keep_flowing_while_a_request_hangs(hung):
    _, records, _ = hung
    never = next(r for r in records if r.host == HANG and r.target == "/h/never")
    start, end = never.mono_time, never.mono_time + never.duration
    inside = [r.target for r in records if r.host == FLOW and start < r.mono_time and r.mono_time + r.duration < end]
    assert inside, "no flow3 page was asked and answered while /h/never hung"
