# Resident memory of each daemon and spider worker under each resource attack
# of issue 14 (findings 2, 4, 5, 6, 8 and 10's million-link page), against the
# real daemons on loopback. Every attack gets fresh daemons; a sampler thread
# reads each measured process's memory every SAMPLE_S, so a row gives it
# before the attack, its peak during it and after it (once the attack's
# connections are gone, or the crawl that met the hostile page is over).
# The figure bounded is RssAnon, the anonymous resident memory (heap, buffers):
# VmRSS also counts the pages of mapped files, and the store's and the
# urlserver's LMDB maps count there as they are read or written (page cache,
# not memory a peer can make the daemon hold); VmRSS's peak (VmHWM) is given
# beside it. Each row states the bound it must stay under and the named limit
# that bound follows from.
#
# The attack clients are the tests' own (tests/attacks.py, tests/web's
# hostile host, tests/e2e_helpers.Trio); this module only measures.
# Run: python -m bench.attack_memory [--out bench/results/DATE-attack-memory.json] (and .md)
"""RSS before / peak / after of each daemon under each resource attack."""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.procstats import anon_kb, cmdline, descendants, hwm_kb
from tests import attacks
from tests.daemon_helpers import Daemon
from tests.e2e_helpers import Trio
from tests.web import HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec
from wreck.protocol import limits
from wreck.spider import htmlguard, sitemaps
from wreck.storeserver import settings as store_settings
from wreck.urlserver import http as status_http

MiB = 1024  # RSS is in KiB
SAMPLE_S = 0.05
SETTLE_S = 2.0  # after an attack, before RSS is read "after": closed connections are reaped
SLACK_KIB = 16 * MiB  # the allocator's and the interpreter's slack on top of every bound
SECRET = b"attack-bench-secret-0123456789"
# Per connection a daemon holds at most its protocol buffers (a handshake
# line, MAX_LINE while it is the peer's turn) plus a transport and its
# Python objects; 64 KiB is a generous figure for the sum.
PER_CONNECTION_KIB = 64
STORE_BACKLOG = 32 << 20  # --max-backlog-bytes for the store attacks (the default is 256 MiB)
PARTIAL_SENDERS, PARTIAL_SIZE = 12, 8 << 20  # finding 4: connections each one byte short of a record
TINY_SECONDS = 20.0  # finding 4: tiny records sent as fast as the store takes them
SILENT_CONNECTIONS = 600  # finding 6: silent connections opened one after another (fds: see main)
FLOOD_CONNECTIONS = 1500  # finding 8: connections held open on the status listener
CRAWL_TIMEOUT_S = 300.0


@dataclass
class Row:
    attack: str
    finding: str
    daemon: str
    before_mib: float  # RssAnon
    peak_mib: float
    after_mib: float | None  # None: the process had exited (a urlserver whose crawl ended)
    bound_mib: float | None  # peak must stay under this
    vm_hwm_mib: float  # VmRSS's peak, mapped files included
    bound: str  # the named limit the bound follows from
    note: str = ""

    @property
    def within(self) -> bool | None:
        return None if self.bound_mib is None else self.peak_mib <= self.bound_mib


class Sampler:
    """Samples RssAnon of named processes in a thread; the maximum of each,
    and the largest VmHWM seen."""

    def __init__(self, pids: Callable[[], dict[str, int]]) -> None:
        self.pids = pids
        self.peak: dict[str, int] = {}
        self.hwm: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> dict[str, int]:
        return {name: anon_kb(pid) for name, pid in self.pids().items()}

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            for name, pid in self.pids().items():
                self.peak[name] = max(self.peak.get(name, 0), anon_kb(pid))
                self.hwm[name] = max(self.hwm.get(name, 0), hwm_kb(pid))

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _mib(kib: int) -> float:
    return round(kib / MiB, 1)


