# `make bench-idle` / `python -m bench.idle_bench`: the crawl loop's timing
# (issue 16), on the local test web (tests/web, in this process, on 127.x):
#
#   gap   wreck-crawl at --delay 0 (one transaction per host, the default)
#         over a few allow-all hosts; from the test web's request log (each
#         record has the monotonic time its request head was read and how
#         long the exchange took), per host, the time from the end of one
#         response to the next request's head: what WRECK's loop adds
#         between two requests to one host (wget: under 1 ms).
#   idle  wreck-crawl at --delay 3600 on the test web (its hostile host
#         adds retries): once robots.txt and the first pages are in and the
#         request log has been quiet for QUIET_S, everything waits on delays
#         or retries; the CPU seconds of every process of the crawl's tree
#         (bench/procstats.py, from /proc) over --idle-seconds, as a share
#         of one core (aim: under 1%).
#
# Results go to bench/results/<date>-idle.json. The test web's own CPU is
# not counted: it runs in this process, outside the crawl's tree.
"""Per-host response->request gap at --delay 0, and CPU of an idle crawl."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.web import RunningWeb, SiteSpec
from tests.web.robots import ALLOW_ALL

from .crawl import BIN, RESULTS, log, stop_group, wreck_component
from .procstats import _stat, cmdline, descendants

QUIET_S = 5.0  # the request log is this long without a new record: the crawl waits
WARMUP_MAX_S = 60.0  # bound on waiting for that
GAP_TIMEOUT_S = 600.0


def crawl_args(web: RunningWeb, data: Path, hosts_file: Path, *extra: str) -> list[str]:
    dns_ip, dns_port = web.dns_address
    return [str(BIN / "wreck-crawl"), *web.site.seed_urls(), "--data", str(data), "--hosts", str(hosts_file),
            "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--procs", "2", *extra]  # fmt: skip


def gaps_by_host(records) -> dict[str, list[float]]:
    """Per host: ms from the end of each exchange to the head of the next one."""
    by_host: dict[str, list] = {}
    for r in records:
        by_host.setdefault(r.host, []).append(r)
    out = {}
    for host, rs in by_host.items():
        rs.sort(key=lambda r: r.mono_time)
        out[host] = [1000 * (b.mono_time - (a.mono_time + a.duration)) for a, b in zip(rs, rs[1:])]
    return out


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    values = sorted(values)
    pick = lambda q: round(values[min(len(values) - 1, int(q * len(values)))], 3)  # noqa: E731
    return {"n": len(values), "median_ms": round(statistics.median(values), 3), "p10_ms": pick(0.1),
            "p90_ms": pick(0.9), "max_ms": round(values[-1], 3), "mean_ms": round(statistics.fmean(values), 3)}


def tree_cpu(root: int) -> dict[int, tuple[str, float]]:
    """Per pid under root: (component, CPU seconds so far)."""
    spider_pids: set = set()
    out = {}
    for pid in sorted(descendants(root)):
        st = _stat(pid)
        if st is not None:
            out[pid] = (wreck_component(pid, cmdline(pid), st[0], root=root, spider_pids=spider_pids), st[1])
    return out


def run_gap(work: Path, hosts: int, pages: int) -> dict:
    spec = SiteSpec(hosts=hosts, pages_per_host=pages, robots_variants=(ALLOW_ALL,), hostile=False,
                    cross_links_per_page=0)
    with RunningWeb(spec) as web:
        hosts_file = web.write_hosts_file(work / "gap-hosts")
        args = crawl_args(web, work / "gap-data", hosts_file, "--delay", "0", "--ip-delay", "0",
                          "--ip-concurrency", "8")
        log("phase gap: " + " ".join(args))
        started = time.monotonic()
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=GAP_TIMEOUT_S)
        wall = time.monotonic() - started
        records = [r for r in web.log.records() if r.host in web.site.hosts]
    gaps = gaps_by_host(records)
    every = [g for v in gaps.values() for g in v]
    return {"hosts": hosts, "pages_per_host": pages, "requests": len(records), "wall_s": round(wall, 2),
            "returncode": proc.returncode, "gap": summary(every),
            "gap_by_host": {h: summary(v) for h, v in sorted(gaps.items())},
            "output_tail": proc.stdout.decode(errors="replace").strip().splitlines()[-6:]}  # fmt: skip


def run_idle(work: Path, seconds: float) -> dict:
    with RunningWeb(SiteSpec(hosts=7, pages_per_host=20)) as web:
        hosts_file = web.write_hosts_file(work / "idle-hosts")
        args = crawl_args(web, work / "idle-data", hosts_file, "--delay", "3600")
        log("phase idle: " + " ".join(args))
        proc = subprocess.Popen(args, stdout=open(work / "idle.out", "wb"), stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + WARMUP_MAX_S
            seen, quiet_since = -1, time.monotonic()
            while time.monotonic() < deadline:
                n = len(web.log.records())
                if n != seen:
                    seen, quiet_since = n, time.monotonic()
                elif n and time.monotonic() - quiet_since >= QUIET_S:
                    break
                time.sleep(0.5)
            before_requests = len(web.log.records())
            t0, before = time.monotonic(), tree_cpu(proc.pid)
            time.sleep(seconds)
            t1, after = time.monotonic(), tree_cpu(proc.pid)
            during = len(web.log.records()) - before_requests
            running = proc.poll() is None
        finally:
            stop_group(proc, signal.SIGINT, grace=30)
    elapsed = t1 - t0
    by_comp: dict[str, float] = {}
    for pid, (comp, cpu) in after.items():
        if pid in before:
            by_comp[comp] = by_comp.get(comp, 0.0) + cpu - before[pid][1]
    total = sum(by_comp.values())
    return {"seconds": round(elapsed, 1), "requests_before": before_requests, "requests_during": during,
            "crawl_still_running": running, "processes": len(after),
            "cpu_s": {k: round(v, 3) for k, v in sorted(by_comp.items())}, "cpu_s_total": round(total, 3),
            "core_percent": round(100 * total / elapsed, 3), "aim_under_1_percent": 100 * total / elapsed < 1.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="gap,idle", help="phases, comma-separated")
    parser.add_argument("--hosts", type=int, default=4, help="hosts of the gap phase")
    parser.add_argument("--pages", type=int, default=300, help="pages per host of the gap phase")
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--tag", default="", help="suffix of the results file, e.g. 'before'")
    opts = parser.parse_args()
    phases = set(opts.only.split(","))
    results: dict = {"date": datetime.date.today().isoformat(), "machine": {"cpus": os.cpu_count()}}
    with tempfile.TemporaryDirectory(prefix="wreck-idle-") as tmp:
        work = Path(tmp)
        if "gap" in phases:
            results["gap"] = run_gap(work, opts.hosts, opts.pages)
            log(f"gap: {results['gap']['gap']} over {results['gap']['requests']} requests")
        if "idle" in phases:
            results["idle"] = run_idle(work, opts.idle_seconds)
            log(f"idle: {results['idle']['core_percent']}% of a core over {results['idle']['seconds']} s "
                f"({results['idle']['cpu_s']})")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{results['date']}-idle{'-' + opts.tag if opts.tag else ''}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
