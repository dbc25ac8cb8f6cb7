# Outlinks of an HTML page, as pure functions of (bytes, page URL).
#
# The page is parsed once by selectolax's lexbor backend (the fastest of the
# candidates measured in bench/spider_bench.py's notes: about 100 us for a
# 30 KB page, lxml about 120-140 us). Elements are visited with tags(), which
# is cheaper than a CSS selector, one walk of the tree a tag; on a large page
# (ONE_WALK_TAGS) the tags but <a> are found in one walk (a CSS selector list)
# instead of six. <base href> (the first one of the HTML namespace: not one
# inside <svg> or <math>) sets the base;
# <meta name=robots content=nofollow|none> (or an X-Robots-Tag header
# saying so, header_nofollow) empties the link list; rel=nofollow anchors
# are skipped; a (href, or SVG's xlink:href), area, link (rel canonical,
# next, prev or alternate, as Heritrix and Nutch follow them: an archive
# paginated only by rel=next is crawled; never a stylesheet, icon, preload
# or oEmbed link, which are not pages), frame and iframe give links. Every link is normalised with wreck.urlnorm (which drops fragments
# and non-http(s) schemes) and de-duplicated in page order.
# An <iframe srcdoc> is the iframe's document (HTML 4.8.5): its links are
# read too, against the page's base (about:srcdoc's fallback base URL), one
# level deep (MAX_SRCDOC_DEPTH), so the parse costs at most twice the page's
# bytes. A <template>'s content is inert (no browser shows it): not read.
# A meta refresh naming a URL is returned separately: the caller reports the
# page as a redirect to it.
#
# Before parsing, the page's encoding is sniffed as a browser does
# (wreck/htmlcharset.py: BOM, the Content-Type charset, a <meta> prescan,
# windows-1252); a UTF-8 page is parsed as bytes (lexbor reads UTF-8), any
# other is decoded first. Each link's query is then percent-encoded in the
# page's encoding before resolution, as the URL Standard says (docs/urls.md);
# its path is UTF-8 whatever the page.
#
# A link's fragment plays no part in its normal form (URL Standard: it
# starts at the first '#', whatever comes before), so it is cut before the
# link is resolved: on documentation sites most links carry one ('#foo',
# 'page.html#section'; 70 % of the realdocs pages' anchors), and each would
# otherwise miss BaseUrl's string fast path and cost a full URL parse, and
# 'a.html#x' and 'a.html#y' are resolved once a page, not twice (issue 16).
#
# Links are resolved by wreck.urlnorm.BaseUrl (string joins for plain
# relative links, the normal forms of absolute links kept from page to page)
# in one call a page. Each href is resolved once a page: the hrefs of the
# followed links are gathered first (one dict of attributes a node), then
# de-duplicated in order at C speed (dict.fromkeys), as are the URLs.
"""HTML -> (outlinks, meta refresh target)."""

from __future__ import annotations

import operator
import re
from collections import defaultdict
from collections.abc import Callable
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser

from wreck import htmlcharset
from wreck.mediatype import media_type
from wreck.protocol import limits
from wreck.urlnorm import BaseUrl, encode_query, normalize

# HTML content types; anything else gets no link extraction.
HTML_TYPES = ("text/html", "application/xhtml+xml")
# Bytes sniffed from an untyped body to decide whether it is HTML.
SNIFF_BYTES = 512
# The MIME Sniffing Standard's HTML patterns ("rules for identifying an
# unknown MIME type"): after blanks, a comment's start or one of these tags
# (any case) ended by '>' or a blank (the standard's space, and a newline
# or tab too, which `<html\nlang=...>` pages put there), as browsers decide
# to render an untyped body as HTML.
_SNIFF = re.compile(rb"[\t\n\x0c\r ]*(?:<!--|<(?:!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|"
                    rb"title|b|body|br|p)[\s>])", re.I)
