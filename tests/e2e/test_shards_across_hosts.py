# Store shards across hosts (issue 19): a urlserver, three store shards,
# three spider boxes and the test web, each in a network namespace of its
# own (tests/netns_helpers.py), crawl over a real (virtual) network with the
# shared secret on; then the chaos variant kills -9 a random component (a
# store shard, a spider box, the urlserver) every few seconds and restarts
# it on its address. Both must end with the stored set equal to the
# reachable allowed set, every page in exactly one shard (the right one:
# doc id mod 3), nothing stored twice, and politeness by host and by IP
# held in the test web's request log.
#
#     namespace   address(es)
#     ...-url0    10.231.0.2        urlserver :7001   (two partitions:
#                                   test_partitions_across_hosts.py)
#     ...-st0..2  10.231.0.21..23   storeserver :7002 each
#     ...-sp1..3  10.231.0.11..13   spider boxes
#     ...-web     10.231.0.100..    test web and its DNS responder
#
# Without root, `ip` or the right to create namespaces, both skip and say why.
"""Three store shards and three spider boxes across namespaces, with chaos."""

from __future__ import annotations

import json
import random
import secrets
import time
from pathlib import Path

from tests.netns_helpers import Proc
from tests.netns_crawl import NetCrawl, Outcome, check, outcome, running
from tests.web import SiteSpec

SUBNET = "10.231.0.0/24"
URLSERVERS = {"url0": "10.231.0.2"}
STORES = {f"st{i}": f"10.231.0.{21 + i}" for i in range(3)}
SPIDERS = {f"sp{i}": f"10.231.0.{10 + i}" for i in (1, 2, 3)}
WEB_IP = "10.231.0.100"
SPEC = SiteSpec(hosts=6, pages_per_host=10, hosts_per_ip=2, hostile=False, first_ip=WEB_IP)
# the chaos run's web: its crawl outlasts several kills (40 pages a host at DELAY)
CHAOS_SPEC = SiteSpec(hosts=6, pages_per_host=40, hosts_per_ip=2, hostile=False, first_ip=WEB_IP)
DELAY = 0.3  # --delay, above every Crawl-delay the test web serves (0.2)
IP_DELAY = 0.15  # --ip-delay: two hosts share each address
SECRET = "shards-across-" + secrets.token_hex(8)
CRAWL_TIMEOUT = 180.0
KILL_EVERY = 2.5  # seconds between two kills in the chaos variant
MAX_KILLS = 8  # then the crawl is left to finish


class Crawl(NetCrawl):
    """The daemons in their namespaces; each can be killed and restarted."""

    stores, urlservers, spiders, secret = STORES, URLSERVERS, SPIDERS, SECRET

    def urlserver_args(self, role: str) -> list[str]:
        return ["--http", "off", "--allow-net", SUBNET, "--exit-when-done", "--delay", str(DELAY),
                "--ip-delay", str(IP_DELAY), "--ip-concurrency", "1", "--scope", "any", "--robots-retry", "0.2",
                "--retry-delay", "0.2", "--max-retries", "2", "-v"]  # fmt: skip

    def urlserver(self) -> Proc:
        return self.procs[next(iter(URLSERVERS))]



def _run(tmp: Path, spec: SiteSpec, *, chaos: bool) -> Outcome:
    with running(Crawl, tmp, spec, WEB_IP) as (crawl, web, site, seeds):
        killed: dict[str, int] = {}
        rng = random.Random(19)
        deadline = time.monotonic() + CRAWL_TIMEOUT
        url_rc = None
        while time.monotonic() < deadline:
            url_rc = crawl.urlserver().wait(KILL_EVERY if chaos else CRAWL_TIMEOUT)
            if url_rc is not None or not chaos:
                break
            if sum(killed.values()) < MAX_KILLS:
                # each kind in turn (a store shard, a spider box, the urlserver), which one at random
                kinds = (STORES, SPIDERS, URLSERVERS)
                role = rng.choice(list(kinds[sum(killed.values()) % len(kinds)]))
                crawl.kill(role)
                killed[role] = killed.get(role, 0) + 1
                crawl.start(role)
        return outcome(crawl, web, site, seeds, tmp, finished=url_rc == 0, killed=killed)


def _check(o: Outcome) -> dict[str, int]:
    return check(o, spiders=set(SPIDERS.values()), delay=DELAY, ip_delay=IP_DELAY)


def test_three_shards_and_three_spider_boxes_across_namespaces(tmp_path):
    o = _run(tmp_path, SPEC, chaos=False)
    _check(o)
    # all three spider boxes worked, from their own addresses
    assert {r.client_ip for r in o.records} == set(SPIDERS.values())


def test_chaos_kill_9_of_a_random_component_loses_nothing_and_stores_nothing_twice(tmp_path):
    o = _run(tmp_path, CHAOS_SPEC, chaos=True)
    figures = _check(o)
    assert figures["components_killed"] >= 3, "the crawl ended before a few kills"
    print(f"\nchaos figures: {json.dumps(figures)}; killed: {json.dumps(o.killed)}")
