# Tests of the local test web (tests/web): the site model and its truth, the
# HTTP server, the hostile host, the request log and the DNS responder.
# Every socket is on 127.0.0.0/8; one RunningWeb serves the whole module.

from __future__ import annotations

import dataclasses
import gzip
import html.parser
import http.client
import json
import socket
import urllib.parse
import zlib

import dns.exception
import dns.message
import dns.query
import dns.rcode
import pytest
from protego import Protego

from tests.web import (HOSTILE_IP, HOSTILE_NAME, UNRESOLVABLE_NAME, HostileSpec, RunningWeb,
                       SiteSpec, build_site, compute_truth, duplicate_requests, gaps_by_host,
                       gaps_by_ip, read_jsonl, requests_per_host, robots_first, robots)
from tests.web.breakage import RESET_ANNOUNCED
from tests.web.pages import render_html

SPEC = SiteSpec(hosts=7, pages_per_host=12, seed=7, hostile_spec=HostileSpec(
    drip_interval=0.05, drip_bytes=4, stall_seconds=5.0, bomb_inflated_bytes=16 << 20,
    feed_item_interval=10.0))
TIMEOUT = 5.0


class FakeClock:
    """A monotonic clock the feed tests move by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="module")
def web(tmp_path_factory, clock):
    log_path = tmp_path_factory.mktemp("web") / "requests.jsonl"
    with RunningWeb(SPEC, log_path=log_path, clock=clock) as running:
        yield running


def fetch(web, host: str, path: str, *, method: str = "GET", headers: dict | None = None):
    """One request to `host` at its own address: (status, headers, body)."""
    conn = http.client.HTTPConnection(web.site.addresses()[host], web.port, timeout=TIMEOUT)
    try:
        conn.request(method, path, headers={"Host": host, **(headers or {})})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def raw(web, host: str, path: str, *, timeout: float = TIMEOUT) -> socket.socket:
    """A socket that has sent 'GET path' to `host`; the caller reads and closes."""
    sock = socket.create_connection((web.site.addresses()[host], web.port), timeout=timeout)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before the end of the head"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


class LinkParser(html.parser.HTMLParser):
    """<base href> and every <a href> with its rel, as a crawler would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.base: str | None = None
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if tag == "base" and self.base is None:
            self.base = attrs.get("href")
        elif tag == "a" and attrs.get("href") is not None:
            self.links.append((attrs["href"], attrs.get("rel") or ""))


# --- addresses, model, truth ----------------------------------------------------------

def test_whole_loopback_block_is_bindable():
    for ip in ("127.0.1.2", "127.66.6.6"):
        with socket.socket() as sock:
            sock.bind((ip, 0))
            assert sock.getsockname()[0] == ip


def test_address_plan_shares_ips_and_keeps_127_0_0_1_free():
    site = build_site(SPEC, 8000)
    ips = [host.ip for host in site.hosts.values()]
    assert ips[:3] == ["127.0.1.1"] * 3 and ips[3:6] == ["127.0.1.2"] * 3
    assert "127.0.0.1" not in site.addresses().values()
    assert list(site.addresses().values()).count(HOSTILE_IP) == 1


def test_address_plan_can_start_elsewhere():
    # the across-hosts test serves the web on a network namespace's own addresses
    moved = build_site(dataclasses.replace(SPEC, first_ip="10.231.0.100", hostile_ip="10.231.0.99"), 8000)
    ips = [host.ip for host in moved.hosts.values()]
    assert ips[:3] == ["10.231.0.100"] * 3 and ips[3:6] == ["10.231.0.101"] * 3
    assert moved.addresses()[HOSTILE_NAME] == "10.231.0.99"
    assert [h.pages for h in moved.hosts.values()] == [h.pages for h in build_site(SPEC, 8000).hosts.values()]
    with pytest.raises(ValueError, match="hostile_ip"):
        dataclasses.replace(SPEC, first_ip="10.231.0.100", hostile_ip="10.231.0.101")


def test_site_is_deterministic():
    assert build_site(SPEC, 8000) == build_site(SPEC, 8000)
    assert build_site(SPEC, 8000) != build_site(SiteSpec(hosts=7, pages_per_host=12, seed=8), 8000)


