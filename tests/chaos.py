# `make chaos` / `python -m tests.chaos`: kill -9 the crawler's parts at random
# moments during a crawl of the local test web, restart them, and check that
# nothing was lost.
#
# The store server, the urlserver and the spider run as separate processes
# (not wreck-crawl), each on a fixed loopback port, so any one can be killed
# and started again on the same --data and the others find it. A seeded RNG
# picks each victim (urlserver, store, one spider worker, the whole spider)
# and each moment: after the previous kill has recovered, wait for a random
# number of new documents plus a random fraction of a second, then SIGKILL
# (with --overlap P, the next kill comes at once with chance P, before the
# victim has recovered). A killed daemon is restarted at once; a killed
# spider worker is restarted by its own supervisor, as in production.
#
# At the end the store (ReadStore), the urlserver's LMDB and the test web's
# request log are compared with the web's truth: every reachable, allowed
# page stored exactly once, no doc id given to two URLs, no claim or
# unfinished URL left, the crawl finished. Recovery is timed per kill: from
# the SIGKILL until a new document is committed after the victim is back
# and the web has seen a request made after it came back.
"""Chaos: kill -9 components mid-crawl, restart them, prove nothing is lost."""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import json
import os
import random
import signal
import socket
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import lmdb

from wreck.storeserver.store import ReadStore, StoreError
from tests.web import RunningWeb, SiteSpec, compute_truth
from tests.web.truth import normalize
from wreck.local.children import Child
from wreck.urlserver.db import Db, UrlRecord
from wreck.urlserver.urlstate import UrlState

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
VICTIMS = ("urlserver", "store", "worker", "spider")
POLL_S = 0.05  # how often progress is sampled while waiting
STALL_S = 120.0  # no new document for this long: the crawl is stuck, stop and report
WEB_START_S = 600.0  # generating a 100,000-page web takes a while
FINISH_S = 600.0  # after the last kill, the crawl must end within this
# Crawl settings that keep the test web's slow cases short (robots.txt 5xx
# retries after 0.05 s, doubling) while keeping politeness on.
URLSERVER_ARGS = ["--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05",
                  "--robots-retry", "0.05", "--retry-delay", "0.2", "--max-retries", "2"]
CRAWL_DELAY_S = 0.05  # the Crawl-delay the test web's crawl-delay hosts ask for


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChaosSpec:
    """One chaos run: the web, the crawl, and the kills."""

    hosts: int = 640  # x 200 pages: 99,999 pages to store (the issue asks 100,000)
    pages_per_host: int = 200
    kills: int = 50
    seed: int = 7
    victims: tuple[str, ...] = VICTIMS
    procs: int = 2  # spider workers; two, so a worker kill leaves one fetching
    concurrency: int = 50
    jitter_s: float = 0.5  # extra random wait before a kill, below a second
    pages_between_kills: int | None = None  # max new docs between kills; None: spread over the crawl
    every_victim: bool = False  # take victims in shuffled rounds, so each kind dies (short runs)
    overlap: float = 0.0  # chance that the next kill comes before this one has recovered


@dataclasses.dataclass
class Kill:
    victim: str
    at_s: float  # seconds into the crawl
    docs_before: int
    restarted_s: float | None = None  # kill -> victim running again (listening / worker back)
    recovered_s: float | None = None  # kill -> a new document committed after it came back
    overlapped: bool = False  # the next kill came before this one recovered (not timed)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _is_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"resource_tracker" not in f.read()  # the spider's children are its forked workers
    except OSError:
        return False


