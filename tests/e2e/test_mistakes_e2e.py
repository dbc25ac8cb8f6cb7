"""Mistakes that show only once a crawl runs, end to end against the local
test web (issue 13): bad seeds beside good ones are reported on stderr with
their file and line and the crawl goes on; a seed whose name resolves to a
loopback address without --allow-net (not knowable before resolution) ends a
crawl that fetched nothing with a non-zero exit, the reason and the hint;
--http puts the dashboard where it is asked and the start says where."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.web import RunningWeb, SiteSpec

EXIT_ADDRESS_POLICY = 3  # wreck/local/run.py


def _wreck_crawl(web, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *args, "--data", str(tmp / "crawl"),
           "--dns", f"{dns_ip}:{dns_port}", "--delay", "0.05", "--procs", "1", "--concurrency", "10",
           "--linger", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_bad_seeds_are_reported_with_file_and_line_and_the_crawl_goes_on(tmp_path):
    port = _free_port()
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=3)) as web:
        (tmp_path / "seeds.txt").write_text(f"# seeds\n{web.url('h0.wreck.test')}\nh0.wreck.test/p-1.html\n"
                                            "ftp://h0.wreck.test/\n")
        result = _wreck_crawl(web, tmp_path, "--seeds", "seeds.txt", "--allow-net", "127.0.0.0/8",
                              "--http", f"127.0.0.1:{port}")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("wreck-crawl: seeds.txt:3: h0.wreck.test/p-1.html: no scheme: did you mean "
                               "https://h0.wreck.test/p-1.html?"), lines
    assert lines[1].startswith("wreck-crawl: seeds.txt:4: ftp://h0.wreck.test/: ftp: URLs are not crawled"), lines
    assert f"WRECK: dashboard at http://127.0.0.1:{port}/" in result.stdout
    log = (tmp_path / "crawl" / "logs" / "urlserver.log").read_text()
    final = json.loads([ln for ln in log.splitlines() if ln.startswith("urlserver finished ")][-1]
                       .removeprefix("urlserver finished "))
    assert final["urls"]["FETCHED"] >= 1  # the good seed was crawled


def test_a_seed_resolving_to_loopback_without_allow_net_exits_non_zero_with_the_hint(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2)) as web:
        result = _wreck_crawl(web, tmp_path, web.url("h0.wreck.test"))
    assert result.returncode == EXIT_ADDRESS_POLICY, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "nothing fetched" in lines[0] and "--allow-net 127.0.0.0/8" in lines[0]


def test_the_dashboard_answers_where_http_puts_it(tmp_path):
    """--http HOST:PORT while the crawl runs: the printed address serves /status."""
    port = _free_port()
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2)) as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), "--data", str(tmp_path / "crawl"),
               "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--procs", "1",
               "--http", f"127.0.0.1:{port}", "--recrawl", "1h"]  # continuous: it runs until stopped
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for line in proc.stdout:
                if line.startswith("WRECK: dashboard at "):
                    address = line.removeprefix("WRECK: dashboard at ").strip()
                    break
            assert address == f"http://127.0.0.1:{port}/"
            with urllib.request.urlopen(address + "status", timeout=30) as answer:
                assert "urls" in json.loads(answer.read())
        finally:
            proc.terminate()
            proc.communicate(timeout=120)
