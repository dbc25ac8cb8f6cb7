# The urlserver's engine alone on one core, driven the way server.py drives
# it, with a scripted fake spider in-process (no sockets, so the figures are
# the engine's, not the kernel's): discovered links ingested per second
# (normalise, fingerprint, Bloom filter, scope, LMDB puts), URLs handed out
# per second (politeness heap, LMDB pop + claim, commit per batch, DONE),
# all per CPU-second of the process (time.process_time(): the engine is one
# thread, and a busy machine must not make it look slower than it is),
# and resident memory per known URL (anonymous RSS, plus the Bloom filter's
# words, which are a mapped file's pages (seen.py); LMDB's mapped pages are
# the kernel's page cache, reported apart as file RSS), and how long a crawl
# of that size takes to open after a clean stop and after a kill -9 (a child
# killed while it inserts a page past a commit, then a fresh open), each
# from a cold page cache (the data directory's pages dropped first, as
# after a reboot or when the state is larger than RAM, so the two opens are
# measured alike).
#
# A page's links: --site-links of them (default 0.8) on the page's own host,
# the rest on hosts spread over the whole web, as on real sites where most
# links stay on the site; --site-links 0 is every link on another host (the
# layout of the benchmarks before 2026-11-24, the worst case for any
# host-local key). The links are made a commit's worth at a time outside the
# timed part (100 million URL strings would not fit in RAM).
# Run: python -m bench.frontier_bench [--quick] [--hosts N] [--urls N] [--site-links F]
"""Frontier throughput and memory: 100,000 hosts, 10 million known URLs."""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from wreck import collector
from wreck.protocol import Done, Specific, Status
from wreck.urlserver import robots as r
from wreck.urlserver import lineage
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.db import fingerprint
from wreck.urlserver.dns import Resolution
from wreck.urlserver.robotsstate import RobotsEvent
from wreck.urlserver.settings import Settings

# Every host of the bench's web is under example.com: the domain caps
# (urlserver/domainbudget.py) are off, as --max-pages is, where this WRECK has them
UNCAPPED = {f: 0 for f in ("max_hosts_per_domain", "max_pages_per_domain") if f in Settings.__dataclass_fields__}

RESULTS = Path(__file__).parent / "results"
TARGETS = {"handouts_per_s": 20_000, "links_per_s": 200_000, "bytes_per_url": 16}  # issue 16
LINKS_PER_PAGE = 100
PAGES_PER_COMMIT = 100  # as one busy pump round of the server
HANDOUT_BATCH = 1000  # assignments per commit, as one pump round under load
PATH = lineage.extend(lineage.SEED_PATH, lineage.LINK)  # a link of a seed's page, as crawl.py extends it


def rss() -> dict[str, int]:
    fields = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def io_written() -> int:
    """Bytes this process has written (/proc/self/io wchar): the LMDB commits' pages."""
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("wchar:"))


