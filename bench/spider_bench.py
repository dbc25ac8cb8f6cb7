# Spider throughput on one core: one worker (spider.worker.Worker, the real
# code path: GET window, libcurl multi on uvloop, link extraction, record
# encoding, DONE with outlinks) with 1,000 concurrent transfers, against a
# rig in another process: a fast HTTP server serving a 30 KB HTML page
# (about 60 links) for every path on HOSTS host names, a fake urlserver that
# assigns PAGES URLs as credits allow, and a fake store that acks at once.
# The spider's CPU time comes from getrusage in its own process, so the
# rig's work is not counted. Run: python -m bench.spider_bench [--pages N]
#
# --count-calls counts instead of timing: every Python function call the
# worker makes a page, and among them the entries into Python from C (a
# libcurl callback through pycurl, a callback or wake-up run by uvloop, a
# Python key function called by a C builtin), by function. A profile hook
# sees them (sys.setprofile: 'call' while the innermost open call is a C
# function, or none is open, is an entry from C); it slows the worker
# several times, so only the counts mean anything, and those that depend
# on time (SERVE_EVERY_S's polls within a batch, results a batch) lean
# high.
"""pages/s and spider CPU-seconds per 1,000 pages; results in bench/results/."""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import multiprocessing
import os
import platform
import random
import resource
import sys
import time
from datetime import date
from pathlib import Path

import uvloop

from wreck.protocol import (
    NEED_DATA, Ack, AckResult, Assignment, ConnectionClosed, ControlConnection, Done, Get, Record,
    Role, StoreConnection,
)  # fmt: skip
from wreck.protocol.settings import CrawlSettings

RESULTS = Path(__file__).parent / "results"
SECRET = b"bench-secret-0123456789"
HOSTS = 2000  # distinct host names: one keep-alive connection each, like a real crawl
# Names a web address, as bench/webgen.py shares them: libcurl keeps its idle
# connections in one list per connect-to address and walks it comparing host
# names at each reuse, so all the names on one address (127.0.0.1) cost it
# a walk of 2,000 connections a transfer (a quarter of the fetch loop's CPU).
HOSTS_PER_IP = 4


def host_ip(i: int) -> str:
    """The web address of host number i (127.2.x.y, HOSTS_PER_IP names each)."""
    j = (i % HOSTS) // HOSTS_PER_IP
    return f"127.2.{j // 250}.{j % 250 + 1}"
PAGE_BYTES = 30 * 1024
LINKS = 60
CONCURRENCY = 1000
WARMUP = 1000  # pages before the clock starts (connections, caches)
TARGET_PAGES_PER_CPU_S = 2000
# The rig's response head: nginx's for a static page (bench/crawl.py's web),
# so libcurl's header callbacks a transfer are those of the crawl bench.
HEAD = (b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 15:40:00 GMT\r\n"
        b"Content-Type: text/html\r\nContent-Length: %d\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\n"
        b"Connection: keep-alive\r\nETag: \"6743f0a0-7800\"\r\nAccept-Ranges: bytes\r\n\r\n")
COUNT_TOP = 90  # functions listed by --count-calls


def make_page() -> bytes:
    rng = random.Random(7)
    links = "".join(
        f'<li><a href="/page/{rng.randint(0, 10**6)}.html">story {i}</a> with a line of teaser text</li>'
        for i in range(LINKS)
    )
    para = "<p>" + "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 12 + "</p>\n"
    head = '<!doctype html><html><head><meta charset="utf-8"><title>Bench page</title>' \
           '<link rel="alternate" type="application/rss+xml" href="/feed.rss"></head><body>'
    body = head + f"<ul>{links}</ul>"
    while len(body) < PAGE_BYTES - 20:
        body += para
    return (body[: PAGE_BYTES - 15] + "</body></html>").encode()


# -- the rig (another process) -------------------------------------------------


class _Http(asyncio.Protocol):
    def __init__(self, response: bytes) -> None:
        self.response, self.buf = response, b""

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while (end := self.buf.find(b"\r\n\r\n")) >= 0:
            self.buf = self.buf[end + 4 :]
            self.transport.write(self.response)


class _Server(asyncio.Protocol):
    """Fake urlserver or store: handshake, then assign or ack."""

    def __init__(self, rig: "_Rig", kind) -> None:
        self.rig, self.conn = rig, kind(Role.SERVER, secret=SECRET, nonce=os.urandom(32))

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.conn.hello())

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        conn.receive_data(data)
        out = []
        while (event := conn.next_event()) is not NEED_DATA:
            kind = type(event)
            if kind is Record:
                out.append(conn.send(Ack(event.doc_id, AckResult.STORED)))
            elif kind is Get:
                self.rig.credit += event.count
                out.append(self.rig.assign(conn))
            elif kind is Done:
                self.rig.done += 1
                self.rig.links += len(event.outlinks)
            elif kind is ConnectionClosed:
                break
            elif type(event).__name__ == "Auth":
                out.append(conn.welcome(self.rig.settings if isinstance(conn, ControlConnection) else {}))
        if out:
            self.transport.write(b"".join(out))


