# urlserver partitions across hosts (issue 19): two urlserver partitions,
# three store shards, three spider boxes and the test web, each in a network
# namespace of its own (tests/netns_helpers.py), crawl over a real (virtual)
# network with the shared secret on; the spider boxes are given one
# partition's address each and learn the other from the handshake. Then the
# chaos variant kills -9 a random component (a store shard, a spider box,
# either partition) every few seconds and restarts it on its address. Both
# must end with the stored set equal to the reachable allowed set, nothing
# stored twice, every page in the right shard, and politeness by host and by
# IP held in the test web's request log: two hosts share each address, and
# the pairs (h0, h1) and (h2, h3) sit in different partitions, so their
# addresses' IP tokens pass between the partitions (docs/partitions.md).
#
#     namespace   address(es)
#     ...-url0/1  10.232.0.2, .3    urlserver partitions :7001 (status :7080)
#     ...-st0..2  10.232.0.21..23   storeserver :7002 each
#     ...-sp1..3  10.232.0.11..13   spider boxes
#     ...-web     10.232.0.100..    test web and its DNS responder
#
# A partitioned crawl has no --exit-when-done: the test ends it as
# wreck-crawl does (wreck/local/ending.py), reading each partition's /status
# from inside its namespace (netns_helpers.get_in_ns).
# Without root, `ip` or the right to create namespaces, both skip and say why.
"""Two partitions, three store shards, three spider boxes across namespaces, with chaos."""

from __future__ import annotations

import json
import random
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.netns_helpers import get_in_ns
from tests.netns_crawl import URL_PORT, NetCrawl, Outcome, check, outcome, pages, running
from tests.web import SiteSpec
from wreck.local.ending import EndWatch
from wreck.urlserver.partition import partition_of

SUBNET = "10.232.0.0/24"
URLSERVERS = {"url0": "10.232.0.2", "url1": "10.232.0.3"}
STORES = {f"st{i}": f"10.232.0.{21 + i}" for i in range(3)}
SPIDERS = {f"sp{i}": f"10.232.0.{10 + i}" for i in (1, 2, 3)}
WEB_IP = "10.232.0.100"
HTTP_PORT = 7080  # each partition's /status, read from inside its namespace
SPEC = SiteSpec(hosts=6, pages_per_host=10, hosts_per_ip=2, hostile=False, first_ip=WEB_IP)
CHAOS_SPEC = SiteSpec(hosts=6, pages_per_host=40, hosts_per_ip=2, hostile=False, first_ip=WEB_IP)
DELAY = 0.3  # --delay, above every Crawl-delay the test web serves (0.2)
IP_DELAY = 0.15  # --ip-delay: two hosts share each address
TIMEOUT_REQ = 10.0  # --timeout-req: the IP tokens' lease after a partition dies is this + IP_DELAY
SECRET = "parts-across-" + secrets.token_hex(8)
CRAWL_ID = secrets.token_hex(16)
CRAWL_TIMEOUT = 240.0
LOOK_S = 0.5  # between two looks at the partitions' /status
KILL_EVERY = 2.0  # seconds between two kills in the chaos variant
MAX_KILLS = 8  # then the crawl is left to finish


class Crawl(NetCrawl):
    """The daemons in their namespaces; each can be killed and restarted."""

    stores, urlservers, spiders, secret = STORES, URLSERVERS, SPIDERS, SECRET

    def urlserver_args(self, role: str) -> list[str]:
        peers = ",".join(f"{a}:{URL_PORT}" for a in URLSERVERS.values())
        return ["--http", f"{URLSERVERS[role]}:{HTTP_PORT}", "--partitions", "2", "--partition", role[-1],
                "--peers", peers, "--crawl-id", CRAWL_ID, "--allow-net", SUBNET, "--delay", str(DELAY),
                "--ip-delay", str(IP_DELAY), "--ip-concurrency", "1", "--timeout-req", str(TIMEOUT_REQ),
                "--scope", "any", "--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "2",
                "-v"]  # fmt: skip

    def connects_to(self, role: str) -> str:
        # each box is given one partition; it learns the other from the handshake (SET partitions)
        return list(URLSERVERS.values())[int(role[-1]) % len(URLSERVERS)]

    def looks(self) -> list[dict | None]:
        """Every partition's /status (None: it did not answer, being restarted)."""
        out = []
        for role, address in URLSERVERS.items():
            try:
                out.append(json.loads(get_in_ns(self.net.ns(role), f"http://{address}:{HTTP_PORT}/status")))
            except OSError:
                out.append(None)
        return out


def _run(tmp: Path, spec: SiteSpec, *, chaos: bool) -> Outcome:
    with running(Crawl, tmp, spec, WEB_IP) as (crawl, web, site, seeds):
        killed: dict[str, int] = {}
        rng = random.Random(19)
        watch = EndWatch()
        deadline = time.monotonic() + CRAWL_TIMEOUT
        next_kill = time.monotonic() + KILL_EVERY
        ended = False
        while time.monotonic() < deadline and not ended:
            ended = watch.ended(crawl.looks())
            if chaos and not ended and time.monotonic() >= next_kill and sum(killed.values()) < MAX_KILLS:
                # each kind in turn (a store shard, a spider box, a partition): a shard or box at
                # random, the partitions one after the other (each owns some tokens, holds others)
                kinds = (STORES, SPIDERS, URLSERVERS)
                kind = kinds[sum(killed.values()) % len(kinds)]
                if kind is URLSERVERS:
                    role = list(URLSERVERS)[sum(killed.get(r, 0) for r in URLSERVERS) % len(URLSERVERS)]
                else:
                    role = rng.choice(list(kind))
                crawl.kill(role)
                killed[role] = killed.get(role, 0) + 1
                crawl.start(role)
                next_kill = time.monotonic() + KILL_EVERY
            time.sleep(LOOK_S)
        return outcome(crawl, web, site, seeds, tmp, finished=ended, killed=killed)


def _check(o: Outcome) -> dict[str, int]:
    return check(o, spiders=set(SPIDERS.values()), delay=DELAY, ip_delay=IP_DELAY)


def _shared_across_partitions(spec: SiteSpec) -> int:
    """Addresses whose two hosts belong to different partitions."""
    return sum(partition_of(spec.host_name(i), 2) != partition_of(spec.host_name(i + 1), 2)
               for i in range(0, spec.hosts, spec.hosts_per_ip))


def test_two_partitions_three_shards_and_three_spider_boxes_across_namespaces(tmp_path):
    assert _shared_across_partitions(SPEC) >= 2, "hosts sharing an address sit in different partitions"
    o = _run(tmp_path, SPEC, chaos=False)
    _check(o)
    assert {r.client_ip for r in o.records} == set(SPIDERS.values())  # every box worked, from its own address
    partitions = {partition_of(urlsplit(u).hostname, 2) for u in pages(o.shards)}
    assert partitions == {0, 1}  # both partitions' hosts were crawled


def test_chaos_kill_9_of_a_random_component_with_partitions_loses_nothing(tmp_path):
    o = _run(tmp_path, CHAOS_SPEC, chaos=True)
    figures = _check(o)
    assert figures["components_killed"] >= 3, "the crawl ended before a few kills"
    print(f"\nchaos figures: {json.dumps(figures)}; killed: {json.dumps(o.killed)}")
