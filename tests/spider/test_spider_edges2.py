"""The second red-team round's spider cases without sockets (tests/web/edges2.py
serves them to a crawl, tests/e2e/test_edges2_e2e.py): how a response's
Content-Type, or its absence, decides whether its links are followed; a
refresh's quoted URL; a 305's Location; a text sitemap, and a feed or an
HTML page named as a sitemap."""

from __future__ import annotations

import pytest

from wreck.mediatype import accepts, media_type
from wreck.protocol import Specific, Status
from wreck.spider import sitemaps
from wreck.spider.fetch import FetchResult
from wreck.spider.outcome import of_response
from wreck.spider.outlinks import extract, is_html, refresh_target
from wreck.spider.report import report

PAGE = "http://odd.wreck.test/p"


@pytest.mark.parametrize("body", [
    b"<title>untyped</title><a href=/a>a</a>", b"<!-- generated -->\n<p>Hello <a href=/a>a</a>",
    b"\r\n  <p>Hello", b"<a href=/a>a</a>", b"<DIV class=x>", b"<!DOCTYPE html><html>", b"<html\nlang=en>",
    b"<script>var x</script>", b"<br>", b"<b>bold</b>",
])
def test_an_untyped_body_a_browser_renders_as_html_is_read_for_links(body):
    # the MIME Sniffing Standard's HTML patterns: a tag of its list or a comment first
    assert is_html(None, body)


@pytest.mark.parametrize("body", [
    b"Notes\n<a href=/a>a</a>", b"%PDF-1.4\n<a href=/a>", b"\xef\xbb\xbf<html>", b"<htmlx>", b"<br/>",
    b"<?xml version='1.0'?><rss>", b"\x89PNG\r\n\x1a\n<a href=/a>",
])
def test_an_untyped_body_a_browser_does_not_render_as_html_gives_no_links(body):
    assert not is_html(None, body)


@pytest.mark.parametrize("ctype", [
    b"text/html charset=utf-8", b"text/html, text/html", b'text/html;;charset="utf-8"', b"TEXT/HTML; CHARSET=UTF-8",
    b"application/xhtml+xml", b"text/html\t; charset=utf-8",
])
def test_an_html_content_type_written_loosely_is_html(ctype):
    assert is_html(ctype, b"")
    assert extract(b"<a href=/a>a</a>", PAGE, ctype).outlinks == ("http://odd.wreck.test/a",)


def test_a_content_type_that_names_no_type_counts_as_absent_so_the_body_decides():
    assert media_type("html") == "" and media_type(", ") == "" and media_type("*/*") == ""
    assert is_html(b"html", b"<html><body>") and not is_html(b"html", b"plain words")


def test_text_plain_holding_html_is_text():
    assert not is_html(b"text/plain; charset=utf-8", b"<!DOCTYPE html><a href=/a>")


def test_the_accept_filter_reads_loose_content_types_as_browsers_do():
    assert media_type(b"text/html charset=utf-8") == "text/html"
    assert media_type("application/json, text/html") == "text/html"  # the last that parses (Fetch)
    assert media_type("text/html; charset=utf-8") == "text/html"
    assert accepts(("text/html",), b"text/html charset=utf-8")
    assert not accepts(("text/html",), b"application/pdf x")


@pytest.mark.parametrize(("content", "target"), [
    ("0;url='/t/trailing' (old page)", "/t/trailing"), ("0; url='/t/single'", "/t/single"),
    ('0;URL="/t/double"', "/t/double"), ("0; URL = /t/bare", "/t/bare"), ("0; /t/no-url", "/t/no-url"),
    ("0;url='/t/unclosed", "/t/unclosed"), ("0;url=/t/x'", "/t/x'"),
])
def test_a_refresh_url_is_read_as_html_reads_it(content, target):
    # HTML 7.11.1, the shared declarative refresh steps: a quote opens the URL and its match closes it
    assert refresh_target(content, PAGE) == "http://odd.wreck.test" + target


