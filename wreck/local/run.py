# Running a local crawl: start the store, the urlserver (told where the
# store listens) and the spider (told where the urlserver listens) at once,
# on listening sockets bound here first and handed to the daemon that serves
# them (wreck/inherited.py: the spider's connection waits in the urlserver's
# backlog until it accepts, so nobody polls for a port), each announcing its
# address on its first stdout lines; watch them once a tick
# while the progress shows; stop them in the safe order (spider, urlserver,
# store: the store drains last, so every record a spider sent is committed)
# when the urlserver reports the crawl done, on Ctrl-C, SIGTERM or SIGHUP, or when a
# child dies. The summary's URL counts are the urlserver's last stdout line
# (its /status after its last commit), the store's come from the store's
# public read API; nothing here opens a daemon's files. Running the same
# command again resumes. Each run makes a fresh random shared secret and gives
# it to the children in their environment (wreck.deploy.SECRET_ENV), never
# on a command line: the daemons then refuse any peer without it
# (docs/protocol.txt 3.3), so another local user cannot join the crawl.
# The daemons are forked from this process once their commands are imported
# here (fork.py: one interpreter start and one set of imports for the crawl),
# all of them before this process starts any thread of its own.
# With --partitions M it starts M urlservers, each told the others, and the
# spider connects to the first (it learns the others from the handshake); a
# one-shot partitioned crawl ends when ending.py sees every partition quiet.
"""Start, watch and stop the daemons of one local crawl."""

from __future__ import annotations

import gc
import json
import os
import secrets
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from wreck import inherited, manifest, supervise
from wreck.deploy import SECRET_ENV
from wreck.protocol.handshake import CRAWL_ID_BYTES

from wreck.storeserver.reader import StoreError, read_crawl_id

from . import fork
from .children import Child, ChildFailed
from .ending import EndWatch
from .layout import Layout
from .nothingfetched import EXIT_NOTHING_FETCHED, why_nothing
from .progress import Progress, fetch_status, store_counters, summary

TICK_S = 1.0  # progress refresh and child check
LOOPBACK = "127.0.0.1"  # where the daemons of a local crawl listen for each other
# What the daemons print on stdout: where they listen, and the urlserver's
# final /status (JSON) once its last commit is done.
STORE_LISTENING = "storeserver listening on "
URLSERVER_LISTENING = "urlserver listening on "
URLSERVER_STATUS = "urlserver status on "
URLSERVER_FINISHED = "urlserver finished "
EXIT_INTERRUPTED = 130
# The daemon commands a local crawl runs, imported here before they are forked.
DAEMON_COMMANDS = ("wreck.storeserver.cli", "wreck.urlserver.cli", "wreck.spider.cli")
# The store in the data directory keeps another crawl's pages (its frontier/
# was removed or replaced), so it refused this crawl's spider (docs/protocol.txt 6.1).
EXIT_OTHER_CRAWL = 4
SECRET_BYTES = 32  # 256 random bits, URL-safe text: well above deploy.MIN_SECRET_LEN


