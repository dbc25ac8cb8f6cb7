"""wreck-crawl's children never outlive it: SIGTERM stops them in order and
it says how to resume; killed with -9, its daemons die with it
(PR_SET_PDEATHSIG, wreck/supervise.py) and the spider takes its workers
along."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.proctree import alive, children, descendants
from tests.web import RunningWeb, SiteSpec

GONE_TIMEOUT_S = 60.0  # a loaded machine stops a spider's workers slowly


def _wait_gone(pids: set[int]) -> set[int]:
    deadline = time.monotonic() + GONE_TIMEOUT_S
    while (left := {p for p in pids if alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture
def crawling(tmp_path):
    """A continuous wreck-crawl (--recrawl) under way: its process, its
    daemons and every process below them."""
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=5), log_path=tmp_path / "web.jsonl") as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), "--data", str(tmp_path / "crawl"),
               "--hosts", str(web.write_hosts_file(tmp_path / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
               "--allow-net", "127.0.0.0/8", "--recrawl", "1h", "--procs", "2", "--concurrency", "5"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        daemons: set[int] = set()
        below: set[int] = set()
        try:
            web.log.wait_for(lambda records: len(records) > 2, timeout=60)  # the spider fetches: all are up
            daemons = children(proc.pid)
            below = descendants(proc.pid) - daemons
            assert len(daemons) == 3 and len(below) >= 2  # store, urlserver, spider; the spider's workers
            yield proc, daemons, below
        finally:
            if proc.poll() is None:
                proc.kill()
            for pid in _wait_gone(daemons | below):  # never leave a crawler behind, even when a test fails
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.communicate(timeout=60)


def test_sigterm_stops_every_child_before_wreck_crawl_exits(crawling):
    proc, daemons, below = crawling
    proc.send_signal(signal.SIGTERM)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, output
    assert "Crawl stopped (run the same command again to resume)" in output
    assert not {p for p in daemons if alive(p)}, "wreck-crawl waits for its daemons"
    assert not _wait_gone(below)


def test_a_wreck_crawl_killed_with_9_leaves_no_process_behind(crawling):
    proc, daemons, below = crawling
    proc.kill()
    proc.wait(30)
    assert not _wait_gone(daemons | below)