def _rows(attack: str, finding: str, before: dict, sampler: Sampler, after: dict,
          bounds: dict[str, tuple[float | None, str]], note: str = "") -> list[Row]:
    rows = []
    for name, (extra_mib, why) in bounds.items():
        b = before.get(name, 0)
        bound = None if extra_mib is None else round(b / MiB + extra_mib + SLACK_KIB / MiB, 1)
        peak = max(sampler.peak.get(name, 0), after.get(name) or 0, b)
        gone = after.get(name) is None
        rows.append(Row(attack, finding, name, _mib(b), _mib(peak), None if gone else _mib(after[name]), bound,
                        _mib(sampler.hwm.get(name, 0)), why, note))
    return rows


# -- attacks on the daemons' listeners ------------------------------------------------------


def _daemons(tmp: Path, dns: str, *, http: bool = False, store_args: tuple[str, ...] = ()) -> tuple[Daemon, Daemon]:
    env = {"WRECK_SECRET": SECRET.decode()}
    store = Daemon("wreck.storeserver.cli", ["--data", str(tmp / "store"), "--listen", "127.0.0.1:0", *store_args],
                   tmp / "store.log", env=env)
    url = Daemon("wreck.urlserver.cli", ["--data", str(tmp / "url"), "--listen", "127.0.0.1:0",
                                         "--http", "127.0.0.1:0" if http else "off",
                                         "--store", f"127.0.0.1:{store.port}", "--dns", dns],
                 tmp / "url.log", env=env)  # fmt: skip
    return url, store


def _measure(daemons: dict[str, Daemon], attack: Callable[[Callable[[], None]], Callable[[], None]]) -> tuple[dict, dict, dict]:
    """Run `attack(tick)` (which returns its cleanup) with the daemons sampled."""
    sampler = Sampler(lambda: {name: d.proc.pid for name, d in daemons.items()})
    time.sleep(SETTLE_S)  # start-up allocations done
    before = sampler.now()
    with sampler:
        cleanup = attack(lambda: None)
        time.sleep(SETTLE_S)  # held while the attack's connections stay open
        cleanup()
    time.sleep(SETTLE_S)
    return before, sampler, sampler.now()


def store_tiny_records(tmp: Path, dns: str) -> list[Row]:
    url, store = _daemons(tmp, dns, store_args=("--max-backlog-bytes", str(STORE_BACKLOG)))
    acked = []
    try:
        def attack(tick):
            acked.append(attacks.tiny_records(store.port, SECRET, seconds=TINY_SECONDS, tick=tick))
            return lambda: None  # its connections are closed already

        before, sampler, after = _measure({"storeserver": store}, attack)
    finally:
        url.stop()
        store.stop()
    return _rows("tiny records as fast as taken, 4 connections", "4", before, sampler, after, {
        "storeserver": (STORE_BACKLOG / (1 << 20) + 4 * store_settings.READ_CHUNK / (1 << 20),
                        f"--max-backlog-bytes {STORE_BACKLOG >> 20} MiB (each record counted with RECORD_OVERHEAD "
                        f"{store_settings.RECORD_OVERHEAD} B) + one READ_CHUNK per connection"),
    }, note=f"{acked[0]} records acked in {TINY_SECONDS:g} s")


def store_partial_records(tmp: Path, dns: str) -> list[Row]:
    url, store = _daemons(tmp, dns, store_args=("--max-backlog-bytes", str(STORE_BACKLOG)))
    try:
        def attack(tick):
            clients = attacks.partial_records(store.port, SECRET, senders=PARTIAL_SENDERS, size=PARTIAL_SIZE, tick=tick)
            return lambda: [c.close() for c in clients]

        before, sampler, after = _measure({"storeserver": store}, attack)
    finally:
        url.stop()
        store.stop()
    return _rows(f"{PARTIAL_SENDERS} connections one byte short of {PARTIAL_SIZE >> 20} MiB records", "4",
                 before, sampler, after, {
        "storeserver": (STORE_BACKLOG / (1 << 20) + PARTIAL_SENDERS * store_settings.READ_CHUNK / (1 << 20),
                        f"--max-backlog-bytes {STORE_BACKLOG >> 20} MiB (a record reserves its whole size once its "
                        f"header is in) + one READ_CHUNK per waiting connection"),
    })  # fmt: skip


