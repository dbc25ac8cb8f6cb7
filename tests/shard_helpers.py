# A crawl over several store shards, as subprocesses on loopback, for
# end-to-end tests of issue 19: N storeservers on fixed ports (a store
# killed with -9 restarts on the same address, as a shard's box would come
# back), a urlserver naming them in order (--store each, --store-data each,
# so it writes DATA/crawl.json) pointed at the test web's DNS, and a spider.
"""ShardedCrawl: N stores, a urlserver and a spider; readers of each shard."""

from __future__ import annotations

import signal
from pathlib import Path
from urllib.parse import urlsplit

from tests.e2e_helpers import _free_port
from tests.web import RunningWeb
from tests.web.truth import normalize
from wreck.local.children import Child
from wreck.storeserver.reader import open_store


class ShardedCrawl:
    """`shards` storeservers, a urlserver and a spider; logs under `tmp`."""

    def __init__(self, tmp: Path, web: RunningWeb, seeds: list[str], urlserver_args: list[str], *, shards: int,
                 concurrency: int = 20) -> None:
        self.tmp = tmp
        dns_ip, dns_port = web.dns_address
        self.listen = f"127.0.0.1:{_free_port()}"
        self.addresses = [f"127.0.0.1:{_free_port()}" for _ in range(shards)]
        self.children: list[Child] = []
        self.stores: list[Child | None] = [self.start_store(i) for i in range(shards)]
        self.urlserver = self._child("urlserver", "wreck.urlserver.cli", [
            *seeds, *urlserver_args, "--data", str(self.frontier), "--dns", f"{dns_ip}:{dns_port}",
            "--listen", self.listen, "--http", "off", "--exit-when-done",
            *[a for address in self.addresses for a in ("--store", address)],
            *[a for i in range(shards) for a in ("--store-data", str(self.store_dir(i)))],
        ])  # fmt: skip
        self.urlserver.read_line("urlserver listening on ")
        self.urlserver.drain()
        self.spider = self._child("spider", "wreck.spider.cli",
                                  ["--connect", self.listen, "--procs", "1", "--concurrency", str(concurrency)])

    @property
    def frontier(self) -> Path:
        return self.tmp / "frontier"

    def store_dir(self, shard: int) -> Path:
        return self.tmp / f"store{shard}"

    def _child(self, name: str, module: str, args: list[str]) -> Child:
        child = Child(name, module, args, self.tmp / f"{name}.log")
        self.children.append(child)
        return child

    def start_store(self, shard: int) -> Child:
        """Start (or restart) shard `shard` on its fixed address."""
        starts = sum(c.name.startswith(f"store{shard}") for c in self.children)
        child = self._child(f"store{shard}" + (f"-restart{starts}" if starts else ""), "wreck.storeserver.cli",
                            ["--data", str(self.store_dir(shard)), "--listen", self.addresses[shard]])
        child.read_line("storeserver listening on ")
        child.drain()
        return child

    def kill_store(self, shard: int) -> None:
        """kill -9 of shard `shard`'s storeserver."""
        child = self.stores[shard]
        child.proc.send_signal(signal.SIGKILL)
        child.proc.wait()
        self.stores[shard] = None

    def restart_store(self, shard: int) -> None:
        self.stores[shard] = self.start_store(shard)

    def stop(self) -> None:
        for child in reversed(self.children):  # spider, urlserver, stores: the stores drain last
            if child.proc.poll() is None:
                child.stop()

    def logs(self) -> str:
        return "\n".join(f"--- {c.name}\n{c.tail()}" for c in self.children)


def shard_docs(data: Path, *, attempted_only: bool = True) -> dict[int, str]:
    """doc id -> normalised URL of every document one store holds (by default
    only fetches: not the records of URLs no spider connected for)."""
    reader = open_store(data)
    try:
        return {meta.doc_id: normalize(meta.url) for meta, _ in reader.iter_docs(with_documents=False)
                if meta.attempted or not attempted_only}
    finally:
        reader.close()


def is_page(url: str) -> bool:
    """A page document, not a robots.txt one."""
    return not urlsplit(url).path.startswith("/robots")
