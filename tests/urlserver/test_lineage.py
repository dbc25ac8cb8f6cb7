"""Where a URL was found (issue 18, urlserver/lineage.py): each URL record
keeps the URL it was first discovered from and its hop path from the seed,
and a page's assignment carries them as via= and hops= (docs/protocol.txt
5.3): a link of a link is "LL", a redirect's target ends in R, a
sitemap's URLs in M, a seed has hops=- and no via. (A data directory of
format 2, records without them, is refused: test_frontier_layout.py.)"""

from __future__ import annotations

from wreck.protocol import Done, Specific, Status
from wreck.urlserver import db as d
from wreck.urlserver import lineage

from tests.urlserver_helpers import crawl_engine, fetched, not_found, run_until_idle


def test_a_hop_path_keeps_heritrixs_last_fifty_letters_and_counts_the_rest():
    assert lineage.extend("", "L") == "L"
    assert lineage.extend("L" * 49, "R") == "L" * 49 + "R"
    assert lineage.extend("L" * 50, "X") == "1+" + "L" * 49 + "X"
    path = ""
    for _ in range(150):
        path = lineage.extend(path, "L")
    assert path == "100+" + "L" * 50
    assert len(lineage.extend("99999+" + "L" * 50, "L")) <= lineage.MAX_PATH_LEN


def test_a_url_record_keeps_its_via_and_path_beside_its_history_and_reason():
    rec = d.UrlRecord("http://a.test/x", state=1, depth=2, reason="why", history=bytes(4) + bytes(10),
                      via=b"\x01" * 8, path="LL")
    raw = rec.pack()
    back = d.UrlRecord.unpack(raw)
    assert (back.url, back.reason, back.via, back.path, back.depth) == ("http://a.test/x", "why", b"\x01" * 8,
                                                                        "LL", 2)
    assert d.record_url(raw) == "http://a.test/x"
    # a history whose bytes hold a newline, and no reason: the URL still ends where it ends
    plain = d.UrlRecord("http://a.test/y", state=1, history=b"\n" * 14, path="L").pack()
    assert d.record_url(plain) == "http://a.test/y"


def test_a_link_forwarded_by_another_partition_keeps_its_vias_url_as_text(tmp_path):
    c = crawl_engine(tmp_path, scope="any")
    elsewhere = "http://other-partition.test/page"  # no record of this urlserver
    c.frontier.discover_links(["http://a.test/forwarded"], depth=3, via_url=elsewhere,
                              path=lineage.extend("LL", lineage.LINK))
    c.commit()
    looked = c.frontier.lookup("http://a.test/forwarded")
    assert (looked["via"], looked["path"], looked["depth"]) == (elsewhere, "LLL", 3)
    raw = d.UrlRecord("http://a.test/x", state=1, via_url=elsewhere, path="L", reason="r").pack()
    assert d.record_url(raw) == "http://a.test/x" and d.UrlRecord.unpack(raw).via_url == elsewhere
    c.close()


def _crawl_site(tmp_path, pages, redirects=None, **settings):
    """Crawl `pages` (url -> links) with `redirects` (url -> target); the assignments by URL."""
    c = crawl_engine(tmp_path, scope="any", **settings)
    c.add_seed("http://a.test/")
    got = {}

    def answer(a):
        got[a.url] = a
        if a.url in (redirects or {}):
            return Done(a.trans_id, Status.REDIRECTION, 301, Specific.REDIRECT, 1, new_url=redirects[a.url])
        if a.url in pages:
            return fetched(a, *pages[a.url])
        return not_found(a)

    run_until_idle(c, 0.0, answer)
    return c, got


