# Across hosts: the urlserver, the store server, two spiders and the test web,
# each in a network namespace of its own, crawl over a real (virtual) network
# with the shared secret on, so the protocols are proven beyond loopback.
#
# Address plan.  The test creates every namespace itself, with names unique
# to the run (wreck-xh<pid>-<random>-<role>), and every address lives inside
# them; nothing is added to the root namespace, and no namespace has a route
# anywhere but its own 10.231.0.0/24 link:
#
#     namespace   interface           address(es)
#     ...-sw      br0 (a bridge) + one veth end per node, no addresses
#     ...-url     eth0                10.231.0.2    urlserver :7001
#     ...-store   eth0                10.231.0.3    storeserver :7002
#     ...-sp1     eth0                10.231.0.11   spider 1 (and the intruder)
#     ...-sp2     eth0                10.231.0.12   spider 2
#     ...-web     eth0                10.231.0.100, 10.231.0.101
#                                     test web (`python -m tests.web --first-ip
#                                     10.231.0.100 --dns-ip 10.231.0.100`): its
#                                     hosts and its DNS responder
#
# Each node's eth0 is the far end of a veth pair whose near end is a port of
# br0 in the switch namespace: one Ethernet segment, no routing.  Fixed ports
# are fine, as every namespace has its own.  Parallel runs use the same
# addresses in different namespaces and never meet.  The urlserver gets the
# web's names from --hosts and points --dns at the web's own responder (which
# answers NXDOMAIN for nowhere.wreck.test), so no name reaches a system
# resolver; --allow-net admits only 10.231.0.0/24.
#
# Clean-up.  Every process is started in a session of its own and killed by
# its process group; the namespaces are deleted afterwards, whatever happened
# (their veth pairs and bridge go with them).  Should pytest itself be killed,
# its children get SIGKILL (PR_SET_PDEATHSIG) and the next run deletes the
# namespaces of runs whose pid is gone.  Without root, `ip` or the right to
# create namespaces, a bridge and veth pairs, the test skips and says why.
# The namespace machinery is tests/netns_helpers.py's, shared with
# tests/e2e/test_shards_across_hosts.py.

from __future__ import annotations

import ipaddress
import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import (CrawlTruth, RequestRecord, SiteSpec, build_site, compute_truth,
                       duplicate_requests, read_jsonl)
from tests.netns_helpers import START_TIMEOUT, Net, built_net
from tests.web.truth import normalize

SUBNET = "10.231.0.0/24"
NODES = {"url": "10.231.0.2", "store": "10.231.0.3", "sp1": "10.231.0.11", "sp2": "10.231.0.12",
         "web": "10.231.0.100"}
SPIDERS = ("sp1", "sp2")
URL_PORT, STORE_PORT = 7001, 7002
SPEC = SiteSpec(hosts=6, pages_per_host=12, hostile=False, first_ip=NODES["web"])
DELAY = 0.2  # politeness makes the crawl outlast both spiders' start-up
SECRET = "across-hosts-" + secrets.token_hex(8)
WRONG_SECRET = "not-the-secret-" + secrets.token_hex(8)
CRAWL_TIMEOUT = 60.0


def web_ips() -> list[str]:
    return sorted({SPEC.host_ip(i) for i in range(SPEC.hosts)}, key=ipaddress.IPv4Address)


@dataclass
class Run:
    url_rc: int | None
    url_log: str
    store_rc: int | None
    store_log: str
    refused: dict[str, tuple[int | None, str]]
    intruder: tuple[int | None, str]
    records: list[RequestRecord]
    truth: CrawlTruth
    docs: list


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("across")
    with built_net({role: web_ips() if role == "web" else [address] for role, address in NODES.items()}) as net:
        yield _crawl(net, tmp)


