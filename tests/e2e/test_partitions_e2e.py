"""A crawl over two urlserver partitions (issue 19, docs/partitions.md), the
daemons as processes on loopback against the local test web: each partition
holds only its own hosts' URLs, the links one finds for the other's hosts
reach it through the peer link, and together they store exactly the pages
one urlserver stores, each once; kill -9 of either partition, again and
again while links are being forwarded, loses no link and applies no batch
twice."""

from __future__ import annotations

import random
import subprocess
import sys
import time

from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES, crawl_to_the_end, stored_urls, url_states
from tests.partition_helpers import PartitionedCrawl, peer_counters
from tests.shard_helpers import is_page, shard_docs
from tests.web import RunningWeb, SiteSpec, compute_truth
from wreck.urlserver.partition import partition_of
from wreck.urlserver.scope import split_host
from wreck.urlserver.urlstate import STATE_NAME

BASE = ["--allow-net", "127.0.0.0/8", "--scope", "any", *FAST_RETRIES]
KILLS = 4  # kill -9 of a random partition, each restarted on its address


def _check(crawl: PartitionedCrawl, truth) -> None:
    """Stored == truth, each page once; every URL that is not FILTERED lives
    in exactly one partition, its owner; every batch sent was applied once."""
    stored = [u for u in stored_urls(crawl.tmp) if "/robots" not in u]
    assert len(stored) == len(set(stored)), "a page stored twice"
    assert set(stored) - truth.unresolvable == set(truth.fetched)  # an unresolvable link: a record of its own
    tables = [url_states(crawl.frontier(i)) for i in range(crawl.count)]
    for i, table in enumerate(tables):
        for url, rec in table.items():
            if STATE_NAME[rec.state] != "FILTERED":
                assert partition_of(split_host(url)[1], crawl.count) == i, f"partition {i} holds {url}"
    fetched = [url for table in tables for url, rec in table.items() if STATE_NAME[rec.state] == "FETCHED"]
    assert len(fetched) == len(set(fetched))
    counters = [peer_counters(crawl.frontier(i)) for i in range(crawl.count)]
    for i in range(crawl.count):
        for j in range(crawl.count):
            if i != j:  # the batches i numbered for j are exactly those j applied, none twice, none skipped
                assert counters[j].get(f"peer_in:{i}", 0) == counters[i].get(f"peer_out:{j}", 1) - 1
    assert any(c.get("peer_in:0") for c in counters) and any(c.get("peer_in:1") for c in counters)


def test_two_partitions_store_what_one_urlserver_stores_each_url_in_its_owner(tmp_path):
    """One spider, given partition 0's address only, learns partition 1's
    from the handshake (SET partitions) and takes work from both."""
    spec = SiteSpec(hosts=6, pages_per_host=10)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test")]
        owners = {partition_of(f"h{i}.wreck.test", 2) for i in range(spec.hosts)}
        assert owners == {0, 1}, "the test web's hosts fall in both partitions"
        crawl = PartitionedCrawl(tmp_path, web, seeds, [*BASE, "--delay", "0.02"], spiders=(0,))
        try:
            looks = crawl.wait_done()
        finally:
            crawl.stop()
        (tmp_path / "one").mkdir()
        crawl_to_the_end(tmp_path / "one", web, seeds, [*BASE, "--delay", "0.02"])  # one urlserver, same web
        truth = compute_truth(web.site, seeds, scope="any")
    _check(crawl, truth)
    assert set(u for u in stored_urls(tmp_path) if "/robots" not in u) == set(
        u for u in stored_urls(tmp_path / "one") if "/robots" not in u)
    assert [s["partition"]["index"] for s in looks] == [0, 1]
    assert all(s["partition"]["links_applied"] for s in looks)  # links went both ways
    assert all(s["counters"]["handouts"] for s in looks)  # the one spider fetched for both
    assert all(s["partition"]["links_up"] == {str(1 - i): True} for i, s in enumerate(looks))


def test_kill_9_of_either_partition_while_forwarding_loses_no_link_and_applies_none_twice(tmp_path):
    spec = SiteSpec(hosts=6, pages_per_host=25)
    rng = random.Random(19)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
        crawl = PartitionedCrawl(tmp_path, web, seeds, [*BASE, "--delay", "0.05"])
        try:
            for _ in range(KILLS):
                time.sleep(rng.uniform(0.5, 1.5))  # when to kill, not a wait for anything to happen
                victim = rng.randrange(crawl.count)
                crawl.kill(victim)
                crawl.restart(victim)
            crawl.wait_done()
        finally:
            crawl.stop()
        truth = compute_truth(web.site, seeds, scope="any")
    _check(crawl, truth)


def test_wreck_crawl_runs_two_partitions_and_a_resume_keeps_their_count(tmp_path):
    """wreck-crawl --partitions 2: two local urlservers, one spider told the
    first, the crawl ends by itself with every page stored once; a resume
    with another count is refused in one line."""
    data = tmp_path / "crawl"
    spec = SiteSpec(hosts=6, pages_per_host=10)
    with RunningWeb(spec) as web:
        dns_ip, dns_port = web.dns_address
        seeds = [web.url("h0.wreck.test")]
        command = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(data), "--dns",
                   f"{dns_ip}:{dns_port}", *BASE, "--delay", "0.02", "--procs", "1"]
        run = subprocess.run([*command, "--partitions", "2"], capture_output=True, text=True,
                             timeout=CRAWL_TIMEOUT * 2)
        truth = compute_truth(web.site, seeds, scope="any")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Crawl finished" in run.stdout
    stored = [u for u in shard_docs(data).values() if is_page(u)]
    assert len(stored) == len(set(stored)) and set(stored) - truth.unresolvable == set(truth.fetched)
    tables = [url_states(data / name) for name in ("frontier", "frontier1")]
    assert all(any(STATE_NAME[r.state] == "FETCHED" for r in t.values()) for t in tables)
    again = subprocess.run([*command, "--partitions", "3"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "--partitions 3" in again.stderr and "2 urlserver partition" in again.stderr
