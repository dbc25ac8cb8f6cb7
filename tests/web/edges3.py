# The edges of the web, third round, served when SiteSpec.edges3 is set: what
# edges.py and edges2.py do not cover yet. Each host sits on its own
# 127.66.11.x address. Every path a correct crawler requests is in
# Edges3Host.expected(); every path it must never request in forbidden();
# paths a crawler may or may not ask (a choice WRECK documents) in
# tolerated(); anything else gets a 404, so a wrong resolution shows in the
# request log. Each case page links /t/CASE/... as a browser would resolve it.
#
# The URLs a page's links must become are computed here from the URL and
# Encoding Standards (UTF-8 path, the query in the page's encoding, a
# character it cannot write as '%26%23NNNN%3B'), not with WRECK's code.
#
#   enc3.wreck.test      allow-all robots.txt; '/' links every case page:
#     /e/label-...       a charset label Python knows and no browser does
#                        (base64, undefined: no text codecs; utf-32, cp037):
#                        the page is read as windows-1252, as a browser reads it
#     /e/mac-cyrillic    x-mac-cyrillic and iso-8859-8-i (Hebrew, logical
#     /e/hebrew-i        order), labels of the Encoding Standard w3lib lacks
#     /e/big5            Big5 by the header: a path in UTF-8, a query in Big5
#     /e/meta-label      <meta charset="x-cp1251">, another label w3lib lacks
#     /e/unwritable      windows-1251 by <meta>, linking a query with 日本 (as
#                        &#NNNN; references) and дом: '%26%23NNNN%3B'
#     /e/bom-wins        a UTF-8 BOM, the header saying windows-1251: UTF-8
#     /e/meta-utf16      <meta charset=utf-16> on a UTF-8 page: UTF-8
#     /e/header-latin-1  'charset=latin-1' (Python's name, no label) on a page
#                        whose <meta> says UTF-8: UTF-8
#     /e/meta-utf_8      <meta charset="utf_8"> (no label) on a windows-1252 page
#     /b/...             two <base href> (the first wins), a <base> in <body>
#                        (it sets the base of the links before it too), a
#                        <base href="javascript:..."> (tolerated either way),
#                        a <base> in <svg> or <math> (not the page's base), in
#                        <foreignObject> (the page's), <base href=""> (the page's URL)
#     /c/gzip-garbage    gzip with bytes after its member (browsers show it)
#     /c/utf8-coding     'Content-Encoding: utf-8' (a PHP misconfiguration: no
#                        content coding; browsers show the body as sent)
#     /r/latin1          a Location with a raw Latin-1 byte (sent %E9)
#     /r/cross-robots    a 302 to robots3-deny's /private/p, which its
#                        robots.txt disallows: its robots.txt asked first, the
#                        page never
#     /r/out-of-scope    a 302 to out3.example (another registered domain:
#                        out of --scope domain): never asked
#   hang3.wreck.test     connections that go wrong ('/' links each and the first
#                        page of flow3's chain; not a seed of the main crawl):
#     /h/never           accepted, the request read, never answered
#     /h/stall-body      the head and 100 of 1,000 bytes, then nothing
#     /h/reset-head      the head, then a TCP reset
#     /h/close-empty     closed without a byte of response
#   flow3.wreck.test     a chain of FLOW_PAGES pages, each linking the next: pages
#                        that must keep flowing while hang3's requests hang
#   robots3-*.wreck.test one robots.txt corner each ('/' links /public/p,
#                        /private/p, /other/p):
#     429                robots.txt answers 429 (RFC 9309 2.3.1.4: like 5xx,
#                        complete disallow): only /robots.txt is asked
#     reset              robots.txt's connection reset after its headers
#                        (unreachable: disallow, never allow-all)
#     merge              two groups for WRECK (RFC 9309 2.2.1: merged): /private/
#                        and /other/ disallowed, '*' disallowing all not ours
#     deny               'Disallow: /private/' (not a seed: reached by the redirect)
#     gzjunk             'Disallow: /private/' gzip-encoded, bytes after the gzip
#                        member (a robots.txt fetch libcurl failed: the host closed)
#     utf8               'Disallow: /private/' with 'Content-Encoding: utf-8' on
#                        robots.txt and every page (a site-wide PHP header): obeyed
#     chain5             robots.txt reached through five redirects (RFC 9309's
#                        minimum), /robots-1.txt ... /robots-5.txt: obeyed
"""Edges3Host: the third round of edge-case hosts; expected()/forbidden()/tolerated()."""

