"""The cookie check inside one fetch (spider/cookies.py, docs/protocol.txt
5.3.2): which Set-Cookie lines RFC 6265 lets a client send back, and a
Fetcher that asks a redirect to the URL itself again once with its cookie,
as a browser does (tests/e2e/test_cookies_e2e.py runs it in a crawl)."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from wreck.protocol import Specific, Status
from wreck.spider.cookies import MAX_COOKIE_BYTES, MAX_COOKIE_HEADER_BYTES, MAX_COOKIES, names_itself, retry_cookie
from wreck.spider.fetch import Fetcher, FetchSettings, Request
from wreck.spider.report import report
from tests.spider_helpers import crawl_settings, fetch_raw

URL = "http://www.shop.example/cart"


def _head(*set_cookie: str) -> bytes:
    lines = b"".join(b"Set-Cookie: " + line.encode("latin-1") + b"\r\n" for line in set_cookie)
    return b"HTTP/1.1 302 Found\r\nLocation: /cart\r\n" + lines + b"\r\n"


@pytest.mark.parametrize("lines, sent", [
    (["seen=1"], "seen=1"),
    (["seen=1; Path=/; HttpOnly; SameSite=Lax"], "seen=1"),
    (["seen=1; Domain=shop.example"], "seen=1"),  # a parent domain of the host
    (["seen=1; Domain=.www.shop.example"], "seen=1"),
    (["a=1", "b=2"], "a=1; b=2"),
    (["seen=1", "seen=2"], "seen=2"),  # the later line replaces the cookie
    (["big=" + "y" * MAX_COOKIE_BYTES, "seen=1"], "seen=1"),  # the huge one alone is dropped
])
def test_a_cookie_rfc_6265_accepts_is_sent_back(lines, sent):
    assert retry_cookie(URL, _head(*lines)) == sent


@pytest.mark.parametrize("line", [
    "seen=1; Domain=other.example",  # 5.3 step 6: the host does not domain-match it
    "seen=1; Domain=example",  # a single label
    "seen=1; Domain=ltd.uk",  # 5.3 step 5: a public suffix (http.cookiejar's heuristic lets it through)
    "seen=1; Domain=github.io",  # a public suffix of the list's private section
    "seen=1; Secure",  # never sent over http
    "seen=1; Path=/account",  # 5.4: /cart is not in that path
    "seen=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT",  # already expired
    "seen=" + "x" * MAX_COOKIE_BYTES,  # past the bound
])
def test_a_cookie_rfc_6265_refuses_or_that_does_not_apply_is_never_sent(line):
    assert retry_cookie(URL, _head(line)) is None


def test_max_age_0_removes_the_cookie_an_earlier_line_set():
    assert retry_cookie(URL, _head("seen=1", "seen=1; Max-Age=0")) is None
    assert retry_cookie(URL, _head("seen=1", "other=1; Max-Age=0")) == "seen=1"


def test_a_public_suffix_host_keeps_its_own_host_only_cookie():
    assert retry_cookie("http://shop.cookie13.ltd.uk/", _head("seen=1; Domain=cookie13.ltd.uk")) == "seen=1"


def test_many_cookies_are_bounded_by_count_and_the_header_by_size():
    many = [f"n{i:03}={'v' * 40}" for i in range(MAX_COOKIES * 4)]
    sent = retry_cookie(URL, _head(*many)).split("; ")
    assert sent == many[:MAX_COOKIES]
    big = [f"n{i:03}={'v' * 4000}" for i in range(MAX_COOKIES)]
    value = retry_cookie(URL, _head(*big))
    assert len(value) <= MAX_COOKIE_HEADER_BYTES and value.split("; ") == big[: len(value.split("; "))]


def test_no_set_cookie_no_retry():
    assert retry_cookie(URL, b"HTTP/1.1 302 Found\r\nLocation: /cart\r\n\r\n") is None


def _crawl_site(paths: list[str], *, cookies: bool = True, location=None, accepts: bool = True,
                head: bool = False):
    """Fetch each of `paths` in turn on one Fetcher (so on one slot) from a
    site whose every page wants 'seen=1' (when `accepts`; else nothing
    pleases it), answering without it a 302 to `location(path, base)` (the path
    itself by default) that sets it. (the (report, result) of each, the
    request heads the site read). With `head`, HEAD first, pages of
    text/html only (the urlserver's head=1, docs/protocol.txt 5.3.1)."""
    seen: list[bytes] = []
    bases: list[str] = []  # the site's origin, known once it listens

    async def answer(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        path = head.split(b" ", 2)[1].decode()
        if accepts and b"\r\nCookie: seen=1\r\n" in head:
            body = b"<a href='/next'>next</a>"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        else:
            writer.write(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nSet-Cookie: seen=1; Path=/\r\n"
                         b"Connection: close\r\nContent-Length: 0\r\n\r\n"
                         % (location(path, bases[0]) if location else path).encode())
        await writer.drain()
        writer.close()

    async def run():
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        base = "http://127.0.0.1:%d" % server.sockets[0].getsockname()[1]
        bases.append(base)
        waiting: list[asyncio.Future] = []
        settings = crawl_settings(cookies=cookies, accept_type=("text/html",) if head else ())
        fetcher = Fetcher(asyncio.get_running_loop(), FetchSettings.from_crawl(settings),
                          lambda result: waiting[-1].set_result(result))
        out = []
        try:
            for path in paths:
                waiting.append(asyncio.get_running_loop().create_future())
                fetcher.start(path, base + path, "127.0.0.1", Request(head=head))
                result = await asyncio.wait_for(waiting[-1], 30)
                out.append((report(result, 1), result))
        finally:
            fetcher.close()
            server.close()
        return out

    return uvloop.run(run()), seen


def test_a_redirect_to_itself_that_sets_a_cookie_is_asked_again_with_it_and_the_page_kept():
    [(rep, result)], seen = _crawl_site(["/a"])
    assert (rep.outcome.status, rep.outcome.specific, result.http_code) == (Status.FETCHED, Specific.OK, 200)
    assert rep.outlinks == (result.url.replace("/a", "/next"),)
    assert [b"Cookie:" in head for head in seen] == [False, True]
    assert b"\r\nCookie: seen=1\r\n" in result.request  # the request as sent, for the WARC request record


def test_the_next_page_on_the_same_slot_is_asked_without_the_cookie():
    reports, seen = _crawl_site(["/a", "/b"])
    assert [result.http_code for _, result in reports] == [200, 200]
    assert [b"Cookie:" in head for head in seen] == [False, True, False, True]


def test_no_cookies_reports_the_redirect_as_it_was():
    [(rep, result)], seen = _crawl_site(["/a"], cookies=False)
    assert (rep.outcome.status, result.http_code, len(seen)) == (Status.REDIRECTION, 302, 1)


def test_a_redirect_elsewhere_that_sets_a_cookie_is_reported_as_the_redirect():
    [(rep, result)], seen = _crawl_site(["/a"], location=lambda path, base: "/login")
    assert (rep.outcome.status, result.http_code, len(seen)) == (Status.REDIRECTION, 302, 1)


def test_a_site_that_redirects_to_itself_even_with_the_cookie_is_asked_twice_and_reported_as_the_redirect():
    [(rep, result)], seen = _crawl_site(["/a"], accepts=False)
    assert (rep.outcome.status, result.http_code, len(seen)) == (Status.REDIRECTION, 302, 2)


def test_a_head_answered_by_the_cookie_check_is_followed_by_the_get_that_makes_it():
    [(rep, result)], seen = _crawl_site(["/a.pdf"], head=True)
    assert (rep.outcome.status, result.http_code) == (Status.FETCHED, 200)
    assert [(head.split(b" ", 1)[0], b"Cookie:" in head) for head in seen] == [
        (b"HEAD", False), (b"GET", False), (b"GET", True)]


def test_a_head_answered_by_the_cookie_check_settles_the_transaction_without_cookies():
    [(rep, result)], seen = _crawl_site(["/a.pdf"], head=True, cookies=False)
    assert (rep.outcome.status, result.http_code, len(seen)) == (Status.REDIRECTION, 302, 1)


@pytest.mark.parametrize("location", [
    "http://www.shop.example:80/cart",  # the scheme's default port, explicit
    "HTTP://WWW.SHOP.EXAMPLE/cart",  # scheme and host are case-insensitive
    "/cart#top",  # a fragment is never sent
    "http://www.shop.example/./cart",  # a dot segment
])
def test_a_location_naming_the_url_in_another_spelling_is_the_url_itself(location):
    assert names_itself(location.encode(), URL)


@pytest.mark.parametrize("location", [
    "http://www.shop.example:8080/cart", "https://www.shop.example/cart", "/cart/", "/Cart", "/cart?x",
    "http://www.shop.example/c\xe4rt",
    "",  # no Location: resolved, the empty string would be the URL itself
])
def test_a_location_naming_another_url_is_not(location):
    assert not names_itself(location.encode("latin-1"), URL)


@pytest.mark.parametrize("spell", [
    lambda base, path: base.upper() + path,  # HTTP://127.0.0.1:PORT/a
    lambda base, path: path + "#x",
    lambda base, path: base + "/./" + path.lstrip("/"),
])
def test_a_redirect_to_itself_in_another_spelling_that_sets_a_cookie_is_asked_again(spell):
    [(rep, result)], seen = _crawl_site(["/a"], location=lambda path, base: spell(base, path))
    assert (rep.outcome.status, result.http_code) == (Status.FETCHED, 200)
    assert [b"Cookie:" in head for head in seen] == [False, True]


def test_a_redirect_without_location_that_sets_a_cookie_is_asked_once():
    asked: list[bytes] = []
    rep, result = fetch_raw(b"HTTP/1.1 302 Found\r\nSet-Cookie: seen=1; Path=/\r\nContent-Length: 0\r\n\r\n",
                            asked=asked)
    assert (rep.outcome.status, result.http_code, len(asked)) == (Status.ERROR, 302, 1)
