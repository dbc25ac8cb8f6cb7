# Running a local crawl: start the store, then the urlserver (told where the
# store listens), then the spider (told where the urlserver listens), each
# announcing its address on its first stdout line; watch them once a tick
# while the progress shows; stop them in the safe order (spider, urlserver,
# store: the store drains last, so every record a spider sent is committed)
# when the urlserver reports the crawl done, on Ctrl-C or SIGTERM, or when a
# child dies. The summary's URL counts are the urlserver's last stdout line
# (its /status after its last commit), the store's come from the store's
# public read API; nothing here opens a daemon's files. Running the same
# command again resumes. Each run makes a fresh random shared secret and gives
# it to the children in their environment (wreck.deploy.SECRET_ENV), never
# on a command line: the daemons then refuse any peer without it
# (docs/protocol.txt 3.3), so another local user cannot join the crawl.
# With --partitions M it starts M urlservers, each told the others, and the
# spider connects to the first (it learns the others from the handshake); a
# one-shot partitioned crawl ends when ending.py sees every partition quiet.
"""Start, watch and stop the daemons of one local crawl."""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from wreck import manifest
from wreck.deploy import SECRET_ENV
from wreck.protocol.handshake import CRAWL_ID_BYTES

from wreck.storeserver.reader import StoreError, read_crawl_id

from .children import Child, ChildFailed
from .ending import EndWatch
from .layout import Layout
from .progress import Progress, fetch_status, store_counters, summary

TICK_S = 1.0  # progress refresh and child check
# What the daemons print on stdout: where they listen, and the urlserver's
# final /status (JSON) once its last commit is done.
STORE_LISTENING = "storeserver listening on "
STORE_STATUS = "storeserver status on http://"  # its figures for the dashboard (docs/dashboard.md)
URLSERVER_LISTENING = "urlserver listening on "
URLSERVER_STATUS = "urlserver status on "
URLSERVER_FINISHED = "urlserver finished "
EXIT_INTERRUPTED = 130
# A crawl that ended having fetched nothing because the address policy
# refused its hosts (names that resolve to loopback or private addresses are
# known only after resolution, so this is said at the end, not refused at start).
EXIT_ADDRESS_POLICY = 3
# The store in the data directory keeps another crawl's pages (its frontier/
# was removed or replaced), so it refused this crawl's spider (docs/protocol.txt 6.1).
EXIT_OTHER_CRAWL = 4
FORBIDDEN = "FORBIDDEN_ADDRESS"  # the urlserver's error kind (protocol/codes.py)
SECRET_BYTES = 32  # 256 random bits, URL-safe text: well above deploy.MIN_SECRET_LEN


def run(data: Path, urls: list[str], urlserver_args: list[str], procs: int, concurrency: int,
        store_args: list[str] = (), *, continuous: bool = False, http: str = "127.0.0.1:0",
        log_args: Sequence[str] = (), shards: int = 1, partitions: int = 1) -> int:
    """Run a local crawl into `data` until it is done or interrupted, its
    dashboard on `http` (HOST:PORT, port 0: any), each child given
    `log_args` (its --log-level); the process exit code
    (0 done, 1 a daemon failed, 3 nothing fetched because of the address
    policy, 4 the store keeps another crawl, 130 interrupted)."""
    console = Console()
    where = Layout(data, shards, partitions)
    where.make()
    stopping = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stopping["signal"] = signum

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    children: list[Child] = []
    env = {**os.environ, SECRET_ENV: secrets.token_urlsafe(SECRET_BYTES)}  # this run's, for its children only
    progress = None
    started = time.monotonic()
    finished = False
    try:
        stores, store_flags, store_http = [], [], ""
        for shard, store_dir in enumerate(where.store_dirs):  # shard order: doc id D in store D mod n
            name = "storeserver" if shard == 0 else f"storeserver{shard}"
            store = Child(name, "wreck.storeserver.cli", ["--data", str(store_dir), "--listen", "127.0.0.1:0",
                                                          "--http", "127.0.0.1:0", *store_args, *log_args],
                          where.log(name), env)  # fmt: skip
            children.append(store)
            stores.append(store)
            status = store.read_line(STORE_STATUS).split("/", 1)[0]  # printed before its listening line
            store_http = store_http or status  # the dashboard shows the first shard's figures
            store_flags += ["--store", store.read_line(STORE_LISTENING), "--store-data", str(store_dir)]
            store.drain()
        urlservers, status_urls = _start_urlservers(where, urls, urlserver_args, store_flags, store_http, http,
                                                    continuous, log_args, env, children)
        url = urlservers[0]
        url_addr = url.address
        dashboard = status_urls[0].removesuffix("status")
        status_url = status_urls[0]
        watch = EndWatch() if partitions > 1 and not continuous else None
        spider = Child("spider", "wreck.spider.cli", ["--connect", url_addr, "--procs", str(procs),
                                                "--concurrency", str(concurrency), *log_args], where.log("spider"), env)
        children.append(spider)
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
                finished = url.proc.returncode == 0
                if not finished:
                    raise ChildFailed(f"urlserver exited with {url.proc.returncode}:\n{url.tail()}")
                break
            for child in (*stores, *urlservers[1:], spider):
                if not child.running():
                    if child is spider and (other := _other_crawl(where, progress)) is not None:
                        raise OtherCrawl(other)
                    raise ChildFailed(f"{child.name} exited with {child.proc.returncode}:\n{child.tail()}")
            _tick(url.proc.pid)
    except OtherCrawl as exc:
        progress.close()
        Console(stderr=True).print(f"wreck-crawl: {exc}", markup=False, highlight=False, soft_wrap=True)
        _stop_all(children)
        return EXIT_OTHER_CRAWL
    except ChildFailed as exc:
        if progress:
            progress.close()
        console.print(f"wreck-crawl: {exc}", markup=False)
        _stop_all(children)
        return 1
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
    refused = _refused_by_address_policy(last) if finished else None
    if refused:
        Console(stderr=True).print(f"wreck-crawl: {refused}", markup=False, highlight=False, soft_wrap=True)
        return EXIT_ADDRESS_POLICY
    return 0 if finished else EXIT_INTERRUPTED


