# spider.outlinks: outlinks and meta refresh from HTML, pure (no sockets).
from __future__ import annotations

from wreck.protocol import limits
from wreck.spider import htmlguard
from wreck.spider.outlinks import ONE_WALK_TAGS, extract, is_html

PAGE = "http://example.com/dir/page.html"


def links(html: str, url: str = PAGE):
    return extract(html.encode(), url)


def test_anchors_resolved_normalised_deduplicated():
    got = links(
        '<a href="a.html">1</a><a href="/dir/a.html#x">2</a><a href="HTTP://Example.com:80/b">3</a>'
        '<a href="../c?q=%7e">4</a><a href="a.html">again</a><a href="">empty</a>'
    )
    assert got.outlinks == (
        "http://example.com/dir/a.html", "http://example.com/b", "http://example.com/c?q=~",
    )
    assert got.refresh is None


def test_dropped_schemes_and_self_link():
    got = links(
        '<a href="javascript:void(0)">j</a><a href="mailto:x@y.z">m</a><a href="data:text/html,x">d</a>'
        '<a href="#top">self</a><a href="ftp://example.com/f">f</a><a href="tel:1">t</a>'
        '<a href="https://other.org/">ok</a>'
    )
    assert got.outlinks == ("https://other.org/",)


def test_base_href_and_frames_and_feeds():
    got = links(
        '<html><head><base href="http://cdn.example.org/root/">'
        '<link rel="alternate" type="application/rss+xml" href="feed.rss">'
        '<link rel="stylesheet" href="style.css"><link href="norel.css"></head>'
        '<body><iframe src="/frame"></iframe><map><area href="area.html"></map><a href="x">x</a></html>'
    )
    assert set(got.outlinks) == {
        "http://cdn.example.org/root/x", "http://cdn.example.org/root/area.html",
        "http://cdn.example.org/root/feed.rss", "http://cdn.example.org/frame",
    }
    frames = links('<html><frameset><frame src="left.html"><frame src="/right"></frameset></html>')
    assert frames.outlinks == ("http://example.com/dir/left.html", "http://example.com/right")


def test_nofollow_anchor_and_meta_robots():
    assert links('<a rel="NoFollow sponsored" href="/a">a</a><a href="/b">b</a>').outlinks == (
        "http://example.com/b",
    )
    page = '<meta name="robots" content="noindex, NOFOLLOW"><a href="/b">b</a>'
    assert links(page).outlinks == ()
    assert links('<meta name="robots" content="none"><a href="/b">b</a>').outlinks == ()


def test_a_nofollow_link_does_not_hide_a_plain_link_to_the_same_href():
    # Found by the chaos run: a page whose only followable link to a URL came
    # after a rel=nofollow link with the same href lost that URL for good.
    page = '<a href="/s/" rel="nofollow">sponsored</a><a href="/t">t</a><a href="/s/">next</a>'
    assert links(page).outlinks == ("http://example.com/t", "http://example.com/s/")


def test_meta_refresh():
    got = links('<meta http-equiv="Refresh" content="0; URL=\'/target\'"><a href="/x">x</a>')
    assert got.refresh == "http://example.com/target"
    assert links('<meta http-equiv="refresh" content="5">').refresh is None
    assert links('<meta http-equiv="refresh" content="0;url=javascript:x()">').refresh is None


def test_idna_and_non_ascii_hrefs():
    got = links('<a href="http://bücher.de/ä ö">x</a>')
    assert got.outlinks == ("http://xn--bcher-kva.de/%C3%A4%20%C3%B6",)


def test_bounded_link_count():
    many = "".join(f'<a href="/p{i}">.</a>' for i in range(limits.MAX_OUTLINKS + 50))
    assert len(links(many).outlinks) == limits.MAX_OUTLINKS


