# A crawl over urlserver partitions (docs/partitions.md), as subprocesses on
# loopback, for end-to-end tests of issue 19: one store, M urlservers on
# fixed ports (a partition killed with -9 restarts on the same address, as
# its box would come back), each told the others (--peers) and the crawl's
# id, and spiders. A partitioned crawl has no --exit-when-done of its own:
# `wait_done` sees its end as wreck-crawl does (wreck/local/ending.py).
"""PartitionedCrawl: M urlserver partitions, a store, spiders; readers."""

from __future__ import annotations

import json
import signal
import socket
import time
import urllib.request
from pathlib import Path

import lmdb

from tests.e2e_helpers import CRAWL_TIMEOUT
from tests.web import RunningWeb
from wreck.local.children import Child
from wreck.local.ending import EndWatch
from wreck.urlserver.db import U64, Db

CRAWL_ID = "0123456789abcdef0123456789abcdef"
LOOK_S = 0.2  # between two looks at the partitions' /status while waiting for the end


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free now: all held open at once
    while the OS picks, so no two are the same."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


class PartitionedCrawl:
    """`partitions` urlservers, one store, and a spider per address in
    `spiders` (partition indexes it is given to connect to)."""

    def __init__(self, tmp: Path, web: RunningWeb, seeds: list[str], args: list[str], *, partitions: int = 2,
                 spiders: tuple[int, ...] = (0, 1), concurrency: int = 10) -> None:
        self.tmp, self.seeds, self.args, self.count = tmp, seeds, args, partitions
        dns_ip, dns_port = web.dns_address
        self.dns = f"{dns_ip}:{dns_port}"
        ports = free_ports(2 * partitions)
        self.addresses = [f"127.0.0.1:{port}" for port in ports[:partitions]]
        self.http = [f"127.0.0.1:{port}" for port in ports[partitions:]]
        self.children: list[Child] = []
        self.store = self._child("storeserver", "wreck.storeserver.cli",
                                 ["--data", str(tmp / "store"), "--listen", "127.0.0.1:0"])
        self.store_address = self.store.read_line("storeserver listening on ")
        self.store.drain()
        self.urlservers: list[Child | None] = [self.start(i) for i in range(partitions)]
        self.spiders = [self._child(f"spider{i}", "wreck.spider.cli", [
            "--connect", self.addresses[i], "--procs", "1", "--concurrency", str(concurrency)]) for i in spiders]

    def frontier(self, i: int) -> Path:
        return self.tmp / f"frontier{i}"

    def _child(self, name: str, module: str, args: list[str]) -> Child:
        child = Child(name, module, args, self.tmp / f"{name}.log")
        self.children.append(child)
        return child

    def start(self, i: int) -> Child:
        """Start (or restart) partition `i` on its fixed addresses."""
        starts = sum(c.name.startswith(f"urlserver{i}") for c in self.children)
        child = self._child(f"urlserver{i}" + (f"-restart{starts}" if starts else ""), "wreck.urlserver.cli", [
            *self.seeds, *self.args, "--data", str(self.frontier(i)), "--store", self.store_address,
            "--dns", self.dns, "--listen", self.addresses[i], "--http", self.http[i],
            "--partitions", str(self.count), "--partition", str(i), "--peers", ",".join(self.addresses),
            "--crawl-id", CRAWL_ID,
        ])  # fmt: skip
        child.read_line("urlserver listening on ")
        child.read_line("urlserver status on ")  # its /status answers from here on
        child.drain()
        return child

    def kill(self, i: int) -> None:
        """kill -9 of partition `i`."""
        child = self.urlservers[i]
        child.proc.send_signal(signal.SIGKILL)
        child.proc.wait()
        self.urlservers[i] = None

    def restart(self, i: int) -> None:
        self.urlservers[i] = self.start(i)

    def status(self, i: int) -> dict:
        with urllib.request.urlopen(f"http://{self.http[i]}/status", timeout=10) as answer:
            return json.loads(answer.read())

    def wait_done(self, timeout: float = CRAWL_TIMEOUT) -> list[dict]:
        """Every partition's /status once the crawl is over, as wreck-crawl
        decides it (wreck/local/ending.py)."""
        deadline = time.monotonic() + timeout
        watch = EndWatch()
        while time.monotonic() < deadline:
            looks = [self.status(i) for i in range(self.count)]
            if watch.ended(looks):
                return looks
            time.sleep(LOOK_S)
        raise AssertionError(f"the partitions did not finish\n{self.logs()}")

    def stop(self) -> None:
        for child in reversed(self.children):  # spiders, urlservers, store: the store drains last
            if child.proc.poll() is None:
                child.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {c.name}\n{c.tail()}" for c in self.children)


def peer_counters(frontier: Path) -> dict[str, int]:
    """A partition's batch counters: "peer_out:J" (its next batch number for
    J) and "peer_in:I" (the last batch applied from I)."""
    env = lmdb.open(str(frontier), readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    try:
        with env.begin() as txn:
            meta = env.open_db(b"meta", txn=txn, create=False)
            cur = txn.cursor(db=meta)
            return {k.decode(): U64.unpack(v)[0] for k, v in cur if k.startswith(b"peer_")}
    finally:
        env.close()
