"""wreck-crawl starts its three daemons at once (issue 16): the spider's
first connection to the urlserver is accepted, never refused and retried,
whenever the urlserver comes to listen (wreck-crawl binds the ports and
hands them over, wreck/inherited.py; which forked process runs first is
the scheduler's choice, so no order of times is asserted); and the
spider's workers are forked from its supervisor after the imports, so `ps`
shows the supervisor and one process per worker, without
multiprocessing's resource tracker."""

from __future__ import annotations

import signal
import subprocess
import sys

from tests.proctree import children
from tests.web import RunningWeb, SiteSpec

PROCS = 2


def _cmdline(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


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
            assert len(workers) == PROCS  # no resource tracker beside them
            assert all(_cmdline(w) == _cmdline(spider) for w in workers)  # forked: no interpreter of their own
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    log = (data / "logs" / "spider.log").read_text()
    assert "cannot connect" not in log and "retrying" not in log, log
    assert log.count("connected to urlserver") == PROCS, log  # each worker once, at its first try
    # each forked worker logs under its own name, not the supervisor's
    names = {line.split()[2] for line in log.splitlines() if "connected to urlserver" in line}
    assert len(names) == PROCS and "supervisor" not in names, log