def run(data: Path, urls: list[str], urlserver_args: list[str], procs: int, concurrency: int,
        store_args: list[str] = (), *, continuous: bool = False, http: str = "127.0.0.1:0",
        log_args: Sequence[str] = (), shards: int = 1, partitions: int = 1) -> int:
    """Run a local crawl into `data` until it is done or interrupted, its
    dashboard on `http` (HOST:PORT, port 0: any), each child given
    `log_args` (its --log-level); the process exit code
    (0 done, 1 a daemon failed, 3 nothing fetched: every seed failed
    (nothingfetched.py), 4 the store keeps another crawl, 130 interrupted)."""
    console = Console()
    where = Layout(data, shards, partitions)
    where.make()
    stopping = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stopping["signal"] = signum

    # SIGHUP too: the terminal closed (an ssh session dropped) is a stop like
    # Ctrl-C, with the children stopped in order, not wreck-crawl gone at once
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    children: list[Child] = []
    env = {**os.environ, SECRET_ENV: secrets.token_urlsafe(SECRET_BYTES)}  # this run's, for its children only
    progress = None
    started = time.monotonic()
    finished = False
    fork.preload(DAEMON_COMMANDS)
    gc.freeze()  # what is loaded now is shared with the forked daemons: no collection touches (copies) it
    try:
        # Every daemon starts at once: the ports they find each other by are
        # bound here first and handed to the daemon that serves them
        # (wreck/inherited.py), so none waits for another to listen.
        store_socks = [(inherited.bind(LOOPBACK), inherited.bind(LOOPBACK)) for _ in where.store_dirs]
        url_socks = [inherited.bind(LOOPBACK) for _ in where.frontiers]  # partitions: each told the others'
        url_addr = inherited.address(url_socks[0])
        store_http = inherited.address(store_socks[0][1])  # the dashboard shows the first shard's figures
        stores, store_flags = [], []
        for shard, (store_dir, (listen, status)) in enumerate(zip(where.store_dirs, store_socks)):
            # shard order: doc id D in store D mod n
            name = "storeserver" if shard == 0 else f"storeserver{shard}"
            store_flags += ["--store", inherited.address(listen), "--store-data", str(store_dir)]
            store = Child(name, "wreck.storeserver.cli", ["--data", str(store_dir), "--listen", inherited.address(listen),
                                                          "--http", inherited.address(status), *where.store_socket(store_dir),
                                                          *store_args, *log_args],
                          where.log(name), env, socks=(listen, status), fork=True)  # fmt: skip
            children.append(store)
            stores.append(store)
        urlservers = _start_urlservers(where, urls, urlserver_args, store_flags, store_http, http, continuous,
                                       log_args, env, url_socks)
        children.extend(urlservers)
        url = urlservers[0]
        spider = Child("spider", "wreck.spider.cli", ["--connect", url_addr, "--procs", str(procs),
                                                "--concurrency", str(concurrency), *log_args], where.log("spider"), env,
                       fork=True)
        children.append(spider)
        for child in children:  # every daemon forked: this process's threads may start
            child.start_copying()
        for store in stores:  # each started: its lines read, the rest of its stdout to its log
            store.read_line(STORE_LISTENING)
            store.drain()
        status_urls = []
        for child in urlservers:
            child.read_line(URLSERVER_LISTENING)
            status_urls.append(child.read_line(URLSERVER_STATUS).rstrip("/") + "/status")
            child.drain(keep=URLSERVER_FINISHED)
        status_url = status_urls[0]
        dashboard = status_url.removesuffix("status")
        watch = EndWatch() if partitions > 1 and not continuous else None
        console.print(f"WRECK: crawling into {data} with {procs} spider worker(s); Ctrl-C stops, "
                      f"the same command resumes.", highlight=False, soft_wrap=True)  # fmt: skip
        console.print(f"WRECK: dashboard at {dashboard}", highlight=False, soft_wrap=True)
        console.print(f"WRECK: operator API at {dashboard}api/ (docs/api.md), its token in {where.api_token}", highlight=False, soft_wrap=True)
        if continuous:
            console.print("WRECK: feeds and recrawled pages are refetched until Ctrl-C (--exit-when-done: one round).",
                          highlight=False)
        progress = Progress(status_url, where.store_dirs, console)
        while stopping["signal"] is None:
            progress.update()
            if watch is not None and watch.ended([fetch_status(u) for u in status_urls]):
                finished = True  # every partition quiet twice over (ending.py): stop them all
                break
            if not url.running():
                finished = url.returncode == 0
                if not finished:
                    raise ChildFailed(f"urlserver exited with {url.returncode}: {url.last_words()}")
                break
            for child in (*stores, *urlservers[1:], spider):
                if not child.running():
                    if child is spider and (other := _other_crawl(where, progress)) is not None:
                        raise OtherCrawl(other)
                    raise ChildFailed(f"{child.name} exited with {child.returncode}: {child.last_words()}")
            _tick(url.proc.pid)
    except OtherCrawl as exc:
        progress.close()
        Console(stderr=True).print(f"wreck-crawl: {exc}", markup=False, highlight=False, soft_wrap=True)
        _stop_all(children)
        return EXIT_OTHER_CRAWL
    except ChildFailed as exc:
        if progress:
            progress.close()
        Console(stderr=True).print(f"wreck-crawl: {exc}", markup=False, highlight=False, soft_wrap=True)
        _stop_all(children)
        return 1
    except BaseException:
        # A bug here must not leave the daemons running: forked ones would
        # also hold this process at exit (multiprocessing joins its children).
        if progress:
            progress.close()
        _stop_all(children)
        raise
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    last = progress.last if progress else {}
    if progress:
        progress.close()
    _stop_all(children)
    finals = [_final_status(u) for u in urlservers]  # as committed, unlike the last /status
    if finals[0] is not None:
        last = _merged(finals) if partitions > 1 else finals[0]
        if partitions > 1 and finished:
            last["finish_reason"] = EndWatch.reason([f for f in finals if f is not None])
    text = summary(last, store_counters(where.store_dirs), time.monotonic() - started, where, finished)
    console.print(text, markup=False, soft_wrap=True)  # no hard breaks: its commands and URLs are copied whole
    # every seed failed (a wrong name or port, an address the policy refuses: known
    # only once tried, so said at the end, not refused at start)
    nothing = why_nothing(last, where.store_dirs) if finished else None
    if nothing:
        Console(stderr=True).print(f"wreck-crawl: {nothing}", markup=False, highlight=False, soft_wrap=True)
        return EXIT_NOTHING_FETCHED
    return 0 if finished else EXIT_INTERRUPTED