# <meta http-equiv=refresh content="5; url=/next">: the URL after 'url='.
_REFRESH = re.compile(r"^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$", re.I | re.S)
# Tags whose attribute names a link: tag -> attribute.
MAX_SRCDOC_DEPTH = 1  # srcdoc levels read: a srcdoc inside one is not (each level re-parses its bytes)
_LINK_TAGS = (("a", "href"), ("area", "href"), ("link", "href"), ("frame", "src"), ("iframe", "src"))
_NOFOLLOW = frozenset(("nofollow", "none"))
_DIRECTIVE_SPLIT = re.compile(r"[\s,;]+")
_VALUE_COLON = re.compile(r"\s*:\s*")
_X_ROBOTS_TAG = re.compile(rb"\n[ \t]*x-robots-tag[ \t]*:([^\n]*)", re.IGNORECASE)
# X-Robots-Tag directives that take a value after ':' (so are not a crawler's name)
_AGENT = re.compile(r"[a-z0-9_-]+")
_VALUED_DIRECTIVES = frozenset(("unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"))
# Foreign content (HTML 13.2.6.5): the roots of SVG and MathML subtrees, and
# the elements under which markup is HTML again (HTML integration points and
# MathML text integration points; annotation-xml only with these encodings)
_FOREIGN_ROOTS = frozenset(("svg", "math"))
_INTEGRATION_POINTS = frozenset(("foreignobject", "desc", "title", "mi", "mo", "mn", "ms", "mtext"))
_HTML_ENCODINGS = frozenset(("text/html", "application/xhtml+xml"))
_ATTRIBUTES = operator.attrgetter("attributes")  # a node's attributes as a dict, read once a node
# From this many '<' in a page (htmlguard.count), base, meta and the link
# tags but <a> are found in one walk of the tree, a CSS selector list, its
# elements grouped by tag, rather than in one tags() walk each: each walk
# visits every node, while the selector engine's set-up and the grouping
# cost about 4 us a page. extract() per page, this against six walks (least
# of 5, bench and realdocs pages): +4 us under 200 '<', +1 at 800-1200, -1
# at 1200-2000, -8.5 at 2000-4000, -98 over 4000
# (bench/results/2026-11-25-s12-page12.md). Both ways find the same
# elements (tests/spider/test_spider_outlinks.py): the count only picks the
# cheaper, so a rough one (a cut page's, a UTF-16 page's bytes) is harmless.
ONE_WALK_TAGS = 1500
# The tags but <a> that extraction reads, in one walk on a large page.
_FEW_TAGS = ("base", "meta", "area", "link", "frame", "iframe")
_FEW_SELECTOR = ", ".join(_FEW_TAGS)


def _tag_ids() -> dict[str, int]:
    """lexbor's id of each of _FEW_TAGS (a node's tag_id: an int, where its
    tag is a new string each read), from a parse of them (a <frame> only
    stands in a frameset)."""
    ids = {node.tag: node.tag_id for html in ("<base><meta><area><link><iframe>", "<frameset><frame>")
           for node in LexborHTMLParser(html).css(_FEW_SELECTOR)}
    if sorted(ids) != sorted(_FEW_TAGS):
        raise ImportError(f"selectolax parsed {sorted(ids)} of the tags {sorted(_FEW_TAGS)}")
    return ids


_TAG_ID = _tag_ids()


class PageLinks(NamedTuple):
    outlinks: tuple[str, ...]
    refresh: str | None  # normalised meta refresh target, if any


NO_LINKS = PageLinks((), None)


def is_html(content_type: bytes | None, body: bytes) -> bool:
    """Whether a response is HTML: by Content-Type (read as wreck/mediatype.py
    reads it), else, when it is absent or unreadable, by sniffing the body."""
    if content_type and (media := media_type(content_type)):
        return media in HTML_TYPES
    return _SNIFF.match(body[:SNIFF_BYTES]) is not None


