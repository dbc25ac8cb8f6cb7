"""A store keeps one crawl (issue 14, finding 7; docs/protocol.txt 6.1),
with the real daemons on loopback: crawl A fills a store; crawl B (another
urlserver data directory, the same seeds, so the same doc ids and URLs)
pointed at the same store has its spider refused with a message naming
both crawls, nothing of B is acknowledged (not even as a duplicate of A's
pages) and A's documents are intact. wreck-crawl, whose directory lost its
frontier/ (a new crawl beside the old store), says so in one line and
exits non-zero."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e_helpers import url_states
from tests.web import RunningWeb, SiteSpec
from wreck.local.children import Child
from wreck.storeserver.store import ReadStore
from wreck.urlserver.urlstate import UrlState

CRAWL_TIMEOUT_S = 120.0  # a small crawl on a loaded machine
REFUSED = 2  # the spider's exit status when it was refused for good
OTHER_CRAWL = 4  # wreck-crawl's exit status when its store keeps another crawl


def _documents(store: Path) -> dict[int, tuple[str, bytes]]:
    reader = ReadStore(store)
    try:
        return {meta.doc_id: (meta.url, doc) for meta, doc in reader.iter_docs()}
    finally:
        reader.close()


def _crawl(tmp: Path, name: str, web: RunningWeb, seeds: list[str], store: str) -> tuple[Child, Child]:
    dns_ip, dns_port = web.dns_address
    urlserver = Child(f"urlserver-{name}", "wreck.urlserver.cli", [
        *seeds, "--data", str(tmp / f"frontier-{name}"), "--store", store, "--dns", f"{dns_ip}:{dns_port}",
        "--allow-net", "127.0.0.0/8", "--listen", "127.0.0.1:0", "--http", "off", "--exit-when-done",
    ], tmp / f"urlserver-{name}.log")  # fmt: skip
    listen = urlserver.read_line("urlserver listening on ")
    urlserver.drain()
    spider = Child(f"spider-{name}", "wreck.spider.cli", ["--connect", listen, "--procs", "1", "--concurrency", "10"],
                   tmp / f"spider-{name}.log")
    return urlserver, spider


def test_a_spider_of_another_crawl_is_refused_by_the_store_and_nothing_of_it_is_acknowledged(tmp_path):
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=6)) as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
        store = Child("storeserver", "wreck.storeserver.cli", ["--data", str(tmp_path / "store"),
                                                               "--listen", "127.0.0.1:0"], tmp_path / "store.log")
        address = store.read_line("storeserver listening on ")
        store.drain()
        try:
            url_a, spider_a = _crawl(tmp_path, "a", web, seeds, address)
            assert url_a.proc.wait(CRAWL_TIMEOUT_S) == 0, url_a.tail()
            spider_a.stop()  # every record it sent is acked: A's documents are all committed
            before = _documents(tmp_path / "store")
            url_b, spider_b = _crawl(tmp_path, "b", web, seeds, address)
            try:
                assert spider_b.proc.wait(CRAWL_TIMEOUT_S) == REFUSED, spider_b.tail()
            finally:
                spider_b.stop()
                url_b.stop()
        finally:
            store.stop()
    said = (tmp_path / "spider-b.log").read_text()
    assert "holds another crawl and refused this spider" in said and "give this crawl its own store" in said
    store_log = (tmp_path / "store.log").read_text()
    assert "event=crawl_refused" in store_log
    assert "whose doc id holds another URL" not in store_log  # no record of B was even read
    a_pages = {rec.url for rec in url_states(tmp_path / "frontier-a").values() if rec.state == UrlState.FETCHED}
    b_pages = {rec.url for rec in url_states(tmp_path / "frontier-b").values() if rec.state == UrlState.FETCHED}
    assert len(a_pages) >= 2 and not b_pages  # B's URLs wait for a store of its own
    assert {url for url, _ in before.values()} >= a_pages
    assert _documents(tmp_path / "store") == before  # A's documents intact, nothing of B beside them


def test_wreck_crawl_beside_another_crawls_store_says_so_in_one_line_and_exits_non_zero(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=4)) as web:
        dns_ip, dns_port = web.dns_address
        data = tmp_path / "crawl"
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), "--data", str(data), "--procs", "1",
               "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8"]
        first = subprocess.run(cmd, capture_output=True, text=True, timeout=CRAWL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        assert first.returncode == 0, first.stdout + first.stderr
        before = _documents(data)
        shutil.rmtree(data / "frontier")  # the crawl's state gone, its store kept: a new crawl begins
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=CRAWL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert second.returncode == OTHER_CRAWL, second.stdout + second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith("wreck-crawl: the store in ") and "another crawl" in lines[0]
    assert "Traceback" not in second.stdout + second.stderr
    assert _documents(data) == before
