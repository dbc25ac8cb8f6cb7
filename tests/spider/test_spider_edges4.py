"""The fourth red-team round's spider cases, one GET each on a loopback
server that answers raw bytes (tests/web/edges4.py serves them to a crawl,
tests/e2e/test_edges4_e2e.py): HTTP framing real servers get wrong, and
which of them libcurl refuses where a browser shows a page."""

from __future__ import annotations

import pytest

from wreck.protocol import Specific, Status
from wreck.spider import outcome
from wreck.spider.fetch import FetchResult
from wreck.spider.outlinks import extract
from wreck.spider.report import report
from tests.spider_helpers import fetch_raw

PAGE = b"<html><body><a href='/next'>next</a> <a href='/more'>more</a></body></html>"
CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"


def _ok(status_line: bytes, extra: bytes = b"", body: bytes = PAGE) -> bytes:
    return (status_line + b"\r\nContent-Type: text/html\r\n" + extra
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _links(result) -> tuple[str, ...]:
    base = result.url.rsplit("/", 1)[0]
    return tuple(f"{base}/{name}" for name in ("next", "more"))


# (the answer, the bytes of PAGE a browser shows before the connection closes)
CUT = {
    # a chunk announced as 4 KiB, the page sent, then the connection closed (Chrome:
    # ERR_INCOMPLETE_CHUNKED_ENCODING, the page shown as received)
    "mid-chunk": CHUNKED + b"1000\r\n" + PAGE,
    # the whole page in its chunk, the last (zero) chunk never sent before the close
    "no-last-chunk": CHUNKED + b"%x\r\n%s\r\n" % (len(PAGE), PAGE),
    # Content-Length larger than the body, then a close (a CMS counting before it compressed)
    "length-longer": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n" + PAGE,
}


@pytest.mark.parametrize("name", CUT)
def test_a_body_cut_by_the_servers_close_is_kept_once_marked_disconnect_with_its_links(name):
    # was: FETCH_ERROR RESET, the bytes received dropped, retried --max-retries times
    # and its links never read; browsers show the page as received
    rep, result = fetch_raw(CUT[name])
    assert (rep.outcome.status, rep.outcome.specific, rep.outcome.success) == (Status.FETCHED, Specific.OK, True)
    assert result.body == PAGE and result.truncated == "disconnect"
    assert rep.record.truncated == "disconnect" and rep.record.success
    assert rep.outlinks == _links(result)
    assert "outstanding read data" in rep.outcome.reason or "bytes missing" in rep.outcome.reason


def test_a_body_cut_before_its_first_link_is_kept_marked_with_no_link():
    rep, result = fetch_raw(CHUNKED + b"1000\r\n" + PAGE[:20])
    assert rep.outcome.status is Status.FETCHED and result.truncated == "disconnect"
    assert rep.outlinks == () and result.body == PAGE[:20]


def test_a_server_error_cut_mid_body_stays_a_transient_failure():
    rep, result = fetch_raw(b"HTTP/1.1 503 Busy\r\nContent-Length: 900\r\n\r\nbusy")
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCH_ERROR, Specific.HTTP_ERROR)
    assert result.truncated == "disconnect"


def test_a_close_before_any_status_line_is_still_a_reset():
    assert outcome.of_transfer(url="http://a.test/", curl_code=18, curl_message="partial", http_code=0,
                               connected=True, aborted=None, location=None,
                               retry_after=None).specific is Specific.RESET


@pytest.mark.parametrize("answer", [
    CHUNKED + b"%x;name=value\r\n%s\r\n0\r\n\r\n" % (len(PAGE), PAGE),  # a chunk extension (RFC 9112 7.1.1)
    CHUNKED + b"%x  \r\n%s\r\n0\r\n\r\n" % (len(PAGE), PAGE),  # blanks after the chunk size
    CHUNKED + b"%X\n%s\n0\n\n" % (len(PAGE), PAGE),  # upper-case hex, LF-only chunk lines
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n"
    b"Link: </s.css>; rel=preload\r\n\r\n" + _ok(b"HTTP/1.1 200 OK"),  # three 1xx before the answer
    _ok(b"HTTP/1.1 200"),  # no reason phrase, no blank after the code
    _ok(b"http/1.1 200 OK"),  # a lower-case protocol name
    b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + PAGE,  # HTTP/1.0 ended by the close
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d, %d\r\n\r\n%s" % (len(PAGE), len(PAGE), PAGE),
])
def test_framing_a_browser_reads_is_read_whole(answer):
    rep, result = fetch_raw(answer)
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCHED, Specific.OK), rep.outcome
    assert result.body == PAGE and not result.truncated and rep.outlinks == _links(result)


def test_a_content_length_shorter_than_the_body_ends_the_body_there():
    # RFC 9112 6.3: the length frames the message; the bytes after it are no part of this answer
    rep, result = fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 40\r\n\r\n" + PAGE)
    assert rep.outcome.status is Status.FETCHED and result.body == PAGE[:40]
    assert rep.outlinks == _links(result)[:1]


