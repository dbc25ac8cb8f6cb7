# A spider worker's Python per page, without sockets: the path from a
# finished transfer to its DONE (issue 16). Pages of a generated web
# (bench/webgen.py, under --web) are handed to a real UrlSession as
# FetchResults with an nginx-like header block; each goes through
# UrlSession._analyse (htmlguard, report: outcome, outlinks, record), a store
# stand-in that encodes the record and acks at once, and the DONE encoded by
# a real ControlConnection with the links COMMITTED made known left out
# (sentlinks.py). Fetching (libcurl) and the sockets are not in it: the quick
# crawl bench measures those. With --pack the store stand-in packs each
# record as a spider does once its store gave it a dictionary
# (spider/docpack.py: zstd at the store's default level with a dictionary
# trained as the store trains one, from the web's first pages, and the body's
# SHA-256), as make bench's workers do for nearly every page. The least of
# --repeat passes counts.
# The heap is held: glibc's trim and mmap thresholds are fixed here
# (--trimming-heap leaves glibc's defaults). Alone in its process, this
# bench gave its heap's top back to the kernel after nearly every page and
# took it again (1,170 brk for 1,000 pages, 5 page faults a page), which
# cost 15-25 % of its CPU time depending on the heap's layout at its start
# (two identical trees measured 187 and 286 us a page). A worker in a crawl
# does far less of it (strace -c of one in the quick crawl bench: 64 brk for
# about 300 transfers), and the same thresholds in the workers changed
# neither their CPU nor their kernel time a page in crawl pairs
# (bench/results/2026-11-25-s11-page11.md).
# The SHA-256 of every record's and every DONE's octets of one more pass,
# not timed, is printed too: a change to this path must leave both the same.
# Run: python -m bench.page_path --web /tmp/wreck-bench/web-100x10000
"""CPU us a page of the per-page Python path of a spider worker."""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import hashlib
import json
import time
from pathlib import Path

import uvloop
import zstandard as zstd

from wreck.protocol import AckResult, Assignment, ControlConnection, Dictionary, Role
from wreck.protocol.record import encode_record
from wreck.spider.docpack import Packer
from wreck.spider.fetch import FetchResult
from wreck.spider.urlclient import UrlSession
from wreck.storeserver import compress, settings as store_settings
from bench.zstdattach import DictCompressor
from tests.spider_helpers import crawl_settings

HEAD = (b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 24 Nov 2026 15:40:00 GMT\r\n"
        b"Content-Type: text/html\r\nContent-Length: %d\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\n"
        b"Connection: keep-alive\r\nETag: \"6743f0a0-9470\"\r\nAccept-Ranges: bytes\r\n\r\n")
REQUEST = (b"GET /p/1.html HTTP/1.1\r\nHost: w0001.bench.test:18530\r\nUser-Agent: wreck\r\n"
           b"Accept: text/html\r\nAccept-Encoding: deflate, gzip, br, zstd\r\n\r\n")
COMMIT_EVERY = 64  # DONEs a COMMITTED names at once, as a urlserver's commit does
# glibc's mallopt() parameters (malloc.h) and the values held (see the top)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
TRIM_THRESHOLD, MMAP_THRESHOLD = 8 << 20, 1 << 20


class Store:
    """Stands in for StoreClient: encodes each record, acks it at once."""

    connected = True

    def __init__(self, packer: Packer | None = None) -> None:
        self.unacked: dict = {}
        self.on_up: set = set()
        self.octets = 0
        self.digest = hashlib.sha256()
        self.hashing = False
        self.packer = packer

    def submit(self, record, on_ack) -> None:
        data = encode_record(record if self.packer is None else self.packer.pack(record))
        self.octets += len(data)
        if self.hashing:
            self.digest.update(data)
        on_ack(AckResult.STORED)


class Urlserver:
    """Stands in for the urlserver's Peer: DONEs encoded by a real connection."""

    def __init__(self) -> None:
        server = ControlConnection(Role.SERVER, secret=b"", nonce=b"\x11" * 32)
        self.conn = ControlConnection(Role.CLIENT, secret=b"", nonce=b"\x22" * 32, name="bench",
                                      caps=("after", "record", "committed"))
        self.conn.receive_data(server.hello())
        self.conn.next_event()
        server.receive_data(self.conn.authenticate())
        server.next_event()
        self.conn.receive_data(server.welcome({}))
        self.conn.next_event()
        self.on_event = lambda event: None
        self.closed = asyncio.get_running_loop().create_future()
        self.is_open = True
        self.octets = 0
        self.digest = hashlib.sha256()
        self.hashing = False

    def send(self, event) -> int:
        data = self.conn.send(event)
        self.octets += len(data)
        if self.hashing:
            self.digest.update(data)
        return len(data)


