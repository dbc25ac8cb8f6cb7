# What one look at the crawl costs as hosts grow (issue 14 finding 8, issue
# 17): the CPU time of one /status and one / (the dashboard page) answered by
# HttpStatus.respond, at 100 and at 100,000 hosts, in two crawls: one where
# every host waits for its name to resolve (every one "held", the case the
# old code walked) and one finished (known hosts, nothing queued: the case
# where finished() walked every host for robots.txt jobs).
# With --before REF, the same looks through that commit's urlserver/http.py
# (loaded beside the current engine) are measured in the same run, so the two
# figures share the machine's load. CPU seconds of this process, best of a
# few rounds: the machine is shared, compare within one run.
#
#   .venv/bin/python -m bench.status_bench [--before main] [--hosts 100 100000]
"""CPU ms of one /status and one / at a few host counts, now and before."""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5  # best of: the machine's other load only ever adds


def _engine(data: Path, hosts: int, *, finished: bool):
    from wreck.urlserver.crawl import Crawl
    from wreck.urlserver.settings import Settings

    c = Crawl.open(Settings(data=str(data), delay=0.0, sync=False, allow_net=("127.0.0.0/8",)), clock=lambda: 0.0)
    for i in range(hosts):
        if finished:  # a known host with nothing left to fetch
            c.frontier.origin_for(f"http://h{i}.test", f"h{i}.test")
        else:
            c.add_seed(f"http://h{i}.test/")
    c.take("s", 0.0)  # every origin with work now waits for DNS
    c.commit()
    return c


def _server(c):
    from wreck.urlserver.timeline import History

    server = types.SimpleNamespace(crawl=c, samples=[], spiders=[], resolver=types.SimpleNamespace(cache={}),
                                   finish_reason=None, history=History())
    server.take_history = lambda now: None
    return server


def _old_http(ref: str):
    """`ref`'s urlserver/http.py as a module of the installed package."""
    source = subprocess.run(["git", "show", f"{ref}:urlserver/http.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType("wreck.urlserver._http_before")
    module.__package__ = "wreck.urlserver"
    exec(compile(source, f"{ref}:urlserver/http.py", "exec"), module.__dict__)
    return module


def _cost(respond, path: str, repeat: int) -> float:
    """Milliseconds of CPU per request, best of ROUNDS."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(repeat):
            code, _, body = respond(path)
            assert code == 200 and body
        best = min(best, (time.process_time() - start) / repeat)
    return round(best * 1000, 3)


def main(argv: list[str] | None = None) -> int:
    from wreck.urlserver.http import HttpStatus

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, nargs="+", default=[100, 100_000])
    ap.add_argument("--before", default=None, help="a git ref whose urlserver/http.py to measure beside")
    ap.add_argument("--out", default=None, help="JSON result file (default: bench/results/DATE-status.json)")
    args = ap.parse_args(argv)
    old = _old_http(args.before) if args.before else None
    results = []
    for hosts, finished in [(n, f) for f in (False, True) for n in args.hosts]:
        with tempfile.TemporaryDirectory() as tmp:
            c = _engine(Path(tmp) / "d", hosts, finished=finished)
            server = _server(c)
            versions = [("now", HttpStatus(server).respond)]
            if old is not None:
                versions.append((f"before ({args.before})", old.HttpStatus(server).respond))
            repeat = 20 if hosts > 10_000 else 200
            for name, respond in versions:
                row = {"version": name, "crawl": "finished" if finished else "waiting for DNS", "hosts": hosts,
                       "status_ms": _cost(respond, "/status", repeat),
                       "dashboard_ms": _cost(respond, "/", repeat)}
                results.append(row)
                print(json.dumps(row), flush=True)
            c.close()
    out = Path(args.out) if args.out else ROOT / "bench/results" / f"{datetime.date.today()}-status.json"
    out.write_text(json.dumps({"what": "CPU ms per request, best of %d rounds" % ROUNDS,
                               "python": sys.version.split()[0], "results": results}, indent=2) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