from __future__ import annotations

import asyncio
import functools
import gzip
from urllib.parse import quote

from .spec import DOMAIN
from .wire import Conn, Request, send_response

HTML = "text/html; charset=utf-8"
ENC = f"enc3.{DOMAIN}"
ROBOTS3_HOSTS = ("429", "reset", "merge", "deny", "gzjunk", "chain5", "utf8")
ROBOTS_HOPS = 5  # RFC 9309 2.3.1.2: a crawler follows at least five consecutive redirects
HANG, FLOW = f"hang3.{DOMAIN}", f"flow3.{DOMAIN}"
OUT = "out3.example"  # outside wreck.test: served, so a request there would show in the log
HANG_PATHS = ("/h/never", "/h/stall-body", "/h/reset-head", "/h/close-empty")
HOLD_LIMIT = 600.0  # seconds a hanging answer holds its connection at most (the crawler's timeout ends it first)
FLOW_PAGES = 30
RESET_AFTER = 0.05  # seconds for the head to leave before the RST overtakes it (ordering only, as breakage.py)
# URL Standard 1.3: the query percent-encode set of a special URL; bytes above 0x7E always
_QUERY_SET = frozenset(range(0x21)) | frozenset(b'"#<>\'') | frozenset(range(0x7F, 0x100))


def robots3_name(kind: str) -> str:
    return f"robots3-{kind}.{DOMAIN}"


def spec_query(text: str, codec: str) -> str:
    """`text` as a query of a page in `codec`, per the URL Standard's "percent-encode after encoding"."""
    out = []
    for char in text:  # one character at a time is exact for the stateless codecs used here
        try:
            out += [f"%{b:02X}" if b in _QUERY_SET else chr(b) for b in char.encode(codec)]
        except UnicodeEncodeError:
            out.append(f"%26%23{ord(char)}%3B")
    return "".join(out)


def _page(title: str, body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}<title>{title}</title></head><body>{body}</body></html>\n"


# /e/NAME: (Content-Type, the page's bytes, the targets its links must become)
def _word_page(name: str, codec: str, word: str, header: str, head: str = "") -> tuple[str, bytes, set[str]]:
    href = f"/t/{name}/{word}"
    body = _page(name, f'<a href="{href}">{word}</a> <a href="{href}?q={word}">q</a>', head).encode(codec)
    path = quote(href)
    return header, body, {path, f"{path}?q={spec_query(word, codec)}"}


