"""wreck-crawl end to end: the real store server, urlserver and spiders
crawl the local test web, and the test web's own request log and link
graph say whether they did it right."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import RunningWeb, SiteSpec, compute_truth, duplicate_requests, gaps_by_host, robots_first
from tests.web.truth import normalize

DELAY = 0.3  # --delay, above every Crawl-delay the test web serves (0.2)
FINISHED = "urlserver finished "  # wreck-crawl copies the urlserver's late stdout to its log
# The float rounding of two wall-clock readings near today's epoch (an ulp is
# 2.4e-7 s); the only slack the politeness check below allows.
CLOCK_RESOLUTION = 1e-6


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("crawl")
    spec = SiteSpec(hosts=6, pages_per_host=12)
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        seeds = [web.url("h0.wreck.test"), web.url("h3.wreck.test")]
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", str(DELAY),
            "--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "2",
            "--procs", "2", "--concurrency", "20",
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        records = web.log.records()
        truth = compute_truth(web.site, seeds, scope="any")
    reader = ReadStore(tmp / "crawl")
    docs = [meta for meta, _ in reader.iter_docs(with_documents=False) if meta.attempted]
    reader.close()
    log = (tmp / "crawl" / "logs" / "urlserver.log").read_text()
    last_words = [line.removeprefix(FINISHED) for line in log.splitlines() if line.startswith(FINISHED)]
    return run, records, truth, docs, last_words


def _url(record) -> str:
    return normalize(f"http://{record.host}:{record.server_port}{record.target}")


def test_the_crawl_finishes_and_says_where_the_data_is(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Crawl finished" in run.stdout and "wreck-dump --data" in run.stdout


def test_the_summary_gives_the_counts_the_urlserver_committed_last(crawled):
    run, *_, last_words = crawled
    assert len(last_words) == 1, "the urlserver's last stdout line: its final /status"
    final = json.loads(last_words[0])
    assert final["finished"] and final["in_flight"] == 0
    urls_line = next(line for line in run.stdout.splitlines() if line.strip().startswith("URLs:"))
    assert all(f"{state.lower()} {n}" in urls_line for state, n in final["urls"].items() if n), (urls_line, final)


def test_every_reachable_allowed_page_is_stored_exactly_once(crawled):
    _, _, truth, docs, _ = crawled
    pages = [d for d in docs if not urlsplit(d.url).path.startswith("/robots")]
    stored = [normalize(d.url) for d in pages]
    assert len(stored) == len(set(stored)), "a page was stored twice"
    assert set(stored) == set(truth.fetched)
    assert {normalize(d.url) for d in pages if d.success} == truth.ok_urls()


def test_nothing_is_fetched_twice_and_nothing_disallowed_is_fetched(crawled):
    _, records, truth, _, _ = crawled
    pages = [r for r in records if not r.target.startswith("/robots")]
    assert duplicate_requests(pages) == {}
    assert not {_url(r) for r in pages} & set(truth.disallowed)


def test_robots_txt_comes_before_any_other_request_to_a_host(crawled):
    _, records, _, _, _ = crawled
    first = robots_first(records)
    assert first and all(first.values()), first


def test_no_two_requests_to_one_host_closer_than_the_delay(crawled):
    """One transaction per host at a time, and the next one handed out DELAY
    after the previous one's DONE (urlserver/politeness.py), which left the
    spider after its request reached the web: so arrivals are DELAY apart on
    the urlserver's clock (wall time) however late any request travelled."""
    _, records, _, _, _ = crawled
    for host, gaps in gaps_by_host(records, clock="wall_time").items():
        assert min(gaps, default=DELAY) >= DELAY - CLOCK_RESOLUTION, (host, sorted(gaps)[:3])