def _crawl(net: Net, tmp: Path) -> Run:
    secret, wrong = tmp / "secret", tmp / "wrong"
    secret.write_text(SECRET + "\n")
    wrong.write_text(WRONG_SECRET + "\n")
    url_addr, store_addr = f"{NODES['url']}:{URL_PORT}", f"{NODES['store']}:{STORE_PORT}"

    # the deployment rule: beyond loopback without a secret, neither server starts
    no_secret = {
        "storeserver": net.start("store", [
            "-m", "wreck.storeserver.cli", "--data", str(tmp / "nostore"),
            "--listen", f"{NODES['store']}:{STORE_PORT + 1}"], tmp / "store-nosecret.log"),
        "urlserver": net.start("url", [
            "-m", "wreck.urlserver.cli", "http://h0.wreck.test/", "--data", str(tmp / "nourl"),
            "--listen", f"{NODES['url']}:{URL_PORT + 1}", "--http", "off"], tmp / "url-nosecret.log"),
    }
    web = net.start("web", [
        "-m", "tests.web", "--hosts", str(SPEC.hosts), "--pages", str(SPEC.pages_per_host),
        "--no-hostile", "--first-ip", NODES["web"], "--dns-ip", NODES["web"],
        "--log", str(tmp / "web.jsonl"), "--hosts-file", str(tmp / "hosts"),
    ], tmp / "web.log")  # fmt: skip
    store = net.start("store", ["-m", "wreck.storeserver.cli", "--data", str(tmp / "store"),
                                "--listen", store_addr, "--secret-file", str(secret)], tmp / "store.log")
    refused = {name: (proc.wait(START_TIMEOUT), proc.err()) for name, proc in no_secret.items()}
    info = json.loads(web.wait_for_line("test web", r"^\{.*\}$")[0])
    store.wait_for_line("storeserver", r"listening on")
    site = build_site(SPEC, info["port"])
    assert info["addresses"] == site.addresses()
    seeds = [site.url("h0.wreck.test"), site.url("h3.wreck.test")]

    urlserver = net.start("url", [
        "-m", "wreck.urlserver.cli", *seeds, "--data", str(tmp / "crawl"), "--store", store_addr,
        "--listen", url_addr, "--http", "off", "--secret-file", str(secret),
        "--hosts", str(tmp / "hosts"), "--dns", info["dns"], "--allow-net", SUBNET,
        "--exit-when-done", "--delay", str(DELAY), "--scope", "any", "--robots-retry", "0.2",
        "--retry-delay", "0.2", "--max-retries", "2", "-v",
    ], tmp / "url.log")  # fmt: skip
    urlserver.wait_for_line("urlserver", r"listening on")
    spider = ["-m", "wreck.spider.cli", "--connect", url_addr, "--procs", "1", "--concurrency", "20"]
    intruder = net.start("sp1", [*spider, "--secret-file", str(wrong), "--name", "intruder"],
                         tmp / "intruder.log")
    spiders = [net.start(role, [*spider, "--secret-file", str(secret), "--name", role],
                         tmp / f"{role}.log") for role in SPIDERS]
    intruder_rc = intruder.wait(START_TIMEOUT)
    url_rc = urlserver.wait(CRAWL_TIMEOUT)
    for proc in (*spiders, web):
        proc.stop()
    store_rc = store.stop()  # commits what it holds, then exits 0
    reader = ReadStore(tmp / "store")
    docs = [meta for meta, _ in reader.iter_docs(with_documents=False) if meta.attempted]
    reader.close()
    return Run(
        url_rc=url_rc, url_log=urlserver.out() + urlserver.err(), store_rc=store_rc, store_log=store.err(),
        refused=refused, intruder=(intruder_rc, intruder.err()),
        records=read_jsonl(tmp / "web.jsonl"), truth=compute_truth(site, seeds, scope="any"),
        docs=docs,
    )


def test_servers_refuse_a_non_loopback_address_without_a_secret(crawled):
    for name, (rc, err) in crawled.refused.items():
        assert rc == 2, (name, err)
        assert f"{name}: refusing to listen on 10.231.0." in err, err
        assert "without a shared secret" in err and "--secret-file" in err, err


def test_the_crawl_finishes(crawled):
    assert crawled.url_rc == 0, crawled.url_log


def test_every_page_is_stored_exactly_once(crawled):
    assert crawled.store_rc == 0, crawled.store_log
    pages = [d for d in crawled.docs if not urlsplit(d.url).path.startswith("/robots")]
    stored = [normalize(d.url) for d in pages]
    assert len(stored) == len(set(stored)), "a page was stored twice"
    assert set(stored) == set(crawled.truth.fetched)
    assert {normalize(d.url) for d in pages if d.success} == crawled.truth.ok_urls()


def test_both_spiders_worked_from_their_own_namespaces(crawled):
    for role in SPIDERS:
        ip = re.escape(NODES[role])
        assert re.search(rf"event=peer_connected peer={ip}:\d+ name={role}-0\S*", crawled.url_log)
        assert re.search(rf"event=peer_connected peer={ip}:\d+ name={role}-0", crawled.store_log)
    assert {r.client_ip for r in crawled.records} == {NODES[role] for role in SPIDERS}
    assert {r.server_ip for r in crawled.records} <= set(web_ips())
    pages = [r for r in crawled.records if not r.target.startswith("/robots")]
    assert duplicate_requests(pages) == {}


def test_a_spider_with_the_wrong_secret_is_refused_clearly_on_both_sides(crawled):
    rc, err = crawled.intruder
    assert rc == 2, err
    assert "failed authentication (wrong or missing shared secret)" in err, err
    assert "check --secret-file" in err, err
    assert "urlserver 10.231.0.2:7001 rejected this spider's shared secret" in err, err
    told = (r"event=auth_failed peer=10\.231\.0\.11:\d+ name=\S+ code=AUTH "
            r"reason='client intruder\S* failed authentication \(wrong or missing shared secret\)")
    assert re.search(told, crawled.url_log), crawled.url_log