def test_every_href_resolves_to_its_model_target():
    site = build_site(SPEC, 8000)
    for host in site.hosts.values():
        for page in host.pages.values():
            if not page.is_html:
                continue
            parser = LinkParser()
            parser.feed(render_html(page).decode())
            base = parser.base or site.url(host.name, page.path)
            assert [(l.href, "nofollow" if l.nofollow else "") for l in page.links] == parser.links
            for link in page.links:
                resolved = urllib.parse.urljoin(base, link.href)
                if link.target is None:
                    assert not resolved.startswith("http")
                else:
                    assert urllib.parse.urldefrag(resolved)[0].lower() == link.target.lower()


def test_truth_obeys_robots_and_nofollow():
    site = build_site(SPEC, 8000)
    seeds = site.seed_urls()
    truth = compute_truth(site, seeds)
    ok = truth.ok_urls()
    by_variant = {h.robots.variant: h.name for h in site.hosts.values()}
    shut = site.url(by_variant[robots.SERVER_ERROR])  # its robots.txt answers 500
    assert set(seeds) - {shut} <= ok
    wild = site.url(by_variant[robots.WILDCARDS], "")
    assert not any(u.startswith(wild + "/private/report") or u.endswith(".pdf")
                   for u in truth.fetched if u.startswith(wild))
    assert any(u.startswith(wild + "/private/open") for u in ok)
    assert not any(u.startswith(shut) for u in truth.fetched)
    not_found = site.url(by_variant[robots.NOT_FOUND], "")
    assert any("/private/" in u for u in ok if u.startswith(not_found))
    assert truth.disallowed and not truth.disallowed & set(truth.fetched)
    orphans = {site.url(h.name, list(h.pages)[-2]) for h in site.hosts.values()}  # before /moved
    assert not orphans & set(truth.fetched)  # linked only with rel=nofollow
    assert truth.unresolvable == {f"http://{UNRESOLVABLE_NAME}:8000/"}
    requested = site.requested_urls(seeds)
    assert ok < requested and site.url("h0.wreck.test", "/missing.html") in requested
    assert truth.fetched[site.url("h0.wreck.test", "/moved.html")] == 301


def test_agent_groups_depend_on_the_token():
    site = build_site(SPEC, 8000)
    host = next(h for h in site.hosts.values() if h.robots.variant == robots.AGENT_GROUPS)
    seed = [site.url(host.name)]
    assert len(site.reachable_allowed(seed, "wreck")) > 1
    assert site.reachable_allowed(seed, "otherbot") == set()
    assert compute_truth(site, seed, scope="host").out_of_scope


def test_robots_rules_follow_rfc9309():
    plan = robots.plan_for(robots.WILDCARDS, crawl_delay=1)
    assert not plan.allows("/files/a.pdf") and plan.allows("/files/a.pdf?download=1")
    assert not plan.allows("/private/x") and plan.allows("/private/open-1.html")
    assert plan.allows("/robots.txt")
    assert not robots.plan_for(robots.SERVER_ERROR, crawl_delay=1).allows("/")
    assert robots.plan_for(robots.NOT_FOUND, crawl_delay=1).allows("/private/x")
    assert robots.plan_for(robots.CRAWL_DELAY, crawl_delay=0.5).crawl_delay() == 0.5


# --- HTTP server ----------------------------------------------------------------------

