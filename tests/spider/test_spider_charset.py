"""A page's links are read in the page's own encoding (WHATWG sniffing), their
path resolved as UTF-8 and their query in the page's encoding (docs/urls.md)."""

from __future__ import annotations

import pytest

from wreck import htmlcharset
from wreck.spider.outlinks import extract

PAGE = "http://intl.test/intl/"
LINKS = '<a href="café.html">c</a> <a href="日本.html?q=日本">j</a>'


def _page(encoding: str, meta: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head>{meta}</head><body>{LINKS}</body></html>".encode(
        encoding, "xmlcharrefreplace")


@pytest.mark.parametrize(("header", "codec", "query"), [
    (b"text/html; charset=Shift_JIS", "shift_jis", "%93%FA%96{"),
    (b"text/html; charset=EUC-JP", "euc_jp", "%C6%FC%CB%DC"),
    (b"text/html; charset=GB18030", "gb18030", "%C8%D5%B1%BE"),
    (b"text/html; charset=gbk", "gb18030", "%C8%D5%B1%BE"),
    (b"text/html; charset=utf-8", "utf-8", "%E6%97%A5%E6%9C%AC"),
])
def test_a_page_in_a_legacy_encoding_links_its_real_paths_and_queries(header, codec, query):
    links = extract(_page(codec), PAGE, header).outlinks
    assert links == (PAGE + "caf%C3%A9.html", PAGE + "%E6%97%A5%E6%9C%AC.html?q=" + query)


def test_a_windows_1252_page_declared_by_meta_only_links_cafe_not_a_replacement_character():
    body = _page("cp1252", '<meta charset="iso-8859-1">')
    assert extract(body, PAGE).outlinks[0] == PAGE + "caf%C3%A9.html"
    # an unencodable query character is written as an HTML character reference
    assert extract(body, PAGE).outlinks[1] == PAGE + "%E6%97%A5%E6%9C%AC.html?q=&%2326085;&%2326412;"


def test_a_utf16_page_with_a_bom_is_decoded_and_its_query_is_utf8():
    body = "\ufeff".encode("utf-16-le") + _page("utf-16-le")
    assert extract(body, PAGE).outlinks[1] == PAGE + "%E6%97%A5%E6%9C%AC.html?q=%E6%97%A5%E6%9C%AC"


def test_the_header_charset_wins_over_the_meta_and_the_bom_over_both():
    body = _page("cp1251", '<meta charset="utf-8">').replace(b"caf&#233;", "дом".encode("cp1251"))
    assert extract(body, PAGE, b"text/html; charset=windows-1251").outlinks[0] == PAGE + "%D0%B4%D0%BE%D0%BC.html"
    assert htmlcharset.sniff(b"\xef\xbb\xbf<p>", b"text/html; charset=latin1") == "utf-8"
    # a UTF-8 page goes to the parser as bytes: its parser must not obey a <meta> either
    utf8 = '<meta charset="windows-1251"><a href="дом.html">'.encode()
    assert extract(utf8, PAGE, b"text/html; charset=utf-8").outlinks == (PAGE + "%D0%B4%D0%BE%D0%BC.html",)


def test_a_meta_charset_after_1024_bytes_is_ignored_as_browsers_do():
    late = '<meta charset="iso-8859-5"><a href="é.html">'.encode("cp1252")
    body = b"<!-- " + b"x" * 1100 + b" -->" + late
    assert htmlcharset.sniff(body) == htmlcharset.DEFAULT
    # read as ISO-8859-5, byte E9 would be 'щ' (%D1%89)
    assert extract(body, PAGE).outlinks == (PAGE + "%C3%A9.html",)


def test_an_undeclared_page_is_utf8_when_its_bytes_are_and_windows_1252_otherwise():
    assert extract('<a href="é.html">'.encode(), PAGE).outlinks == (PAGE + "%C3%A9.html",)
    assert extract('<a href="é.html">'.encode("cp1252"), PAGE).outlinks == (PAGE + "%C3%A9.html",)
    assert htmlcharset.sniff("<p>é".encode()[:-1]) == "utf-8"  # cut inside a character


@pytest.mark.parametrize("header", [b"text/html; charset=\xe9\xff", b"text/html; charset=\"utf-8", b"\x80\x81"])
def test_a_latin1_or_broken_content_type_header_never_raises(header):
    assert htmlcharset.sniff(b"<p>\xe9</p>", header) == htmlcharset.DEFAULT


def test_labels_follow_the_encoding_standard():
    assert htmlcharset.sniff(b"<meta charset=ascii>") == "cp1252"
    assert htmlcharset.sniff(b"<meta charset=latin1>") == "cp1252"
    assert htmlcharset.sniff(b"<meta charset=utf-16>") == "utf-8"  # a <meta> cannot mean UTF-16
    assert htmlcharset.sniff(b"<p>", b"text/html; charset=utf-16") == "utf-16-le"
    assert htmlcharset.sniff(b"\xff\xfe\x00\x00<") == "utf-16-le"  # no UTF-32 BOM in the standard
