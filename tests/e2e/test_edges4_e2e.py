"""wreck-crawl end to end on the fourth round's edge host (tests/web/edges4.py),
frame4.wreck.test, as a user runs it: HTTP framing real servers get wrong,
answered as raw bytes.

Answers the server cut by closing (a chunk cut, no last chunk, Content-Length
never reached) are stored once as received, their links followed, and the
WARC says WARC-Truncated: disconnect. Framing a browser and libcurl both read
(chunk extensions, 1xx answers, no reason phrase...) is read whole; framing
libcurl refuses is one request each, stored as a failure. An <iframe srcdoc>'s
link is followed, a <template>'s never.

The test web's request log says what WRECK asked for, the store (wreck-dump)
and the WARC files what it kept."""

from __future__ import annotations

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.e2e_helpers import asked_beyond, asked_by_host, asked_of, crawl_logged, dump_all, never_asked, repeated_pages
from tests.web import SiteSpec, robots_first
from tests.web.edges4 import CUT, FRAME, READ, REFUSED, ROBOTS_CUT, Edges4Host

pytestmark = pytest.mark.e2e
# a FETCH_ERROR is retried in an hour (the default), robots.txt too: the crawl ends before, saying what waits
ARGS = ["--delay", "0.01", "--concurrency", "10", "--robots-retry", "1h"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges4")
    run, records, web = crawl_logged(tmp, SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges4=True),
                                     Edges4Host.seeds, [*ARGS, "--warc-dir", str(tmp / "warcs")])
    stored = {"/" + record["url"].split(f"{FRAME}:", 1)[1].split("/", 1)[1]: record
              for record in dump_all(tmp / "crawl") if f"//{FRAME}:" in record["url"]}
    truncated = {}
    for path in sorted((tmp / "warcs").iterdir()):
        with path.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "response" and f"//{FRAME}:" in rec.rec_headers.get_header("WARC-Target-URI"):
                    uri = rec.rec_headers.get_header("WARC-Target-URI")
                    truncated["/" + uri.split(f"{FRAME}:", 1)[1].split("/", 1)[1]] = (
                        rec.rec_headers.get_header("WARC-Truncated"))
    return run, records, web.edges4, stored, truncated


def test_the_crawl_ends_cleanly_robots_txt_first_and_no_page_twice(crawled):
    run, records, *_ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not [host for host, first in robots_first(records).items() if not first]
    assert repeated_pages(records, {}) == {}  # a cut answer is not retried


def test_every_page_a_browser_reaches_is_asked_and_none_beyond(crawled):
    _, records, host, *_ = crawled
    asked = asked_by_host(records)
    known = {name: host.expected()[name] | host.tolerated().get(name, set()) | {"/robots.txt"}
             for name in host.addresses()}
    wrong = {"missed": never_asked(asked, host.expected()), "asked though unseen": asked_of(asked, host.forbidden()),
             "asked beyond what is served (a wrong resolution)": asked_beyond(asked, known)}
    assert wrong == dict.fromkeys(wrong, {}), wrong


def test_an_answer_cut_by_the_servers_close_is_stored_once_as_received_and_marked(crawled):
    # main before session 12: RESET, retried, its link never followed, nothing in the WARC
    *_, stored, truncated = crawled
    for name in CUT:
        record = stored[f"/cut/{name}"]
        assert (record["status"], record["success"], record["outcome"]) == (200, True, "OK"), record
        assert f'<a href="/t/cut-{name}">' in record["body"], record
        assert truncated[f"/cut/{name}"] == record["truncated"] == "disconnect"
    assert truncated["/read/chunk-ext"] is stored["/read/chunk-ext"]["truncated"] is None  # a whole answer: unmarked


def test_framing_a_browser_reads_is_stored_whole(crawled):
    *_, stored, truncated = crawled
    for name in READ:
        record = stored[f"/read/{name}"]
        assert (record["status"], record["success"], record["outcome"]) == (200, True, "OK"), record
        assert truncated[f"/read/{name}"] is None
    assert "/t/after-length" not in stored["/read/length-shorter"]["body"]  # the bytes past Content-Length: not it


def test_framing_libcurl_refuses_and_odd_status_codes_are_asked_once_and_stored_as_failures(crawled):
    _, records, _, stored, _ = crawled
    asked = asked_by_host(records)[FRAME]
    for path in [*(f"/refused/{k}" for k in REFUSED), "/status/999", "/status/600"]:
        assert asked.count(path) == 1, path
        assert (stored[path]["success"], stored[path]["outcome"]) == (False, "BAD_RESPONSE"), stored[path]


def test_an_iframe_srcdocs_link_is_followed_and_a_templates_never(crawled):
    _, records, *_ = crawled
    asked = asked_by_host(records)[FRAME]
    assert "/t/srcdoc" in asked and "/t/template" not in asked


def test_a_robots_txt_cut_by_the_servers_close_keeps_its_host_closed(crawled):
    # its rules up to the cut allow /public/: read, they would open what the whole forbids
    _, records, *_ = crawled
    assert {r.target for r in records if r.host == ROBOTS_CUT} == {"/robots.txt"}


def test_a_body_after_a_204_or_a_304_is_no_part_of_any_answer(crawled):
    _, records, _, stored, _ = crawled
    for path, status in (("/status/204-body", 204), ("/status/304-body", 304)):
        record = stored[path]
        assert (record["status"], record["success"], record["body"]) == (status, True, ""), record
    asked = asked_by_host(records)[FRAME]
    assert "/t/status-204-body" not in asked and "/t/status-304-body" not in asked
