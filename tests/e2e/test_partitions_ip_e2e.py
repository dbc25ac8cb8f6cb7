"""Politeness per IP address across urlserver partitions (issue 19,
docs/partitions.md "Politeness across partitions"): the test web puts two
hosts on each address, and the pairs fall in different partitions, yet the
web's request log shows every address's requests --ip-delay apart and one
at a time, as one urlserver keeps them; and so again when the partitions
are killed -9 and restarted during the crawl (each is the owner of some
addresses' tokens and a holder of others')."""

from __future__ import annotations

import time

from tests.e2e_helpers import FAST_RETRIES, stored_urls
from tests.partition_helpers import PartitionedCrawl
from tests.web import RunningWeb, SiteSpec, compute_truth, gaps_by_ip, max_concurrency
from wreck.urlserver.iptoken import owner_of
from wreck.urlserver.partition import partition_of

IP_DELAY = 0.3
CLOCK_RESOLUTION = 1e-6  # two wall-clock readings' float rounding: the only slack allowed
ARGS = ["--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02", "--ip-delay", str(IP_DELAY),
        "--ip-concurrency", "1", "--timeout-req", "10", *FAST_RETRIES]


def _shared_addresses(spec: SiteSpec) -> dict[str, set[int]]:
    """address -> the partitions its hosts belong to."""
    out: dict[str, set[int]] = {}
    for i in range(spec.hosts):
        out.setdefault(spec.host_ip(i), set()).add(partition_of(spec.host_name(i), 2))
    return out


def _check(web: RunningWeb, tmp_path, seeds) -> None:
    records = web.log.records()
    for ip, gaps in gaps_by_ip(records, clock="wall_time").items():
        assert min(gaps) >= IP_DELAY - CLOCK_RESOLUTION, (ip, sorted(gaps)[:3])
    assert set(max_concurrency(records, by="server_ip").values()) == {1}
    stored = [u for u in stored_urls(tmp_path) if "/robots" not in u]
    assert len(stored) == len(set(stored))
    truth = compute_truth(web.site, seeds, scope="any")
    assert set(stored) - truth.unresolvable == set(truth.fetched)  # an unresolvable link: a record of its own


def test_hosts_of_one_address_in_two_partitions_are_fetched_ip_delay_apart(tmp_path):
    spec = SiteSpec(hosts=6, pages_per_host=6, hosts_per_ip=2, hostile=False)
    shared = _shared_addresses(spec)
    assert sum(parts == {0, 1} for parts in shared.values()) >= 2, "two addresses serve both partitions"
    assert {owner_of(ip, 2) for ip, parts in shared.items() if parts == {0, 1}} <= {0, 1}
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test")]
        crawl = PartitionedCrawl(tmp_path, web, seeds, ARGS)
        try:
            looks = crawl.wait_done()
        finally:
            crawl.stop()
        _check(web, tmp_path, seeds)
    # both partitions fetched from an address they share
    assert all(s["urls"]["FETCHED"] for s in looks)


def test_kill_9_of_either_partition_keeps_the_ip_delay_across_partitions(tmp_path):
    spec = SiteSpec(hosts=6, pages_per_host=15, hosts_per_ip=2, hostile=False)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test")]
        crawl = PartitionedCrawl(tmp_path, web, seeds, ARGS)
        try:
            for i in (1, 0, 1):  # the owner of some tokens, the holder of others, each in turn
                time.sleep(2.5)
                crawl.kill(i)
                crawl.restart(i)
            crawl.wait_done()
        finally:
            crawl.stop()
        _check(web, tmp_path, seeds)