def test_a_refresh_without_a_usable_url_names_none():
    assert refresh_target("30", PAGE) is None
    assert refresh_target("0;url=javascript:go('/t/js')", PAGE) is None


def test_a_305_use_proxy_location_is_not_followed_as_a_page():
    got = of_response(PAGE, 305, "http://proxy.example:3128/", None)
    assert (got.status, got.specific, got.new_url, got.success) == (Status.ERROR, Specific.HTTP_ERROR, None, False)
    assert "305" in got.reason


@pytest.mark.parametrize("code", [300, 301, 302, 303, 307, 308])
def test_the_other_redirects_with_a_location_are_followed(code):
    got = of_response(PAGE, code, "/t/next#part", None)
    assert (got.status, got.new_url) == (Status.REDIRECTION, "http://odd.wreck.test/t/next")


def _sitemap_fetch(body: bytes, ctype: bytes) -> FetchResult:
    return FetchResult(key=1, url="http://odd.wreck.test/sitemap", http_code=200, body=body, content_type=ctype,
                       head=b"HTTP/1.1 200 OK\r\n\r\n", ms=1, connected=True)


def test_a_text_sitemap_lists_its_urls():
    # sitemaps.org's text format: one URL a line (a BOM, CRLF, blanks and a stray line tolerated)
    found = sitemaps.parse(b"\xef\xbb\xbfhttp://odd.wreck.test/a\r\n\r\n  https://odd.wreck.test/b  \r\nnotes\n",
                           "http://odd.wreck.test/sitemap.txt")
    assert (found.kind, found.urls, found.listed) == ("urlset", ("http://odd.wreck.test/a", "https://odd.wreck.test/b"),
                                                      2)
    rep = report(_sitemap_fetch(b"http://odd.wreck.test/a\n", b"text/plain"), 1, "sitemap")
    assert rep.outlinks == ("http://odd.wreck.test/a",) and rep.extra["sitemap"] == "urlset"


@pytest.mark.parametrize(("body", "ctype"), [
    (b'<?xml version="1.0"?><rss version="2.0"><channel><item><link>http://odd.wreck.test/a</link></item>'
     b"</channel></rss>", b"application/rss+xml"),
    (b'<!DOCTYPE html><title>site map</title><a href="/a">a</a>', b"text/html"),
])
def test_a_feed_or_an_html_page_named_as_a_sitemap_gives_its_links(body, ctype):
    rep = report(_sitemap_fetch(body, ctype), 1, "sitemap")
    assert rep.outlinks == ("http://odd.wreck.test/a",)
    assert (rep.extra["sitemap"], rep.extra["listed"]) == ("urlset", "1")


@pytest.mark.parametrize(("request_head", "specific"), [
    (b"GET / HTTP/1.1\r\nHost: odd.wreck.test\r\n\r\n", Specific.OK),
    (b'GET / HTTP/1.1\r\nHost: odd.wreck.test\r\nIf-None-Match: "v1"\r\n\r\n', Specific.NOT_MODIFIED),
    (b"GET / HTTP/1.1\r\nHost: odd.wreck.test\r\nIf-Modified-Since: Tue, 24 Nov 2026 10:00:00 GMT\r\n\r\n",
     Specific.NOT_MODIFIED),
])
def test_a_304_is_not_modified_only_when_the_request_named_a_validator(request_head, specific):
    # a 304 nobody asked for compares with no earlier copy: stored as the answer received, not a revisit
    result = FetchResult(key=1, url="http://odd.wreck.test/", http_code=304, head=b"HTTP/1.1 304 Not Modified\r\n\r\n",
                         ms=1, connected=True, request=request_head)
    rep = report(result, 1)
    assert (rep.outcome.status, rep.outcome.specific, rep.record.specific) == (Status.FETCHED, specific, specific)
