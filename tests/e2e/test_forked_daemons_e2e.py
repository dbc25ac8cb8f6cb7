"""wreck-crawl forks its daemons after importing them (wreck/local/fork.py),
and a kill -9 of any one of them mid-crawl is survived as before: wreck-crawl
stops the others and says which died, no process is left behind, and the
same command run again finishes the crawl with every page stored once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.proctree import alive, children, descendants
from tests.web import RunningWeb, SiteSpec, compute_truth
from tests.web.truth import normalize
from wreck.storeserver.store import ReadStore

RUN_TIMEOUT_S = 300.0
GONE_TIMEOUT_S = 60.0
DELAY = "0.2"  # slow enough that the kill lands mid-crawl


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _stored(data: Path) -> list[str]:
    reader = ReadStore(data)
    try:
        urls = [normalize(meta.url) for meta, _ in reader.iter_docs(with_documents=False)]
    finally:
        reader.close()
    return [u for u in urls if not urlsplit(u).path.startswith("/robots")]


@pytest.mark.parametrize("victim", ["urlserver", "storeserver", "spider"])
def test_a_forked_daemon_killed_with_9_ends_the_run_and_the_same_command_finishes_the_crawl(tmp_path, victim):
    data = tmp_path / "crawl"
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=15), log_path=tmp_path / "web.jsonl") as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(data), "--hosts",
               str(web.write_hosts_file(tmp_path / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
               "--allow-net", "127.0.0.0/8", "--delay", DELAY, "--procs", "2", "--concurrency", "5"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)
        everyone: set[int] = set()
        try:
            web.log.wait_for(lambda records: len(records) > 4, timeout=120)  # all up, mid-crawl
            daemons = {pid: _cmdline(pid) for pid in children(proc.pid)}
            assert sorted(c.split(" -m ")[1].split()[0] for c in daemons.values()) == [
                "wreck.spider.cli", "wreck.storeserver.cli", "wreck.urlserver.cli"], daemons  # as ps shows them
            everyone = descendants(proc.pid)
            target = next(pid for pid, c in daemons.items() if f"wreck.{victim}.cli" in c)
            subprocess.run(["kill", "-9", str(target)], check=True)
            out = proc.communicate(timeout=RUN_TIMEOUT_S)[0]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
        assert proc.returncode == 1, out
        assert f"{victim} exited with -9" in out, out
        deadline = time.monotonic() + GONE_TIMEOUT_S
        while (left := {p for p in everyone if alive(p)}) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in left:
            subprocess.run(["kill", "-9", str(pid)])
        assert not left, "a daemon or worker outlived its wreck-crawl"
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
        truth = compute_truth(web.site, seeds, scope="host")
    assert again.returncode == 0, again.stdout + again.stderr
    stored = _stored(data)
    assert len(stored) == len(set(stored)), "a page was stored twice"
    assert set(stored) == set(truth.fetched)