def test_an_assignment_names_where_its_url_was_found_and_its_hops_from_the_seed(tmp_path):
    pages = {"http://a.test/": ("http://a.test/one",), "http://a.test/one": ("http://a.test/two",),
             "http://a.test/two": ("http://a.test/moved",), "http://a.test/new": ()}
    c, got = _crawl_site(tmp_path, pages, {"http://a.test/moved": "http://a.test/new"})
    seed, one, two = got["http://a.test/"], got["http://a.test/one"], got["http://a.test/two"]
    assert seed.extra == {"hops": "-"}  # a seed: no via
    assert (one.extra["via"], one.extra["hops"]) == ("http://a.test/", "L")
    assert (two.extra["via"], two.extra["hops"]) == ("http://a.test/one", "LL")
    assert got["http://a.test/new"].extra["via"] == "http://a.test/moved"
    assert got["http://a.test/new"].extra["hops"] == "LLLR"  # the redirect's target: one more hop, R
    robots = got["http://a.test/robots.txt"].extra
    assert "via" not in robots and "hops" not in robots  # robots.txt is no URL record: no lineage
    looked = c.frontier.lookup("http://a.test/two")
    assert (looked["via"], looked["path"], looked["depth"]) == ("http://a.test/one", "LL", 2)
    c.close()


def test_the_first_page_that_links_to_a_url_stays_its_via(tmp_path):
    pages = {"http://a.test/": ("http://a.test/one", "http://a.test/two"),
             "http://a.test/one": ("http://a.test/two",), "http://a.test/two": ()}
    c, got = _crawl_site(tmp_path, pages)
    assert got["http://a.test/two"].extra == {"via": "http://a.test/", "hops": "L"}
    c.close()


def test_a_sitemaps_urls_are_found_on_it_by_a_sitemap_hop(tmp_path):
    c = crawl_engine(tmp_path, scope="any", sitemaps=True)
    c.add_seed("http://a.test/")
    got = {}

    def answer(a):
        got[a.url] = a
        if a.url == "http://a.test/robots.txt":
            return fetched(a, body=b"User-agent: *\nAllow: /\nSitemap: http://a.test/map.xml\n")
        if a.url == "http://a.test/map.xml":
            return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=("http://a.test/listed",),
                        extra={"sitemap": "urlset"})
        return fetched(a)

    run_until_idle(c, 0.0, answer)
    assert got["http://a.test/map.xml"].extra == {"kind": "sitemap", "hops": "PM"}  # named by robots.txt
    assert got["http://a.test/sitemap.xml"].extra["hops"] == "I"  # the well-known name, by convention
    assert got["http://a.test/listed"].extra == {"via": "http://a.test/map.xml", "hops": "PMM"}
    c.close()


def test_the_links_of_one_page_handed_out_in_a_row_read_their_via_once(tmp_path, monkeypatch):
    """Each origin keeps the last via it handed out (Origin.via), so a page's
    links to its own site, queued in a row, read the page's record once
    however many hosts turn the shared via cache over (crawl.py, VIA_CACHE)."""
    from wreck.urlserver import crawl as engine

    monkeypatch.setattr(engine, "VIA_CACHE", 1)  # the shared cache turns over at every read
    sites = ("http://a.test", "http://b.test", "http://c.test")
    pages = {f"{site}/": tuple(f"{site}/{n}" for n in range(6)) for site in sites}
    pages["http://a.test/0"] = tuple(f"http://a.test/deep{n}" for n in range(4))
    c = crawl_engine(tmp_path, scope="any")
    for site in sites:
        c.add_seed(site + "/")
    reads = []
    via_url = c.frontier.via_url
    monkeypatch.setattr(c.frontier, "via_url", lambda rec: reads.append(rec.via) or via_url(rec))
    got = {}

    def answer(a):
        got[a.url] = a
        return fetched(a, *pages.get(a.url, ())) if not a.url.endswith("/robots.txt") else not_found(a)

    order = run_until_idle(c, 0.0, answer)
    for page, links in pages.items():
        for link in links:
            assert got[link].extra == {"via": page, "hops": "LL" if "deep" in link else "L"}
    hosts_in_turn = [url.split("/")[2] for url in order if "/robots.txt" not in url]
    assert any(x != y for x, y in zip(hosts_in_turn, hosts_in_turn[1:]))  # the hosts took turns
    vias = [v for v in reads if v != d.NO_VIA]  # a seed has none to read
    assert sorted(vias) == sorted(d.fingerprint(page) for page in pages)  # one read a page
    c.close()
