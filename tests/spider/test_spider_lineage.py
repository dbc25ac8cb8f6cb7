"""The spider copies an assignment's via= and hops= (docs/protocol.txt 5.3)
into its fetch record's VIA and HOPS fields (6.3), and drops a value that
breaks their grammar instead of failing the fetch."""

from __future__ import annotations

from wreck.spider.fetch import FetchResult
from wreck.spider.report import report


def _result(url="http://site.test/a", body=b"<a href=/b>b</a>"):
    return FetchResult(key=1, url=url, http_code=200, curl_code=0, message="", connected=True, aborted=None,
                       head=b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", body=body,
                       content_type=b"text/html", ms=1)


def test_the_record_keeps_the_assignments_via_and_hop_path():
    rec = report(_result(), 3, None, {"via": "http://site.test/", "hops": "LL", "etag": "x"}).record
    assert (rec.via, rec.hops) == ("http://site.test/", "LL")
    seed = report(_result(), 4, None, {"hops": "-"}).record
    assert (seed.via, seed.hops) == ("", "-")
    assert (report(_result(), 5).record.hops, report(_result(), 5).record.via) == ("", "")  # a urlserver before them


def test_a_via_or_hops_that_breaks_the_grammar_is_left_out_and_the_page_still_reported():
    rep = report(_result(), 3, None, {"via": "http://site.test/\x7f", "hops": "L+L"})
    assert (rep.record.via, rep.record.hops) == ("", "") and rep.record.success
    assert rep.outlinks == ("http://site.test/b",)
