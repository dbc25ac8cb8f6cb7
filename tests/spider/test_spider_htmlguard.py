# spider/htmlguard.py: what of a page link extraction parses, and where.
from __future__ import annotations

from wreck.protocol import Specific, Status
from wreck.spider import htmlguard
from wreck.spider.fetch import FetchResult
from wreck.spider.report import report

URL = "http://h.wreck.test/"


def test_a_normal_page_is_parsed_whole_and_on_the_loop():
    page = b"<html><body>" + b'<p><a href="/x">x</a></p>' * 300 + b"</body></html>"
    assert htmlguard.bound(page) == (page, "") and not htmlguard.heavy(page)


def test_a_page_past_the_bound_is_cut_before_its_extra_tags():
    page = b"<div>" * (htmlguard.MAX_PARSE_TAGS + 10)
    cut, why = htmlguard.bound(page)
    assert cut.count(b"<") == htmlguard.MAX_PARSE_TAGS and page.startswith(cut) and cut.endswith(b"<div>")
    assert why == f"links taken from the first {htmlguard.MAX_PARSE_TAGS} of {htmlguard.MAX_PARSE_TAGS + 10} tags only"
    assert htmlguard.heavy(page) and htmlguard.heavy(b"<b>" * (htmlguard.INLINE_TAGS + 1))


def test_a_cut_page_is_stored_whole_with_the_links_before_the_cut_and_a_reason():
    early, late = b'<a href="/early">e</a>', b'<a href="/late">l</a>'
    body = b"<html><body>" + early + b"<div>" * 200_000 + late
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    rep = report(FetchResult(1, URL, 5, http_code=200, connected=True, head=head, body=body,
                             content_type=b"text/html"), 7)
    assert (rep.outcome.status, rep.outcome.specific) == (Status.FETCHED, Specific.OK)
    assert rep.outlinks == ("http://h.wreck.test/early",)
    assert "links taken from the first" in rep.outcome.reason
    assert rep.record.document == head + body


def test_the_tag_count_is_exact_for_small_pages_normal_pages_and_bodies_over_a_chunk():
    chunk = htmlguard.COUNT_CHUNK
    for body in (b"", b"<", b"a<b" * 100, b"<p>x</p>" * 5000, b"<" * chunk + b"<", b"x" * (chunk - 1) + b"<<" + b"y" * 7,
                 b"<div>" * (3 * chunk // 5 + 3)):
        assert htmlguard.count(body) == body.count(b"<")
