# The edges of the web the spider reads wrong no more (tests/web/edges.py
# serves each to a whole crawl in tests/e2e/test_edges_e2e.py): pure cases
# of link extraction, X-Robots-Tag, a Location with raw octets, the
# Encoding Standard's 'replacement' labels and the Refresh header.
from __future__ import annotations

import pytest

from wreck import htmlcharset
from wreck.protocol import Specific
from wreck.spider.fetch import FetchResult, _content_type
from wreck.spider.outcome import parse_retry_after
from wreck.spider.outlinks import extract, header_nofollow, says_nofollow
from wreck.spider.report import location_value, report

PAGE = "http://example.com/dir/page.html"


def links(html: str, content_type: bytes | None = None) -> tuple[str, ...]:
    return extract(html.encode(), PAGE, content_type).outlinks


def test_the_first_base_with_an_href_sets_the_base_even_after_a_base_target():
    assert links('<base target="_blank"><base href="/other/"><a href="y">y</a>') == ("http://example.com/other/y",)


@pytest.mark.parametrize("html, link", [
    ('<svg><base href="/svg/"/></svg><a href="y">y</a>', "http://example.com/dir/y"),
    ('<math><base href="/math/"></math><a href="y">y</a>', "http://example.com/dir/y"),
    ('<svg><g><base href="/svg/"/></g></svg><base href="/html/"><a href="y">y</a>', "http://example.com/html/y"),
    ('<svg><foreignObject><base href="/fo/"></foreignObject></svg><a href="y">y</a>', "http://example.com/fo/y"),
    ('<math><mi><base href="/mi/"></mi></math><a href="y">y</a>', "http://example.com/mi/y"),
    ('<math><annotation-xml encoding="text/html"><base href="/ax/"></annotation-xml></math><a href="y">y</a>',
     "http://example.com/ax/y"),
    ('<math><annotation-xml><base href="/ax/"></annotation-xml></math><a href="y">y</a>', "http://example.com/dir/y"),
])
def test_a_base_in_svg_or_mathml_is_not_the_pages_base_but_one_in_an_html_integration_point_is(html, link):
    assert links(html) == (link,)


def test_a_base_with_an_empty_href_is_the_first_base_and_means_the_pages_own_url():
    assert links('<base href=""><base href="/other/"><a href="y">y</a>') == ("http://example.com/dir/y",)


def test_an_svg_anchor_with_xlink_href_is_a_link():
    assert links('<svg><a xlink:href="/svg"><text>s</text></a></svg>') == ("http://example.com/svg",)


@pytest.mark.parametrize("content, nofollow", [
    ("index, follow, max-image-preview:none", False),
    ("max-snippet:-1, max-video-preview:-1", False),
    ("noindex", False),
    ("nonefollow", False),
    ("NOINDEX,NOFOLLOW", True),
    ("noindex nofollow", True),
    ("noindex;nofollow", True),
    ("max-image-preview: none", False),
    ("max-snippet : -1, nofollow", True),
    ("none", True),
])  # fmt: skip
def test_meta_robots_is_read_as_tokens_not_substrings(content, nofollow):
    assert says_nofollow(content) is nofollow
    got = links(f'<meta name="robots" content="{content}"><a href="/next">n</a>')
    assert got == (() if nofollow else ("http://example.com/next",))


@pytest.mark.parametrize("headers, nofollow", [
    (b"X-Robots-Tag: nofollow\r\n", True),
    (b"x-robots-tag: noindex, none\r\n", True),
    (b"X-Robots-Tag: noindex\r\nX-Robots-Tag: nofollow\r\n", True),
    (b"X-Robots-Tag: wreck: nofollow\r\n", True),
    (b"X-Robots-Tag: otherbot: nofollow\r\n", False),
    (b"X-Robots-Tag: unavailable_after: 25 Jun 2010 15:00:00 PST\r\n", False),
    (b"X-Robots-Tag: max-image-preview:none\r\n", False),
    (b"X-Robots-Tag: noindex\r\n", False),
    (b"X-Not-Robots-Tag: nofollow\r\n", False),
])  # fmt: skip
def test_an_x_robots_tag_header_saying_nofollow_for_us_stops_the_links(headers, nofollow):
    assert header_nofollow(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + headers + b"\r\n") is nofollow