def _enc_cases() -> dict[str, tuple[str, bytes, set[str]]]:
    cases = {f"label-{label}": _word_page(f"label-{label}", "cp1252", "café", f"text/html; charset={label}")
             for label in ("base64", "undefined", "utf-32", "cp037")}
    cases["mac-cyrillic"] = _word_page("mac-cyrillic", "mac-cyrillic", "дом", "text/html; charset=x-mac-cyrillic")
    cases["hebrew-i"] = _word_page("hebrew-i", "iso8859-8", "שלום", "text/html; charset=iso-8859-8-i")
    cases["big5"] = _word_page("big5", "big5", "中文", "text/html; charset=big5")
    cases["meta-label"] = _word_page("meta-label", "cp1251", "дом", "text/html", '<meta charset="x-cp1251">')
    unwritable = _page("unwritable", '<a href="/t/unwritable?q=&#26085;&#26412;">j</a> '
                                     '<a href="/t/unwritable?w=дом&#26085;">r</a>', '<meta charset="windows-1251">')
    cases["unwritable"] = ("text/html", unwritable.encode("cp1251"),
                           {f"/t/unwritable?q={spec_query('日本', 'cp1251')}",
                            f"/t/unwritable?w={spec_query('дом日', 'cp1251')}"})
    header, body, targets = _word_page("bom-wins", "utf-8", "дом", "text/html; charset=windows-1251")
    cases["bom-wins"] = (header, b"\xef\xbb\xbf" + body, targets)
    cases["meta-utf16"] = _word_page("meta-utf16", "utf-8", "é", "text/html", '<meta charset="utf-16">')
    # names Python knows that are no label: a browser reads the <meta> (UTF-8), or falls back (windows-1252)
    cases["header-latin-1"] = _word_page("header-latin-1", "utf-8", "дом", "text/html; charset=latin-1",
                                         '<meta charset="utf-8">')
    cases["meta-utf_8"] = _word_page("meta-utf_8", "cp1252", "café", "text/html", '<meta charset="utf_8">')
    return cases


ENC_CASES = _enc_cases()
# /e/unwritable as WRECK asked it before: '&#NNNN;' with only its '#' escaped (a new '&' parameter)
UNWRITABLE_WRONG = {"/t/unwritable?q=&%2326085;&%2326412;", "/t/unwritable?w=%E4%EE%EC&%2326085;"}

BASES = {  # /b/NAME: (head, body) -> the targets
    "two": ('<base href="/b1/"><base href="/b2/">', '<a href="p">p</a>'),
    "in-body": ("", '<a href="q">q</a><base href="/bb/"><a href="r">r</a>'),
    "javascript": ('<base href="javascript:void(0)">', '<a href="/t/base-js-absolute">a</a><a href="js">j</a>'),
    # foreign content: a <base> in <svg> or <math> is no HTML base element; in
    # <foreignObject> (an HTML integration point) it is one
    "svg": ("", '<svg><base href="/svgb/"/></svg><a href="s">s</a>'),
    "math": ("", '<math><base href="/mathb/"></math><a href="m">m</a>'),
    "foreign-object": ("", '<svg><foreignObject><base href="/fob/"></foreignObject></svg><a href="f">f</a>'),
    # href="" is an href: the first base, whose URL is the document's
    "empty": ('<base href=""><base href="/be/">', '<a href="e">e</a>'),
}
GZIP_GARBAGE = b"\n<!-- written after the gzip member by a buggy cache -->\n"


