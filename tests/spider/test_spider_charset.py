"""A page's links are read in the page's own encoding (WHATWG sniffing), their
path resolved as UTF-8 and their query in the page's encoding (docs/urls.md)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from wreck import htmlcharset
from wreck.spider.outlinks import extract
from tests.spider_helpers import REALDOCS

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
    # an unencodable query character is written as an HTML character reference, its marks escaped
    assert extract(body, PAGE).outlinks[1] == PAGE + "%E6%97%A5%E6%9C%AC.html?q=%26%2326085%3B%26%2326412%3B"


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


CYRILLIC = '<a href="дом.html?q=дом">d</a>'


@pytest.mark.parametrize("first", [
    '<meta charset="bogus">',
    "<meta charset=bogus>",
    '<meta charset="latin-1">',  # a Python codec name, no label of the Encoding Standard
    '<meta http-equiv="Content-Type" content="text/html; charset=x-bogus">',
    '<?xml version="1.0" encoding="bogus"?><meta charset="no-such">',
])
def test_a_meta_whose_label_is_no_encoding_gives_way_to_the_next_as_the_prescan_says(first):
    # HTML 13.2.3.2: "if charset is failure, jump to the step below labeled next byte"
    body = f"<html><head>{first}<meta charset=windows-1251></head><body>{CYRILLIC}".encode("cp1251")
    assert htmlcharset.sniff(body) == "cp1251"
    assert extract(body, PAGE).outlinks == (PAGE + "%D0%B4%D0%BE%D0%BC.html?q=%E4%EE%EC",)


def test_a_meta_whose_label_is_no_encoding_and_no_other_declares_nothing():
    body = f"<meta charset=bogus><p>{CYRILLIC}".encode("cp1251")
    assert htmlcharset.sniff(body) == htmlcharset.DEFAULT  # not UTF-8: the standard's default
    assert htmlcharset.sniff(b"<meta charset=bogus><meta charset=utf-8>") == "utf-8"
    assert htmlcharset.sniff(b"<!-- <meta charset=koi8-r> --><meta charset=bogus>\xe9<p>") == htmlcharset.DEFAULT


# htmlcharset's regex for the usual HTML5 head (<meta charset="utf-8"> after
# nothing but the doctype, <html> and <head>) answers as w3lib's prescan
# does, or leaves the page to it: on crafted heads and their mutations, and on
# the realdocs pages when installed.
_HEADS = [
    b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>t</title>',
    b"<!doctype html><html><head><meta charset='UTF-8'/>",
    b"<html><head>\n  <meta charset=utf-8>",
    b"<meta charset=utf-8 />",
    b"<meta charset=utf-8/>",  # the value is 'utf-8/': not a label
    b'<meta charset="utf-8>x">',
    b'<meta charset="utf-8',
    b"<meta\x0bcharset=utf-8>",  # VT is not the standard's whitespace: no <meta> tag
    b'<!-- <meta charset="latin1"> --><meta charset="utf-8">',
    b'<html lang="en" class="a>b"><meta charset="utf-8">',
    b'<html xml:lang="en"><meta charset="utf-8">',
    b'<head><meta http-equiv="Content-Type" content="text/html; charset=latin1"><meta charset="utf-8">',
    b'<meta charset="utf-16">',
    b'<meta charset="windows-1251">',
    b'<title><meta charset="utf-8"></title>',
    b'\n<!DOCTYPE html>\n\n<html lang="en" data-content_root="../">\n  <head>\n    <meta charset="utf-8" />',
    b'<?xml version="1.0" encoding="UTF-8"?>\r\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN"\r\n'
    b'    "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\r\n<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">'
    b'<head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />',
    b'<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<html>\n<head>\n'
    b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
    b'<!DOCTYPE html><html><head><meta http-equiv="refresh" content="text/html; charset=utf-8">',
    b'<!DOCTYPE html><html><head><meta content="text/html; charset=utf-8" http-equiv="Content-Type">',
    b'<!--x--><!DOCTYPE html><meta charset="utf-8">',
    b'<?xml version="1.0" encoding="ISO-8859-1"?><html><head><meta charset="utf-8">',  # w3lib: the declaration's
    b'<?xml version="1.0"?>\n<!DOCTYPE html>\n<html><head><meta charset="utf-8">',
    b'<!doctype--><meta charset="latin1"> --><meta charset="utf-8">',
]


def _w3lib(body: bytes) -> str | None:
    """meta_encoding() without its regex nor its label rules: w3lib's prescan alone."""
    found = htmlcharset.html_body_declared_encoding(body[: htmlcharset.PRESCAN_BYTES])
    return None if found is None else htmlcharset.UTF8 if found.startswith("utf-16") else found


def test_the_utf8_head_shortcut_answers_as_the_prescan_does():
    rng = random.Random(16)
    cases = list(_HEADS)
    for head in _HEADS:  # each with a byte dropped, doubled or changed somewhere
        for _ in range(40):
            at = rng.randrange(len(head))
            cases += [head[:at] + head[at + 1 :], head[:at] + head[at : at + 1] * 2 + head[at + 1 :],
                      head[:at] + bytes([rng.choice(b' \t\x0b"\'/<>=-!aAuUtT8')]) + head[at + 1 :]]
    taken = 0
    for body in cases:
        if htmlcharset._UTF8_HEAD.match(body, 0, htmlcharset.PRESCAN_BYTES):
            taken += 1
            assert _w3lib(body) == htmlcharset.UTF8, body
        # the prescan's: w3lib's where it names a label of the Encoding Standard (not 'utf-', 'utf_8':
        # test_spider_edges3.py; a <meta> whose label is none gives way to the next)
        assert htmlcharset.meta_encoding(body) == htmlcharset.prescan(body), body
        assert htmlcharset.prescan(body) in (_w3lib(body), None) or not all(
            map(htmlcharset._is_label, htmlcharset._DECLARED.finditer(body.decode("latin-1")))), body
    assert taken >= 10


def test_the_utf8_head_shortcut_answers_as_the_prescan_does_on_the_realdocs_pages():
    pages = [path for root in REALDOCS if Path(root).is_dir() for path in sorted(Path(root).rglob("*.html"))[:300]]
    if not pages:
        pytest.skip("no realdocs tree installed (bench/realdocs.py names the Debian packages)")
    for path in pages:
        body = path.read_bytes()
        assert htmlcharset.meta_encoding(body) == _w3lib(body), path
