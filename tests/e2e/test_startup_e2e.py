"""wreck-crawl starts its three daemons at once (issue 16): the spider's
first connection to the urlserver is accepted, never refused and retried,
though it starts before the urlserver listens (wreck-crawl binds the ports
and hands them over, wreck/inherited.py); and the spider's workers are
forked from its supervisor after the imports, so `ps` shows the supervisor
and one process per worker, without multiprocessing's resource tracker."""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
import time

from tests.proctree import children
from tests.web import RunningWeb, SiteSpec

PROCS = 2
# /proc gives a process's start in clock ticks (10 ms at the usual 100 Hz,
# rounded down): the ordering below is checked with this much to spare.
TICK_SLACK_S = 0.05


def _cmdline(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


def _started_at(pid: int) -> float:
    """When process `pid` started (epoch seconds, to the clock tick)."""
    with open(f"/proc/{pid}/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)  # starttime counts from boot
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _logged_at(log: str, event: str) -> float:
    """The time of the first line of `log` with `event` (its asctime, local)."""
    line = next(line for line in log.splitlines() if event in line)
    return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def test_the_daemons_start_at_once_and_the_spider_workers_are_forked(tmp_path):
    data = tmp_path / "crawl"
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=5), log_path=tmp_path / "web.jsonl") as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), "--data", str(data),
               "--hosts", str(web.write_hosts_file(tmp_path / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
               "--allow-net", "127.0.0.0/8", "--recrawl", "1h", "--procs", str(PROCS), "--concurrency", "5"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            web.log.wait_for(lambda records: len(records) > 2, timeout=120)  # the spider fetches: all are up
            daemons = children(proc.pid)
            spider = next(pid for pid in daemons if b"wreck.spider.cli" in _cmdline(pid))
            workers = children(spider)
            spider_started = _started_at(spider)
            assert len(workers) == PROCS  # no resource tracker beside them
            assert all(_cmdline(w) == _cmdline(spider) for w in workers)  # forked: no interpreter of their own
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    # the spider started before the urlserver listened, not after wreck-crawl saw it listen
    assert spider_started + TICK_SLACK_S < _logged_at((data / "logs" / "urlserver.log").read_text(), "event=listening")
    log = (data / "logs" / "spider.log").read_text()
    assert "cannot connect" not in log and "retrying" not in log, log
    assert log.count("connected to urlserver") == PROCS, log  # each worker once, at its first try
    # each forked worker logs under its own name, not the supervisor's
    names = {line.split()[2] for line in log.splitlines() if "connected to urlserver" in line}
    assert len(names) == PROCS and "supervisor" not in names, log
