"""The spider's feed and sitemap parsers (spider/feeds.py, spider/sitemaps.py)
and what report() sends for them: pure functions of bytes, no network."""

from __future__ import annotations

import gzip
import json

import pytest

from wreck.spider import feeds, sitemaps
from wreck.spider.fetch import FetchResult
from wreck.spider.report import report

BASE = "http://news.test/feed"
RSS = (b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
       b'<item><title>A</title><link>http://news.test/a</link><guid isPermaLink="false">g-a</guid></item>'
       b"<item><title>B</title><link>/b</link></item>"
       b"<item><title>A again</title><link>http://news.test/a#top</link></item></channel></rss>")
ATOM = (b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        b'<entry><title>A</title><link href="http://news.test/a"/><id>g-a</id></entry>'
        b'<entry><title>B</title><link rel="alternate" href="/b"/><id>http://news.test/b</id></entry></feed>')
JSON = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "T", "items": [
    {"id": "g-a", "url": "http://news.test/a"}, {"id": "http://news.test/b", "url": "/b"}]}).encode()


@pytest.mark.parametrize("body, ctype, kind", [
    (RSS, b"application/rss+xml", "rss"), (ATOM, b"application/atom+xml; charset=utf-8", "atom"),
    (JSON, b"application/feed+json", "json"), (RSS, b"text/xml", "rss"), (JSON, b"application/json", "json"),
    (ATOM, None, "atom")])
def test_rss_atom_and_json_feed_are_recognised_and_parsed(body, ctype, kind):
    assert feeds.sniff(ctype, body) == kind
    feed = feeds.parse(body, BASE, kind)
    assert feed.kind == kind
    assert feed.links[:2] == ("http://news.test/a", "http://news.test/b")
    assert feed.guids[0] == feeds.fingerprint("g-a")
    assert feed.checksum == feeds.checksum(["http://news.test/b", "http://news.test/a"])


def test_an_rss_item_without_guid_is_known_by_its_link_and_duplicates_collapse():
    feed = feeds.parse(RSS, BASE, "rss")
    assert feed.links == ("http://news.test/a", "http://news.test/b")  # the '#top' repeat is the same URL
    assert feed.guids[1] == feeds.fingerprint("/b")  # the parser's id for a guid-less item: its link


def test_html_and_json_that_are_not_feeds_are_not_sniffed():
    assert feeds.sniff(b"text/html", RSS) is None
    assert feeds.sniff(b"application/json", b'{"links": ["/target"]}') is None
    assert feeds.sniff(None, b"<html><body>hi</body></html>") is None
    assert feeds.parse(b"<html><body>no feed</body></html>", BASE, "rss") is None


def test_a_huge_feed_sends_its_first_items_within_the_protocol_bounds():
    items = "".join(f"<item><link>http://news.test/{k}</link><guid>{k}</guid></item>" for k in range(1000))
    feed = feeds.parse(f'<rss version="2.0"><channel>{items}</channel></rss>'.encode(), BASE, "rss")
    assert len(feed.links) == feeds.MAX_FEED_ITEMS and feed.links[0] == "http://news.test/0"
    fields = feeds.done_fields(feed)
    assert len(fields["guids"]) <= 8192 and fields["guids"].count(",") == feeds.MAX_FEED_ITEMS - 1


def _result(url, body, ctype=b"application/xml", code=200):
    return FetchResult(key=1, url=url, http_code=code, curl_code=0, message="", connected=True, aborted=None,
                       head=b"HTTP/1.1 200 OK\r\n\r\n", body=body, content_type=ctype, ms=1)


def test_report_sends_feed_fields_and_item_links_instead_of_html_links():
    rep = report(_result(BASE, RSS, b"application/rss+xml"), 7)
    assert rep.outlinks == ("http://news.test/a", "http://news.test/b")
    assert rep.extra["feed"] == "rss" and len(rep.extra["feedsum"]) == 16
    assert rep.extra["guids"].split(",")[0] == feeds.fingerprint("g-a")
    marked = report(_result(BASE, ATOM, b"text/html"), 7, "feed")  # kind=feed: whatever the type says
    assert marked.extra["feed"] == "atom"
    assert set(report(_result(BASE, ATOM, b"text/html"), 7).extra) == {"digest", "size"}  # no feed fields (digest: recrawls; size: --max-bytes)


URLSET = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
          b"<url><loc>http://site.test/a</loc></url><url><loc> /b </loc></url><url><loc>ftp://x/</loc></url>"
          b"</urlset>")
INDEX = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
         b"<sitemap><loc>http://site.test/s1.xml.gz</loc></sitemap></sitemapindex>")


def test_sitemaps_urlsets_indexes_and_gzip():
    got = sitemaps.parse(URLSET, "http://site.test/sitemap.xml")
    assert got == sitemaps.Sitemap("urlset", ("http://site.test/a", "http://site.test/b"), 3)
    assert sitemaps.parse(gzip.compress(URLSET), "http://site.test/s.xml.gz").urls == got.urls
    assert sitemaps.parse(INDEX, "http://site.test/sitemap.xml") == sitemaps.Sitemap(
        "index", ("http://site.test/s1.xml.gz",), 1)
    rep = report(_result("http://site.test/sitemap.xml", INDEX), 1, "sitemap")
    assert rep.extra == {"sitemap": "index", "listed": "1", "size": "156"} and rep.outlinks == ("http://site.test/s1.xml.gz",)


def test_sitemap_bounds_hold():
    many = b"<urlset>" + b"".join(b"<url><loc>http://site.test/%d</loc></url>" % k for k in range(300)) + b"</urlset>"
    got = sitemaps.parse(many, "http://site.test/", max_urls=100)
    assert got.listed == 100 and len(got.urls) == 100
    bomb = gzip.compress(b"<urlset>" + b" " * 2_000_000 + b"</urlset>")
    with pytest.raises(sitemaps.SitemapError, match="inflates beyond"):
        sitemaps.parse(bomb, "http://site.test/", max_bytes=1_000_000)


def test_sitemap_xml_is_parsed_safely():
    laughs = (b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa">'
              + b"".join(b'<!ENTITY %c "&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;&%c;">' % ((c,) + (c - 1,) * 10)
                         for c in range(ord("b"), ord("k")))
              + b"]><urlset><url><loc>http://site.test/&j;</loc></url></urlset>")
    got = sitemaps.parse(laughs, "http://site.test/")  # returns at once, nothing expanded
    assert all(len(u) < 100 for u in got.urls)
    xxe = (b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
           b"<urlset><url><loc>http://site.test/&x;</loc></url></urlset>")
    assert all("etc" not in u for u in sitemaps.parse(xxe, "http://site.test/").urls)


def test_what_is_not_a_sitemap_says_why():
    for body in (b"<html><body>hi</body></html>", b"not xml at all", b""):
        with pytest.raises(sitemaps.SitemapError):
            sitemaps.parse(body, "http://site.test/")
    rep = report(_result("http://site.test/sitemap.xml", b"<html></html>", b"text/html"), 1, "sitemap")
    assert rep.extra == {"size": "32"} and rep.outcome.reason.startswith("not a sitemap")
