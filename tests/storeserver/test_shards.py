"""A crawl spread over several stores, read back as one (issue 19): the
public read API's open_stores and wreck-dump's repeated --data and
--manifest, as a user runs them. Doc id D is in store D mod n
(docs/protocol.txt), so three shards hold disjoint doc ids; read as one,
every document comes once, in doc order, and a URL is found in whichever
shard holds it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wreck import manifest
from wreck.storeserver.reader import StoreError, open_stores, read_crawl_id, stores_of

from tests.store_helpers import Client, make_record, running_server, store_with

SHARDS = 3
DOCS = 20


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> list[Path]:
    records = [make_record(d, size=300 + d * 10) for d in range(1, DOCS + 1)]
    # the same URL fetched twice: its second doc id lands in another shard
    records.append(make_record(DOCS + 1, url=records[0].url))
    dirs = [tmp_path_factory.mktemp(f"shard{i}") for i in range(SHARDS)]
    for i, data in enumerate(dirs):
        store_with(data, [r for r in records if r.doc_id % SHARDS == i])
    return dirs


def _dump(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "wreck-dump"
    return subprocess.run([str(exe), *args], capture_output=True, timeout=60)


def _lines(done: subprocess.CompletedProcess) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_open_stores_reads_the_shards_as_one_in_doc_order(shards):
    one = open_stores(shards)
    try:
        ids = [meta.doc_id for meta, _ in one.iter_docs()]
        assert ids == list(range(1, DOCS + 2))  # every document once, in doc order
        meta, doc = one.get(7)
        assert meta.doc_id == 7 and b"doc 7" in doc
        url = make_record(1).url
        assert one.doc_ids_for_url(url) == [1, DOCS + 1]  # found in two shards
        assert one.current_doc_for_url(url) == DOCS + 1
        assert one.meta_info()["docs"] == DOCS + 1  # the shards' counters summed
    finally:
        one.close()


def test_shards_given_out_of_order_are_still_read_whole(shards):
    one = open_stores(list(reversed(shards)))
    try:
        assert [meta.doc_id for meta, _ in one.iter_docs()] == list(range(1, DOCS + 2))
        assert one.get(5)[0].doc_id == 5
    finally:
        one.close()


def test_wreck_dump_all_over_shards_is_the_union_of_the_shards_each_document_once(shards):
    each = [_lines(_dump("--data", str(d), "--all", "--jsonl")) for d in shards]
    together = _lines(_dump(*[a for d in shards for a in ("--data", str(d))], "--all", "--jsonl"))
    union = sorted((line for lines in each for line in lines), key=lambda line: line["doc_id"])
    assert together == union
    assert len({line["doc_id"] for line in together}) == len(together) == DOCS + 1
    for i, lines in enumerate(each):  # each shard holds only its own doc ids
        assert lines and all(line["doc_id"] % SHARDS == i for line in lines)


def test_wreck_dump_reads_a_manifest_and_finds_a_url_in_any_shard(shards, tmp_path):
    manifest.write(tmp_path, manifest.Manifest(format=manifest.FORMAT, crawl_id="",
                                               stores=tuple(f"10.0.0.{i}:7002" for i in range(SHARDS)),
                                               store_data=tuple(str(d) for d in shards)))
    assert stores_of(tmp_path) == shards
    by_manifest = _lines(_dump("--manifest", str(tmp_path / manifest.MANIFEST), "--all", "--jsonl", "--no-body"))
    assert [line["doc_id"] for line in by_manifest] == list(range(1, DOCS + 2))
    url = make_record(4).url
    one = _lines(_dump("--manifest", str(tmp_path), "--url", url, "--jsonl"))
    assert [line["doc_id"] for line in one] == [4]
    warc = _dump("--manifest", str(tmp_path), "--all", "--warc", "-")
    assert warc.returncode == 0 and warc.stdout.count(b"WARC-Type: response") == DOCS + 1


def test_a_manifest_without_directories_and_mixed_options_are_one_line_each(shards, tmp_path):
    manifest.write(tmp_path, manifest.Manifest(format=manifest.FORMAT, crawl_id="", stores=("10.0.0.1:7002",)))
    done = _dump("--manifest", str(tmp_path), "--all", "--jsonl")
    assert done.returncode == 1 and b"give each store's directory with --data" in done.stderr
    done = _dump("--manifest", str(tmp_path), "--data", str(shards[0]), "--all", "--jsonl")
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1 and b"give one of them" in done.stderr
    with pytest.raises(StoreError, match="not a crawl manifest"):
        (tmp_path / "bad.json").write_text("[]")
        stores_of(tmp_path / "bad.json")


def _store_of_crawl(data: Path, crawl_id: str, doc_id: int) -> Path:
    with running_server(data) as (_, port):
        client = Client(port, crawl_id=crawl_id)
        client.send([make_record(doc_id)])
        assert [a.doc_id for a in client.acks(1)] == [doc_id]
        client.close()
    assert read_crawl_id(data) == crawl_id
    return data


def test_stores_of_different_crawls_are_refused_together(tmp_path):
    a = _store_of_crawl(tmp_path / "a", "a" * 32, 3)
    b = _store_of_crawl(tmp_path / "b", "b" * 32, 4)
    with pytest.raises(StoreError, match="different crawls"):
        open_stores([a, b])
    done = _dump("--data", str(a), "--data", str(b), "--all", "--jsonl")
    assert done.returncode == 1 and b"keep different crawls" in done.stderr
