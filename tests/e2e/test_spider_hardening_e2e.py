"""Issue 14 end to end, the spider's part. Hostile pages among good hosts
(a Content-Type with bytes that are not UTF-8, 200,000 nested <div>s) cost
no good page (findings 1 and 2). A robots.txt too large or that stalls is
never read as allow-all (finding 3; RFC 9309 2.5: parse at least the first 500 KiB, a timeout is
never allow): the real trio crawls the hostile host, whose /robots.txt
redirects to a 50 MB one starting 'User-agent: * / Disallow: /', or to one
that sends its headers and then nothing; the test web's request log shows
that no URL of that host but its robots.txt was requested."""

from __future__ import annotations

import pytest

from tests.e2e_helpers import FAST_RETRIES, crawl_to_the_end, stored_urls, url_states
from tests.web import HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec, compute_truth

pytestmark = pytest.mark.e2e
ROBOTS = {"/robots.txt", "/robots/huge.txt", "/robots/stall.txt"}


@pytest.mark.parametrize("served", ["/robots/huge.txt", "/robots/stall.txt"])
def test_no_url_a_huge_or_stalling_robots_txt_forbids_is_requested(tmp_path, served):
    spec = SiteSpec(hosts=1, pages_per_host=2, hostile_spec=HostileSpec(robots_redirect=served, stall_seconds=10.0))
    with RunningWeb(spec) as web:
        evil = f"http://{HOSTILE_NAME}:{web.port}"
        seeds = [f"{evil}/", f"{evil}/target", web.url("h0.wreck.test")]
        records = crawl_to_the_end(tmp_path, web, seeds, [
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02", "--timeout-req", "1.5",
            "--max-doc-size", str(4 << 20), "--robots-max-tries", "2", *FAST_RETRIES,
        ])  # fmt: skip
    evil_targets = {r.target for r in records if r.host == HOSTILE_NAME}
    assert served in evil_targets  # the robots.txt was really fetched
    assert evil_targets <= ROBOTS, evil_targets - ROBOTS
    assert any(r.host == "h0.wreck.test" and r.target == "/" for r in records)  # the crawl itself went on
    states = url_states(tmp_path / "frontier")
    assert states[f"{evil}/target"].as_dict()["state"] != "FETCHED"


def test_hostile_pages_among_good_hosts_cost_no_good_page(tmp_path):
    spec = SiteSpec(hosts=8, pages_per_host=5)
    with RunningWeb(spec) as web:
        evil = f"http://{HOSTILE_NAME}:{web.port}"
        hostile = [f"{evil}{p}" for p in ("/header-bytes/pdf", "/header-bytes/charset", "/nested-html")]
        good = [web.url(f"h{i}.wreck.test") for i in range(spec.hosts)]
        crawl_to_the_end(tmp_path, web, hostile + good, [
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02",
            "--max-doc-size", str(4 << 20), *FAST_RETRIES,
        ])  # fmt: skip
        truth = compute_truth(web.site, good, scope="any")
    stored = stored_urls(tmp_path)
    assert {u for u in stored if not u.startswith(evil)} == set(truth.fetched)  # every good page, once
    states = {url: rec.as_dict() for url, rec in url_states(tmp_path / "frontier").items()}
    assert all(states[url]["state"] == "FETCHED" for url in hostile), {u: states[u] for u in hostile}
    assert set(hostile) <= set(stored)  # stored too (the urlserver keeps no reason for a FETCHED URL)
    claims = [u for u, st in states.items() if "claim expired" in st["reason"]]
    assert not claims, claims