class Edges3Host:
    """Request router of the third round's edge hosts."""

    def __init__(self, port: int) -> None:
        self.port = port

    @staticmethod
    def addresses() -> dict[str, str]:
        names = [ENC, *(robots3_name(k) for k in ROBOTS3_HOSTS), HANG, FLOW, OUT]
        return {name: f"127.66.11.{i + 1}" for i, name in enumerate(names)}

    @staticmethod
    def address_of(host: str) -> str | None:
        return Edges3Host.addresses().get(host)

    @staticmethod
    def seeds(port: int) -> list[str]:
        """The hosts a crawl starts from (robots3-deny is reached by a redirect only; hang3's crawl is its own)."""
        return [f"http://{name}:{port}/" for name in Edges3Host.addresses()
                if name not in (robots3_name("deny"), HANG, FLOW, OUT)]

    @staticmethod
    def hang_seeds(port: int) -> list[str]:
        """The crawl of hang3 alone (flow3 is reached through it)."""
        return [f"http://{HANG}:{port}/"]

    @staticmethod
    def index_paths() -> list[str]:
        return [*(f"/e/{k}" for k in ENC_CASES), *(f"/b/{k}" for k in BASES), "/c/gzip-garbage", "/c/utf8-coding",
                "/r/latin1", "/r/cross-robots", "/r/out-of-scope"]

    def expected(self) -> dict[str, set[str]]:
        """Host -> every path + query a correct crawl requests (robots.txt aside)."""
        enc = {"/", *self.index_paths(), *(t for _, _, targets in ENC_CASES.values() for t in targets),
               "/b1/p", "/bb/q", "/bb/r", "/b/s", "/b/m", "/fob/f", "/b/e", "/t/base-js-absolute", "/t/gzip-garbage",
               "/t/utf8-coding", "/t/caf%E9"}
        public = {"/", "/public/p", "/other/p"}  # what '/' links, but the disallowed /private/p
        robots = {robots3_name("merge"): {"/", "/public/p"},
                  **{robots3_name(k): public for k in ("gzjunk", "chain5", "utf8")},
                  **{robots3_name(k): set() for k in ("429", "reset", "deny")}}
        return {ENC: enc, **robots}

    def forbidden(self) -> dict[str, set[str]]:
        """Host -> paths a correct crawl never requests."""
        every = {"/", "/public/p", "/private/p", "/other/p"}
        return {ENC: {"/b2/p", "/svgb/s", "/mathb/m", "/be/e", *UNWRITABLE_WRONG}, OUT: {"/robots.txt", "/p"},
                **{robots3_name(k): every for k in ("429", "reset")}, robots3_name("merge"): {"/private/p", "/other/p"},
                **{robots3_name(k): {"/private/p"} for k in ("deny", "gzjunk", "chain5", "utf8")}}

    @staticmethod
    def asked_twice() -> dict[str, set[str]]:
        """Host -> paths a correct crawl asks twice: a body in a coding no
        browser knows, asked again with libcurl's decoding off."""
        return {ENC: {"/c/utf8-coding"}, robots3_name("utf8"): {"/robots.txt", "/", "/public/p", "/other/p"}}

    def tolerated(self) -> dict[str, set[str]]:
        """Host -> paths served but not judged: a link relative to a
        javascript: base (HTML: no URL; Chrome resolves it against the page)."""
        return {ENC: {"/b/js", "/t/js"}}

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.host == ENC:
            return await self._enc(req, conn)
        if req.host in (HANG, FLOW):
            return await self._connections(req, conn)
        if req.host == OUT:
            return await _landed(req, conn, {"/robots.txt", "/p"})
        return await self._robots_host(req, conn, req.host.split(".")[0][len("robots3-"):])

    async def _enc(self, req: Request, conn: Conn) -> bool:
        path = req.path
        if path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if path == "/":
            links = "".join(f'<a href="{p}">{p}</a> ' for p in self.index_paths())
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page("edges3", links).encode())
        if path.startswith("/e/") and path[3:] in ENC_CASES:
            ctype, body, _ = ENC_CASES[path[3:]]
            return await send_response(conn, req, 200, [("Content-Type", ctype)], body)
        if path.startswith("/b/") and path[3:] in BASES:
            head, body = BASES[path[3:]]
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, body, head).encode())
        if path == "/c/gzip-garbage":
            body = gzip.compress(_page("g", '<a href="/t/gzip-garbage">g</a>').encode(), mtime=0) + GZIP_GARBAGE
            return await send_response(conn, req, 200, [("Content-Type", HTML), ("Content-Encoding", "gzip")], body)
        if path == "/c/utf8-coding":
            return await send_response(conn, req, 200, [("Content-Type", HTML), ("Content-Encoding", "utf-8")],
                                       _page("u", '<a href="/t/utf8-coding">u</a>').encode())
        if path == "/r/latin1":
            # the raw byte E9 ('é' in Latin-1) in the header: response_head writes headers as Latin-1
            return await send_response(conn, req, 302, [("Location", "/t/caf\xe9")])
        if path == "/r/out-of-scope":
            return await send_response(conn, req, 302, [("Location", f"http://{OUT}:{self.port}/p")])
        if path == "/r/cross-robots":
            return await send_response(conn, req, 302, [("Location", f"http://{robots3_name('deny')}:{self.port}"
                                                                      "/private/p")])
        served = self.expected()[ENC] | self.forbidden()[ENC] | self.tolerated()[ENC]
        return await _landed(req, conn, served)

    async def _connections(self, req: Request, conn: Conn) -> bool:
        path = req.path
        if path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if req.host == FLOW:
            n = int(path[3:]) if path.startswith("/c/") and path[3:].isdigit() else FLOW_PAGES
            if n >= FLOW_PAGES:
                return await _landed(req, conn, set())
            more = f'<a href="/c/{n + 1}">next</a>' if n + 1 < FLOW_PAGES else "the end"
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, more).encode())
        if path == "/":
            links = [*HANG_PATHS, f"http://{FLOW}:{self.port}/c/0"]
            body = "".join(f'<a href="{p}">{p}</a> ' for p in links)
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page("hang3", body).encode())
        if path == "/h/never":
            await conn.wait_for_peer_close(HOLD_LIMIT)
            return False
        if path == "/h/stall-body":
            await conn.send_head(200, [("Content-Type", HTML), ("Content-Length", "1000")])
            await conn.send(b"<!DOCTYPE html>" + b" " * 85)
            await conn.wait_for_peer_close(HOLD_LIMIT)
            return False
        if path == "/h/reset-head":
            await conn.send_head(200, [("Content-Type", HTML), ("Content-Length", "1000")])
            await conn.flushed()
            await asyncio.sleep(RESET_AFTER)
            conn.reset()
            return False
        if path == "/h/close-empty":
            return False  # the server closes the connection: not a byte sent
        return await _landed(req, conn, set())

    async def _robots_host(self, req: Request, conn: Conn, kind: str) -> bool:
        hop = req.path.removeprefix("/robots-").removesuffix(".txt")
        if kind == "chain5" and (req.path == "/robots.txt" or hop.isdigit() and int(hop) < ROBOTS_HOPS):
            following = int(hop) + 1 if hop.isdigit() else 1
            return await send_response(conn, req, 301, [("Location", f"/robots-{following}.txt")])
        if req.path == "/robots.txt" or kind == "chain5" and req.path == f"/robots-{ROBOTS_HOPS}.txt":
            if kind == "429":
                return await send_response(conn, req, 429, [("Content-Type", "text/plain"), ("Retry-After", "3600")],
                                           b"slow down\n")
            if kind == "reset":
                await conn.send_head(200, [("Content-Type", "text/plain"), ("Content-Length", "1000")])
                await conn.flushed()
                await asyncio.sleep(RESET_AFTER)
                conn.reset()
                return False
            if kind == "gzjunk":
                body = gzip.compress(_robots(kind), mtime=0) + GZIP_GARBAGE
                return await send_response(conn, req, 200, [("Content-Type", "text/plain"),
                                                            ("Content-Encoding", "gzip")], body)
            return await send_response(conn, req, 200, [("Content-Type", "text/plain"), *(
                [("Content-Encoding", "utf-8")] if kind == "utf8" else [])], _robots(kind))
        coding = [("Content-Encoding", "utf-8")] if kind == "utf8" else []
        if req.path == "/":
            links = "".join(f'<a href="{p}">{p}</a> ' for p in ("/public/p", "/private/p", "/other/p"))
            return await send_response(conn, req, 200, [("Content-Type", HTML), *coding],
                                       _page(req.host, links).encode())
        if req.path in ("/public/p", "/private/p", "/other/p"):
            return await send_response(conn, req, 200, [("Content-Type", HTML), *coding],
                                       _page(req.path, "landed").encode())
        return await _landed(req, conn, set())


@functools.cache
def _robots(kind: str) -> bytes:
    if kind == "merge":  # RFC 9309 2.2.1: groups for the same agent are combined
        return (b"User-agent: WRECK\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n\n"
                b"User-agent: wreck\nDisallow: /other/\n")
    return b"User-agent: *\nDisallow: /private/\n"


async def _landed(req: Request, conn: Conn, served: set[str]) -> bool:
    if req.path in served:
        return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.path, "landed").encode())
    return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