class _Rig:
    def __init__(self, pages: int, http_port: int, store: str) -> None:
        self.pages, self.http_port = pages, http_port
        self.next_id = self.credit = self.done = self.links = 0
        self.settings = CrawlSettings(
            store=(store,), timeout_update_ms=30_000, timeout_req_ms=30_000, max_doc_size=1 << 20,
            user_agent="wreck-bench/0.1", allow_net=("127.0.0.0/8",),
        ).to_wire()

    def assign(self, conn: ControlConnection) -> bytes:
        parts = []
        while self.credit > 0 and self.next_id < self.pages:
            i = self.next_id
            host = f"h{i % HOSTS}.bench.test"
            url = f"http://{host}:{self.http_port}/page/{i}.html"
            parts.append(conn.send(Assignment(i + 1, i, host_ip(i), host, url)))
            self.next_id += 1
            self.credit -= 1
        return b"".join(parts)


def _rig_main(pages: int, ports: multiprocessing.Queue) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        page = make_page()
        response = HEAD % len(page) + page
        addresses = sorted({host_ip(i) for i in range(HOSTS)})
        http = await loop.create_server(lambda: _Http(response), addresses[0], 0, backlog=4096)
        http_port = http.sockets[0].getsockname()[1]
        await loop.create_server(lambda: _Http(response), addresses[1:], http_port, backlog=4096)
        holder: list[_Rig] = []
        store = await loop.create_server(lambda: _Server(holder[0], StoreConnection), "127.0.0.1", 0)
        store_addr = "127.0.0.1:%d" % store.sockets[0].getsockname()[1]
        holder.append(_Rig(pages, http_port, store_addr))
        urls = await loop.create_server(lambda: _Server(holder[0], ControlConnection), "127.0.0.1", 0)
        ports.put((urls.sockets[0].getsockname()[1], http_port))
        await asyncio.Event().wait()

    uvloop.run(main())


# -- the spider (this process) ---------------------------------------------------


class CallCounter:
    """Python calls by function, and entries into Python from C (see the top)."""

    def __init__(self) -> None:
        self.calls: collections.Counter = collections.Counter()
        self.entries: collections.Counter = collections.Counter()
        self.open: list[bool] = []  # per open call: is it a C function

    def hook(self, frame, event: str, arg) -> None:
        if event == "call":
            code = frame.f_code
            key = f"{Path(code.co_filename).name}:{code.co_firstlineno}:{code.co_qualname}"
            self.calls[key] += 1
            if not self.open or self.open[-1]:
                self.entries[key] += 1
            self.open.append(False)
        elif event == "c_call":
            self.open.append(True)
        elif self.open:  # return, c_return, c_exception; a frame opened before the hook has none
            self.open.pop()

    def figures(self, pages: int) -> dict:
        def per_page(counter: collections.Counter) -> dict:
            return {key: round(n / pages, 2) for key, n in counter.most_common(COUNT_TOP)}

        return {"python_calls_per_page": round(sum(self.calls.values()) / pages, 1),
                "entries_from_c_per_page": round(sum(self.entries.values()) / pages, 2),
                "entries_by_function": per_page(self.entries), "calls_by_function": per_page(self.calls)}


