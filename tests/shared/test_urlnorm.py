# wreck.urlnorm: the canonical URL form both daemons dedup on.
from __future__ import annotations

import pytest

from wreck.protocol import limits
from wreck.urlnorm import BaseUrl, host_of, normalize

BASE = "http://Example.COM:80/a/b/c.html?q=1#top"


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        ("HTTP://Example.COM:80/", None, "http://example.com/"),
        ("https://example.com:443/x", None, "https://example.com/x"),
        ("http://example.com:8080/x", None, "http://example.com:8080/x"),
        ("http://example.com", None, "http://example.com/"),
        ("../d/e.html?x=1#frag", BASE, "http://example.com/a/d/e.html?x=1"),
        ("/x/./y/../z", BASE, "http://example.com/x/z"),
        ("?p=2", BASE, "http://example.com/a/b/c.html?p=2"),
        ("#only-fragment", BASE, "http://example.com/a/b/c.html?q=1"),
        ("//cdn.Example.org/s.css", BASE, "http://cdn.example.org/s.css"),
        ("http://other.org/p%7e%41%2f%3a", None, "http://other.org/p~A%2F%3A"),
        ("http://bücher.de/straße", None, "http://xn--bcher-kva.de/stra%C3%9Fe"),
        ("http://example.com/a b", None, "http://example.com/a%20b"),
        ("  http://example.com/\t\n  ", None, "http://example.com/"),
        ("http://user:pw@example.com/", None, "http://example.com/"),
        ("http://0x7f.1/", None, "http://127.0.0.1/"),
        ("http://[::FFFF:127.0.0.1]:80/", None, "http://[::ffff:7f00:1]/"),
        ("http://example.com/%2e%2E/x", None, "http://example.com/x"),
        ("http://example.com/?a=é", None, "http://example.com/?a=%C3%A9"),
        ("http:\\\\example.com\\a", None, "http://example.com/a"),
    ],
)
def test_normalize(url, base, expected):
    assert normalize(url, base) == expected


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)", "mailto:a@example.com", "data:text/html,hi", "ftp://example.com/f",
        "tel:+123", "http://", "http://exa mple.com/", "file:///etc/passwd", "http://[::1/",
    ],
)
def test_unusable(url):
    assert normalize(url, BASE) is None


def test_empty_reference_is_the_base():
    assert normalize("") is None
    assert normalize("", BASE) == "http://example.com/a/b/c.html?q=1"


def test_idempotent_and_wire_safe():
    for url in ("http://Ex.com/%7euser/a/../b?x=%aa#f", "https://ü.example/ä?ö", "http://a.b/%zz"):
        once = normalize(url)
        assert once is not None and normalize(once) == once
        assert once.isascii() and " " not in once and once.isprintable()


def test_length_bounded():
    long = "http://example.com/" + "a" * limits.MAX_URL_LEN
    assert normalize(long) is None
    # growth through escaping counts too
    assert normalize("http://example.com/" + "é" * (limits.MAX_URL_LEN // 3)) is None


def test_host_of():
    assert host_of("http://example.com:81/x") == "example.com"
    assert host_of("nonsense") is None


RESOLVER_CASES = [
    "/a/b.html", "b.html", "sub/c?x=1&y=2", "/", "a", "?q", "//other.org/x", "/./x", "../up",
    ".hidden", "/x/..", "a:b", "mailto:x@y", "/p%7e", "/é", "x y", "/a'b", "/a\\\\b", "", "#f",
    "/a;b=c,d@e!$()*+", "http://h/x", "/" + "z" * 9000, "z" * 9000,
    "/s;jsessionid=A1/page2", "page2;JSESSIONID=A1", "x.php?PHPSESSID=9&p=2", "/m?sid=" + "f" * 32,
    "../", "../../", "../../../../../x.html", "../a/b.html?x=1", "../../c/", "..", "../..", "../.x", "../?q",
    "..//x", "../a/../b", "../a/./b", "../x:y", "../%2e%2e/x", "../x;jsessionid=1", "../" * 40 + "deep",
    "../s?sid=" + "f" * 32, ".../x", "..%2fx", "../" + "z" * 9000,
]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a.example/s;jsessionid=ABC123/page1", "http://a.example/s/page1"),
        ("http://a.example/x.jsp;JSESSIONID=0123ABCD.node1?x=1", "http://a.example/x.jsp?x=1"),
        ("http://a.example/x.php?PHPSESSID=abc&page=2", "http://a.example/x.php?page=2"),
        ("http://a.example/x.php?page=2&phpsessid=abc&q=3", "http://a.example/x.php?page=2&q=3"),
        ("http://a.example/x.asp?ASPSESSIONIDQQGGGNCG=LKJHGF&a=1", "http://a.example/x.asp?a=1"),
        ("http://a.example/x.cfm?CFID=12&CFTOKEN=34", "http://a.example/x.cfm"),
        ("http://a.example/x?sessionid=z&session_id=y&k=v", "http://a.example/x?k=v"),
        ("http://a.example/x?sid=" + "0a" * 16 + "&y=1", "http://a.example/x?y=1"),
        ("http://a.example/x?sid=12", "http://a.example/x?sid=12"),  # a short sid is a real id
        ("http://a.example/mission/session-notes?a=b", "http://a.example/mission/session-notes?a=b"),
        ("http://a.example/x?jsessionidx=1", "http://a.example/x?jsessionidx=1"),
    ],
)
def test_session_ids_are_stripped(url, expected):
    assert normalize(url) == expected
    assert normalize(expected) == expected


@pytest.mark.parametrize("base", [BASE, "https://ex.org", "http://ex.org/dir/", "http://ex.org/f?q=/x/y",
                                  "http://ex.org/a//b/c/d.html", "http://ex.org:8080/a/b/"])
@pytest.mark.parametrize("ref", RESOLVER_CASES)
def test_resolver_agrees_with_normalize(base, ref):
    assert BaseUrl(base).resolve(ref) == normalize(ref, base)


@pytest.mark.parametrize("base", [BASE, "https://ex.org", "http://ex.org/dir/", "mailto:x@y.z", "http://ex.org:8080/a/b/"])
def test_resolving_a_pages_links_at_once_is_resolving_each(base):
    refs = RESOLVER_CASES + ["http://Other.test:80/x/../y?b=1", "https://ex.org/a", "http:rel", "/p/1.html"]
    assert BaseUrl(base).resolve_all(refs * 2) == [normalize(ref, base) for ref in refs * 2]


def test_a_session_name_in_the_host_is_not_stripped_from_it():
    # ';jsessionid=' in the host is part of the host name to the URL Standard:
    # stripping it made another host ('127.0.0.' then normalised again as
    # 127.0.0.0) or none at all ('https:///x.example/a')
    for url in ("http://127.0.0.;jsessionid=1/A/B", "https:/;jsessionid=1/x.example/a"):
        once = normalize(url)
        assert once is not None and normalize(once) == once
    assert normalize("http://127.0.0.;jsessionid=1/A/B;jsessionid=2") == "http://127.0.0.;jsessionid=1/A/B"