class Crawl:
    """The three daemons as separate processes over one test web."""

    def __init__(self, tmp: Path, web: RunningWeb, seeds: list[str], spec: ChaosSpec, *,
                 store_data: Path | None = None, frontier_data: Path | None = None,
                 urlserver_args: tuple[str, ...] = ()) -> None:
        self.tmp, self.seeds, self.spec = tmp, seeds, spec
        self.store_data = store_data or tmp / "store"
        self.frontier_data = frontier_data or tmp / "frontier"
        self.urlserver_args = [*URLSERVER_ARGS, *urlserver_args]
        dns_ip, dns_port = web.dns_address
        self.dns = f"{dns_ip}:{dns_port}"
        # Fixed ports: a restarted daemon must be found where the others look.
        self.store_listen = f"127.0.0.1:{_free_port()}"
        self.url_listen = f"127.0.0.1:{_free_port()}"
        self.store = self.start_store()
        self.urlserver = self.start_urlserver()
        self.spider = self.start_spider()

    def _child(self, name: str, module: str, args: list[str]) -> Child:
        return Child(name, module, args, self.tmp / f"{name}.log")

    def start_store(self) -> Child:
        child = self._child("storeserver", "wreck.storeserver.cli", ["--data", str(self.store_data),
                                                               "--listen", self.store_listen])
        child.read_line("storeserver listening on ")
        child.drain()
        return child

    def start_urlserver(self) -> Child:
        child = self._child("urlserver", "wreck.urlserver.cli", [
            *self.seeds, *self.urlserver_args, "--data", str(self.frontier_data), "--store", self.store_listen,
            "--dns", self.dns, "--listen", self.url_listen, "--http", "off", "--exit-when-done",
        ])  # fmt: skip
        child.read_line("urlserver listening on ")
        child.drain()
        return child

    def start_spider(self) -> Child:
        return self._child("spider", "wreck.spider.cli", ["--connect", self.url_listen, "--procs", str(self.spec.procs),
                                                    "--concurrency", str(self.spec.concurrency)])

    def workers(self) -> list[int]:
        return [p for p in _children_of(self.spider.proc.pid) if _is_worker(p)]

    def kill(self, victim: str, rng: random.Random) -> None:
        """SIGKILL `victim` and start it again (a worker: its supervisor does)."""
        if victim == "worker":
            workers = self.workers()
            if workers:
                os.kill(rng.choice(workers), signal.SIGKILL)
            return
        child = {"urlserver": self.urlserver, "store": self.store, "spider": self.spider}[victim]
        if victim == "spider":
            os.killpg(child.proc.pid, signal.SIGKILL)  # the supervisor and its workers
        else:
            child.proc.kill()
        child.proc.wait()
        if victim == "urlserver":
            self.urlserver = self.start_urlserver()
        elif victim == "store":
            self.store = self.start_store()
        else:
            self.spider = self.start_spider()

    def stop(self) -> None:
        for child in (self.spider, self.urlserver, self.store):  # the store drains last
            child.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {c.name}\n{c.tail()}" for c in (self.store, self.urlserver, self.spider))


class Progress:
    """Documents committed so far, read from the store as wreck-dump would."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.reader: ReadStore | None = None

    def docs(self) -> int:
        if self.reader is None:
            try:
                self.reader = ReadStore(self.data)
            except StoreError:
                return 0
        return int(self.reader.meta_info().get("docs", 0))

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


class ChaosFailed(Exception):
    """The crawl stalled or a daemon died on its own; the message has the logs."""


def run(spec: ChaosSpec, tmp: Path, *, say=lambda msg: None) -> dict:
    """Crawl the test web under `spec`'s kills; the figures (see verify())."""
    rng = random.Random(spec.seed)
    site_spec = SiteSpec(hosts=spec.hosts, pages_per_host=spec.pages_per_host, hostile=False, seed=spec.seed,
                         crawl_delay=CRAWL_DELAY_S)
    say(f"generating the test web: {spec.hosts} hosts x {spec.pages_per_host} pages")
    with RunningWeb(site_spec, start_timeout=WEB_START_S) as web:
        seeds = [web.url("h0.wreck.test")]
        truth = compute_truth(web.site, seeds, scope="any")
        say(f"truth: {len(truth.fetched)} pages to store; crawling with {spec.kills} kills")
        crawl = Crawl(tmp, web, seeds, spec)
        progress = Progress(tmp / "store")
        kills: list[Kill] = []
        started = time.monotonic()
        try:
            finished = _chaos(crawl, web, progress, spec, rng, len(truth.fetched), kills, started, say)
            elapsed = time.monotonic() - started
        finally:
            t = time.monotonic()
            crawl.stop()
            say(f"stopped in {time.monotonic() - t:.1f} s")
            progress.close()
        records = web.log.records()
    result = verify(tmp / "store", tmp / "frontier", truth, records)
    result.update(finished=finished and result["crawl_finished"], elapsed_s=round(elapsed, 1),
                  kills=[dataclasses.asdict(k) for k in kills], spec=dataclasses.asdict(spec))
    result.update(_summary(kills))
    return result


