# SSRF defences below a whole crawl: the address policy both sides share
# (wreck.netpolicy), the urlserver's resolver judging the real address
# behind every spelling of it, and the spider's libcurl pinned to the
# handed-out address (no proxy from the environment, no resolving of the
# URL's host). tests/test_ssrf_e2e.py drives the same through a crawl.
from __future__ import annotations

import asyncio

import pytest
import uvloop

from wreck.protocol import Specific, Status
from wreck.netpolicy import AddressPolicy
from wreck.urlnorm import normalize
from wreck.spider.fetch import Fetcher, FetchSettings
from wreck.spider.report import report
from tests.spider_helpers import crawl_settings
from tests.web import RunningWeb, SiteSpec
from tests.web.tripwire import Tripwire
from wreck.urlserver.dns import Resolver
from wreck.urlserver.scope import split_host

PUBLIC = AddressPolicy()

REFUSED = {  # address -> words its refusal must contain
    "127.0.0.1": "loopback", "127.255.255.254": "loopback", "0.0.0.0": "this network",
    "0.1.2.3": "this network", "10.0.0.1": "private", "172.16.5.4": "private",
    "192.168.1.1": "private", "100.64.0.1": "carrier-grade NAT", "169.254.169.254": "link-local",
    "192.0.0.8": "IETF", "192.0.2.1": "documentation", "198.18.0.1": "benchmarking",
    "198.51.100.7": "documentation", "203.0.113.9": "documentation", "224.0.0.251": "multicast",
    "239.255.255.250": "multicast", "240.0.0.1": "reserved", "255.255.255.255": "broadcast",
    "::": "unspecified", "::1": "loopback", "fe80::1": "link-local", "fc00::1": "unique local",
    "fd12:3456::1": "unique local", "fec0::1": "site-local", "ff02::1": "multicast",
    "::7f00:1": "IPv4-compatible", "100::1": "discard", "2001:db8::1": "documentation",
    "4000::1": "reserved", "::ffff:127.0.0.1": "IPv4-mapped 127.0.0.1: loopback",
    "::ffff:10.1.2.3": "IPv4-mapped 10.1.2.3: private",
    "::ffff:169.254.169.254": "IPv4-mapped 169.254.169.254: link-local",
    "::ffff:0:7f00:1": "IPv4-translated of 127.0.0.1", "64:ff9b::a00:1": "NAT64 of 10.0.0.1",
    "64:ff9b::7f00:1": "NAT64 of 127.0.0.1", "64:ff9b:1::1": "local-use",
    "2002:7f00:1::1": "6to4 of 127.0.0.1", "2002:c0a8:101::": "6to4 of 192.168.1.1",
    "2001:0:7f00:1::": "Teredo of 127.0.0.1",  # Teredo server field
    "2001:0:808:808::f5ff:fffe": "Teredo of 10.0.0.1",  # client field, stored inverted
    "[::1]": "loopback",
}
ADMITTED = ("93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001::1",
            "::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822::1",
            "2001:0:808:808::a2ff:fffe")  # Teredo: server 8.8.8.8, client 93.0.0.1


@pytest.mark.parametrize("ip", sorted(REFUSED))
def test_special_purpose_addresses_are_refused_by_default(ip):
    why = PUBLIC.refusal(ip)
    assert why is not None and why.startswith("forbidden address ") and REFUSED[ip] in why, why


@pytest.mark.parametrize("ip", ADMITTED)
def test_public_unicast_and_its_translations_are_admitted(ip):
    assert PUBLIC.refusal(ip) is None


def test_not_addresses_are_refused_with_a_reason():
    assert "not an IP address" in PUBLIC.refusal("evil.example")
    assert "zone index" in PUBLIC.refusal("fe80::1%eth0")
    assert "not an IP address" in PUBLIC.refusal("1.2.3.4.5")


def test_allow_net_admits_its_range_and_nothing_more():
    policy = AddressPolicy(["127.0.0.0/16", "fd00::/8"])
    assert policy.refusal("127.0.9.9") is None and policy.refusal("::ffff:127.0.9.9") is None
    assert policy.refusal("fd00::5") is None
    assert "loopback" in policy.refusal("127.1.0.1") and "loopback" in policy.refusal("::ffff:127.1.0.1")
    assert "loopback" in policy.refusal("::1") and "private" in policy.refusal("10.0.0.1")
    # a translator's address is not the IPv4 address: an IPv4 range does not admit it
    assert "6to4 of 127.0.0.1" in policy.refusal("2002:7f00:1::")
    assert AddressPolicy(["2002::/16"]).refusal("2002:7f00:1::") is None