class Web:
    """The generated web: link `i` is the (i % 100)-th link of page i // 100,
    and every link is a distinct URL."""

    def __init__(self, hosts: int, site_links: float) -> None:
        self.hosts = hosts
        self.site = round(site_links * LINKS_PER_PAGE)  # of a page's links, on its own host

    def link(self, i: int) -> str:
        page, j = divmod(i, LINKS_PER_PAGE)
        if j < self.site:
            return f"http://h{page % self.hosts}.example.com/p/{page}/{j}?x=1"
        # another host, far from the page's own in any order of host names
        return f"http://h{(page * 7919 + j * 104729) % self.hosts}.example.com/x/{page}/{j}?x=1"

    def pages(self, start: int, stop: int) -> list[list[str]]:
        return [[self.link(i) for i in range(n, min(n + LINKS_PER_PAGE, stop))]
                for n in range(start, stop, LINKS_PER_PAGE)]

    def found_on(self, start: int, stop: int) -> list[tuple[str, bytes]]:
        """The URL and fingerprint of the page each of pages(start, stop) was
        found on: page n is link n, a URL known before its links are (but
        page 0's), so a hand-out reads its via's record as the server's does
        (Crawl.lineage) and the figure pays for that read."""
        return [(url, fingerprint(url)) for url in map(self.link, range(start // LINKS_PER_PAGE,
                                                                       -(-stop // LINKS_PER_PAGE)))]


def ingest(crawl: Crawl, web: Web, urls: int, progress: bool = False,
           profile: cProfile.Profile | None = None, first: int = 0,
           pages_per_commit: int = PAGES_PER_COMMIT) -> tuple[float, int]:
    """Discover links `first` to `urls` of the web, a page's outlinks at a
    time as a DONE delivers them (Frontier.discover_links), with a commit
    every `pages_per_commit` pages: (CPU seconds of the engine alone, links
    timed). With `profile`, the last tenth (a commit at least) is profiled
    instead of timed."""
    collector.settle()  # as urlserver/cli.py does once the crawl is open (wreck/collector.py)
    fr = crawl.frontier
    step = LINKS_PER_PAGE * pages_per_commit
    spent, timed = 0.0, 0
    for start in range(first, urls, step):
        pages = web.pages(start, min(start + step, urls))
        found_on = web.found_on(start, min(start + step, urls))  # the page's fp: the claim's in the server
        profiled = profile is not None and start >= urls - max((urls - first) // 10, step)  # a commit at least
        if profiled:
            profile.enable()
        t0 = time.process_time()
        for page, (base, via) in zip(pages, found_on):
            fr.discover_links(page, depth=1, base=base, via=via, path=PATH)
        crawl.commit()
        if profiled:
            profile.disable()
        else:
            spent += time.process_time() - t0
            timed += sum(map(len, pages))
        if progress and start % (step * 500) == 0 and start > first:
            print(f"{start:,} links, {(start - first) / spent:,.0f}/s", file=sys.stderr, flush=True)
    return spent, timed


def top_functions(profile: cProfile.Profile, count: int = 15) -> list[dict]:
    """The functions that took most of the profiled time, by their own time."""
    stats = pstats.Stats(profile).stats
    total = sum(entry[2] for entry in stats.values()) or 1.0
    rows = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:count]
    return [{"function": f"{Path(file).name}:{line}({name})" if line else name,
             "share_of_own_time": round(entry[2] / total, 3), "calls": entry[1]}
            for (file, line, name), entry in rows]


def duplicates(crawl: Crawl, web: Web, urls: int, count: int) -> float:
    fr = crawl.frontier
    step = max(urls // count, 1)
    known = [web.link(i) for i in range(0, step * count, step)]
    t0 = time.process_time()
    for n in range(0, count, LINKS_PER_PAGE):
        fr.discover_links(known[n:n + LINKS_PER_PAGE], depth=1)
    crawl.commit()
    return time.process_time() - t0


def prepare_hosts(crawl: Crawl) -> None:
    """Every host resolved and its robots.txt known (allow all), as mid-crawl."""
    record = r.RobotsRecord(kind=r.ALLOW_ALL, expires=1e12, why="bench")
    for n, host in enumerate(crawl.frontier.origins.values()):
        host.addr_state = Resolution(f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}", "", 1e12)
        host.robots.move(RobotsEvent.LOADED, r.RobotsRules(record, "wreck"))


def handouts(crawl: Crawl, count: int) -> tuple[float, int]:
    spider = "bench-spider"
    done = 0
    t0 = time.process_time()
    now = time.time()
    while done < count:
        batch = []
        for _ in range(HANDOUT_BATCH):
            a = crawl.take(spider, now)
            if a is None:
                break
            batch.append(a)
        crawl.commit()  # durable before "sending"
        if not batch:
            break
        for a in batch:
            crawl.done(spider, Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1), now)
        done += len(batch)
    crawl.commit()
    return time.process_time() - t0, done


def handouts_only(data: str, count: int, profile: bool) -> dict:
    """Hand out (and answer) the next `count` URLs of the crawl at `data`
    (made by --ingest-only, copied once per tree), timed as in a full run:
    two copies of one ingest give two WRECKs the same hand-outs, run side
    by side and again on the same copies (each run takes the next URLs)."""
    crawl = Crawl.open(Settings(data=data, delay=0.0, ip_concurrency=1_000_000, scope="any", **UNCAPPED,
                                max_pages=10**9, sync=False, http=None))
    prepare_hosts(crawl)
    collector.settle()
    before = os.times()
    hand_s, handed = handouts(crawl, count)
    after = os.times()
    out = {"handouts_per_s": round(handed / hand_s), "handouts_measured": handed, "cpu_s": round(hand_s, 2),
           "user_s": round(after.user - before.user, 2), "system_s": round(after.system - before.system, 2)}
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        handouts(crawl, count // 4)
        prof.disable()
        out["profile_handouts"] = top_functions(prof)
    crawl.close()
    return out


def drop_cache(data: str) -> None:
    """Drop the page cache of the files under `data` (written back first)."""
    os.sync()
    for path in Path(data).iterdir():
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def measure_open(data: str) -> None:
    """Child process: open a crawl of this size, from a cold page cache, and
    print its anonymous RSS growth."""
    from wreck.urlserver import queuebounds
    from wreck.urlserver.frontier import Frontier
    rebuilds = []  # whether this open rebuilt the seen-set from LMDB's keys or found it whole
    rebuild = Frontier._rebuild_seen
    Frontier._rebuild_seen = lambda self: (rebuilds.append(1), rebuild(self))[1]
    bounds = []  # whether this open read the queues' bounds saved at a clean stop
    take = queuebounds.take
    queuebounds.take = lambda *args: (lambda words: (bounds.append(words is not None), words)[1])(take(*args))
    drop_cache(data)
    before = rss()
    t0, c0 = time.perf_counter(), time.process_time()
    crawl = Crawl.open(Settings(data=data, delay=0.0, scope="any", **UNCAPPED, sync=False, http=None))
    open_s, open_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    prepare_hosts(crawl)
    after = rss()
    print(json.dumps({"open_s": round(open_s, 2), "open_cpu_s": round(open_cpu_s, 2),
                      "anon": after.get("RssAnon", after["VmRSS"]) - before.get("RssAnon", before["VmRSS"]),
                      "file": after.get("RssFile", 0), "bloom": crawl.frontier.seen.memory_bytes,
                      "bloom_mapped": getattr(crawl.frontier.seen, "mapped", False), "rebuilt": bool(rebuilds),
                      "bounds_saved": any(bounds),
                      "hosts": len(crawl.frontier.origins)}))
    crawl.close()


def kill_mid_insert(data: str, urls: int, hosts: int, site_links: float) -> None:
    """Child process: open the crawl, add a commit's worth of new links past
    `urls`, then kill -9 itself while adding a page more."""
    crawl = Crawl.open(Settings(data=data, delay=0.0, scope="any", **UNCAPPED, sync=False, http=None))
    web = Web(hosts, site_links)
    step = LINKS_PER_PAGE * PAGES_PER_COMMIT
    for page, (base, via) in zip(web.pages(urls, urls + step), web.found_on(urls, urls + step)):
        crawl.frontier.discover_links(page, depth=1, base=base, via=via, path=PATH)
    crawl.commit()
    stop = urls + step + LINKS_PER_PAGE
    (base, via), = web.found_on(urls + step, stop)
    crawl.frontier.discover_links(web.pages(urls + step, stop)[0], depth=1, base=base, via=via, path=PATH)
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 hosts, 200,000 URLs")
    parser.add_argument("--hosts", type=int)
    parser.add_argument("--urls", type=int)
    parser.add_argument("--handouts", type=int, default=200_000)
    parser.add_argument("--sync", action="store_true", help="fsync every commit")
    parser.add_argument("--site-links", type=float, default=0.8,
                        help="share of a page's links on its own host (0: all on other hosts)")
    parser.add_argument("--progress", action="store_true", help="links/s so far on stderr")
    parser.add_argument("--profile", action="store_true",
                        help="profile the last tenth of the ingest (cProfile) and the hand-outs, into the result")
    parser.add_argument("--ingest-only", metavar="DIR",
                        help="only ingest, into DIR, and keep it: its opens are then timed with --measure-open DIR "
                             "(after a clean stop) and --kill-mid-insert DIR then --measure-open DIR, by any "
                             "WRECK's copy of this file (the 30M reopen in bench/results/2026-11-24-frontier7.md)")
    parser.add_argument("--handouts-only", metavar="DIR",
                        help="only time --handouts hand-outs from the crawl in DIR (made by --ingest-only; it is "
                             "changed: copy it first), with any WRECK's engine: python PATH/TO/frontier_bench.py "
                             "run from that WRECK's venv (bench/results/2026-11-24-s9-handout9.md)")
    parser.add_argument("--more", type=int, metavar="N",
                        help="with --ingest-only DIR holding --urls links already: ingest the next N links into "
                             "it (links/s of a frontier that size: copy DIR once per tree and run each tree's "
                             "python on this file side by side; with --profile, cProfile of their last tenth; a fresh process "
                             "first faults in the pages it touches: run a warm-up round, bench/results/"
                             "2026-11-24-s10-links10.md)")
    parser.add_argument("--pages-per-commit", type=int, default=PAGES_PER_COMMIT, metavar="N",
                        help="pages ingested between two commits (the server commits once a pump, whatever "
                             "arrived meanwhile: bench/results/2026-11-25-s11-links11.md)")
    parser.add_argument("--measure-open", help=argparse.SUPPRESS)
    parser.add_argument("--kill-mid-insert", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_open:
        return measure_open(args.measure_open)
    if args.handouts_only:
        return print(json.dumps(handouts_only(args.handouts_only, args.handouts, args.profile)))
    hosts = args.hosts or (1_000 if args.quick else 100_000)
    urls = args.urls or (200_000 if args.quick else 10_000_000)
    if args.kill_mid_insert:
        return kill_mid_insert(args.kill_mid_insert, urls, hosts, args.site_links)
    tmp = args.ingest_only or tempfile.mkdtemp(prefix="wreck-frontier-bench-")
    if args.ingest_only:
        settings = Settings(data=tmp, delay=0.0, scope="any", **UNCAPPED, max_pages=10**9, sync=args.sync, http=None)
        crawl = Crawl.open(settings)
        first, stop = (urls, urls + args.more) if args.more else (0, urls)
        profile = cProfile.Profile() if args.profile and args.more else None
        before, written = os.times(), io_written()
        ingest_s, counted = ingest(crawl, Web(hosts, args.site_links), stop, args.progress, profile, first,
                                   args.pages_per_commit)
        after, written = os.times(), io_written() - written
        crawl.close()
        out = {"known_urls": stop, "hosts": hosts, "links_per_s": round(counted / ingest_s), "links_timed": counted,
               "user_s": round(after.user - before.user, 2), "system_s": round(after.system - before.system, 2),
               "bytes_written_per_link": round(written / (stop - first)), "pages_per_commit": args.pages_per_commit}  # the commits' page writes (LMDB's)
        if profile is not None:
            out["profile_links"] = top_functions(profile, 25)
        return print(json.dumps(out))
    try:
        settings = Settings(data=tmp, delay=0.0, ip_concurrency=1_000_000, scope="any", **UNCAPPED,
                            max_pages=10**9, sync=args.sync, http=None)
        crawl = Crawl.open(settings)
        web = Web(hosts, args.site_links)
        ingest_profile = cProfile.Profile() if args.profile else None
        ingest_s, counted = ingest(crawl, web, urls, args.progress, ingest_profile, pages_per_commit=args.pages_per_commit)
        dup_s = duplicates(crawl, web, urls, 100_000)
        crawl.close()
        # Hand-outs from a fresh open, before the opens below drop the page cache.
        crawl = Crawl.open(settings)
        prepare_hosts(crawl)
        collector.settle()  # as urlserver/cli.py does once the crawl is open (wreck/collector.py)
        hand_s, handed = handouts(crawl, min(args.handouts, urls))
        handout_profile = None
        if args.profile and handed < urls:  # more hand-outs, profiled apart from the timed ones
            handout_profile = cProfile.Profile()
            handout_profile.enable()
            handouts(crawl, min(args.handouts // 4, urls - handed))
            handout_profile.disable()
        crawl.close()
        # The memory a resumed crawl of this size holds, in a fresh process.
        child = subprocess.run([sys.executable, "-m", "bench.frontier_bench", "--measure-open", tmp],
                               capture_output=True, text=True, check=True)
        memory = json.loads(child.stdout)
        # The same after a kill -9 mid-insert.
        subprocess.run([sys.executable, "-m", "bench.frontier_bench", "--kill-mid-insert", tmp, "--urls", str(urls),
                        "--hosts", str(hosts), "--site-links", str(args.site_links)], check=False)
        child = subprocess.run([sys.executable, "-m", "bench.frontier_bench", "--measure-open", tmp],
                               capture_output=True, text=True, check=True)
        reopened = json.loads(child.stdout)
        rebuilt_open_s = reopened["open_s"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    anon = memory["anon"] + (memory["bloom"] if memory.get("bloom_mapped") else 0)
    result = {
        "date": date.today().isoformat(),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "hosts": hosts,
        "known_urls": urls,
        "site_links": args.site_links,
        "sync": args.sync,
        "links_per_s": round(counted / ingest_s),
        "duplicate_links_per_s": round(100_000 / dup_s),
        "handouts_per_s": round(handed / hand_s),
        "handouts_measured": handed,
        "bytes_per_url": round(anon / urls, 1),
        "open_s_after_clean_stop": memory["open_s"],
        "open_s_after_kill": rebuilt_open_s,
        "open_cpu_s_after_clean_stop": memory["open_cpu_s"],  # the process's CPU: less noisy than the wall clock
        "open_cpu_s_after_kill": reopened["open_cpu_s"],
        "open_cold": True,  # both opens from a cold page cache (drop_cache)
        "open_used_saved_bounds": [memory["bounds_saved"], reopened["bounds_saved"]],  # clean stop, kill -9
        "rss_anon_bytes": memory["anon"],
        "rss_file_bytes": memory["file"],
        "bloom_bytes": memory["bloom"],
        "targets": TARGETS,
    }
    if ingest_profile is not None:
        result["profile_links"] = top_functions(ingest_profile)
    if handout_profile is not None:
        result["profile_handouts"] = top_functions(handout_profile)
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    name = f"{result['date']}-frontier-{urls / 1e6:g}M-site{args.site_links}.json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