def test_a_location_with_raw_octets_is_percent_encoded_octet_by_octet():
    head = b"HTTP/1.1 302 Found\r\nLocation: /caf\xc3\xa9 /\xe9?q=\xc3\xa9\r\n\r\n"
    assert location_value(head) == "/caf%C3%A9 /%E9?q=%C3%A9"
    assert location_value(b"HTTP/1.1 302 Found\r\nLocation: /plain\r\n\r\n") == "/plain"
    assert location_value(b"HTTP/1.1 302 Found\r\n\r\n") is None


@pytest.mark.parametrize("label", ["iso-2022-kr", "ISO-2022-CN", '"hz-gb-2312"', "csiso2022kr", "replacement"])
def test_a_replacement_label_shows_no_link_as_a_browser_shows_none(label):
    content_type = f"text/html; charset={label}".encode()
    assert links('<a href="/hidden">h</a>', content_type) == ()
    assert htmlcharset.decode(b'<a href="/hidden">', content_type) == (htmlcharset.REPLACEMENT, "\ufffd")
    assert htmlcharset.query_encoding(htmlcharset.REPLACEMENT) == "utf-8"


def test_a_meta_naming_a_replacement_label_shows_no_link_either():
    assert links('<meta charset="iso-2022-kr"><a href="/hidden">h</a>') == ()


def test_an_unknown_label_falls_through_to_the_next_rule():
    assert links('<a href="/caf\u00e9">c</a>', b"text/html; charset=x-no-such-label") == (
        "http://example.com/caf%C3%A9",)


def _page_result(head: bytes, body: bytes = b"<html><body>moving</body></html>", code: int = 200) -> FetchResult:
    return FetchResult(key=1, url=PAGE, http_code=code, curl_code=0, message="", connected=True, aborted=None,
                       head=head, body=body, content_type=b"text/html", ms=1)


def test_a_refresh_header_is_followed_as_a_meta_refresh_is():
    rep = report(_page_result(b"HTTP/1.1 200 OK\r\nRefresh: 0; url=/next\r\n\r\n"), 7)
    assert (rep.outcome.specific, rep.outcome.new_url) == (Specific.META_REFRESH, "http://example.com/next")
    assert rep.record.success


@pytest.mark.parametrize("head", [b"HTTP/1.1 200 OK\r\nRefresh: 300\r\n\r\n", b"HTTP/1.1 200 OK\r\n\r\n"])
def test_a_refresh_header_without_a_url_only_reloads_the_page(head):
    assert report(_page_result(head), 7).outcome.specific is Specific.OK


@pytest.mark.parametrize("date", ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                                  "Sun Nov  6 08:49:37 1994"])
def test_retry_after_is_read_in_all_three_http_date_forms(date):
    # RFC 9110 5.6.7: a recipient must accept the IMF-fixdate, RFC 850 and asctime forms
    assert parse_retry_after(date, now=784111777.0 - 10) == 10


@pytest.mark.parametrize("values, read", [
    ([b"text/html; charset=windows-1251"], b"text/html; charset=windows-1251"),
    ([b"text/html", b"text/html; charset=windows-1251"], b"text/html; charset=windows-1251"),
    ([b"text/html; charset=windows-1251", b"text/html"], b"text/html; charset=windows-1251"),
    ([b"text/html; charset=koi8-r", b"text/plain"], b"text/plain"),
    ([b"text/html; charset=koi8-r", b"*/*", b"nonsense"], b"text/html; charset=koi8-r"),
    ([], None),
])  # fmt: skip
def test_several_content_types_are_read_as_fetch_reads_them(values, read):
    head = [b"HTTP/1.1 200 OK\r\n", *(b"Content-Type: " + v + b"\r\n" for v in values), b"Server: x\r\n"]
    assert _content_type(b"".join(head)) == read


def test_a_wordpress_head_gives_its_feed_and_language_versions_not_its_oembed_or_alternate_css():
    head = ('<link rel="alternate" type="application/rss+xml" href="/feed/">'
            '<link rel="alternate" type="application/json+oembed" href="/wp-json/oembed/1.0/embed?url=x">'
            '<link rel="alternate" type="text/xml+oembed" href="/wp-json/oembed/1.0/embed?url=x&amp;format=xml">'
            '<link rel="alternate" hreflang="fr" href="/fr/"><link rel="Alternate StyleSheet" href="/alt.css">')
    assert links(f"<html><head>{head}</head><body></body></html>") == (
        "http://example.com/feed/", "http://example.com/fr/")
