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


# -- the engine of a partition (urlserver/forward.py, Crawl.apply_links)

def _partition(tmp_path, i: int):
    from tests.urlserver_helpers import crawl_engine

    c = crawl_engine(tmp_path / f"p{i}", partitions=2, partition=i, peers=("127.0.0.1:1", "127.0.0.1:2"),
                     crawl_id=CRAWL_ID)
    c.politeness.tokens = None  # no peer here to grant IP tokens (those are test_iptoken.py's)
    return c


def _hosts(owner: int, n: int = 2) -> list[str]:
    return [h for h in (f"h{i}.wreck.test" for i in range(40)) if partition_of(h, 2) == owner][:n]


def test_a_partition_queues_its_own_hosts_and_puts_the_others_links_in_its_outbox_once(tmp_path):
    from tests.urlserver_helpers import fetched, run_until_idle

    mine, theirs = _hosts(0), _hosts(1)
    c = _partition(tmp_path, 0)
    seeds = [f"http://{mine[0]}/", f"http://{theirs[0]}/"]
    assert [c.add_seed(u) for u in seeds] == ["queued", "forwarded"]
    c.commit()
    # --scope host: the other partition's seed host is in scope here too, another host is not
    page_links = (f"http://{mine[0]}/a", f"http://{theirs[0]}/b", f"http://{theirs[0]}/b", f"http://{theirs[1]}/c")
    urls = run_until_idle(c, 0.0, lambda a: fetched(a, *page_links) if a.url == seeds[0] else fetched(a))
    c.commit()
    assert seeds[1] not in urls and f"http://{theirs[0]}/b" not in urls and f"http://{mine[0]}/a" in urls
    sent = [link for batch in c.forward.batches(1, limit=10) for link in batch.links]
    assert [(link.url, link.depth, link.extra) for link in sent] == [
        (seeds[1], 0, {"seed": "1"}), (f"http://{theirs[0]}/b", 1, {"via": seeds[0], "path": "L"})]
    assert c.lookup(seeds[1]) is None  # the owner keeps it, not this partition
    c.close()


def test_a_batch_is_applied_once_whatever_is_sent_again(tmp_path):
    from tests.urlserver_helpers import fetched, run_until_idle
    from wreck.protocol import Links, PeerLink

    mine = _hosts(1)
    c = _partition(tmp_path, 1)
    batch = Links(1, (PeerLink(f"http://{mine[0]}/", 0, {"seed": "1"}),
                      PeerLink(f"http://{mine[0]}/x", 2, {"via": "http://elsewhere.test/", "path": "LL"})))
    assert c.apply_links(0, batch, 0.0) is True
    c.commit()
    found = c.lookup(f"http://{mine[0]}/x")  # its lineage kept for the WARC (urlserver/lineage.py)
    assert (found["via"], found["path"], found["depth"]) == ("http://elsewhere.test/", "LL", 2)
    assert c.apply_links(0, batch, 0.0) is False  # a resend: acknowledged, not applied
    c.commit()
    urls = run_until_idle(c, 0.0, fetched)
    assert sorted(u for u in urls if "robots" not in u) == sorted(link.url for link in batch.links)
    assert c.forward.last_applied(c.frontier.txn, 0) == 1 and c.forward.applied == 2
    c.close()


def test_a_link_of_a_host_the_partition_does_not_own_is_refused_before_anything_changes(tmp_path):
    from wreck.protocol import Links, PeerLink
    from wreck.urlserver.crawl import NotOwned

    c = _partition(tmp_path, 1)
    batch = Links(1, (PeerLink(f"http://{_hosts(1)[0]}/", 0), PeerLink(f"http://{_hosts(0)[0]}/", 0)))
    with pytest.raises(NotOwned, match="same --partitions"):
        c.apply_links(0, batch, 0.0)
    assert c.forward.last_applied(c.frontier.txn, 0) == 0 and c.lookup(batch.links[0].url) is None
    c.close()


def test_doc_ids_handed_out_by_a_partition_are_in_its_range(tmp_path):
    from tests.urlserver_helpers import fetched, take_resolving

    c = _partition(tmp_path, 1)
    c.add_seed(f"http://{_hosts(1)[0]}/")
    a = take_resolving(c, 0.0)  # the robots.txt fetch
    assert a.doc_id == 2**31 + 1
    c.done("s", fetched(a), 0.0)
    assert take_resolving(c, 0.0).doc_id == 2**31 + 2
    c.close()


def test_a_batch_leaves_the_outbox_only_once_its_commit_is_durable(tmp_path):
    c = _partition(tmp_path, 0)
    told = []
    c.forward.on_batches = told.append
    theirs = _hosts(1)[0]
    c.add_seed(f"http://{theirs}/")
    txn = c.frontier._close_txn()  # what commit_soon hands the writer thread: written, not yet durable
    c.db.commit(txn)
    assert c.forward.batches(1, limit=10) == [] and told == []  # committed, but its sync may still be lost
    c.forward.durable()
    assert [b.seq for b in c.forward.batches(1, limit=10)] == [1] and told == [[1]]
    c.links_acked(1, 1)
    c.commit()
    assert c.forward.batches(1, limit=10) == [] and c.forward.waiting() == 0
    c.close()
