"""A crawl whose every seed fails ends with one line saying so and a
non-zero exit (it ended "done", exit 0, and an operator who typed a wrong
host name or port had to read the summary's error counts to notice): a
seed on a name the test DNS does not know, a seed on a port nobody listens
on. A crawl that fetched a page beside a failing seed is unchanged."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.web import RunningWeb, SiteSpec

EXIT_NOTHING_FETCHED = 3  # wreck/local/nothingfetched.py, docs/operating.md


def _wreck_crawl(web, tmp: Path, *seeds: str) -> subprocess.CompletedProcess:
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
           "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--delay", "0.05", "--procs", "1",
           "--concurrency", "10", "--linger", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp, stdin=subprocess.DEVNULL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _the_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == EXIT_NOTHING_FETCHED, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Crawl " in result.stdout and "  URLs: " in result.stdout  # the summary is still printed
    return lines[0]


def test_a_crawl_whose_seed_names_a_host_the_dns_does_not_know_says_so_and_exits_non_zero(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False)) as web:
        result = _wreck_crawl(web, tmp_path, "http://nowhere.wreck.test/")
    line = _the_line(result)
    assert line.startswith("wreck-crawl: no seed could be fetched: http://nowhere.wreck.test/: its host name does "
                           "not exist (DNS_NXDOMAIN)"), line
    assert "check the seeds' host names and ports" in line


def test_a_crawl_whose_seed_names_a_port_nobody_listens_on_says_so_and_exits_non_zero(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False)) as web:
        seed = f"http://h0.wreck.test:{_free_port()}/"
        result = _wreck_crawl(web, tmp_path, seed)
    line = _the_line(result)
    # its robots.txt is tried first (RFC 9309): that is the attempt that failed
    assert line.startswith(f"wreck-crawl: no seed could be fetched: {seed}robots.txt: the connection was refused, "
                           "or the host is unreachable (CONNECT_FAILED)"), line
    assert "Run the same command again" in result.stdout or "run the same command again" in result.stdout


def test_a_crawl_that_fetched_a_page_beside_a_failing_seed_ends_as_before(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False)) as web:
        result = _wreck_crawl(web, tmp_path, web.url("h0.wreck.test"), "http://nowhere.wreck.test/")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no seed could be fetched" not in result.stderr + result.stdout
    assert "  errors: DNS_NXDOMAIN " in result.stdout, result.stdout  # the failing seed is counted, as before