def extract(html: bytes, page_url: str, content_type: bytes | None = None, *,
            between: Callable[[], None] | None = None, tags: int | None = None) -> PageLinks:
    """Outlinks (normalised, unique, page order, bounded) and refresh target.

    `content_type` is the response's raw Content-Type header, whose charset
    (if any) decides the page's encoding before its <meta>. `between` is
    called once, after the parse and before the link walk (the two halves
    of a page's cost): the worker serves libcurl there (spider/report.py).
    `tags` is the page's count of '<' when the caller has it: from
    ONE_WALK_TAGS up, the tags but <a> are found in one walk.
    """
    encoding = htmlcharset.sniff(html, content_type)
    if encoding == htmlcharset.UTF8:
        tree = LexborHTMLParser(html)
        query_encoding = None
    else:
        tree = LexborHTMLParser(htmlcharset.decode(html, content_type)[1])
        query_encoding = htmlcharset.query_encoding(encoding)
        if query_encoding == htmlcharset.UTF8:
            query_encoding = None
    if between is not None:
        between()
    few = _few_tags(tree) if tags is not None and tags >= ONE_WALK_TAGS else None
    base = page_url
    for node in tree.tags("base") if few is None else few[_TAG_ID["base"]]:
        href = node.attributes.get("href")
        # HTML 4.2.3: the first base element *with an href* (a <base target>
        # before it does not count; href="" does: the page's own URL), of
        # the HTML namespace (a <base> in <svg> or <math> is not one)
        if href is not None and _in_html_namespace(node):
            if query_encoding is not None:
                href = encode_query(href, query_encoding)
            base = normalize(href, page_url) or page_url
            break
    follow = True
    refresh = None
    for node in tree.tags("meta") if few is None else few[_TAG_ID["meta"]]:
        attrs = node.attributes
        name = (attrs.get("name") or "").lower()
        if (name == "robots" or name == "wreck") and says_nofollow(attrs.get("content") or ""):
            follow = False
        elif (attrs.get("http-equiv") or "").lower() == "refresh" and refresh is None:
            refresh = refresh_target(attrs.get("content") or "", base, query_encoding)
    if not follow:
        return PageLinks((), refresh)
    return PageLinks(_walk(tree, page_url, base, query_encoding, few), refresh)


def _few_tags(tree: LexborHTMLParser) -> defaultdict[int, list]:
    """The elements of _FEW_TAGS, by tag id, each list in page order."""
    few: defaultdict[int, list] = defaultdict(list)
    for node in tree.css(_FEW_SELECTOR):
        few[node.tag_id].append(node)
    return few


def _in_html_namespace(node) -> bool:
    """Whether the parser put `node` in the HTML namespace (lexbor does not
    say): it is in SVG's or MathML's when its nearest <svg> or <math>
    ancestor comes before any HTML integration point (HTML 13.2.6.5, "the
    rules for parsing tokens in foreign content": a start tag there is
    foreign, but under foreignObject, desc or title of SVG, MathML's mi, mo,
    mn, ms and mtext, or an annotation-xml of encoding text/html or
    application/xhtml+xml, where it is parsed as HTML)."""
    parent = node.parent
    while parent is not None:
        tag = (parent.tag or "").lower()
        if tag in _FOREIGN_ROOTS:
            return False
        if tag in _INTEGRATION_POINTS or tag == "annotation-xml" and (
                parent.attributes.get("encoding") or "").lower() in _HTML_ENCODINGS:
            return True
        parent = parent.parent
    return True


def says_nofollow(directives: str) -> bool:
    """Whether a robots directive list (a <meta name=robots> content, an
    X-Robots-Tag value) forbids following links: a `nofollow` or `none`
    token. Directives are comma-separated (semicolons and blanks tolerated,
    as sloppy pages write them); one with a value (`max-image-preview:none`,
    blanks around its colon or not) names no token of its own."""
    tokens = _DIRECTIVE_SPLIT.split(_VALUE_COLON.sub(":", directives.lower()))
    return any(token in _NOFOLLOW for token in tokens)


def header_nofollow(head: bytes) -> bool:
    """Whether the response head's X-Robots-Tag headers forbid following
    links (Google's and Bing's header form of <meta name=robots>): a
    `nofollow` or `none` for every crawler, or after `wreck:` (a value led
    by another crawler's name applies to that one only)."""
    if b"x-robots-tag" not in head.lower():
        return False
    for value in _X_ROBOTS_TAG.findall(head):
        text = value.decode("latin-1").strip()
        agent, colon, rest = text.partition(":")
        agent = agent.strip().lower()
        if colon and _AGENT.fullmatch(agent) and agent not in _VALUED_DIRECTIVES:
            if agent != "wreck":
                continue  # for another crawler
            text = rest
        if says_nofollow(text):
            return True
    return False