def test_pages_are_served_by_host_header_on_their_address(web):
    status, headers, body = fetch(web, "h1.wreck.test", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b"h1.wreck.test" in body
    conn = http.client.HTTPConnection("127.0.1.2", web.port, timeout=TIMEOUT)
    conn.request("GET", "/", headers={"Host": "h1.wreck.test"})  # h1 lives on 127.0.1.1
    assert conn.getresponse().status == 421
    conn.close()
    assert fetch(web, "h1.wreck.test", "/", headers={"Host": "nosuch.wreck.test"})[0] == 404
    assert fetch(web, "h1.wreck.test", "/no/such/page")[0] == 404


def test_robots_variants_are_served(web):
    statuses = {}
    for host in web.site.hosts.values():
        statuses[host.robots.variant], headers, body = fetch(web, host.name, "/robots.txt")
        if host.robots.variant == robots.REDIRECT:
            assert headers["location"] == robots.MOVED_ROBOTS_PATH
            assert fetch(web, host.name, headers["location"])[2].decode() == host.robots.text()
    assert statuses == {robots.ALLOW_ALL: 200, robots.WILDCARDS: 200, robots.CRAWL_DELAY: 200,
                        robots.AGENT_GROUPS: 200, robots.NOT_FOUND: 404,
                        robots.SERVER_ERROR: 500, robots.REDIRECT: 301}


def test_reference_crawl_matches_the_truth(web):
    """A plain crawler (protego + html.parser over HTTP) fetches exactly the truth."""
    seeds = web.site.seed_urls()
    expected = compute_truth(web.site, seeds)
    policies, fetched, queue, seen = {}, {}, list(seeds), set(seeds)
    while queue:
        url = queue.pop()
        parts = urllib.parse.urlsplit(url)
        if parts.hostname not in web.site.addresses():
            continue
        if parts.hostname not in policies:
            status, headers, body = fetch(web, parts.hostname, "/robots.txt")
            if status in (301, 302):
                status, headers, body = fetch(web, parts.hostname, headers["location"])
            policies[parts.hostname] = (status, Protego.parse(body.decode()))
        rstatus, policy = policies[parts.hostname]
        if rstatus >= 500 or (rstatus == 200 and not policy.can_fetch(url, "wreck")):
            continue
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        status, headers, body = fetch(web, parts.hostname, target)
        fetched[url] = status
        found = [headers["location"]] if "location" in headers else []
        if headers.get("content-type", "").startswith("text/html") and status == 200:
            parser = LinkParser()
            parser.feed(body.decode())
            base = parser.base or url
            found = [urllib.parse.urljoin(base, h) for h, rel in parser.links if "nofollow" not in rel]
        for link in found:
            parts = urllib.parse.urlsplit(urllib.parse.urldefrag(link)[0])
            link = parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()
            if link.startswith("http://") and link not in seen:
                seen.add(link)
                queue.append(link)
    assert fetched == expected.fetched


def test_keepalive_head_and_conditional_get(web):
    conn = http.client.HTTPConnection("127.0.1.1", web.port, timeout=TIMEOUT)
    conn.request("GET", "/", headers={"Host": "h0.wreck.test"})
    first = conn.getresponse()
    body, etag, modified = first.read(), first.getheader("ETag"), first.getheader("Last-Modified")
    conn.request("HEAD", "/", headers={"Host": "h0.wreck.test"})
    head = conn.getresponse()
    assert head.read() == b"" and int(head.getheader("Content-Length")) == len(body)
    conn.request("GET", "/", headers={"Host": "h0.wreck.test", "If-None-Match": etag})
    not_modified = conn.getresponse()
    assert not_modified.status == 304 and not_modified.read() == b""
    conn.request("GET", "/", headers={"Host": "h0.wreck.test", "If-Modified-Since": modified})
    not_modified = conn.getresponse()
    assert not_modified.status == 304 and not_modified.read() == b""
    conn.close()
    ports = {r.client_port for r in web.log.records() if r.if_none_match == etag}
    ports |= {r.client_port for r in web.log.records() if r.if_modified_since == modified}
    assert len(ports) == 1  # one connection served them all


def test_gzip_only_when_accepted(web):
    _, plain_headers, plain = fetch(web, "h0.wreck.test", "/")
    _, headers, body = fetch(web, "h0.wreck.test", "/", headers={"Accept-Encoding": "gzip, br"})
    assert "content-encoding" not in plain_headers
    assert headers["content-encoding"] == "gzip" and gzip.decompress(body) == plain
    _, headers, _ = fetch(web, "h0.wreck.test", "/", headers={"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in headers


def test_garbage_and_unsupported_requests(web):
    for garbage in (b"\x16\x03\x01\x02\x00 hello\r\n\r\n", b"GET /\r\n\r\n",
                    b"GET / HTTP/1.1\r\n\r\n", b"GET / HTTP/1.1\r\nHost h0\r\n\r\n"):
        with socket.create_connection(("127.0.1.1", web.port), timeout=TIMEOUT) as sock:
            sock.sendall(garbage)
            assert read_head(sock)[0].startswith(b"HTTP/1.1 400 ")
    with socket.create_connection(("127.0.1.1", web.port), timeout=TIMEOUT) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: h0.wreck.test\r\nX: " + b"a" * 70000 + b"\r\n\r\n")
        assert read_head(sock)[0].startswith(b"HTTP/1.1 431 ")
    assert fetch(web, "h0.wreck.test", "/", method="POST")[0] == 405
    assert fetch(web, "h0.wreck.test", "/")[0] == 200  # still serving


def test_request_log_records_every_request(web, tmp_path):
    web.log.clear()
    fetch(web, "h2.wreck.test", "/robots.txt", headers={"User-Agent": "wreck/0.1 (+test)"})
    fetch(web, "h2.wreck.test", "/", headers={"User-Agent": "wreck/0.1 (+test)",
                                               "Accept-Encoding": "gzip"})
    fetch(web, "h2.wreck.test", "/")
    fetch(web, "h3.wreck.test", "/")
    records = web.log.wait_for(lambda rs: any(r.host == "h3.wreck.test" for r in rs))
    records = [r for r in records if r.host in ("h2.wreck.test", "h3.wreck.test")]
    first = records[0]
    assert (first.host, first.method, first.target, first.status) == ("h2.wreck.test", "GET",
                                                                       "/robots.txt", 200)
    assert first.server_ip == "127.0.1.1" and first.client_ip.startswith("127.")
    assert first.user_agent == "wreck/0.1 (+test)" and first.bytes_sent > 0 and first.completed
    assert records[1].accept_encoding == "gzip"
    assert requests_per_host(records) == {"h2.wreck.test": 3, "h3.wreck.test": 1}
    assert robots_first(records) == {"h2.wreck.test": True, "h3.wreck.test": False}
    assert duplicate_requests(records) == {("h2.wreck.test", "/"): 2}
    assert len(gaps_by_host(records)["h2.wreck.test"]) == 2
    assert len(gaps_by_ip(records)["127.0.1.1"]) == 2 and gaps_by_ip(records)["127.0.1.2"] == []
    on_disk = read_jsonl(web.web.log._file.name)
    assert records[-1] in on_disk


# --- hostile host ---------------------------------------------------------------------

def evil(web, path, **kwargs):
    return fetch(web, HOSTILE_NAME, path, **kwargs)


def test_redirects(web):
    path, hops = "/redirect/chain/5", 0
    while path != "/target":
        status, headers, _ = evil(web, path)
        assert status == 302
        path, hops = headers["location"], hops + 1
    assert hops == 6 and evil(web, "/target")[0] == 200
    assert evil(web, "/redirect/loop")[1]["location"] == "/redirect/loop-back"
    assert evil(web, "/redirect/loop-back")[1]["location"] == "/redirect/loop"
    for code in (301, 302, 303, 307, 308):
        status, headers, _ = evil(web, f"/redirect/{code}")
        assert (status, headers["location"]) == (code, "/target")
    assert evil(web, "/redirect/relative")[1]["location"] == "../target"
    assert evil(web, "/redirect/cross-host")[1]["location"] == web.url("h0.wreck.test")
    assert "location" not in evil(web, "/redirect/no-location")[1]


def test_status_pages(web):
    for code in (404, 410, 500, 503, 429, 408):
        status, headers, _ = evil(web, f"/status/{code}")
        assert status == code
        assert ("retry-after" in headers) == (code in (429, 503))
    assert evil(web, "/status/408")[1]["connection"] == "close"


def test_content_types_and_meta_refresh(web):
    types = {p: evil(web, p)[1].get("content-type") for p in
             ("/doc.pdf", "/image.png", "/notes.txt", "/data.json", "/no-content-type")}
    assert types["/doc.pdf"] == "application/pdf" and types["/image.png"] == "image/png"
    assert types["/notes.txt"].startswith("text/plain") and types["/no-content-type"] is None
    assert b'http-equiv="refresh" content="0; url=/target"' in evil(web, "/meta-refresh")[2]


def test_many_links_serves_a_page_of_n_links_gzipped(web):
    status, headers, body = evil(web, "/many-links?n=5")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert gzip.decompress(body).count(b"<a href=") == 5


def test_slow_drip_sends_one_byte_at_a_time(web):
    with raw(web, HOSTILE_NAME, "/slow-drip?interval=0.1&bytes=4") as sock:
        head, rest = read_head(sock)
        assert b"Content-Length: 4" in head and rest == b""
        pieces = [sock.recv(100) for _ in range(4)]
    assert pieces == [b"."] * 4


def test_stall_and_no_answer_send_nothing(web):
    with raw(web, HOSTILE_NAME, "/stall-after-headers", timeout=0.3) as sock:
        head, rest = read_head(sock)
        assert b"Content-Length: 1000" in head and rest == b""
        with pytest.raises(socket.timeout):
            sock.recv(1)
    with raw(web, HOSTILE_NAME, "/no-answer", timeout=0.3) as sock:
        with pytest.raises(socket.timeout):
            sock.recv(1)


def test_gzip_bomb_is_small_on_the_wire(web):
    status, headers, body = evil(web, "/gzip-bomb")
    assert status == 200 and headers["content-encoding"] == "gzip"
    inflater, inflated = zlib.decompressobj(31), 0
    for start in range(0, len(body), 4096):
        inflated += len(inflater.decompress(body[start:start + 4096], 1 << 20))
        while inflater.unconsumed_tail:
            inflated += len(inflater.decompress(inflater.unconsumed_tail, 1 << 20))
    assert inflater.eof and inflated == SPEC.hostile_spec.bomb_inflated_bytes
    assert len(body) * 500 < inflated


def test_huge_headers(web):
    with raw(web, HOSTILE_NAME, "/huge-headers") as sock:
        head, _ = read_head(sock)
    assert len(head) >= SPEC.hostile_spec.huge_headers_bytes * 0.9


def test_reset_mid_body(web):
    received = b""
    with raw(web, HOSTILE_NAME, "/reset-mid-body") as sock:
        with pytest.raises(ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
    assert b"Content-Length: %d" % RESET_ANNOUNCED in received
    assert len(received) < RESET_ANNOUNCED


def test_malformed_and_endless_responses_do_not_hurt_the_server(web):
    with raw(web, HOSTILE_NAME, "/malformed-status") as sock:
        assert sock.recv(100).startswith(b"HTTP/1.1 2OO")
    for path in ("/big", "/big-chunked"):
        with raw(web, HOSTILE_NAME, path) as sock:
            head, _ = read_head(sock)
            assert (b"Content-Length: 52428800" in head) == (path == "/big")
            sock.recv(65536)  # then hang up mid-body
    web.log.wait_for(lambda rs: sum(r.target in ("/big", "/big-chunked") and not r.completed
                                    for r in rs) == 2)
    assert evil(web, "/target")[0] == 200


def test_feeds_grow_and_answer_conditional_gets(web, clock):
    status, headers, body = evil(web, "/feed.rss")
    assert status == 200 and body.count(b"<item>") == SPEC.hostile_spec.feed_initial_items
    assert evil(web, "/feed.rss", headers={"If-None-Match": headers["etag"]})[0] == 304
    clock.now += SPEC.hostile_spec.feed_item_interval
    newest = SPEC.hostile_spec.feed_initial_items
    status, _, body = evil(web, "/feed.rss", headers={"If-None-Match": headers["etag"]})
    assert status == 200 and f"/story/{newest}</link>".encode() in body
    assert evil(web, f"/story/{newest}")[0] == 200 and evil(web, f"/story/{newest + 1}")[0] == 404
    atom = evil(web, "/feed.atom")[2]
    assert atom.count(b"<entry>") == newest + 1


def test_the_json_feed_grows_with_the_others(web):
    items = json.loads(evil(web, "/feed.json")[2])["items"]
    rss = evil(web, "/feed.rss")[2]
    assert items and all(f"<link>{item['url']}</link>".encode() in rss for item in items)


def test_sitemaps_list_pages_linked_from_nowhere(web):
    spec = SPEC.hostile_spec
    assert b"Sitemap: " in evil(web, "/robots.txt")[2]
    index = evil(web, "/sitemap.xml")[2]
    assert b"<sitemapindex" in index and b"/sitemap-pages.xml.gz</loc>" in index
    urlset = gzip.decompress(evil(web, "/sitemap-pages.xml.gz")[2])
    assert urlset.count(b"<loc>") == spec.sitemap_hidden_pages
    assert evil(web, f"/hidden/{spec.sitemap_hidden_pages - 1}")[0] == 200
    assert evil(web, f"/hidden/{spec.sitemap_hidden_pages}")[0] == 404
    assert evil(web, "/sitemap-bulk.xml")[2].count(b"<loc>") == spec.sitemap_bulk_urls
    assert b"sitemap" not in evil(web, "/")[2] and b"hidden" not in evil(web, "/")[2]


def test_spider_traps_never_end(web):
    assert b'href="/calendar/2026/12"' in evil(web, "/calendar/2026/11")[2]
    assert b'href="/calendar/2027/01"' in evil(web, "/calendar/2026/12")[2]
    first = evil(web, "/s;jsessionid=ABC/page1")[2]
    second = evil(web, "/s;jsessionid=ABC/page1")[2]
    assert first != second and b"/page2" in first
    assert b"/page3" in evil(web, "/s/page2")[2]  # without the id: the same page, as servlets do
    assert b'href="a/"' in evil(web, "/deep/a/a/a/")[2]


def test_pointers_send_a_crawler_anywhere(web):
    away = "http://2130706433:9/x"
    status, headers, _ = evil(web, "/redirect/to?url=" + urllib.parse.quote(away, safe=""))
    assert (status, headers["location"]) == (302, away)
    status, headers, _ = evil(web, "/redirect/to?code=308&url=/target")
    assert (status, headers["location"]) == (308, "/target")
    assert evil(web, "/redirect/to")[0] == 400 and evil(web, "/redirect/to?url=/t&code=200")[0] == 400
    assert f'content="0; url={away}"'.encode() in evil(web, "/refresh/to?url=" + away)[2]
    body = evil(web, "/links/to?url=http://[::1]:9/&url=/target")[2]
    assert b'href="http://[::1]:9/"' in body and b'href="/target"' in body
    assert b"/redirect/to" not in evil(web, "/")[2]


def test_robots_redirect_knob():
    spec = SiteSpec(hosts=1, pages_per_host=2, hostile_spec=HostileSpec(robots_redirect="http://127.9.9.9:9/r"))
    with RunningWeb(spec, dns=False) as web:
        status, headers, _ = fetch(web, HOSTILE_NAME, "/robots.txt")
    assert (status, headers["location"]) == (301, "http://127.9.9.9:9/r")


# --- DNS ------------------------------------------------------------------------------

def test_dns_answers_a_and_nxdomain(web):
    ip, port = web.dns_address
    reply = dns.query.udp(dns.message.make_query("h4.wreck.test", "A"), ip, port=port, timeout=2)
    assert [rr.address for rr in reply.answer[0]] == ["127.0.1.2"]
    reply = dns.query.tcp(dns.message.make_query("EVIL.wreck.test.", "A"), ip, port=port, timeout=2)
    assert [rr.address for rr in reply.answer[0]] == [HOSTILE_IP]
    reply = dns.query.udp(dns.message.make_query(UNRESOLVABLE_NAME, "A"), ip, port=port, timeout=2)
    assert reply.rcode() == dns.rcode.NXDOMAIN
    reply = dns.query.udp(dns.message.make_query("h4.wreck.test", "AAAA"), ip, port=port, timeout=2)
    assert reply.rcode() == dns.rcode.NOERROR and not reply.answer


def test_dns_override_and_silence(web):
    ip, port = web.dns_address
    web.dns.override("h0.wreck.test", "127.0.9.9")
    reply = dns.query.udp(dns.message.make_query("h0.wreck.test", "A"), ip, port=port, timeout=2)
    assert [rr.address for rr in reply.answer[0]] == ["127.0.9.9"]
    web.dns.silence("h1.wreck.test")
    with pytest.raises(dns.exception.Timeout):
        dns.query.udp(dns.message.make_query("h1.wreck.test", "A"), ip, port=port, timeout=0.3)
    web.dns.reset()
    reply = dns.query.udp(dns.message.make_query("h1.wreck.test", "A"), ip, port=port, timeout=2)
    assert [rr.address for rr in reply.answer[0]] == ["127.0.1.1"]
    outcomes = [(q.name, q.outcome) for q in web.dns.queries()]
    assert ("h1.wreck.test", "dropped") in outcomes and ("h1.wreck.test", "NOERROR") in outcomes


def test_hosts_file_lists_every_name(web, tmp_path):
    text = web.write_hosts_file(tmp_path / "hosts").read_text()
    assert "127.0.1.2\th3.wreck.test" in text and f"{HOSTILE_IP}\t{HOSTILE_NAME}" in text
    assert UNRESOLVABLE_NAME not in text
