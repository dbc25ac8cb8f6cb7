# The trio of daemons as subprocesses, for end-to-end tests: a store, a
# urlserver pointed at the test web's DNS and a one-worker spider, and readers
# of what they left on disk.
"""Trio and readers of a finished crawl's state."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import lmdb

from wreck.storeserver.store import ReadStore
from tests.web import (
    RunningWeb, SiteSpec, duplicate_requests,
)  # fmt: skip
from tests.web.truth import normalize
from wreck.local.children import Child
from wreck.urlserver.db import Db, UrlRecord

CRAWL_TIMEOUT = 180.0  # seconds: a cap for a hung crawl, never a figure (one takes a few; the
#                        hostile-among-good crawl about 55 s on a loaded machine)
# Settings that keep the test web's slow cases short: robots.txt 5xx hosts and
# 5xx pages retry after 0.2 s, twice.
FAST_RETRIES = ["--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "2"]


def fetched(meta) -> bool:
    """Whether a stored record (layout.StoredDoc) is of a fetch: not the record
    of a URL no spider connected for (a DNS failure or refused address the
    urlserver had recorded, docs/protocol.txt 5.3 nofetch=), which the WARC
    keeps to say what was tried, and which the test web's truth leaves out."""
    return meta.attempted


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Trio:
    """storeserver, urlserver and spider as subprocesses, logs under `tmp`."""

    def __init__(self, tmp: Path, web: RunningWeb, seeds: list[str], urlserver_args: list[str], *,
                 exit_when_done: bool = True) -> None:
        self.tmp, self.seeds, self.args = tmp, seeds, urlserver_args
        self.exit_when_done = exit_when_done
        dns_ip, dns_port = web.dns_address
        self.dns = f"{dns_ip}:{dns_port}"
        self.listen = f"127.0.0.1:{_free_port()}"  # fixed, so a restarted urlserver is found again
        self.children: list[Child] = []
        self.store = self._child("storeserver", "wreck.storeserver.cli",
                                 ["--data", str(tmp / "store"), "--listen", "127.0.0.1:0"])
        self.store_address = self.store.read_line("storeserver listening on ")
        self.store.drain()
        self.urlserver = self.start_urlserver()
        self.spider = self._child("spider", "wreck.spider.cli",
                                  ["--connect", self.listen, "--procs", "1", "--concurrency", "20"])

    def _child(self, name: str, module: str, args: list[str]) -> Child:
        child = Child(name, module, args, self.tmp / f"{name}.log")
        self.children.append(child)
        return child

    def start_urlserver(self) -> Child:
        child = self._child("urlserver", "wreck.urlserver.cli", [
            *self.seeds, *self.args, "--data", str(self.tmp / "frontier"), "--store", self.store_address,
            "--dns", self.dns, "--listen", self.listen, "--http", "off",
            *(["--exit-when-done"] if self.exit_when_done else []),
        ])  # fmt: skip
        child.read_line("urlserver listening on ")
        child.drain()
        return child

    def wait(self) -> int:
        """The urlserver's exit code once the crawl is done."""
        return self.urlserver.proc.wait(CRAWL_TIMEOUT)

    def stop(self) -> None:
        for child in reversed(self.children):  # spider, urlserver, store: the store drains last
            child.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {c.name}\n{c.tail()}" for c in self.children)


def crawl_to_the_end(tmp: Path, web: RunningWeb, seeds: list[str], args: list[str]) -> list:
    """Run the trio until the urlserver says the crawl is done; the web's request log."""
    trio = Trio(tmp, web, seeds, args)
    try:
        assert trio.wait() == 0, trio.logs()
    finally:
        trio.stop()
    return web.log.records()


def wreck_crawl(tmp: Path, web: RunningWeb, seeds: list[str], args: list[str]) -> subprocess.CompletedProcess:
    """wreck-crawl SEEDS --data TMP/crawl on the test web (its hosts file, its
    DNS, loopback allowed, one spider worker) plus `args`, run to its end."""
    dns_ip, dns_port = web.dns_address
    cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
           "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
           "--allow-net", "127.0.0.0/8", "--procs", "1", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=CRAWL_TIMEOUT)


def stored_urls(tmp: Path) -> list[str]:
    """URLs of the stored page documents, with repeats (robots.txt and the records
    of URLs never connected for, such as a host without an address, left out)."""
    reader = ReadStore(tmp / "store")
    try:
        urls = [normalize(meta.url) for meta, _ in reader.iter_docs(with_documents=False) if fetched(meta)]
    finally:
        reader.close()
    return [u for u in urls if not urlsplit(u).path.startswith("/robots")]


def url_states(frontier: Path) -> dict[str, UrlRecord]:
    """Every URL the urlserver knows, as last committed."""
    env = lmdb.open(str(frontier), readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    try:
        with env.begin() as txn:
            urls = env.open_db(b"urls", txn=txn, create=False)
            return {rec.url: rec for rec in map(UrlRecord.unpack, txn.cursor(db=urls).iternext(keys=False))}
    finally:
        env.close()


def never_asked(asked: dict[str, list[str]], wanted: dict[str, set[str]]) -> dict[str, list[str]]:
    """Host -> the paths of `wanted` the request log (`asked`: host -> targets) never shows; hosts with none left out."""
    return {name: sorted(paths - set(asked[name])) for name, paths in wanted.items() if paths - set(asked[name])}


def asked_of(asked: dict[str, list[str]], refused: dict[str, set[str]]) -> dict[str, list[str]]:
    """Host -> the paths of `refused` the request log shows; hosts with none left out."""
    return {name: sorted(paths & set(asked[name])) for name, paths in refused.items() if paths & set(asked[name])}


def asked_beyond(asked: dict[str, list[str]], known: dict[str, set[str]]) -> dict[str, list[str]]:
    """Host -> the paths the request log shows on a host of `known` beyond its known ones; hosts with none left out."""
    return {name: sorted(set(asked[name]) - paths) for name, paths in known.items() if set(asked[name]) - paths}


def asked_by_host(records) -> dict[str, list[str]]:
    """Host -> the targets the test web's request log shows, in order."""
    asked: dict[str, list[str]] = defaultdict(list)
    for record in records:
        asked[record.host].append(record.target)
    return asked


def dump_all(data: Path) -> list[dict]:
    """Every record of the crawl in DATA, as `wreck-dump --data DATA --all --jsonl` prints it."""
    dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--data", str(data), "--all", "--jsonl"],
                          capture_output=True, text=True, timeout=120)
    return [json.loads(line) for line in dump.stdout.splitlines() if line.startswith("{")]


def crawl_logged(tmp: Path, spec: SiteSpec, seeds: Callable[[int], list[str]], args: list[str]):
    """wreck_crawl of `seeds(port)` on a RunningWeb of `spec` that logs its
    requests: (the run, the request records, the TestWeb)."""
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        run = wreck_crawl(tmp, web, seeds(web.port), args)
        return run, web.log.records(), web.web


def repeated_pages(records, asked_twice: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    """(host, target) -> count of each page asked more than once (robots.txt
    aside) but those of `asked_twice` (host -> paths) asked exactly twice."""
    twice = {(host, path) for host, paths in asked_twice.items() for path in paths}
    return {key: n for key, n in duplicate_requests(records).items()
            if not key[1].startswith("/robots") and (key not in twice or n > 2)}
