"""Retry on request (issue 13), end to end as an operator types it: a page
that answers 503 on its first request ends as ERROR in a crawl allowing one
try (--max-retries 1); the same command again with `--retry-errors --only
REGEX` requests it again, gets the 200 and stores it. The test web's request
log and the store say so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import RunningWeb, SiteSpec
from tests.web.spec import RevisitSpec

FINISHED = "urlserver finished "  # the urlserver's last /status, in its log
BUSY = "busy.wreck.test"  # its /p-0.html answers 503 once, then 200 (tests/web/revisit.py)


def _wreck_crawl(web, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *args, "--data", str(tmp / "crawl"),
           "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
           "--allow-net", "127.0.0.0/8", "--delay", "0.05", "--procs", "1", "--concurrency", "10"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def _last_status(tmp: Path) -> dict:
    log = (tmp / "crawl" / "logs" / "urlserver.log").read_text()
    return json.loads([ln for ln in log.splitlines() if ln.startswith(FINISHED)][-1].removeprefix(FINISHED))


def _stored(tmp: Path) -> dict[str, bool]:
    reader = ReadStore(tmp / "crawl")
    try:
        return {meta.url: meta.success for meta, _ in reader.iter_docs(with_documents=False)}
    finally:
        reader.close()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retryerr")
    spec = SiteSpec(hosts=1, pages_per_host=2, robots_variants=("allow-all",), hostile=False,
                    revisit=RevisitSpec(busy_pages=1, busy_429=0, busy_5xx=1))
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        page = web.url(BUSY, "/p-0.html")
        args = [page, "--max-retries", "1", "--retry-delay", "0"]
        first = _wreck_crawl(web, tmp, *args)
        first_status, first_stored = _last_status(tmp), _stored(tmp)
        first_records = web.log.records()
        second = _wreck_crawl(web, tmp, *args, "--retry-errors", "--only", r"/p-0\.html$")
        second_records = web.log.records()[len(first_records):]
        second_status, second_stored = _last_status(tmp), _stored(tmp)
    return tmp, page, (first, first_status, first_records, first_stored), \
        (second, second_status, second_records, second_stored)


def _requests(records, path: str) -> list[int]:
    return [r.status for r in records if r.host.startswith(BUSY) and r.target == path]


def test_a_page_that_failed_ends_as_error(two_runs):
    _, page, (run, status, records, stored), _ = two_runs
    assert run.returncode == 0, run.stdout + run.stderr
    assert _requests(records, "/p-0.html") == [503]
    assert status["urls"]["ERROR"] == 1 and status["urls"].get("FETCHED", 0) == 0
    assert not stored.get(page)  # nothing stored for it, or a failure
    assert "retry_requested" not in status["counters"]
    assert "retried on request" not in run.stdout


def test_the_same_command_with_retry_errors_fetches_and_stores_it(two_runs):
    tmp, page, _, (run, status, records, stored) = two_runs
    assert run.returncode == 0, run.stdout + run.stderr
    assert _requests(records, "/p-0.html") == [200]  # asked again, now answered
    assert status["urls"].get("ERROR", 0) == 0 and status["urls"]["FETCHED"] == 1
    assert status["counters"]["retry_requested"] == 1
    assert "retried on request: 1 URLs (--retry-errors)" in run.stdout
    log = ((tmp / "crawl") / "logs" / "urlserver.log").read_text()
    assert "event=retry_requested urls=1 errors=1 retries=0" in log
    assert stored[page] is True
