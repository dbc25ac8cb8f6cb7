"""Session 10's operator mistakes that need a crawl under way, end to end
against the local test web: the terminal closed mid-crawl (SIGHUP) stops it
as Ctrl-C does, with its summary, every daemon stopped in order and every
page kept; and a daemon that dies as the crawl starts while the spider
still starts its workers is one line on stderr, with nothing left running."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.proctree import alive, children, descendants
from tests.web import RunningWeb, SiteSpec

RUN_TIMEOUT_S = 240
EXIT_INTERRUPTED = 130  # wreck/local/run.py


def _stored(data: Path) -> list[str]:
    dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--data", str(data), "--all", "--jsonl",
                           "--no-body"], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    return [json.loads(line)["url"] for line in dump.stdout.splitlines()]


def test_the_terminal_closing_mid_crawl_stops_it_in_order_and_the_same_command_finishes_it(tmp_path):
    data = tmp_path / "crawl"
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=20), log_path=tmp_path / "web.jsonl") as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), web.url("h1.wreck.test"),
               "--data", str(data), "--hosts", str(web.write_hosts_file(tmp_path / "hosts")),
               "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--delay", "0.2", "--procs", "2",
               "--concurrency", "5"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
        everyone: set[int] = set()
        try:
            web.log.wait_for(lambda records: len(records) > 4, timeout=120)  # all up, mid-crawl
            everyone = descendants(proc.pid)
            assert len(children(proc.pid)) == 3
            proc.send_signal(signal.SIGHUP)
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
        # (it was ended outright, rc 129 and no summary, its store's last log lines lost with its log copier)
        assert proc.returncode == EXIT_INTERRUPTED, out + err
        assert "Traceback" not in err and err == "", err
        assert "Crawl stopped (run the same command again to resume)" in out
        assert not [p for p in everyone if alive(p)], "a daemon outlived wreck-crawl"
        assert (data / "logs" / "storeserver.log").read_text().rstrip().endswith("storeserver INFO stopped")
        before = _stored(data)
        assert before and len(before) == len(set(before))
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stdout + again.stderr
    after = _stored(data)
    assert len(after) == len(set(after)), "a page was stored twice"
    assert set(before) <= set(after) and len(after) > len(before)


def test_a_store_that_cannot_open_ends_the_start_in_one_line_with_nothing_left_running(tmp_path):
    """Its spider was forked at once and still starting its workers when
    stopped: one of them was left running and wreck-crawl waited for the
    spider for ever (a stop signal inside the spider's start, and a join
    whose timeout did not hold for forked daemons)."""
    data = tmp_path / "crawl"
    data.mkdir()
    (data / "store").write_text("not a directory\n")  # where the store keeps its LMDB
    cmd = [sys.executable, "-m", "wreck.local.cli", "http://127.0.0.1:9/", "--data", str(data), "--allow-net",
           "127.0.0.0/8", "--procs", "4"]
    for _ in range(3):  # the race was lost about one start in three
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)  # it hung here, for ever
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
        assert proc.returncode == 1, out + err
        lines = err.splitlines()
        assert len(lines) == 1 and "storeserver exited (2) before starting" in lines[0], err
        assert "cannot open the store" in lines[0] and "Traceback" not in out + err
