# The server's ceiling: every URL of the web fetched once with libcurl's multi
# interface at high concurrency, no parsing, bodies discarded. Connections
# go straight to each host's address (CURLOPT_RESOLVE, never DNS) and are
# reused. Run as its own process so its CPU time is its own:
#   python -m bench.blaster URLFILE --concurrency N --max-seconds S
# URLFILE lines are "IP URL"; prints one JSON summary line.
"""A minimal pycurl-multi blaster for the ceiling of the benchmark web."""

from __future__ import annotations

import argparse
import json
import sys
import time
from urllib.parse import urlsplit

import pycurl


def blast(lines: list[tuple[str, str]], *, concurrency: int, max_seconds: float) -> dict:
    multi = pycurl.CurlMulti()
    multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, 0)
    free = []
    for _ in range(concurrency):
        c = pycurl.Curl()
        c.setopt(pycurl.WRITEFUNCTION, len)  # discard: returning the length accepts the bytes
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.TIMEOUT, 30)
        free.append(c)
    todo = iter(lines)
    started = time.monotonic()
    done = errors = body = 0
    active = 0
    exhausted = False
    while True:
        while free and not exhausted:
            item = next(todo, None)
            if item is None:
                exhausted = True
                break
            ip, url = item
            parts = urlsplit(url)
            c = free.pop()
            c.setopt(pycurl.URL, url)
            c.setopt(pycurl.RESOLVE, [f"{parts.hostname}:{parts.port or 80}:{ip}"])
            multi.add_handle(c)
            active += 1
        if not active or time.monotonic() - started > max_seconds:
            break
        multi.select(0.1)
        while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            queued, ok, bad = multi.info_read()
            for c in ok:
                done += 1
                body += int(c.getinfo(pycurl.SIZE_DOWNLOAD))
                multi.remove_handle(c)
                free.append(c)
            for c, _errno, _msg in bad:
                errors += 1
                multi.remove_handle(c)
                free.append(c)
            active -= len(ok) + len(bad)
            if not queued:
                break
    elapsed = time.monotonic() - started
    return {"fetched": done, "errors": errors, "body_bytes": body, "seconds": round(elapsed, 3),
            "pages_per_s": round(done / elapsed, 1), "complete": exhausted and not active}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("urlfile")
    parser.add_argument("--concurrency", type=int, default=400)
    parser.add_argument("--max-seconds", type=float, default=300)
    opts = parser.parse_args()
    with open(opts.urlfile) as f:
        lines = [tuple(line.split(None, 1)) for line in f.read().splitlines() if line]
    lines = [(ip, url.strip()) for ip, url in lines]
    print(json.dumps(blast(lines, concurrency=opts.concurrency, max_seconds=opts.max_seconds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
