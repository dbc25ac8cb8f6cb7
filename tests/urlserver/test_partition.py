"""Which partition owns a host (urlserver/partition.py, docs/partitions.md):
one site's hosts stay together, the partitions share the hosts evenly,
adding one moves only the hosts the new one takes, doc ids of two
partitions never meet, and the partition settings are fixed for a crawl."""

from __future__ import annotations

from collections import Counter

import pytest
from typer.testing import CliRunner

from wreck import dirlock
from wreck.options import SettingsError
from wreck.urlserver import cli
from wreck.urlserver.partition import DocIdsExhausted, doc_id_of, jump, partition_of
from wreck.urlserver.settings import Settings

HOSTS = [f"www.site{i}.com" if i % 3 else f"h{i}.co.uk" for i in range(20_000)]
CRAWL_ID = "0123456789abcdef0123456789abcdef"


def test_jump_hash_matches_the_published_algorithm():
    # values of the reference implementation (Lamping and Veach's C++, as ported by go-jump's tests)
    assert (jump(1, 1), jump(42, 57), jump(0xDEAD10CC, 666), jump(256, 1024)) == (0, 43, 361, 520)


def test_one_sites_hosts_share_a_partition_and_an_ip_literal_is_its_own_key():
    for m in (2, 3, 7, 64):
        assert len({partition_of(h, m) for h in ("example.co.uk", "www.example.co.uk", "a.b.example.co.uk")}) == 1
        assert partition_of("WWW.Example.Com", m) == partition_of("example.com", m)
    assert len({partition_of(f"127.0.0.{i}", 8) for i in range(1, 60)}) == 8


def test_one_partition_owns_everything():
    assert {partition_of(h, 1) for h in HOSTS[:100]} == {0}


def test_the_partitions_share_the_hosts_evenly():
    for m in (2, 5, 16):
        counts = Counter(partition_of(h, m) for h in HOSTS)
        assert set(counts) == set(range(m))
        assert max(counts.values()) < 1.15 * len(HOSTS) / m  # within 15 % of an even share


def test_adding_a_partition_moves_only_the_hosts_the_new_one_takes():
    for m in (1, 2, 3, 8):
        moved = [h for h in HOSTS if partition_of(h, m) != partition_of(h, m + 1)]
        assert all(partition_of(h, m + 1) == m for h in moved)
        assert len(moved) < 1.2 * len(HOSTS) / (m + 1)


def test_doc_ids_of_partitions_never_meet_and_walk_every_store_shard():
    for m in (1, 2, 3, 4):
        ids = [doc_id_of(c, i, m) for i in range(m) for c in range(1, 1001)]
        assert len(set(ids)) == len(ids) and max(ids) < 2**32
        for k in (2, 3, 4):  # each partition's documents spread over every shard, even when k and m align
            for i in range(m):
                shards = Counter(doc_id_of(c, i, m) % k for c in range(1, 1201))
                assert set(shards) == set(range(k)) and max(shards.values()) - min(shards.values()) <= 1
    assert doc_id_of(7, 0, 1) == 7  # one urlserver: today's doc ids
    with pytest.raises(DocIdsExhausted):
        doc_id_of(2**31, 1, 2)


@pytest.mark.parametrize("fields, flag", [
    (dict(partitions=2, partition=2, peers=("a:1", "b:2"), crawl_id=CRAWL_ID), "--partition"),
    (dict(partitions=2, peers=("a:1",), crawl_id=CRAWL_ID), "--peers"),
    (dict(partitions=2, peers=("a:1", "b:x"), crawl_id=CRAWL_ID), "--peers"),
    (dict(partitions=2, peers=("a:1", "b:2")), "--crawl-id"),
    (dict(peers=("a:1",)), "--peers"),
    (dict(partitions=65), "--partitions"),
    (dict(crawl_id="xyz"), "--crawl-id"),
])  # fmt: skip
def test_impossible_partition_settings_are_refused_naming_the_flag(fields, flag):
    with pytest.raises(SettingsError) as refused:
        Settings(data="d", **fields)
    assert refused.value.flag == flag


def test_a_resume_with_another_partition_count_or_index_is_refused_in_one_line_even_with_reconfigure(
        tmp_path, monkeypatch):
    built = []

    async def fake_serve(settings, seeds_file, urls, feeds=None):
        built.append(settings)

    monkeypatch.setattr(cli, "serve", fake_serve)

    def start(*args):
        try:
            return CliRunner().invoke(cli.app, ["--data", str(tmp_path / "d"), "--http", "off", "--crawl-id",
                                                CRAWL_ID, *args])
        finally:
            dirlock.release_all()  # as the process's exit would

    first = start("--partitions", "2", "--partition", "1", "--peers", "127.0.0.1:7001,127.0.0.1:7011")
    assert first.exit_code == 0, first.output
    assert (built[0].partitions, built[0].partition, built[0].peers) == (2, 1, ("127.0.0.1:7001", "127.0.0.1:7011"))
    # the peers may move between starts; the partition may not
    again = start("--partitions", "2", "--partition", "1", "--peers", "10.0.0.1:7001", "--peers", "10.0.0.2:7001")
    assert again.exit_code == 0, again.output
    for args in (["--partitions", "3", "--partition", "1", "--peers", "a:1,b:1,c:1"],
                 ["--partitions", "2", "--partition", "0", "--peers", "a:1,b:1"]):
        refused = start(*args, "--reconfigure")
        assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
        assert "cannot change" in refused.output and "fixed" in refused.output
    assert len(built) == 2
