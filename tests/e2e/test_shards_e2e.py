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
from pathlib import Path

import pytest

from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES
from tests.shard_helpers import ShardedCrawl, is_page, shard_docs
from tests.web import RunningWeb, SiteSpec, compute_truth
from wreck import manifest

SHARDS = 3
SPEC = SiteSpec(hosts=4, pages_per_host=10)
ARGS = ["--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02", *FAST_RETRIES]


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
