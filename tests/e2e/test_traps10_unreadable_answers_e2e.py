"""wreck-crawl on the edge host (tests/web/edges.py), whose /http/dup-cl-differ
sends two different Content-Lengths and /ce/zstd a Content-Encoding WRECK
did not offer: each is asked once, ends ERROR with its reason in the
summary, and the crawl finishes ('done'), without telling the operator to
run it again for answers that will not change. /ce/x-foo, a coding no
browser knows, is shown as sent, as browsers show it: asked again with
libcurl's decoding off, FETCHED."""

from __future__ import annotations

import collections

import pytest

from tests.e2e_helpers import url_states, wreck_crawl
from tests.web import RunningWeb, SiteSpec
from tests.web.edges import EDGE
from wreck.urlserver.urlstate import UrlState

pytestmark = pytest.mark.e2e
UNREADABLE = ("/http/dup-cl-differ", "/ce/zstd")
AS_SENT = "/ce/x-foo"


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("unreadable")
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=1, hostile=False, edges=True)) as web:
        run = wreck_crawl(tmp, web, [f"http://{EDGE}:{web.port}/"], ["--delay", "0.01", "--concurrency", "10"])
        asked = collections.Counter(r.target for r in web.log.records() if r.host == EDGE)
        base = f"http://{EDGE}:{web.port}"
    states = url_states(tmp / "crawl" / "frontier")
    return run, asked, {path: states[base + path] for path in (*UNREADABLE, AS_SENT)}


def test_the_crawl_finishes_and_promises_no_rerun(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "finish reason: done" in run.stdout and "deferred" not in run.stdout, run.stdout[-3000:]


def test_each_unreadable_answer_is_asked_once_and_ends_error_with_its_reason(crawled):
    run, asked, states = crawled
    assert {path: asked[path] for path in UNREADABLE} == dict.fromkeys(UNREADABLE, 1)
    assert {path: UrlState(states[path].state).name for path in UNREADABLE} == dict.fromkeys(UNREADABLE, "ERROR")
    assert "DECODE_ERROR 1" in run.stdout and "BAD_RESPONSE 1" in run.stdout, run.stdout[-3000:]


def test_a_body_in_a_coding_no_browser_knows_is_asked_again_and_taken_as_sent(crawled):
    _, asked, states = crawled
    assert asked[AS_SENT] == 2 and UrlState(states[AS_SENT].state).name == "FETCHED"
