"""A one-shot wreck-crawl ends by itself and says why, end to end.

A test web with a feed found by its content (evil's /feed.rss given as a
plain seed), a host whose robots.txt answers 500 (h1) and a page that
answers 503 once (busy's /p-0.html): the crawl ends with a short --linger,
the summary naming the deferred URLs; the same command run after their due
time fetches them. Each global limit ends a crawl with its finish reason,
and a resume with a higher limit continues. After the urlserver's goodbye
no spider worker logs a warning."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.web import HOSTILE_NAME, RunningWeb, SiteSpec
from tests.web.spec import RevisitSpec

FINISHED = "urlserver finished "  # the urlserver's last /status, in its log
RETRY = 15.0  # --retry-delay and --robots-retry: longer than the first run takes, so they are deferred
BUSY = "busy.wreck.test"
QUIET = ("closed the connection", "cannot connect")  # what a normal finish must not log as warnings


def _wreck_crawl(web, tmp: Path, *args: str, delay: str = "0.05") -> subprocess.CompletedProcess:
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *args, "--data", str(tmp / "crawl"),
           "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
           "--allow-net", "127.0.0.0/8", "--delay", delay, "--procs", "1", "--concurrency", "10"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def _last_status(tmp: Path) -> dict:
    log = (tmp / "crawl" / "logs" / "urlserver.log").read_text()
    return json.loads([ln for ln in log.splitlines() if ln.startswith(FINISHED)][-1].removeprefix(FINISHED))


def _spider_warnings(tmp: Path) -> list[str]:
    log = (tmp / "crawl" / "logs" / "spider.log").read_text()
    return [ln for ln in log.splitlines() if "WARNING" in ln and any(q in ln for q in QUIET)]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ending")
    spec = SiteSpec(hosts=2, pages_per_host=4, robots_variants=("allow-all", "server-error"),
                    revisit=RevisitSpec(busy_pages=1, busy_429=0, busy_5xx=1))
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test"), web.url(BUSY, "/p-0.html"),
                 web.url(HOSTILE_NAME, "/feed.rss")]
        args = [*seeds, "--linger", "1", "--retry-delay", str(RETRY), "--robots-retry", str(RETRY)]
        first = _wreck_crawl(web, tmp, *args)
        first_status = _last_status(tmp)
        first_warnings = _spider_warnings(tmp)
        first_records = web.log.records()
        until = first_status["deferred"]["until"]
        while time.time() <= until:  # the retries come due: wait for that moment, as an operator would
            time.sleep(min(1.0, max(0.0, until - time.time()) + 0.05))
        second = _wreck_crawl(web, tmp, *args)
        second_records = web.log.records()[len(first_records):]
    return first, first_status, first_warnings, first_records, second, _last_status(tmp), second_records


def test_a_one_shot_crawl_ends_by_itself_naming_what_is_deferred(two_runs):
    first, status, *_ = two_runs
    assert first.returncode == 0, first.stdout + first.stderr
    assert status["finish_reason"] == "deferred retries"
    out = first.stdout
    assert "Crawl ended in" in out and "finish reason: deferred retries" in out
    assert "run the same command again to fetch them" in out
    assert f"http://{BUSY}:" in out and "/p-0.html" in out  # the 503 page, named
    assert "h1.wreck.test" in out and "robots retry" in out  # the host whose robots.txt answered 500
    assert "WRECK: dashboard at http://127.0.0.1:" in out


def test_a_feed_found_by_its_content_is_fetched_once_and_its_stories_followed(two_runs):
    _, status, _, records, *_ = two_runs
    feeds = [r for r in records if r.host.startswith(HOSTILE_NAME) and r.target == "/feed.rss"]
    stories = {r.target for r in records if r.host.startswith(HOSTILE_NAME) and r.target.startswith("/story/")}
    assert len(feeds) == 1 and len(stories) >= 3
    assert status["urls"]["FETCHED"] >= 1 + len(stories)


def test_the_same_command_after_the_due_time_fetches_the_deferred_urls(two_runs):
    *_, second, status, records = two_runs
    assert second.returncode == 0, second.stdout + second.stderr
    busy = [r for r in records if r.host.startswith(BUSY) and r.target == "/p-0.html"]
    assert [r.status for r in busy] == [200]  # the retry, this time answered
    assert any(r.host.startswith("h1.wreck.test") and r.target == "/robots.txt" for r in records)
    assert status["finish_reason"] == "deferred retries"  # h1's robots.txt still answers 500


def test_a_normal_finish_logs_no_spider_warnings(two_runs):
    _, _, warnings, *_ = two_runs
    assert warnings == []


@pytest.fixture(scope="module")
def limited_web(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("limits")
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=12, robots_variants=("allow-all",), hostile=False),
                    log_path=tmp / "web.jsonl") as web:
        yield web, tmp


@pytest.mark.parametrize("limit, first, higher", [
    ("--max-total-pages", "3", "6"),
    ("--max-bytes", "2KiB", "8KiB"),
])
def test_a_global_limit_ends_the_crawl_and_a_higher_one_continues(limited_web, tmp_path, limit, first, higher):
    web, _ = limited_web
    seed = web.url("h0.wreck.test")
    run = _wreck_crawl(web, tmp_path, seed, limit, first)
    assert run.returncode == 0, run.stdout + run.stderr
    status = _last_status(tmp_path)
    assert status["finish_reason"].startswith(f"limit reached: {limit} ")
    assert f"finish reason: limit reached: {limit}" in run.stdout
    fetched = status["urls"]["FETCHED"]
    assert fetched >= 1 and status["queued"]  # stopped with work left
    if limit == "--max-total-pages":
        assert fetched == 3
    again = _wreck_crawl(web, tmp_path, seed, limit, higher)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _last_status(tmp_path)["urls"]["FETCHED"] > fetched


def test_max_time_ends_the_crawl(limited_web, tmp_path):
    web, _ = limited_web
    run = _wreck_crawl(web, tmp_path, web.url("h0.wreck.test"), "--max-time", "2", delay="1")
    assert run.returncode == 0, run.stdout + run.stderr
    status = _last_status(tmp_path)
    assert status["finish_reason"] == "limit reached: --max-time 2" and status["queued"]
    assert "finish reason: limit reached: --max-time 2" in run.stdout
