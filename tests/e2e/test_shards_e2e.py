"""A crawl over three store shards (issue 19), the daemons as processes on
loopback against the local test web: every document lands in exactly one
shard, the right one (doc id mod 3, docs/protocol.txt), the shards together
hold exactly the pages a correct crawl fetches, and `wreck-dump --all
--jsonl` through the urlserver's manifest (DATA/crawl.json) equals the
union of the shards, each document once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES
from tests.shard_helpers import ShardedCrawl, is_page, shard_docs
from tests.web import RunningWeb, SiteSpec, compute_truth
from wreck import manifest
from wreck.storeserver.reader import read_counters

SHARDS = 3
GOES_ON = 2  # documents each live shard stores while another is down (at least)
SPEC = SiteSpec(hosts=4, pages_per_host=10)
BASE = ["--allow-net", "127.0.0.0/8", "--scope", "any", *FAST_RETRIES]
ARGS = [*BASE, "--delay", "0.02"]


def _dump(*args: str) -> list[dict]:
    exe = Path(sys.executable).parent / "wreck-dump"
    done = subprocess.run([str(exe), *args, "--all", "--jsonl", "--no-body"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _check_shards(crawl: ShardedCrawl, truth) -> list[dict[int, str]]:
    """Every document in exactly one shard, the right one; pages == truth."""
    shards = [shard_docs(crawl.store_dir(i)) for i in range(SHARDS)]
    for i, docs in enumerate(shards):
        wrong = {d: url for d, url in docs.items() if d % SHARDS != i}
        assert not wrong, f"shard {i} holds documents of another shard: {wrong}"
    every = [d for docs in shards for d in docs]
    assert len(every) == len(set(every)), "a doc id stored in two shards"
    pages = [url for docs in shards for url in docs.values() if is_page(url)]
    assert len(pages) == len(set(pages)), "a page stored twice"
    assert set(pages) == set(truth.fetched)
    return shards


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    with RunningWeb(SPEC) as web:
        seeds = [web.url("h0.wreck.test"), web.url("h2.wreck.test")]
        crawl = ShardedCrawl(tmp, web, seeds, ARGS, shards=SHARDS)
        try:
            assert crawl.urlserver.proc.wait(CRAWL_TIMEOUT) == 0, crawl.logs()
        finally:
            crawl.stop()
        truth = compute_truth(web.site, seeds, scope="any")
    return crawl, truth


def test_every_document_is_in_exactly_one_shard_the_right_one(crawled):
    crawl, truth = crawled
    shards = _check_shards(crawl, truth)
    assert all(shards), "each of the three shards holds documents"


def test_wreck_dump_through_the_manifest_is_the_union_of_the_shards(crawled):
    crawl, _ = crawled
    kept = manifest.read(crawl.frontier)
    assert list(kept.stores) == crawl.addresses and len(kept.crawl_id) == 32
    assert [Path(d) for d in kept.store_data] == [crawl.store_dir(i).resolve() for i in range(SHARDS)]
    union = sorted((line for i in range(SHARDS) for line in _dump("--data", str(crawl.store_dir(i)))),
                   key=lambda line: line["doc_id"])
    together = _dump("--manifest", str(crawl.frontier / manifest.MANIFEST))
    assert together == union
    assert len({line["doc_id"] for line in together}) == len(together)


def _docs(crawl: ShardedCrawl, shard: int) -> int:
    return read_counters(crawl.store_dir(shard)).docs if (crawl.store_dir(shard) / "store").exists() else 0


def _until(predicate, what: str, crawl: ShardedCrawl) -> None:
    deadline = time.monotonic() + CRAWL_TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"{what}\n{crawl.logs()}"
        time.sleep(0.1)


def test_a_killed_shard_holds_only_its_own_documents_and_the_crawl_completes(tmp_path):
    """kill -9 of one store of three: the other two keep storing while it is
    down (the spider parks its work and keeps its claims alive); restarted
    on its address, the crawl completes with every page stored once, in the
    right shard. A host whose next URL is the down shard's waits for it (its
    claim holds the host's politeness slot, and the URL keeps its doc id for
    exactly-once storage), so the others go on host by host, not forever:
    docs/deploy.md."""
    spec = SiteSpec(hosts=6, pages_per_host=30)
    args = [*BASE, "--delay", "0.1"]  # slow enough to kill a shard mid-crawl
    with RunningWeb(spec) as web:
        seeds = [web.url(f"h{i}.wreck.test") for i in range(spec.hosts)]
        crawl = ShardedCrawl(tmp_path, web, seeds, args, shards=SHARDS, concurrency=10)
        try:
            _until(lambda: all(_docs(crawl, i) >= 3 for i in range(SHARDS)), "every shard stores", crawl)
            crawl.kill_store(1)
            before = [_docs(crawl, i) for i in range(SHARDS)]
            # the others go on while shard 1 is down: each host goes on until
            # its next URL is one of shard 1's (its claim then waits for it)
            _until(lambda: all(_docs(crawl, i) >= before[i] + GOES_ON for i in (0, 2)), "shards 0 and 2 go on",
                   crawl)
            assert _docs(crawl, 1) == before[1]
            assert crawl.urlserver.proc.poll() is None  # not done: shard 1's pages are still due
            crawl.restart_store(1)
            assert crawl.urlserver.proc.wait(CRAWL_TIMEOUT) == 0, crawl.logs()
        finally:
            crawl.stop()
        truth = compute_truth(web.site, seeds, scope="any")
    _check_shards(crawl, truth)


def test_wreck_crawl_runs_three_store_shards_and_reads_them_back_as_one(tmp_path):
    """wreck-crawl --stores 3: three local stores, a manifest naming them,
    a summary that reads them with --manifest; a resume keeps three and
    refuses another count in one line."""
    data = tmp_path / "crawl"
    with RunningWeb(SPEC) as web:
        dns_ip, dns_port = web.dns_address
        seeds = [web.url("h0.wreck.test"), web.url("h2.wreck.test")]
        run = subprocess.run([
            sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(data), "--stores", str(SHARDS),
            "--dns", f"{dns_ip}:{dns_port}", *ARGS, "--procs", "1",
        ], capture_output=True, text=True, timeout=CRAWL_TIMEOUT * 2)  # fmt: skip
        truth = compute_truth(web.site, seeds, scope="any")
    assert run.returncode == 0, run.stdout + run.stderr
    kept = manifest.read(data / "frontier")
    assert f"wreck-dump --manifest {data / 'frontier' / manifest.MANIFEST}" in run.stdout
    shards = [shard_docs(Path(d)) for d in kept.store_data]
    assert len(shards) == SHARDS and all(shards)
    for i, docs in enumerate(shards):
        assert all(d % SHARDS == i for d in docs)
    pages = [url for docs in shards for url in docs.values() if is_page(url)]
    assert len(pages) == len(set(pages)) and set(pages) == set(truth.fetched)
    together = _dump("--manifest", str(data / "frontier"))
    every = [shard_docs(Path(d), attempted_only=False) for d in kept.store_data]
    assert sorted(line["doc_id"] for line in together) == sorted(d for docs in every for d in docs)
    assert f"stored: {len(together)} documents" in run.stdout  # the summary counts every shard
    again = subprocess.run([sys.executable, "-m", "wreck.local.cli", "--data", str(data), "--stores", "2"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "cannot change during a crawl" in again.stderr
