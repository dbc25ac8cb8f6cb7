"""robots.txt rules that escape unreserved characters (tests/web/edges2.py's
robots2-tilde host, crawled in tests/e2e/test_edges2_e2e.py). The urlserver's
URLs never hold such an escape (docs/urls.md, section 3: `%7E` is `~`), so
a Disallow rule is compared decoded, as RFC 9309 2.2.2 says; an Allow rule
is kept as Google's reference parser keeps it (its case: `Allow:
/foo/bar/%62%61%7A` does not allow `/foo/bar/baz`). Characters the URL
Standard escapes (a blank, braces...) are escaped in every rule, as the
URLs they must match are. A relative Sitemap: line (robots2-sitemaps) is
read against its robots.txt."""

from __future__ import annotations

import pytest

from wreck.protocol import Done, Specific, Status
from wreck.urlnorm import normalize
from wreck.urlserver.robotsrules import RobotsTxt
from tests.urlserver_helpers import crawl_engine, take_resolving


@pytest.mark.parametrize("link", ["/~joe/p", "/%7Ejoe/q", "/%7ejoe/r", "/a-b", "/a%2Db"])
def test_a_disallow_spelling_an_unreserved_character_escaped_still_refuses_the_pages_wreck_asks(link):
    rules = RobotsTxt(b"User-agent: *\nDisallow: /%7Ejoe/\nDisallow: /a%2db\n", "wreck")
    url = normalize(link, "http://robots2-tilde.wreck.test/")
    assert not rules.allowed(url), url


def test_escapes_of_reserved_and_non_ascii_characters_stay_escapes():
    rules = RobotsTxt(b"User-agent: *\nDisallow: /x%2Fy\nDisallow: /caf%c3%a9\n", "wreck")
    assert not rules.allowed("http://a.test/x%2Fy") and rules.allowed("http://a.test/x/y")
    assert not rules.allowed("http://a.test/caf%C3%A9")


def test_an_allow_spelling_an_unreserved_character_escaped_is_read_as_googles_reference_reads_it():
    rules = RobotsTxt(b"User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "foobot")
    assert not rules.allowed("http://foo.bar/foo/bar/baz")


@pytest.mark.parametrize("link", ["/my folder/x", "/my%20folder/y", "/a{b}", "/z?q=a b", "/s?x={y}"])
def test_a_rule_holding_characters_a_url_never_holds_raw_matches_the_url_escaped(link):
    rules = RobotsTxt(b"User-agent: *\nDisallow: /my folder/\nDisallow: /a{b}\nDisallow: /*?q=a b\n"
                      b"Disallow: /s?x={y}\nAllow: /my folder/ok\n", "wreck")
    assert not rules.allowed(normalize(link, "http://a.test/"))
    assert rules.allowed(normalize("/my folder/ok", "http://a.test/")) and rules.allowed("http://a.test/other")


def test_a_relative_sitemap_line_is_read_against_its_robots_txt(tmp_path):
    # 'Sitemap: /sitemap-news.xml': RFC 9309 and sitemaps.org ask for a full URL; sites write a path
    c = crawl_engine(tmp_path, sitemaps=True)
    c.add_seed("http://s.test/")
    a = take_resolving(c, 0.0)
    assert a.url == "http://s.test/robots.txt"
    c.done("s", Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1,
                     body=b"Sitemap: /sitemap-news.xml\nUser-agent: *\nDisallow:\n"), 0.0)
    handed = set()
    while (a := c.take("s", 0.0)) is not None:
        handed.add((a.url, a.extra.get("kind")))
        c.done("s", Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
    assert ("http://s.test/sitemap-news.xml", "sitemap") in handed
