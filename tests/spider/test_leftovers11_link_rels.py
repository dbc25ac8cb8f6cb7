# spider.outlinks: <link rel> of another page of the same content is followed
# (canonical, next, prev, alternate), as Heritrix and Nutch do; a resource of
# the page (stylesheet, icon, preload, manifest) never is, whatever else its
# rel says. rel is a space-separated, case-insensitive token list.
from __future__ import annotations

import pytest

from wreck.spider.outlinks import extract

PAGE = "http://example.com/archive/page-2.html"


def _links(head: str) -> tuple[str, ...]:
    return extract(f"<html><head>{head}</head><body><p>x</p></body></html>".encode(), PAGE).outlinks


@pytest.mark.parametrize("rel", ["canonical", "next", "prev", "previous", "alternate", "NEXT", " Next ",
                                 "prev\tfirst", "next prefetch"])
def test_a_link_to_another_page_of_the_series_is_followed(rel):
    assert _links(f'<link rel="{rel}" href="page-3.html">') == ("http://example.com/archive/page-3.html",)


@pytest.mark.parametrize("rel", ["stylesheet", "alternate stylesheet", "icon", "shortcut icon", "alternate icon",
                                 "apple-touch-icon", "preload", "next preload", "modulepreload", "manifest",
                                 "prefetch", "dns-prefetch", "author", "", "nextpage", "canonical nofollow"])
def test_a_resource_of_the_page_or_an_unknown_rel_is_not(rel):
    assert _links(f'<link rel="{rel}" href="/thing">') == ()


def test_a_paginated_archive_head_gives_its_canonical_neighbours_and_feed_once_each():
    head = ('<link rel="canonical" href="/archive/page-2.html"><link rel="prev" href="/archive/page-1.html">'
            '<link rel="next" href="page-3.html#top"><link rel="stylesheet" href="/s.css">'
            '<link rel="alternate" type="application/atom+xml" href="/feed.xml">'
            '<link rel="icon" href="/favicon.ico"><link rel="next" href="/archive/page-3.html">')
    # the canonical URL is the page itself: not an outlink of its own
    assert _links(head) == ("http://example.com/archive/page-1.html", "http://example.com/archive/page-3.html",
                            "http://example.com/feed.xml")
