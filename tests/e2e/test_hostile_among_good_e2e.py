"""Issue 14, Must show: with 8 hostile hosts (a Content-Type with bytes that
are not UTF-8, 200,000 nested <div>s, and on every one a robots.txt whose
Sitemap: line names a gzipped sitemap bomb of 10 million elements) among 50
good hosts, a crawl with --sitemaps stores every good page and no good URL
ends as ERROR. The good hosts' own ERRORs are the ones the site asks for and
the truth predicts: their deliberate 404s (and the 404 of the /sitemap.xml
they lack), robots.txt 500 hosts (RFC 9309 2.3.1.4: disallow all), and the
unresolvable host."""

from __future__ import annotations

import http.client
import zlib
from urllib.parse import urlsplit

import pytest

from tests.e2e_helpers import FAST_RETRIES, crawl_to_the_end, stored_urls, url_states
from tests.web import HostileSpec, RunningWeb, SiteSpec, compute_truth
from tests.web.sitemaps import BOMB_ELEMENTS

pytestmark = pytest.mark.e2e
GOOD_HOSTS, HOSTILE_HOSTS = 50, 8
HOSTILE_PAGES = ("/header-bytes/pdf", "/header-bytes/charset", "/nested-html")


def _get(web, host: str, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(web.site.addresses()[host], web.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_every_hostile_host_names_a_small_bomb_that_inflates_to_millions_of_elements():
    spec = SiteSpec(hosts=1, pages_per_host=1, hostile_hosts=3, hostile_spec=HostileSpec(sitemap_bomb=True))
    with RunningWeb(spec) as web:
        names = spec.hostile_names()
        assert len(set(names)) == 3 and all(web.site.addresses()[n] == spec.hostile_ip for n in names)
        for name in names:
            status, robots = _get(web, name, "/robots.txt")
            assert status == 200 and f"Sitemap: {web.url(name, '/sitemap-bomb.xml.gz')}" in robots.decode()
        status, bomb = _get(web, names[-1], "/sitemap-bomb.xml.gz")
    assert status == 200 and len(bomb) < 100_000  # tens of KB on the wire
    xml = zlib.decompress(bomb, wbits=31)
    assert xml.count(b"<x/>") == BOMB_ELEMENTS and b"<urlset" in xml


def test_eight_hostile_hosts_among_fifty_good_cost_no_good_page(tmp_path):
    spec = SiteSpec(hosts=GOOD_HOSTS, pages_per_host=3, hostile_hosts=HOSTILE_HOSTS,
                    hostile_spec=HostileSpec(sitemap_bomb=True, sitemap_many=2, sitemap_hidden_pages=2))
    with RunningWeb(spec) as web:
        evil = [web.url(name) for name in spec.hostile_names()]
        # each hostile host gets one hostile page as its seed; its robots.txt names the bomb
        hostile = [f"{origin.rstrip('/')}{HOSTILE_PAGES[k % 3]}" for k, origin in enumerate(evil)]
        good = [web.url(spec.host_name(i)) for i in range(spec.hosts)]
        records = crawl_to_the_end(tmp_path, web, hostile + good, [
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02", "--sitemaps",
            "--max-doc-size", str(4 << 20), *FAST_RETRIES,
        ])  # fmt: skip
        truth = compute_truth(web.site, good, scope="any")
    evil_hosts = {urlsplit(o).hostname for o in evil}
    bombed = {r.host for r in records if r.target == "/sitemap-bomb.xml.gz" and r.status == 200}
    assert bombed == evil_hosts  # every hostile host really served its bomb
    stored = stored_urls(tmp_path)
    good_stored = [u for u in stored if urlsplit(u).hostname not in evil_hosts
                   and urlsplit(u).path != "/sitemap.xml"]  # --sitemaps asks every host for one
    assert sorted(good_stored) == sorted(truth.fetched)  # every good page, once
    states = {url: rec.as_dict() for url, rec in url_states(tmp_path / "frontier").items()}
    errors = {u: st["reason"] for u, st in states.items()
              if urlsplit(u).hostname not in evil_hosts and st["state"] == "ERROR"}
    good_urls = {u for u, status in truth.fetched.items() if status < 400}
    assert not good_urls & set(errors), {u: errors[u] for u in good_urls & set(errors)}
    refused = truth.disallowed | truth.unresolvable
    unexplained = {u: why for u, why in errors.items() if not (
        u in refused or (u in truth.fetched and f"HTTP {truth.fetched[u]}" in why)
        or (urlsplit(u).path == "/sitemap.xml" and "HTTP 404" in why))}
    assert not unexplained, unexplained
    assert all(states[url]["state"] == "FETCHED" for url in hostile), {u: states[u] for u in hostile}
