"""wreck-crawl end to end on hang3.wreck.test (tests/web/edges3.py): a server
that accepts and never answers, one that sends its head and stalls the body,
one that resets after its head, one that closes with no response. Each ends
with a clear status in the store, each is asked once (no retry storm), the
crawl ends, and the pages of another host (flow3's chain, reached through
hang3's home page) keep flowing while hang3's requests hang: the request log
shows flow3 pages asked and answered inside the hung request's span."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import asked_by_host, crawl_logged, dump_all
from tests.web import SiteSpec
from tests.web.edges3 import FLOW, FLOW_PAGES, HANG, HANG_PATHS, Edges3Host

pytestmark = pytest.mark.e2e
EDGES3 = SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges3=True)
# a 3 s transfer bound ends the hanging answers (the default is 2 minutes); retries an hour away
CRAWL = ["--scope", "domain", "--delay", "0.01", "--timeout-req", "3s", "--concurrency", "10"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edges3-hang")
    run, records, _ = crawl_logged(tmp, EDGES3, Edges3Host.hang_seeds, CRAWL)
    stored = {record["url"].split(f"{HANG}:", 1)[1].split("/", 1)[1]: record
              for record in dump_all(tmp / "crawl") if f"//{HANG}:" in record["url"]}
    return run, records, stored


def test_a_crawl_with_hanging_answers_ends_cleanly_and_says_what_waits(crawled):
    run, *_ = crawled
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    # the summary: the four in error, waiting for a retry a later run makes
    assert "fetch_error 4" in out and "deferred: 4 URLs wait for a retry" in out, out[-3000:]


def test_each_broken_answer_is_asked_once_and_the_other_hosts_pages_all(crawled):
    _, records, _ = crawled
    asked = asked_by_host(records)
    assert sorted(t for t in asked[HANG] if t.startswith("/h/")) == sorted(HANG_PATHS)  # once each: no storm
    assert sorted(asked[FLOW]) == sorted(["/robots.txt", *(f"/c/{n}" for n in range(FLOW_PAGES))])


def test_each_broken_answer_is_stored_as_a_failure_the_user_can_read(crawled):
    _, _, stored = crawled
    outcomes = {path: (stored[path.lstrip("/")]["success"], stored[path.lstrip("/")]["outcome"]) for path in HANG_PATHS}
    hung = {(False, "TIMEOUT"), (False, "TOO_SLOW")}  # the transfer bound, or the low-speed rule first
    assert outcomes["/h/never"] in hung and outcomes["/h/stall-body"] in hung, outcomes
    assert outcomes["/h/reset-head"] == outcomes["/h/close-empty"] == (False, "RESET"), outcomes


def test_other_hosts_pages_keep_flowing_while_a_request_hangs(crawled):
    _, records, _ = crawled
    hung = next(r for r in records if r.host == HANG and r.target == "/h/never")
    start, end = hung.mono_time, hung.mono_time + hung.duration
    inside = [r.target for r in records if r.host == FLOW and start < r.mono_time and r.mono_time + r.duration < end]
    assert inside, "no flow3 page was asked and answered while /h/never hung"