def _walk(tree: LexborHTMLParser, page_url: str, base: str, query_encoding: str | None,
          few: defaultdict[int, list] | None = None) -> tuple[str, ...]:
    """The links of `tree` (the opening comment says which), resolved
    against `base`: unique, in order (the tags of _LINK_TAGS one after the
    other, each in page order), without `page_url`, bounded. `few` is
    _few_tags(tree) on a large page (ONE_WALK_TAGS), else None."""
    srcdocs: list[str] = []
    followed = _hrefs(tree, srcdocs, few)
    for _level in range(MAX_SRCDOC_DEPTH):
        if not srcdocs:
            break
        docs, srcdocs = srcdocs, []
        for doc in docs:
            followed += _hrefs(LexborHTMLParser(doc), srcdocs)
    refs = dict.fromkeys(followed)
    if query_encoding is not None:
        refs = dict.fromkeys([encode_query(ref, query_encoding) for ref in refs])
    urls = dict.fromkeys(BaseUrl(base).resolve_all(refs))
    urls.pop(None, None)
    urls.pop(page_url, None)
    if len(urls) <= limits.MAX_OUTLINKS and sum(map(len, urls)) + len(urls) <= limits.MAX_OUTLINKS_BYTES:
        return tuple(urls)  # type: ignore[arg-type]
    out: list[str] = []
    size = 0
    for url in urls:
        size += len(url) + 1  # type: ignore[arg-type]
        if len(out) >= limits.MAX_OUTLINKS or size > limits.MAX_OUTLINKS_BYTES:
            break
        out.append(url)  # type: ignore[arg-type]
    return tuple(out)


def _hrefs(tree: LexborHTMLParser, srcdocs: list[str], few: defaultdict[int, list] | None = None) -> list[str]:
    """The raw hrefs of `tree`'s followed links, in the order _walk says,
    fragments cut; its <iframe srcdoc> documents appended to `srcdocs`.
    `few` as _walk's."""
    # Only a followed link's href counts: a nofollow one earlier in the page
    # must not hide a plain link to the same URL.
    followed: list[str] = []
    add = followed.append
    for tag, attr in _LINK_TAGS:
        is_link = tag == "link"  # followed only with a page's rel (_followed_link); the others unless rel=nofollow
        nodes = map(_ATTRIBUTES, tree.tags(tag) if few is None or tag == "a" else few[_TAG_ID[tag]])
        if tag == "iframe":  # here, not in the loop below: no cost a node for <a>, the bulk of a page
            nodes = list(nodes)
            srcdocs += [doc for attrs in nodes if (doc := attrs.get("srcdoc"))]
        for attrs in nodes:
            raw = attrs.get(attr)
            if not raw:
                if tag != "a" or not (raw := attrs.get("xlink:href")):  # SVG 1.1's <a xlink:href>
                    continue
            rel = attrs.get("rel")
            if rel is not None:
                rel = rel.lower()
                if "nofollow" in rel or (is_link and not _followed_link(rel, attrs)):
                    continue
            elif is_link:
                continue
            add(raw[: raw.index("#")] if "#" in raw else raw)  # 'page.html#s2' is 'page.html' (see the top)
    return followed


# <link rel> tokens (HTML 4.6.7, link types) naming another version or
# page of the same content: the page's canonical URL, the next and previous
# pages of a series ('previous': the older microformats' spelling), and its
# alternates (a feed, a translation, a mobile version).
_PAGE_RELS = frozenset(("canonical", "next", "prev", "previous", "alternate"))
# Tokens that make a link a resource of the page, never a page, whatever
# else it says ('alternate stylesheet', 'alternate icon' as GitHub writes it).
_NOT_PAGE_RELS = frozenset(("stylesheet", "icon", "apple-touch-icon", "mask-icon", "manifest", "preload",
                            "modulepreload"))


def _followed_link(rel: str, attrs: dict) -> bool:
    """Whether a <link rel=...> (`rel` lower-cased: a space-separated,
    case-insensitive token list) names a page to crawl: a rel of
    _PAGE_RELS and none of _NOT_PAGE_RELS, and not an oEmbed discovery
    link (oembed.com 4: an API answer, which WordPress puts on every page,
    twice)."""
    tokens = rel.split()
    if _PAGE_RELS.isdisjoint(tokens) or not _NOT_PAGE_RELS.isdisjoint(tokens):
        return False
    kind = attrs.get("type")
    return kind is None or "oembed" not in kind.lower()


def refresh_target(content: str, base: str, query_encoding: str | None = None) -> str | None:
    """The normalised URL a refresh's content (`5; url=/next`) names, if any."""
    found = _REFRESH.match(content)
    if not found:
        return None
    target = found.group(1).strip()
    if target[:1] in ("'", '"'):  # HTML 7.11.1: a quoted URL ends at its closing quote, whatever follows
        target = target[1:].partition(target[0])[0].strip()
    if query_encoding is not None:
        target = encode_query(target, query_encoding)
    return normalize(target, base) if target else None