FORBIDDEN = "127.99.0.1"  # the address behind every spelling below
SPELLINGS = [  # WHATWG parsing canonicalises all of these to the forbidden address
    "http://2137194497/", "http://0x7f630001/", "http://0177.0143.0.01/", "http://127.99.1/",
    "http://0x7f.99.0.1/", "http://127.99.0.1./", "http://%31%32%37.99.0.1/",
    "http://\uff11\uff12\uff17.99.0.1/", "http://[::ffff:127.99.0.1]/", "http://[::ffff:7f63:1]/",
    "http://[0:0:0:0:0:ffff:7f63:0001]/", "http://user:pw@127.99.0.1:80/",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_forbidden_address_is_judged_by_the_address(spelling):
    url = normalize(spelling)
    assert url is not None, spelling
    resolver = Resolver(nameserver="127.0.0.1:9", hosts={}, allow_net=("127.0.0.0/16",), timeout=1,
                        tries=1, min_ttl=1, max_ttl=1, negative_ttl=1)
    res = asyncio.run(resolver.resolve(split_host(url)[1].strip("[]")))
    assert res.ip is None and res.terminal and "127.99.0.1" in res.error and "loopback" in res.error
    assert resolver.lookups == 0  # an IP literal is never sent to DNS


def test_a_static_host_and_a_literal_inside_allow_net_are_admitted():
    resolver = Resolver(nameserver="127.0.0.1:9", hosts={"ok.wreck.test": "127.0.1.1",
                                                         "bad.wreck.test": "::1"},
                        allow_net=("127.0.0.0/16",), timeout=1, tries=1, min_ttl=1, max_ttl=1,
                        negative_ttl=1)

    async def run():
        return [await resolver.resolve(n) for n in ("ok.wreck.test", "bad.wreck.test", "127.0.1.9")]

    ok, bad, literal = asyncio.run(run())
    assert ok.ip == "127.0.1.1" and literal.ip == "127.0.1.9"
    assert bad.ip is None and bad.error == "forbidden address ::1 (loopback)"


def _fetch(url: str, ip: str, fs: FetchSettings) -> tuple:
    async def run():
        done = asyncio.Event()
        results = []
        fetcher = Fetcher(asyncio.get_running_loop(), fs, lambda r: (results.append(r), done.set()))
        immediate = fetcher.start(url, url, ip)
        if immediate is None:
            await asyncio.wait_for(done.wait(), 10)
        else:
            results.append(immediate)
        fetcher.close()
        return report(results[0], 1).outcome, results[0]

    return uvloop.run(run())


@pytest.fixture(scope="module")
def web():
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=3, hostile=False), dns=False) as running:
        yield running


def test_proxies_from_the_environment_are_ignored(web, monkeypatch):
    with Tripwire(["127.0.0.1"]) as proxy:
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        host = "h0.wreck.test"
        outcome, result = _fetch(web.url(host), web.site.addresses()[host],
                                 FetchSettings.from_crawl(crawl_settings()))
        assert (outcome.status, outcome.specific) == (Status.FETCHED, Specific.OK)
        assert proxy.hits() == []


def test_the_url_host_is_never_resolved_or_dialled_only_the_handed_out_address(web):
    """A URL naming a forbidden IP literal, handed out with an admitted
    address (a urlserver bug, or a tampered one): libcurl dials the
    handed-out address, never the literal."""
    with Tripwire([FORBIDDEN]) as wire:
        host = "h0.wreck.test"
        url = f"http://{FORBIDDEN}:{wire.port}/"
        outcome, result = _fetch(url, web.site.addresses()[host], FetchSettings.from_crawl(crawl_settings()))
        assert wire.hits() == [] and outcome.specific is Specific.CONNECT_FAILED
        refused, _ = _fetch(url, FORBIDDEN, FetchSettings.from_crawl(crawl_settings(allow_net=("127.0.0.0/16",))))
        assert (refused.status, refused.specific) == (Status.ERROR, Specific.FORBIDDEN_ADDRESS)
        assert "127.99.0.1 (loopback)" in refused.reason
        assert wire.hits() == []


def test_the_spider_never_resolves_a_name_itself(web):
    """'localhost' is what any resolver (and libcurl's own shortcut) turns
    into 127.0.0.1 or ::1; the spider dials only the handed-out address."""
    with Tripwire(["127.0.0.1", "::1"]) as wire:
        url = f"http://localhost:{wire.port}/"
        outcome, _ = _fetch(url, web.site.addresses()["h0.wreck.test"], FetchSettings.from_crawl(crawl_settings()))
        assert outcome.specific is Specific.CONNECT_FAILED and wire.hits() == []


def test_an_admitted_ipv4_mapped_literal_is_handed_out_as_ipv4():
    """The protocol never carries ::ffff:a.b.c.d (docs/protocol.txt 5.3)."""
    resolver = Resolver(nameserver="127.0.0.1:9", hosts={}, allow_net=("127.0.0.0/16",), timeout=1,
                        tries=1, min_ttl=1, max_ttl=1, negative_ttl=1)
    url = normalize("http://[::ffff:127.0.1.1]:8080/")
    assert asyncio.run(resolver.resolve(split_host(url)[1].strip("[]"))).ip == "127.0.1.1"