def test_bounded_link_octets_keep_the_first_links_whole():
    long = "x" * 2000  # each link about 2 KB: the octet bound comes first
    many = "".join(f'<a href="/{i}/{long}">.</a>' for i in range(limits.MAX_OUTLINKS_BYTES // 2000 + 50))
    got = links(many).outlinks
    assert sum(len(url) + 1 for url in got) <= limits.MAX_OUTLINKS_BYTES
    assert got == tuple(f"http://example.com/{i}/{long}" for i in range(len(got)))
    assert sum(len(url) + 1 for url in got) + len(got[-1]) + 1 > limits.MAX_OUTLINKS_BYTES


def test_links_come_tag_after_tag_each_in_page_order():
    page = ('<iframe src="/f1"></iframe><a href="/a1">1</a><link rel="alternate" href="/l1">'
            '<area href="/r1"><a href="/a2">2</a><frame src="/fr1"><a href="/a1">again</a>')
    assert links(page).outlinks == tuple(f"http://example.com/{p}" for p in ("a1", "a2", "r1", "l1", "f1"))


def test_every_link_tag_counts_in_any_case_and_inside_svg_math_and_tables_but_not_templates():
    # the same links from a page as from a large page (ONE_WALK_TAGS: the
    # tags but <a> found in one CSS walk, not one tags() walk each)
    def links(html: str):
        small = extract(html.encode(), PAGE)
        large = (html + "<i></i>" * ONE_WALK_TAGS).encode()
        assert extract(large, PAGE, tags=htmlguard.count(large)) == small
        return small

    svg = ('<svg><link rel="next" href="/svglink"><iframe src="/svgiframe"></iframe><area href="/svgarea"/>'
           '<a href="/svga">x</a></svg><a href="/a">')
    assert links(svg).outlinks == tuple(f"http://example.com/{p}" for p in (
        "svga", "a", "svgarea", "svglink", "svgiframe"))
    assert links('<math><meta name="robots" content="nofollow"></math><a href="/a">').outlinks == ()
    got = links('<svg><foreignObject><base href="http://other.org/"><meta http-equiv=refresh content="0;url=/r">'
                '<a href=y></foreignObject></svg>')
    assert got == (("http://other.org/y",), "http://other.org/r")
    assert links('<template><a href="/t"><link rel=next href=/tl><base href="http://other.org/"></template>'
                 '<a href=/b>').outlinks == ("http://example.com/b",)
    upper = ('<noscript><link rel=next href=/n><iframe src=/ni></iframe></noscript><A HREF=/up><AREA HREF=/ar>'
             '<LINK REL=NEXT HREF=/ln><BASE HREF=http://b.org/>')
    assert links(upper).outlinks == tuple(f"http://b.org/{p}" for p in ("up", "ar", "n", "ln", "ni"))
    table = '<table><link rel=next href=/tl><iframe src=/ti></iframe><a href=/ta></table>'
    assert links(table).outlinks == tuple(f"http://example.com/{p}" for p in ("ta", "tl", "ti"))
    assert links('<svg><svg:link href=/ns></svg:link></svg><my-link href=/c><linkx href=/d>').outlinks == ()


def test_garbage_never_raises():
    for junk in (b"", b"\x00\xff\xfe<<<a href=", b"<a href='\x00'>", b"<html" * 1000):
        extract(junk, PAGE)


def test_is_html():
    assert is_html(b"text/html; charset=utf-8", b"")
    assert is_html(b"application/xhtml+xml", b"")
    assert not is_html(b"application/pdf", b"<html>")
    assert is_html(None, b"  <!DOCTYPE html><html>")
    assert is_html(None, b"<!-- hi --><html>")
    assert not is_html(None, b"\x89PNG\r\n")


def test_absolute_links_kept_between_pages_resolve_as_on_each_page_and_stay_bounded():
    from wreck import urlnorm

    html = '<a href="http://Other.test:80/x/../y?b=1#f">abs</a><a href="http:rel">scheme only</a>'
    first = links(html, "http://a.test/one/page.html")
    second = links(html, "http://b.test/two/page.html")  # the same absolute link, now from the cache
    assert first.outlinks == ("http://other.test/y?b=1", "http://a.test/one/rel")
    assert second.outlinks == ("http://other.test/y?b=1", "http://b.test/two/rel")
    for i in range(urlnorm.ABSOLUTE_REFS + 10):
        urlnorm.BaseUrl("http://a.test/").resolve(f"http://h{i}.test/")
    assert len(urlnorm._absolute_refs) == urlnorm.ABSOLUTE_REFS


def test_links_with_fragments_resolve_as_without_them_and_once_a_page():
    from wreck.urlnorm import normalize

    refs = ['#top', 'a.html#s1', 'a.html#s2', '../up/b.html?q=1#x', '/r#', 'c.html?x=#y#z', ' d.html#\te',
            'http://Other.test/p#f', '//other.test/q#f', '#', 'e.html%23not#yes']
    got = links("".join(f'<a href="{ref}">x</a>' for ref in refs))
    expected = []
    for ref in refs:  # a full URL parse of each, fragment and all
        url = normalize(ref, PAGE)
        if url and url != PAGE and url not in expected:
            expected.append(url)
    assert got.outlinks == tuple(expected)
    assert "http://example.com/dir/e.html%23not" in got.outlinks
    # with another base, a fragment-only link names the base: a link like any other
    based = links('<base href="http://example.com/other/"><a href="#frag">to base</a>')
    assert based.outlinks == ("http://example.com/other/",)


def test_the_worker_hook_runs_once_between_the_parse_and_the_links():
    calls = []
    html = '<a href="a.html">1</a><a href="../b.html">2</a>'
    got = extract(html.encode(), PAGE, between=lambda: calls.append("served"))
    assert calls == ["served"]
    assert got == links(html)
    assert got.outlinks == ("http://example.com/dir/a.html", "http://example.com/b.html")