def _start_urlservers(where: Layout, urls, urlserver_args, store_flags, store_http, http, continuous, log_args, env,
                      children) -> tuple[list[Child], list[str]]:
    """Start the urlserver, or its partitions on loopback ports chosen
    first (each is told the others': docs/partitions.md) with the crawl's
    id; each child's `address` set, and each one's /status URL."""
    count = len(where.frontiers)
    extra: list[list[str]] = [[] for _ in range(count)]
    if count > 1:
        listen = [f"127.0.0.1:{port}" for port in free_ports(count)]
        crawl_id = _crawl_id(where)
        for i in range(count):
            extra[i] = ["--listen", listen[i], "--partitions", str(count), "--partition", str(i),
                        "--peers", ",".join(listen), "--crawl-id", crawl_id]
    started, status_urls = [], []
    for i, frontier in enumerate(where.frontiers):
        name = "urlserver" if i == 0 else f"urlserver{i}"
        one_shot = [] if continuous or count > 1 else ["--exit-when-done"]  # partitions: ending.py decides
        child = Child(name, "wreck.urlserver.cli", [
            *urls, *urlserver_args, "--data", str(frontier), *store_flags, "--store-http", store_http,
            *(extra[i] or ["--listen", "127.0.0.1:0"]), "--http", http if i == 0 else "127.0.0.1:0", *one_shot,
            *log_args,
        ], where.log(name), env)  # fmt: skip
        children.append(child)
        child.address = child.read_line(URLSERVER_LISTENING)
        status_urls.append(child.read_line(URLSERVER_STATUS).rstrip("/") + "/status")
        child.drain(keep=URLSERVER_FINISHED)
        started.append(child)
    return started, status_urls


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free now, for partitions each told
    the others' before they start: all held open at once while the OS picks,
    so no two are the same (a race with another program remains possible and
    ends that partition's start with a clear error)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


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


def _refused_by_address_policy(last: dict) -> str | None:
    """Why a finished crawl fetched nothing, if the address policy did it."""
    urls = last.get("urls", {})
    forbidden = last.get("errors_by_kind", {}).get(FORBIDDEN, 0)
    if not forbidden or urls.get("FETCHED", 0) or urls.get("REDIRECTED", 0):
        return None
    return (f"nothing fetched: {forbidden} URL(s) resolved to addresses the crawl refuses (loopback, private, "
            f"reserved); to crawl them, give --allow-net with their network, e.g. --allow-net 127.0.0.0/8")


def _tick(pid: int) -> None:
    """Wait TICK_S, or less if process `pid` (the urlserver) ends first: a
    finished crawl then stops at once, not at the next tick (issue 16). A
    pidfd wakes select() when the process ends, so nothing polls."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here (Linux < 5.3), or already reaped
        time.sleep(TICK_S)
        return
    try:
        select.select([fd], [], [], TICK_S)
    finally:
        os.close(fd)


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