def _chaos(crawl: Crawl, web: RunningWeb, progress: Progress, spec: ChaosSpec, rng: random.Random,
           pages: int, kills: list[Kill], started: float, say) -> bool:
    """Kill until spec.kills are done or the crawl ends; True once it ended (exit 0)."""
    rounds: list[str] = []
    hurry = False
    while len(kills) < spec.kills:
        docs = progress.docs()
        # Spread the kills over what is left: wait for a random share of the
        # remaining documents (half a fair share on average, as recovery
        # itself lets documents through).
        step = spec.pages_between_kills or max(1, (pages - docs) // (spec.kills - len(kills) + 1))
        target = docs + rng.randint(1, step)
        if not hurry and not _wait(crawl, lambda: progress.docs() >= target):
            return True  # finished before this kill
        time.sleep(rng.uniform(0, spec.jitter_s))
        if crawl.urlserver.proc.poll() == 0:
            return True
        if spec.every_victim:
            if not rounds:
                rounds = rng.sample(spec.victims, len(spec.victims))
            victim = rounds.pop()
        else:
            victim = rng.choice(spec.victims)
        kill = Kill(victim, round(time.monotonic() - started, 3), progress.docs())
        t0 = time.monotonic()
        before_workers = set(crawl.workers())
        crawl.kill(victim, rng)
        hurry = kill.overlapped = rng.random() < spec.overlap
        if hurry:
            kills.append(kill)
            say(f"kill {len(kills)}: {victim} at {kill.at_s:.1f} s, {kill.docs_before} docs; the next one at once")
            continue
        if victim == "worker":
            back = _wait(crawl, lambda: set(crawl.workers()) - before_workers, timeout=STALL_S)
        else:
            back = True
        up = time.monotonic()
        if back:
            kill.restarted_s = round(up - t0, 3)
        docs_up = progress.docs()
        recovered = _wait(crawl, lambda: progress.docs() > docs_up and _request_since(web, up), timeout=STALL_S)
        if recovered:
            kill.recovered_s = round(time.monotonic() - t0, 3)
        kills.append(kill)
        say(f"kill {len(kills)}: {victim} at {kill.at_s:.1f} s, {kill.docs_before} docs; "
            f"restarted {kill.restarted_s} s, recovered {kill.recovered_s} s")
    code = _wait_exit(crawl)
    return code == 0


def _request_since(web: RunningWeb, t: float) -> bool:
    records = web.log.records()
    return bool(records) and records[-1].mono_time > t


def _wait(crawl: Crawl, condition, timeout: float = STALL_S) -> bool:
    """Poll until `condition()`; False if the crawl ended first. Stalls raise."""
    deadline = time.monotonic() + timeout
    while not condition():
        code = crawl.urlserver.proc.poll()
        if code == 0:
            return False
        if code is not None:
            raise ChaosFailed(f"the urlserver exited with {code}\n{crawl.logs()}")
        if crawl.store.proc.poll() is not None:
            raise ChaosFailed(f"the store server exited with {crawl.store.proc.returncode}\n{crawl.logs()}")
        if time.monotonic() > deadline:
            raise ChaosFailed(f"no progress for {timeout:.0f} s\n{crawl.logs()}")
        time.sleep(POLL_S)
    return True


def _wait_exit(crawl: Crawl) -> int:
    try:
        return crawl.urlserver.proc.wait(FINISH_S)
    except Exception as exc:
        raise ChaosFailed(f"the crawl did not finish within {FINISH_S:.0f} s\n{crawl.logs()}") from exc


def _url_records(frontier: Path) -> tuple[dict[str, UrlRecord], int]:
    """Every URL the urlserver knows, and how many claims it still holds."""
    env = lmdb.open(str(frontier), readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    try:
        with env.begin() as txn:
            urls = env.open_db(b"urls", txn=txn, create=False)
            claims = env.open_db(b"claims", txn=txn, create=False)
            recs = {r.url: r for r in map(UrlRecord.unpack, txn.cursor(db=urls).iternext(keys=False))}
            return recs, txn.stat(claims)["entries"]
    finally:
        env.close()


def verify(store: Path, frontier: Path, truth, records) -> dict:
    """Compare the store, the urlserver's state and the request log with the truth."""
    reader = ReadStore(store)
    try:
        docs = [meta for meta, _ in reader.iter_docs(with_documents=False)]
        counted = reader.meta_info().get("docs", 0)
    finally:
        reader.close()
    pages = [d for d in docs if not urlsplit(d.url).path.startswith("/robots")]
    stored = collections.Counter(normalize(d.url) for d in pages)
    want = set(truth.fetched)
    recs, claims = _url_records(frontier)
    by_norm = {normalize(url): rec for url, rec in recs.items()}
    # A doc id belongs to one URL: the urlserver's record of each stored page
    # names the stored doc id, and no two URL records share one.
    owners = collections.Counter(rec.doc_id for rec in recs.values() if rec.doc_id)
    mismatched = [d.url for d in pages if (r := by_norm.get(normalize(d.url))) is None or r.doc_id != d.doc_id]
    unfinished = [url for url, rec in recs.items() if rec.state in (UrlState.PENDING, UrlState.IN_FLIGHT,
                                                                    UrlState.FETCH_ERROR)]
    page_requests = [r for r in records if r.method == "GET" and not r.target.startswith("/robots")]
    return {
        "truth_pages": len(want),
        "stored_pages": len(stored),
        "documents_lost": len(want - set(stored)),
        "lost_examples": sorted(want - set(stored))[:10],
        # Of those, URLs the urlserver gave up on by design: their claims died
        # with a spider --max-expiries times (its guard against a URL that
        # crashes spiders charges every claim of a dying spider).
        "lost_to_max_expiries": sum(1 for u in want - set(stored)
                                    if (r := by_norm.get(u)) is not None and "claim expired" in r.reason),
        "duplicates": sum(n - 1 for n in stored.values() if n > 1),
        "duplicate_examples": [u for u, n in stored.items() if n > 1][:10],
        "unexpected_pages": len(set(stored) - want),
        "doc_ids_reused": sum(n - 1 for n in owners.values() if n > 1) + len(mismatched),
        "store_count_matches": counted == len(docs),
        "transactions_lost": claims + len(unfinished),
        "unfinished_examples": unfinished[:10],
        "crawl_finished": claims == 0 and not unfinished,
        "page_requests": len(page_requests),
        "extra_fetches": len(page_requests) - len(want),
        "robots_requests": len(records) - len(page_requests),
    }


def _summary(kills: list[Kill]) -> dict:
    rec = [k.recovered_s for k in kills if k.recovered_s is not None]
    by_victim: dict[str, list[float]] = collections.defaultdict(list)
    for k in kills:
        if k.recovered_s is not None:
            by_victim[k.victim].append(k.recovered_s)
    return {
        "kills_survived": len(kills),
        "kills_by_victim": dict(collections.Counter(k.victim for k in kills)),
        "recovery_s": {
            "median": round(statistics.median(rec), 3) if rec else None,
            "max": max(rec, default=None),
            "by_victim_median": {v: round(statistics.median(t), 3) for v, t in by_victim.items()},
        },
        "kills_overlapped": sum(k.overlapped for k in kills),
        "kills_after_which_the_crawl_ended": sum(k.recovered_s is None and not k.overlapped for k in kills),
    }


def ok(result: dict) -> bool:
    """The promises: nothing lost, nothing twice, no doc id reused, finished."""
    return (result["finished"] and result["documents_lost"] == 0 and result["duplicates"] == 0
            and result["unexpected_pages"] == 0 and result["doc_ids_reused"] == 0
            and result["transactions_lost"] == 0 and result["store_count_matches"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__)
    p.add_argument("--hosts", type=int, default=ChaosSpec.hosts, help="test web hosts")
    p.add_argument("--pages", type=int, default=ChaosSpec.pages_per_host, help="pages per host")
    p.add_argument("--kills", type=int, default=ChaosSpec.kills)
    p.add_argument("--seed", type=int, default=ChaosSpec.seed, help="seed of the victims, moments and web")
    p.add_argument("--victims", default=",".join(VICTIMS), help="comma-separated subset of " + ",".join(VICTIMS))
    p.add_argument("--overlap", type=float, default=ChaosSpec.overlap,
                   help="chance (0-1) that the next kill lands before the last one has recovered")
    p.add_argument("--procs", type=int, default=ChaosSpec.procs, help="spider workers")
    p.add_argument("--concurrency", type=int, default=ChaosSpec.concurrency, help="transfers per worker")
    p.add_argument("--keep", metavar="DIR", help="crawl into DIR and keep it (default: a temporary directory)")
    args = p.parse_args(argv)
    victims = tuple(v for v in args.victims.split(",") if v)
    if not victims or set(victims) - set(VICTIMS):
        p.error(f"--victims: choose from {','.join(VICTIMS)}")
    spec = ChaosSpec(hosts=args.hosts, pages_per_host=args.pages, kills=args.kills, seed=args.seed,
                     victims=victims, procs=args.procs, concurrency=args.concurrency, overlap=args.overlap)
    import tempfile

    def say(msg: str) -> None:
        print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    with tempfile.TemporaryDirectory(prefix="wreck-chaos-") as scratch:
        tmp = Path(args.keep) if args.keep else Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            result = run(spec, tmp, say=say)
        except ChaosFailed as exc:
            print(f"chaos: {exc}", file=sys.stderr)
            return 1
    result["command"] = "python -m tests.chaos " + " ".join(argv if argv is not None else sys.argv[1:])
    RESULTS.mkdir(exist_ok=True)
    # The default run is the reference; other shapes get their own file.
    shape = "" if spec == ChaosSpec() else f"-{spec.hosts}x{spec.pages_per_host}-{spec.kills}kills"
    if spec.overlap:
        shape += f"-overlap{spec.overlap:g}"
    if spec.victims != VICTIMS:
        shape += "-" + "+".join(spec.victims)
    out = RESULTS / f"{datetime.date.today().isoformat()}-chaos{shape}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    figures = {k: result[k] for k in ("kills_survived", "kills_by_victim", "documents_lost", "duplicates",
                                      "doc_ids_reused", "transactions_lost", "truth_pages", "extra_fetches",
                                      "recovery_s", "elapsed_s", "finished")}
    print(json.dumps(figures, indent=2))
    print(f"results in {out}")
    return 0 if ok(result) else 1


if __name__ == "__main__":
    sys.exit(main())
