"""The third red-team round's spider cases without sockets (tests/web/edges3.py
serves them to a crawl, tests/e2e/test_edges3_e2e.py): which charset labels
count (the Encoding Standard's only), and how a query character the page's
encoding cannot write is sent (URL Standard, "percent-encode after
encoding"); a compressed body with bytes after its end."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from wreck import htmlcharset
from wreck.protocol import Specific, Status
from wreck.spider.fetch import FetchResult, Request
from wreck.spider.outlinks import extract
from wreck.spider.report import report
from wreck.urlnorm import encode_query
from tests.spider_helpers import fetch_raw

PAGE = "http://enc.wreck.test/dir/page"
# a windows-1252 page (the default a browser falls back to) linking a path and a query with é
CAFE = '<p>caf\xe9 <a href="/x/caf\xe9?q=caf\xe9">x</a></p>'.encode("cp1252")
CAFE_LINK = "http://enc.wreck.test/x/caf%C3%A9?q=caf%E9"

# labels Python's codecs know and the Encoding Standard does not: not text codecs at all, or ones no browser has
NOT_LABELS = ("base64", "hex", "undefined", "idna", "punycode", "zlib", "rot13", "utf-32", "cp037",
              "unicode_escape", "utf-8-sig", "palmos")


@pytest.mark.parametrize("label", NOT_LABELS)
def test_a_charset_no_browser_knows_is_ignored_and_the_page_read_as_a_browser_reads_it(label):
    # was: 'base64' and the like raised in the decoder (the page lost as a spider bug),
    # 'utf-32' and 'cp037' decoded the page into text with no link at all
    assert htmlcharset.sniff(CAFE, f"text/html; charset={label}".encode()) == "cp1252"
    assert htmlcharset.sniff(f'<meta charset="{label}">'.encode() + CAFE) == "cp1252"
    assert extract(CAFE, PAGE, f"text/html; charset={label}".encode()).outlinks == (CAFE_LINK,)
    assert htmlcharset.decode(CAFE, f"text/html; charset={label}")[1] == CAFE.decode("cp1252")


@pytest.mark.parametrize("label", ["base64", "undefined", "utf-32"])
def test_a_page_whose_charset_no_browser_knows_is_fetched_whole_with_its_links(label):
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={label}\r\n\r\n".encode()
    result = FetchResult(key=1, url=PAGE, ms=1, http_code=200, connected=True, head=head, body=CAFE,
                         content_type=f"text/html; charset={label}".encode())
    rep = report(result, 1)  # was: raised (base64, undefined), the page lost as a spider bug; or no links (utf-32)
    assert rep.outcome.status is Status.FETCHED and rep.outlinks == (CAFE_LINK,)


@pytest.mark.parametrize(("label", "codec", "path"), [
    ("x-mac-cyrillic", "mac-cyrillic", "/x/caf%D0%B9"),  # é's byte E9 is й there
    ("iso-8859-8-i", "iso8859-8", "/x/caf%D7%99"),  # Hebrew, logical order: E9 is י
    ("visual", "iso8859-8", "/x/caf%D7%99"),
    ("x-cp1251", "cp1251", "/x/caf%D0%B9"),
    ("windows-949", "cp949", None), ("cn-big5", "big5hkscs", None), ("x-euc-jp", "euc_jp", None),
    ("unicode-1-1-utf-8", "utf-8", None), ("ucs-2", "utf-16-le", None), ("gb_2312", "gb18030", None),
    ("iso88592", "iso8859-2", "/x/caf%C3%A9"), ("koi", "koi8-r", "/x/caf%D0%98"),
])
def test_a_label_of_the_encoding_standard_that_w3lib_lacks_is_read_in_the_header_and_the_meta(label, codec, path):
    assert htmlcharset.sniff(b"<p>x", f"text/html; charset={label}".encode()) == codec
    if not codec.startswith("utf-16"):  # a <meta> naming UTF-16 means UTF-8
        assert htmlcharset.sniff(f'<meta charset="{label}"><p>x'.encode()) == codec
    if path:
        assert extract(CAFE, PAGE, f"text/html; charset={label}".encode()).outlinks[0].split("?")[0] == (
            "http://enc.wreck.test" + path)
        assert extract(f'<meta charset="{label}">'.encode() + CAFE, PAGE).outlinks[0].split("?")[0] == (
            "http://enc.wreck.test" + path)


# names Python's codecs know (w3lib folds '-' and '_' and takes Python's aliases) that are no label of
# the Encoding Standard: a browser ignores them, as if the page named no charset
NEAR_LABELS = ("latin-1", "latin_1", "iso_8859_1", "utf_8", "u8", "euc_kr", "us_ascii", "windows_1251", "iso8859_2",
               "mac_roman")
UTF8_DOM = '<meta charset="utf-8"><p>\u0434\u043e\u043c <a href="/x/\u0434?q=\u0434">x</a></p>'.encode()


@pytest.mark.parametrize("label", NEAR_LABELS)
def test_a_charset_name_only_python_knows_is_ignored_in_the_header_and_the_meta_as_browsers_ignore_it(label):
    # was: 'latin-1' in the header read a UTF-8 page, its <meta> saying so, as windows-1252
    assert htmlcharset.sniff(UTF8_DOM, f"text/html; charset={label}".encode()) == "utf-8"
    assert extract(UTF8_DOM, PAGE, f"text/html; charset={label}".encode()).outlinks == (
        "http://enc.wreck.test/x/%D0%B4?q=%D0%B4",)
    # was: '<meta charset="utf_8">' read a windows-1252 page as UTF-8 (its é a U+FFFD)
    for meta in (f'<meta charset="{label}">', f'<meta http-equiv="Content-Type" content="text/html; charset={label}">'):
        assert htmlcharset.sniff(meta.encode() + CAFE) == "cp1252"
        assert extract(meta.encode() + CAFE, PAGE).outlinks == (CAFE_LINK,)


@pytest.mark.parametrize("label", ["latin1", "ISO-8859-1", "iso_8859-1", "l1", "utf8", " utf-8 ", "cp1251", "sjis"])
def test_the_standards_labels_spelled_as_python_also_spells_them_still_count(label):
    expected = htmlcharset.sniff(b"<p>", f"text/html; charset={label.strip()}".encode())
    assert expected != "cp1252" or label in ("latin1", "ISO-8859-1", "iso_8859-1", "l1")
    assert htmlcharset.sniff(f'<meta charset="{label}"><p>'.encode()) == expected


def test_the_standards_own_labels_still_decide_as_before():
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=Shift_JIS") == "cp932"
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=euc-kr") == "cp949"
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=big5") == "big5hkscs"
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=x-user-defined") == htmlcharset.USER_DEFINED
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=iso-2022-kr") == htmlcharset.REPLACEMENT
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=utf-16") == "utf-16-le"
    assert htmlcharset.sniff(b'<meta charset="koi8-r"><p>') == "koi8-r"


@pytest.mark.parametrize(("query", "encoding", "sent"), [
    ("日本", "cp1251", "%26%2326085%3B%26%2326412%3B"),  # a windows-1251 page linking a Japanese word
    ("дом日", "cp1251", "%E4%EE%EC%26%2326085%3B"),
    ("é", "cp932", "%26%23233%3B"),  # Shift_JIS has no é
    ("😀", "euc_kr", "%26%23128512%3B"),  # nor has EUC-KR an emoji (one code point, not two surrogates)
    ("日😀本", "iso2022_jp", "%1B$BF|%1B(B%26%23128512%3B%1B$BK\\%1B(B"),  # back to ASCII before the error
    ("a&b=日", "cp1252", "a&b=%26%2326085%3B"),  # the query's own '&' stays a separator
])
def test_a_query_character_the_page_encoding_cannot_write_is_sent_as_browsers_send_it(query, encoding, sent):
    # URL Standard 1.3 "percent-encode after encoding": '%26%23' NNNN '%3B', where WRECK
    # sent '&%23NNNN;': a new '&' parameter to the server's form parser
    assert encode_query(f"/s?{query}", encoding) == f"/s?{sent}"


def test_a_link_on_a_windows_1251_page_queries_an_unwritable_word_as_a_browser_does():
    body = '<meta charset="windows-1251"><a href="/s?q=&#26085;&#26412;">日本</a>'.encode()
    assert extract(body, PAGE).outlinks == ("http://enc.wreck.test/s?q=%26%2326085%3B%26%2326412%3B",)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "gzip-two-members"])
def test_a_compressed_body_with_bytes_after_its_end_is_complete_as_a_browser_shows_it(coding):
    # libcurl decodes the stream whole, then fails the transfer on the bytes after
    # it (CURLE_WRITE_ERROR): it was a RESET, retried for ever, its links never followed
    page = b"<html><body><a href='/next'>next</a></body></html>"
    body = {"gzip": gzip.compress(page, mtime=0) + b"\n<!-- junk -->\n", "deflate": zlib.compress(page) + b"junk",
            "br": brotli.compress(page) + b"junk",
            "gzip-two-members": gzip.compress(page, mtime=0) + gzip.compress(b"<p>more", mtime=0)}[coding]
    rep, result = fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: %s\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (coding.split("-")[0].encode(), len(body), body))
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCHED, Specific.OK), rep.outcome
    assert result.body == page and rep.outlinks == (result.url.replace("/p", "/next"),)


@pytest.mark.parametrize("coding", [b"utf-8", b"UTF8, binary"])  # 'none' libcurl reads as identity: fetched at once
def test_a_page_in_a_coding_no_browser_knows_is_asked_again_later_as_sent_not_at_once(coding):
    # libcurl fails on its first body byte; browsers show the body as sent. It was
    # asked again at once, inside the host's delay: now the DONE says again=raw and
    # the urlserver hands it out again with raw=1 after the delay (docs/protocol.txt 5.3, 5.5)
    page = b"<html><body><a href='/next'>next</a></body></html>"
    response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n%s" % (
        coding, len(page), page)
    asked: list[bytes] = []
    rep, result = fetch_raw(response, asked=asked, raw_again=True)
    assert len(asked) == 1  # one request, not two
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCH_ERROR, Specific.DECODE_ERROR), rep.outcome
    assert rep.extra["again"] == "raw" and rep.record.document.startswith(b"HTTP/1.1 200 OK")
    rep, result = fetch_raw(response, Request(raw=True), asked, raw_again=True)  # the assignment with raw=1
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCHED, Specific.OK), rep.outcome
    assert result.body == page and rep.outlinks == (result.url.replace("/p", "/next"),)
    assert "again" not in rep.extra and len(asked) == 2


def test_a_page_in_a_coding_no_browser_knows_is_asked_again_at_once_for_an_urlserver_that_cannot_later():
    # an older urlserver did not announce raw_again=1 (docs/protocol.txt 5.1): it would end the
    # URL on again=raw's DECODE_ERROR, so the spider takes the body as sent itself, as before
    page = b"<html><body><a href='/next'>next</a></body></html>"
    response = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: utf-8\r\nContent-Length: %d\r\n\r\n%s" % (
        len(page), page)
    asked: list[bytes] = []
    rep, result = fetch_raw(response, asked=asked)
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCHED, Specific.OK), rep.outcome
    assert result.body == page and "again" not in rep.extra and len(asked) == 2


def test_the_urlservers_own_fetch_in_a_coding_no_browser_knows_is_still_asked_again_at_once():
    # robots.txt (body=), feeds and sitemaps (kind=) are not page hand-outs raw=1 reaches
    body = b"User-agent: *\nDisallow: /private/\n"
    response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: utf-8\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body), body)
    asked: list[bytes] = []
    rep, result = fetch_raw(response, Request(filter_type=False, keep_partial=True), asked)
    assert (rep.outcome.status, result.body, len(asked)) == (Status.FETCHED, body, 2)
    assert result.head.startswith(b"HTTP/1.1 200 OK") and result.head.count(b"HTTP/1.1") == 1  # the second answer's


@pytest.mark.parametrize("coding", [b"gzip", b"gzip, utf-8", b"x-foo, br"])
def test_a_coding_browsers_decode_that_is_corrupt_stays_a_decode_error(coding):
    rep, _ = fetch_raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: %s\r\n"
                        b"Content-Length: 9\r\n\r\nnot gzip!" % coding)
    assert rep.outcome.specific is Specific.DECODE_ERROR, rep.outcome
