# Bandwidth of the frugal features (`make bench-bandwidth`), on the test
# web's revisit hosts (tests/web/revisit.py), loopback only:
#
# - type filter: wreck-crawl over the six file hosts (a 12 MiB video, a PDF,
#   a ZIP, a JPEG, an HTML page named .pdf, each), once without and once
#   with --accept-type text/html,application/xhtml+xml. Requests (HEAD and
#   GET) and bytes the web sent. Two hosts answer HEAD correctly, four do
#   not (405, 501, a lie, a reset): there the video's GET is aborted at the
#   headers, and what the kernel buffered before the abort is what it cost.
# - recrawl: wreck-crawl --recrawl 1s over news.wreck.test (three static
#   pages with validators, a page that changes, an index without
#   validators) for a few seconds: bytes of the first round against the
#   conditional rounds after it, and how many answers were 304.
"""python -m bench.bandwidth_bench [--recrawl-seconds S]"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.web import RevisitSpec, RunningWeb, SiteSpec
from tests.web.revisit import BUSY, NEWS

ACCEPT = "text/html,application/xhtml+xml"
CRAWL_TIMEOUT_S = 120.0


def _crawl(web: RunningWeb, data: Path, seeds: list[str], args: list[str], *, seconds: float | None = None) -> None:
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(data), "--dns", f"{dns_ip}:{dns_port}",
           "--allow-net", "127.0.0.0/8", "--delay", "0.05", "--procs", "1", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(seconds if seconds is not None else CRAWL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)  # a recrawl runs until stopped
        proc.wait(CRAWL_TIMEOUT_S)


def _tally(records) -> dict:
    return {"requests": len(records), "head": sum(r.method == "HEAD" for r in records),
            "not_modified": sum(r.status == 304 for r in records),
            "bytes_sent": sum(r.bytes_sent for r in records)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--recrawl-seconds", type=float, default=8.0)
    opts = parser.parse_args()
    spec = SiteSpec(hosts=1, pages_per_host=2, hostile=False, revisit=RevisitSpec(change_interval=0.5))
    result: dict = {"date": datetime.date.today().isoformat(), "machine": platform.platform(),
                    "video_bytes": spec.revisit.big_bytes}
    with RunningWeb(spec) as web, tempfile.TemporaryDirectory() as tmp:
        files = [web.url(n) for n in web.web.revisit.addresses() if n not in (NEWS, BUSY)]
        for name, args in (("no_filter", []), ("accept_type", ["--accept-type", ACCEPT])):
            web.log.clear()
            _crawl(web, Path(tmp) / name, files, args)
            result[name] = _tally([r for r in web.log.records() if r.target != "/robots.txt"])
        web.log.clear()
        started = time.monotonic()
        _crawl(web, Path(tmp) / "recrawl", [web.url(NEWS)], ["--recrawl", "1s", "--recrawl-min", "0.5s"],
               seconds=opts.recrawl_seconds)
        records = sorted((r for r in web.log.records() if r.target != "/robots.txt"), key=lambda r: r.mono_time)
        seen: set[str] = set()
        first, later = [], []
        for r in records:
            (later if r.target in seen else first).append(r)
            seen.add(r.target)
        result["recrawl"] = {"seconds": round(time.monotonic() - started, 1), "first_round": _tally(first),
                             "later_rounds": _tally(later)}
    out = Path(__file__).parent / "results" / f"{result['date']}-bandwidth.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