def silent_connections(tmp: Path, dns: str) -> list[Row]:
    url, store = _daemons(tmp, dns)
    try:
        def attack(tick):
            held = []
            for port in (url.port, store.port):
                for i in range(SILENT_CONNECTIONS // 2):
                    try:
                        held.append(attacks.silent(port))
                    except (OSError, AssertionError):  # evicted before its HELLO was read: the bound at work
                        pass
                    if i % 50 == 0:
                        tick()
            return lambda: [s.close() for s in held]

        before, sampler, after = _measure({"urlserver": url, "storeserver": store}, attack)
    finally:
        url.stop()
        store.stop()
    return _rows(f"{SILENT_CONNECTIONS // 2} silent connections to each server", "6", before, sampler, after, {
        "urlserver": (64 * PER_CONNECTION_KIB / MiB, "--max-unauthenticated 64 connections in their handshake "
                                                     "(one address: half), each at most MAX_LINE buffered"),
        "storeserver": (128 * PER_CONNECTION_KIB / MiB, "--max-unauthenticated 128 connections in their handshake "
                                                        "(one address: half), each at most MAX_LINE buffered"),
    })


def status_flood(tmp: Path, dns: str) -> list[Row]:
    url, store = _daemons(tmp, dns, http=True)
    try:
        port = int(url.wait_for(r"status on http://127\.0\.0\.1:(\d+)")[1])

        def attack(tick):
            held = attacks.status_flood(port, FLOOD_CONNECTIONS, tick=tick)
            return lambda: [s.close() for s in held]

        before, sampler, after = _measure({"urlserver": url}, attack)
    finally:
        url.stop()
        store.stop()
    served = status_http.MAX_CONNECTIONS
    return _rows(f"{FLOOD_CONNECTIONS} connections held on --http", "8", before, sampler, after, {
        "urlserver": (served * (status_http.MAX_HEAD / 1024 + PER_CONNECTION_KIB) / MiB,
                      f"MAX_CONNECTIONS {served} served at once, each at most MAX_HEAD {status_http.MAX_HEAD} B; "
                      f"the rest answered 503 unread and closed"),
    })


# -- hostile pages, crawled by the real trio --------------------------------------------------


def _worker(spider_pid: int) -> int | None:
    """The spider's worker process (forked by its supervisor)."""
    for pid in descendants(spider_pid):
        if pid != spider_pid and "resource_tracker" not in cmdline(pid):
            return pid
    return None


def _crawl_hostile(tmp: Path, attack: str, finding: str, paths: list[str], spec: HostileSpec, extra: list[str],
                   bound_mib: float, why: str) -> list[Row]:
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=1, hostile_spec=spec)) as web:
        evil = f"http://{HOSTILE_NAME}:{web.port}"
        # --delay 2: robots.txt first, then the hostile page two seconds later, so
        # "before" is read with the worker connected and idle.
        trio = Trio(tmp, web, [evil + p for p in paths], [
            "--allow-net", "127.0.0.0/8", "--delay", "2", "--max-total-pages", "3", "--exclude", "/l/", *extra])
        try:
            deadline = time.monotonic() + CRAWL_TIMEOUT_S
            while (worker := _worker(trio.spider.proc.pid)) is None or \
                    "connected to urlserver" not in (tmp / "spider.log").read_text(errors="replace"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the spider did not connect:\n{trio.logs()}")
                time.sleep(0.05)
            pids = {"spider worker": worker, "storeserver": trio.store.proc.pid,
                    "urlserver": trio.urlserver.proc.pid}
            sampler = Sampler(lambda: pids)
            time.sleep(0.5)
            before = sampler.now()
            with sampler:
                code = trio.wait()
            time.sleep(SETTLE_S)
            after = sampler.now()
            del after["urlserver"]  # it has exited: the crawl is over
            requested = [r.target for r in web.log.records() if r.host == HOSTILE_NAME]
        finally:
            trio.stop()
    note = f"urlserver exit {code}; hostile host served {', '.join(sorted(set(requested)))[:120]}"
    return _rows(attack, finding, before, sampler, after, {
        "spider worker": (bound_mib, why),
        "storeserver": (2 * limits.DEFAULT_MAX_DOC_SIZE / (1 << 20), "the record (Max_Doc_Size 16 MiB) received "
                                                                     "and compressed"),
        "urlserver": (None, "not attacked: a DONE carries at most MAX_OUTLINKS links"),
    }, note)  # fmt: skip


def nested_html(tmp: Path, dns: str) -> list[Row]:
    body_mib = (200_000 * 5 + 64) / (1 << 20)
    return _crawl_hostile(tmp, "200,000 nested <div>s (3 KB gzipped)", "2", ["/nested-html"], HostileSpec(), [],
                          4 * body_mib + 32,
                          f"the body held (x4: curl's buffer, the record, the DONE, lexbor's input) + a tree of at "
                          f"most htmlguard.MAX_PARSE_TAGS {htmlguard.MAX_PARSE_TAGS} elements (32 MiB)")


def sitemap_bomb(tmp: Path, dns: str) -> list[Row]:
    return _crawl_hostile(tmp, "sitemap bomb (39 KB gzipped, 10M elements)", "5", ["/target"],
                          HostileSpec(sitemap_bomb=True), ["--sitemaps"], 64,
                          f"elements freed as read, at most sitemaps.MAX_SITEMAP_ELEMENTS "
                          f"{sitemaps.MAX_SITEMAP_ELEMENTS:,} read, at most MAX_SITEMAP_URLS "
                          f"{sitemaps.MAX_SITEMAP_URLS:,} URLs kept (64 MiB)")


def million_links(tmp: Path, dns: str) -> list[Row]:
    page_mib = 15.9
    return _crawl_hostile(tmp, "a page of 1,000,000 links (15 MB)", "10", ["/many-links"], HostileSpec(), [],
                          4 * page_mib + 32,
                          f"the body held (x4, as above; Max_Doc_Size 16 MiB) + at most htmlguard.MAX_PARSE_TAGS "
                          f"{htmlguard.MAX_PARSE_TAGS} elements parsed and limits.MAX_OUTLINKS "
                          f"{limits.MAX_OUTLINKS} links sent (32 MiB)")


ATTACKS = (store_tiny_records, store_partial_records, silent_connections, status_flood, nested_html, sitemap_bomb,
           million_links)


def table(rows: list[Row]) -> str:
    out = ["| attack (finding) | process | RssAnon before | peak | after (MiB) | bound | VmHWM | bound follows from |",
           "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        bound = "-" if r.bound_mib is None else f"{r.bound_mib:.0f}" + ("" if r.within else " EXCEEDED")
        out.append(f"| {r.attack} ({r.finding}) | {r.daemon} | {r.before_mib:.1f} | {r.peak_mib:.1f} | "
                   f"{'exited' if r.after_mib is None else f'{r.after_mib:.1f}'} | {bound} | {r.vm_hwm_mib:.0f} | {r.bound} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    today = datetime.date.today().isoformat()
    parser.add_argument("--out", type=Path, default=Path(f"bench/results/{today}-attack-memory.json"))
    parser.add_argument("--only", nargs="*", help="attack function names to run (default: all)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))  # the flood's sockets
    rows: list[Row] = []
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=1)) as web:
        dns = "%s:%d" % web.dns_address
        for attack in ATTACKS:
            if args.only and attack.__name__ not in args.only:
                continue
            with tempfile.TemporaryDirectory(prefix=f"attack-{attack.__name__}-") as tmp:
                found = attack(Path(tmp), dns)
            rows += found
            print(table(found).split("\n", 2)[2], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"date": today, "sample_s": SAMPLE_S, "slack_mib": SLACK_KIB / MiB,
                                    "rows": [{**asdict(r), "within": r.within} for r in rows]}, indent=1) + "\n")
    note = args.out.with_suffix(".md")  # the table, for the note
    note.write_text(f"RssAnon in MiB, fresh daemons per attack, sampled every {SAMPLE_S:g} s; each bound is "
                    f"RssAnon before + what the named limit allows + {SLACK_KIB // MiB} MiB slack "
                    f"(`make bench-attacks`, {today}).\n\n{table(rows)}\n")
    print(table(rows))
    print(f"written {args.out} and {note}")


if __name__ == "__main__":
    main()