@pytest.mark.parametrize(("answer", "why"), [
    (_ok(b"HTTP/1.1 302 Found", b"Location: /a\r\nLocation: /b\r\n"), "Multiple Location"),  # Chrome refuses too
    (_ok(b"HTTP/1.1 200 OK", b"Content-Length: 3\r\n"), "Content-Length"),  # Chrome refuses too (RFC 9112 6.3)
    (_ok(b"HTTP/1.1 200 OK", b"X-Debug line without a colon\r\n"), "without colon"),  # browsers skip the line
    (b"\r\n" + _ok(b"HTTP/1.1 200 OK"), "HTTP/0.9"),  # Chrome skips up to 4 bytes before 'HTTP'
    (PAGE, "HTTP/0.9"),  # no status line at all
])
def test_framing_libcurl_refuses_is_a_bad_response_with_libcurls_reason(answer, why):
    rep, _ = fetch_raw(answer)
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCH_ERROR, Specific.BAD_RESPONSE)
    assert why in rep.outcome.reason, rep.outcome


def test_the_links_of_an_iframes_srcdoc_are_read_against_the_pages_base():
    # HTML 4.8.5: srcdoc is the iframe's document (its links resolved against the page's
    # base URL, about:srcdoc's fallback base); was: never read, its links never followed
    body = (b'<base href="/d/"><iframe srcdoc="&lt;a href=&quot;in-srcdoc&quot;&gt;s&lt;/a&gt;'
            b'&lt;iframe srcdoc=&quot;&amp;lt;a href=/t/nested&amp;gt;n&quot;&gt;&lt;/iframe&gt;"></iframe>'
            b'<template><a href="/t/template">inert</a></template><a href="/t/plain">p</a>')
    links = extract(body, "http://a.test/p").outlinks
    assert "http://a.test/d/in-srcdoc" in links and "http://a.test/t/plain" in links
    assert "http://a.test/t/template" not in links  # a template's content is inert: no browser shows it
    assert "http://a.test/t/nested" not in links  # one level of srcdoc is read (outlinks.MAX_SRCDOC_DEPTH)


def test_an_iframe_with_both_srcdoc_and_src_gives_both_links():
    body = b'<iframe src="/t/src" srcdoc="&lt;a href=/t/doc&gt;d"></iframe>'
    assert set(extract(body, "http://a.test/p").outlinks) == {"http://a.test/t/src", "http://a.test/t/doc"}


def test_a_robots_txt_cut_by_the_servers_close_stays_a_reset_not_a_shorter_set_of_rules():
    # a cut robots.txt may have lost a Disallow line: it stays unreachable (RFC 9309
    # 2.3.1.4: complete disallow, asked again), as before session 12
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 900\r\n\r\n"
    result = FetchResult(key=1, url="http://a.test/robots.txt", ms=1, curl_code=18, http_code=200, connected=True,
                         message="end of response with 870 bytes missing", head=head,
                         body=b"User-agent: *\nDisallow: /a/\n", truncated="disconnect")
    rep = report(result, 1, None, {"body": "524288"})
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCH_ERROR, Specific.RESET)
    assert report(result, 1).outcome.status is Status.FETCHED  # a page: kept as received


def test_a_cut_page_sends_no_validator_so_a_recrawl_asks_the_whole_page_again():
    # its ETag names the whole page: a recrawl's If-None-Match would get a 304 and keep the cut copy for ever
    rep, result = fetch_raw(b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: "v1"\r\n'
                             b"Last-Modified: Tue, 24 Nov 2026 06:00:00 GMT\r\nContent-Length: 5000\r\n\r\n" + PAGE)
    assert result.truncated == "disconnect" and rep.outcome.status is Status.FETCHED
    assert "etag" not in rep.extra and "last_modified" not in rep.extra and "digest" in rep.extra


@pytest.mark.parametrize("status_line", [b"HTTP/1.1 302 Found", b"HTTP/1.1 301 Moved Permanently",
                                         b"HTTP/1.1 404 Not Found", b"HTTP/1.1 410 Gone"])
def test_a_3xx_without_location_is_kept_as_a_404_page_is_stored_whole_its_links_not_read(status_line):
    # a browser shows the body of a 3xx without Location (Fetch, HTTP-redirect fetch step 3:
    # no location URL, the response is returned); WRECK reads links from 2xx answers only,
    # as for a 404's page (docs/operating.md, The spider): a 3xx without one is such a page
    rep, result = fetch_raw(_ok(status_line))
    assert (rep.outcome.status, rep.outcome.specific) == (Status.ERROR, Specific.HTTP_ERROR)
    assert rep.outlinks == () and rep.record.outlinks == ()
    assert rep.record.document.endswith(PAGE)  # stored as received: the page a browser shows


def test_the_same_page_answered_200_gives_its_links():
    rep, result = fetch_raw(_ok(b"HTTP/1.1 200 OK"))
    assert rep.outlinks == _links(result)