def load_pages(web: Path, hosts: int, per_host: int) -> list[tuple[str, bytes]]:
    """(URL, body) of the first pages of the first hosts of a generated web."""
    pages = []
    for host in sorted((web / "www").iterdir())[:hosts]:
        for path in sorted(host.rglob("*.html"))[:per_host]:
            pages.append((f"http://{host.name}:18530/{path.relative_to(host)}", path.read_bytes()))
    return pages


def hold_heap() -> None:
    """glibc's trim and mmap thresholds fixed, so the heap's top is not given back after each page (the top)."""
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    if mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1 or mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1:
        raise SystemExit("mallopt() refused the heap thresholds: run with --trimming-heap")


def store_packer(pages: list[tuple[str, bytes]], attach: bool = False,
                 level: int = store_settings.DEFAULT_ZSTD_LEVEL) -> Packer:
    """A Packer with the dictionary a store trains from these pages (its
    first DICT_TRAIN_DOCS documents, storeserver/compress.py's parameters)
    at `level` (a store's --zstd-level, given to its spiders with the
    dictionary); `attach`: its frames made by bench/zstdattach.py,
    the dictionary attached at each frame rather than copied (other bytes of
    the same size: section 3 of bench/results/2026-11-25-s11-page11.md)."""
    samples = [(HEAD % len(body) + body)[: store_settings.DICT_SAMPLE_BYTES]
               for _, body in pages[: store_settings.DICT_TRAIN_DOCS]]
    trained = zstd.train_dictionary(store_settings.DICT_SIZE, samples, k=compress._TRAIN_K, d=compress._TRAIN_D,
                                    accel=compress._TRAIN_ACCEL, threads=1)
    packer = Packer(Dictionary(1, level, trained.as_bytes()))
    if attach:
        packer._cctx = DictCompressor(packer.level, trained.as_bytes())  # its compress(), the same call
        if not packer._cctx.attached:
            raise SystemExit("--attach: zstandard's cffi binding is missing here")
    return packer


async def measure(pages: list[tuple[str, bytes]], count: int, repeat: int, packer: Packer | None = None) -> dict:
    urlserver, store = Urlserver(), Store(packer)
    session = UrlSession(urlserver, crawl_settings(), [store], concurrency=10**9)
    session.fetcher.start = lambda *args, **kwargs: None  # no transfer: the result is handed in below
    session._refill = lambda: None  # no GET: assignments are handed in below
    trans_id = 0
    best = float("inf")
    for rnd in range(repeat + 1):
        if rnd == repeat:  # the pass that hashes, not timed (the top)
            done_octets, record_octets = urlserver.octets, store.octets
            urlserver.hashing = store.hashing = True
        start = time.process_time()
        for i in range(count):
            url, body = pages[i % len(pages)]
            trans_id += 1
            session._on_event(Assignment(trans_id, trans_id, "127.1.0.1", url.split("/")[2], url))
            session._on_result(FetchResult(trans_id, url, 5, 0, "", 200, True, None, HEAD % len(body), body,
                                           b"text/html", request=REQUEST, ip="127.1.0.1"))
            session._analyse_batch()
            if trans_id % COMMIT_EVERY == 0:
                session.sent_links.committed(tuple(range(trans_id - COMMIT_EVERY + 1, trans_id + 1)))
        if rnd < repeat:
            best = min(best, time.process_time() - start)
    done = repeat * count
    return {"pages": count, "repeat": repeat, "cpu_us_per_page": round(1e6 * best / count, 1),
            "done_octets_per_page": round(done_octets / done), "record_octets_per_page": round(record_octets / done),
            "dones_sha256": urlserver.digest.hexdigest(), "records_sha256": store.digest.hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--web", type=Path, required=True, help="a web bench/crawl.py generated (its web-HxP dir)")
    parser.add_argument("--pages", type=int, default=2000, help="pages a pass")
    parser.add_argument("--repeat", type=int, default=3, help="passes; the least CPU time counts")
    parser.add_argument("--pack", action="store_true", help="records packed as for a store with a dictionary "
                        "(zstd and the body's SHA-256, spider/docpack.py)")
    parser.add_argument("--attach", action="store_true", help="with --pack: zstd's dictionary attached at each "
                        "frame, not copied (bench/zstdattach.py)")
    parser.add_argument("--level", type=int, default=store_settings.DEFAULT_ZSTD_LEVEL,
                        help="with --pack: the store's zstd level (its --zstd-level; negative: zstd's fast levels)")
    parser.add_argument("--hosts", type=int, default=50, help="hosts of the web whose pages are read")
    parser.add_argument("--per-host", type=int, default=60, help="pages read a host (its first, by path)")
    parser.add_argument("--trimming-heap", action="store_true", help="glibc's default heap thresholds (the top)")
    args = parser.parse_args()
    if not args.trimming_heap:
        hold_heap()
    pages = load_pages(args.web, args.hosts, args.per_host)
    packer = store_packer(pages, args.attach, args.level) if args.pack else None
    print(json.dumps(uvloop.run(measure(pages, args.pages, args.repeat, packer))))


if __name__ == "__main__":
    main()