async def _fetch_only(pages: int, concurrency: int, http_port: int, count_calls: bool) -> dict:
    """The fetch loop alone (spider/fetch.py on spider/curlloop.py): each
    result starts the next URL, nothing is analysed, stored or reported."""
    from wreck.spider.fetch import Fetcher, FetchSettings
    from wreck.protocol.settings import CrawlSettings

    settings = CrawlSettings(store=("127.0.0.1:1",), timeout_update_ms=30_000, timeout_req_ms=30_000,
                             max_doc_size=1 << 20, user_agent="wreck-bench/0.1", allow_net=("127.0.0.0/8",))
    finished = asyncio.Event()
    started = done = 0
    bad = []
    size = len(make_page())

    def start() -> None:
        nonlocal started
        host = f"h{started % HOSTS}.bench.test"
        fetcher.start(started, f"http://{host}:{http_port}/page/{started}.html", host_ip(started))
        started += 1

    def on_result(result) -> None:
        nonlocal done
        done += 1
        if result.http_code != 200 or len(result.body) != size:
            bad.append(result)
        if started < pages:
            start()
        elif done == pages:
            finished.set()

    fetcher = Fetcher(asyncio.get_running_loop(), FetchSettings.from_crawl(settings), on_result)
    for _ in range(min(concurrency, pages)):
        start()
    while done < WARMUP:
        await asyncio.sleep(0.01)
    counter = CallCounter() if count_calls else None
    if counter is not None:
        sys.setprofile(counter.hook)
    t0, r0, start_count = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF), done
    await finished.wait()
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    sys.setprofile(None)
    fetcher.close()
    if bad:
        first = bad[0]
        raise SystemExit(f"{len(bad)} transfers failed, e.g. {first.url}: {first.http_code} {first.aborted} {first.message}")
    counted = done - start_count
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"fetch_only": True, "pages": counted, "wall_s": round(t1 - t0, 3), "cpu_s": round(cpu, 3),
            "cpu_us_per_transfer": round(cpu / counted * 1e6, 1), "pages_per_cpu_s": round(counted / cpu),
            "user_s": round(r1.ru_utime - r0.ru_utime, 3), "sys_s": round(r1.ru_stime - r0.ru_stime, 3),
            **(counter.figures(counted) if counter is not None else {})}


def run(pages: int, concurrency: int, count_calls: bool = False, fetch_only: bool = False) -> dict:
    from wreck.spider.worker import Worker, WorkerOptions

    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Queue()
    rig = ctx.Process(target=_rig_main, args=(pages, ports), daemon=True)
    rig.start()
    port, http_port = ports.get(timeout=30)
    if fetch_only:
        try:
            return uvloop.run(_fetch_only(pages, concurrency, http_port, count_calls))
        finally:
            rig.terminate()
            rig.join(5)

    async def main() -> dict:
        worker = Worker(WorkerOptions(f"127.0.0.1:{port}", SECRET, "bench", concurrency))
        task = asyncio.ensure_future(worker.run())
        while worker.session is None or worker.session.done_count < WARMUP:
            await asyncio.sleep(0.01)
        counter = CallCounter() if count_calls else None
        if counter is not None:
            sys.setprofile(counter.hook)  # this thread only: the loop's
        t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        start_count = worker.session.done_count
        while worker.session.done_count < pages:
            await asyncio.sleep(0.005)
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        sys.setprofile(None)
        counted = worker.session.done_count - start_count
        worker.stop()
        await task
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        wall = t1 - t0
        return {
            "pages": counted, "wall_s": round(wall, 3), "pages_per_s": round(counted / wall),
            "cpu_s": round(cpu, 3), "cpu_s_per_1000_pages": round(cpu / counted * 1000, 3),
            "pages_per_cpu_s": round(counted / cpu),
            "user_s": round(r1.ru_utime - r0.ru_utime, 3), "sys_s": round(r1.ru_stime - r0.ru_stime, 3),
            **(counter.figures(counted) if counter is not None else {}),
        }

    try:
        return uvloop.run(main())
    finally:
        rig.terminate()
        rig.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=30_000)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--no-request-capture", action="store_true",
                        help="do not keep the request headers sent (to measure what keeping them costs)")
    parser.add_argument("--count-calls", action="store_true",
                        help="count Python calls a page, and entries from C, by function (no timing)")
    parser.add_argument("--fetch-only", action="store_true",
                        help="the fetch loop alone: transfers, no analysis, store or urlserver (CPU us a transfer)")
    parser.add_argument("--tag", default="", help="a suffix for the result's file name")
    args = parser.parse_args()
    if args.no_request_capture:
        from wreck.spider import fetch
        fetch.KEEP_REQUEST = False
    figures = run(args.pages, args.concurrency, args.count_calls, args.fetch_only)
    result = {
        "bench": "spider", "date": date.today().isoformat(), "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(), "concurrency": args.concurrency,
        "request_capture": not args.no_request_capture, "page_bytes": PAGE_BYTES, "links_per_page": LINKS + 1, "hosts": HOSTS,
        "hosts_per_ip": HOSTS_PER_IP,
        **figures, "target_pages_per_cpu_s": TARGET_PAGES_PER_CPU_S,
        "meets_target": not args.fetch_only and figures["pages_per_cpu_s"] >= TARGET_PAGES_PER_CPU_S,
    }
    RESULTS.mkdir(exist_ok=True)
    suffix = ("-no-request-capture" if args.no_request_capture else "") + ("-calls" if args.count_calls else "")
    suffix += "-fetch" if args.fetch_only else ""
    suffix += f"-{args.tag}" if args.tag else ""
    path = RESULTS / f"{result['date']}-spider{suffix}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