def _start_urlservers(where: Layout, urls, urlserver_args, store_flags, store_http, http, continuous, log_args, env,
                      socks) -> list[Child]:
    """Start the urlserver, or its partitions (each told the others'
    addresses, bound already: `socks`, and the crawl's id;
    docs/partitions.md)."""
    count = len(where.frontiers)
    listen = [inherited.address(sock) for sock in socks]
    crawl_id = _crawl_id(where) if count > 1 else ""
    started = []
    for i, frontier in enumerate(where.frontiers):
        name = "urlserver" if i == 0 else f"urlserver{i}"
        partition = ["--partitions", str(count), "--partition", str(i), "--peers", ",".join(listen),
                     "--crawl-id", crawl_id] if count > 1 else []
        one_shot = [] if continuous or count > 1 else ["--exit-when-done"]  # partitions: ending.py decides
        started.append(Child(name, "wreck.urlserver.cli", [
            *urls, *urlserver_args, "--data", str(frontier), *store_flags, "--store-http", store_http,
            "--listen", listen[i], "--http", http if i == 0 else "127.0.0.1:0", *partition, *one_shot, *log_args,
        ], where.log(name), env, socks=(socks[i],), fork=True))  # fmt: skip
    return started


def _crawl_id(where: Layout) -> str:
    """The partitions' crawl id: the one partition 0 keeps (its manifest),
    or a new one for a new crawl."""
    try:
        return manifest.read(where.frontier).crawl_id
    except (manifest.ManifestError, OSError):
        return secrets.token_hex(CRAWL_ID_BYTES)


def _merged(finals: list[dict | None]) -> dict:
    """The partitions' last words as one: URL, error and counter figures
    summed, the rest partition 0's."""
    merged = dict(finals[0])
    for key in ("urls", "errors_by_kind", "counters"):
        total: dict = {}
        for final in finals:
            for k, v in ((final or {}).get(key) or {}).items():
                if isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        merged[key] = total
    return merged


class OtherCrawl(Exception):
    """The store keeps another crawl's pages and refused this crawl's spider."""


def _other_crawl(where: Layout, progress: Progress) -> str | None:
    """Why the spider stopped, if the store refused it for another crawl's:
    the store's kept crawl id (its public read API) is not the urlserver's
    (its /status)."""
    ours = (fetch_status(progress.status_url) or progress.last).get("crawl_id")
    try:
        kept = read_crawl_id(where.store_data)
    except StoreError:
        return None
    if not ours or not kept or kept == ours:
        return None
    return (f"the store in {where.store_data} keeps the pages of another crawl (crawl {kept}; this crawl is "
            f"{ours}: was its {where.frontier.name}/ removed or replaced?), so it refused this crawl's spider "
            f"and stored nothing of it; a store keeps one crawl: start this crawl in a new --data directory")


def _tick(pid: int) -> None:
    """Wait TICK_S, or less if process `pid` (the urlserver) ends first: a
    finished crawl then stops at once, not at the next tick (issue 16)."""
    if not supervise.wait_ended(pid, TICK_S):  # no pidfd here (Linux < 5.3), or already reaped
        time.sleep(TICK_S)


def _stop_all(children: list[Child]) -> None:
    """Spider first, then urlserver, then the store (it drains last)."""
    for child in reversed(children):
        child.stop()


def _final_status(urlserver: Child) -> dict | None:
    """The urlserver's last words: its /status after the last commit, or
    None if it did not stop cleanly (the last /status polled then stands)."""
    text = urlserver.kept()
    if text is None:
        return None
    try:
        final = json.loads(text)
    except ValueError:
        return None
    return final if isinstance(final, dict) else None
