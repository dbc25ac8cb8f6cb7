# The edges of the web, served when SiteSpec.edges is set: what real servers
# and pages do that the other hosts do not (RFC 9309 robots.txt corners, odd
# HTTP framing and codings, HTML link corners, URL spellings, encodings a
# browser treats specially). Each host sits on its own 127.66.9.x address so
# per-IP politeness never couples them. Every path a correct crawler requests
# is in EdgesHost.expected(); every path it must never request is in
# EdgesHost.forbidden(); anything else a crawler asks gets a 404, so a wrong
# resolution shows in the request log.
#
#   edge.wreck.test      allow-all robots.txt; '/' links every case page:
#     /http/...          103 Early Hints and 100 before the 200; an HTTP/1.0
#                        body ended by close; duplicate Content-Length equal
#                        (acceptable) and different (RFC 9112 6.3: an error);
#                        Transfer-Encoding with Content-Length (chunked wins);
#                        an empty reason phrase; LF-only lines; a Refresh header
#     /ce/...            Content-Encoding br, raw deflate, zlib deflate,
#                        'gzip, gzip', zstd (not offered by libcurl) and x-foo
#     /loc/...           Location '../..' past the root, scheme-relative
#                        '//edge2...', with a space, raw UTF-8 bytes, with
#                        user:password@, past 8 KiB, a host with a final dot
#     /xrt/...           X-Robots-Tag: nofollow / none / noindex / otherbot: nofollow
#     /html/...          <base href> relative, cross-host, after a <base target>;
#                        hrefs with blanks, tabs and newlines; javascript:,
#                        mailto:, data:, tel:; svg <a xlink:href>; <noscript>;
#                        a WordPress head (feed, oEmbed, hreflang, alternate CSS);
#                        rel tokens; upper-case tags; <meta name=robots> values
#     /url/...           an IDN host, '%2e%2e' segments, backslashes, a URL past
#                        the protocol's 8 KiB bound
#     /enc/...           ISO-2022-JP, EUC-KR, iso-2022-kr (the Encoding
#                        Standard's 'replacement': no links at all), an unknown
#                        label
#   edge2.wreck.test     where the cross-host cases land
#   xn--bcher-kva.wreck.test   bücher.wreck.test, reached through its IDN link
#   robots-*.wreck.test  one robots.txt corner each ('/' links /private/p and
#                        /public/p): 503 always, 403, gzip-encoded, BOM and CRLF,
#                        CR-only lines, an HTML page, a 301 to another host,
#                        a redirect loop, percent-encoded and raw UTF-8 rules,
#                        'Crawl-delay: 100000000' (robots-slow, not a seed),
#                        a gzip bomb (robots-bomb: 100 MB inflated, the rules first),
#                        a 302 without Location (robots-nowhere)
"""EdgesHost: the edge-case hosts; expected()/forbidden(): what a correct crawl asks."""

from __future__ import annotations

import functools
import gzip
import zlib

import brotli
import zstandard

from .intl import IntlPage, render, targets
from .spec import DOMAIN
from .wire import Conn, Request, response_head, send_response

HTML = "text/html; charset=utf-8"
EDGE, EDGE2, IDN = f"edge.{DOMAIN}", f"edge2.{DOMAIN}", f"xn--bcher-kva.{DOMAIN}"
IDN_UNICODE = f"bücher.{DOMAIN}"
ROBOTS_HOSTS = ("503", "403", "gzip", "bom", "cr", "html", "xhost", "target", "loop", "pct", "slow", "bomb",
                "nowhere")
ROBOTS_TARGET = f"robots-target.{DOMAIN}"
DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private/\n"
LONG_QUERY = "a" * 9000  # past protocol/limits.py MAX_URL_LEN (8 KiB)
HUGE_CRAWL_DELAY = 100_000_000  # seconds: three years between two requests
ROBOTS_BOMB_BYTES = 100 * 1024 * 1024  # robots-bomb's robots.txt, inflated: 200 times the 500 KiB read of it
SLOW_PAGES = frozenset({"/", "/public/p", "/private/p"})
"""robots-slow's pages (it is no seed of the edges crawl: its own test crawls it with --max-crawl-delay)."""
REPLACEMENT_LABEL = "iso-2022-kr"  # Encoding Standard: decodes to one U+FFFD


def robots_name(kind: str) -> str:
    return f"robots-{kind}.{DOMAIN}"


def _enc(name: str, codec: str, content_type: str, word: str) -> IntlPage:
    """/enc/NAME.html in `codec`, declared by `content_type` only (a second
    header after a newline), linking `word` with a query in `codec`."""
    return IntlPage(f"/enc/{name}.html", codec, content_type, "", word, codec)


ENC_PAGES = (
    _enc("iso2022jp", "iso2022_jp", "text/html; charset=ISO-2022-JP", "日本"),
    _enc("euckr", "cp949", "text/html; charset=EUC-KR", "한국"),
    _enc("unknown-label", "utf-8", "text/html; charset=x-no-such-label", "über"),
    # two Content-Type headers, the charset in one only: Fetch's "extract a MIME type" keeps it
    _enc("two-content-types", "cp1251", "text/html; charset=windows-1251\nContent-Type: text/html", "сад"),
    _enc("two-content-types-last", "cp1251", "text/html\nContent-Type: text/html; charset=windows-1251", "лес"),
)
"""Pages whose links must be read in their encoding (tests/web/intl.py's rule)."""


def _page(title: str, body: str, head: str = "") -> bytes:
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8>{head}<title>{title}</title></head>"
            f"<body>{body}</body></html>\n").encode()


def _links(paths) -> str:
    return "".join(f'<a href="{p}">{p}</a> ' for p in paths)


class EdgesHost:
    """Request router of the edge hosts."""

    def __init__(self, port: int) -> None:
        self.port = port
        e2 = f"http://{EDGE2}:{port}"
        self.html_pages: dict[str, tuple[str, str]] = {  # path -> (head, body)
            "/html/base-relative": ('<base href="/html/basedir/">', '<a href="x">x</a>'),
            "/html/base-after-target": ('<base target="_blank"><base href="/html/base2/">', '<a href="y">y</a>'),
            "/html/base-cross-host": (f'<base href="{e2}/b/">', '<a href="z">z</a>'),
            "/html/blanks": ("", '<a href="  /t/blank-lead-trail \n">a</a>'
                                 '<a href="/t/blank-in\tsi\nde\r">b</a>'),
            "/html/schemes": ("", '<a href="javascript:location=\'/t/js\'">js</a>'
                                  '<a href="mailto:x@edge.wreck.test">m</a><a href="data:text/html,x">d</a>'
                                  '<a href="tel:+1555">t</a><a href="  JavaScript:void(0)">j</a>'),
            "/html/svg": ("", '<svg><a xlink:href="/t/svg-xlink"><text>a</text></a>'
                              '<a href="/t/svg-href"><text>b</text></a></svg>'),
            "/html/noscript": ("", '<noscript><a href="/t/noscript">no js</a></noscript>'),
            "/html/rel": ("", '<a rel="nofollow ugc" href="/t/rel-nofollow-ugc">a</a>'
                              '<a rel="NoFollow" href="/t/rel-nofollow-upper">b</a>'
                              '<a rel="ugc" href="/t/rel-ugc">c</a>'
                              '<a rel="noopener noreferrer" href="/t/rel-noopener">d</a>'),
            "/html/wordpress-head": ('<link rel="alternate" type="application/rss+xml" href="/t/wp-feed">'
                                     '<link rel="alternate" type="application/json+oembed" href="/t/wp-oembed-json">'
                                     '<link rel="alternate" type="text/xml+oembed" href="/t/wp-oembed-xml">'
                                     '<link rel="alternate" hreflang="fr" href="/t/wp-fr">'
                                     '<link rel="alternate stylesheet" href="/t/wp-alt.css">', ""),
            "/html/upper": ("", '<A HREF="/t/upper-a">A</A><MAP><AREA HREF="/t/upper-area"></MAP>'),
            "/html/meta-max-preview": ('<meta name="robots" content="index, follow, max-image-preview:none">',
                                       '<a href="/t/meta-max-preview">a</a>'),
            "/html/meta-noindex": ('<meta name="robots" content="noindex">', '<a href="/t/meta-noindex">a</a>'),
            "/html/meta-nofollow-upper": ('<META NAME="ROBOTS" CONTENT="NOINDEX,NOFOLLOW">',
                                          '<a href="/t/meta-nofollow-upper">a</a>'),
        }
        self.url_pages = {
            "/url/cases": _links([f"http://{IDN_UNICODE}:{port}/t/idn", "/a/%2e%2e/t/pct-dotdot",
                                  "/a/b/%2E%2E/%2e./t/pct-dotdot2", "\\t\\backslash",
                                  f"/t/long?q={LONG_QUERY}"]),
        }
        self.raw = {
            "/http/early-hints": self._early_hints, "/http/continue": self._continue,
            "/http/http10": self._http10, "/http/dup-cl-same": self._dup_cl_same,
            "/http/dup-cl-differ": self._dup_cl_differ, "/http/te-and-cl": self._te_and_cl,
            "/http/no-reason": self._no_reason, "/http/no-reason-no-space": self._no_reason,
            "/http/bare-lf": self._bare_lf,
        }
        self.codings = {  # path name -> (Content-Encoding, how the body is coded)
            "br": ("br", brotli.compress), "deflate-raw": ("deflate", _raw_deflate),
            "deflate-zlib": ("deflate", zlib.compress),
            "gzip-gzip": ("gzip, gzip", lambda b: gzip.compress(gzip.compress(b, mtime=0), mtime=0)),
            "zstd": ("zstd", zstandard.ZstdCompressor().compress), "x-foo": ("x-foo", lambda b: b),
            # what real servers send: 'identity' (reserved, RFC 9110 8.4.1), x-gzip, upper case, an empty value
            "identity": ("identity", lambda b: b), "x-gzip": ("x-gzip", lambda b: gzip.compress(b, mtime=0)),
            "GZIP": ("GZIP", lambda b: gzip.compress(b, mtime=0)), "empty": ("", lambda b: b),
            # the 8-byte CRC and length trailer cut off (a server closing early): browsers show the page
            "gzip-no-trailer": ("gzip", lambda b: gzip.compress(b, mtime=0)[:-8]),
        }
        self.locations = {
            "/loc/a/b/dotdot": "../../../../../t/loc-dotdot",
            "/loc/scheme-relative": f"//{EDGE2}:{port}/t/loc-scheme-relative",
            "/loc/space": "/t/loc space",
            "/loc/utf8": "/t/loc-caf\u00c3\u00a9",  # the UTF-8 bytes of 'é', each sent as one Latin-1 byte
            "/loc/credentials": f"http://user:secret@{EDGE}:{port}/t/loc-credentials",
            "/loc/too-long": f"/t/loc-too-long?q={LONG_QUERY}",
            "/loc/trailing-dot": f"http://{EDGE}.:{port}/t/loc-trailing-dot",
        }
        self.xrt = {"nofollow": "nofollow", "none": "none", "noindex": "noindex",
                    "otherbot": "otherbot: nofollow"}
        self.enc = {page.path: page for page in ENC_PAGES}

    @staticmethod
    def addresses() -> dict[str, str]:
        names = [EDGE, EDGE2, IDN, *(robots_name(k) for k in ROBOTS_HOSTS)]
        return {name: f"127.66.9.{i + 1}" for i, name in enumerate(names)}

    @staticmethod
    def seeds(port: int) -> list[str]:
        """The hosts a crawl starts from (edge2, the IDN host and robots-target are reached by links)."""
        names = [EDGE, *(robots_name(k) for k in ROBOTS_HOSTS if k not in ("target", "slow"))]
        return [f"http://{name}:{port}/" for name in names]

    def index_paths(self) -> list[str]:
        return [*self.raw, "/http/refresh-header", *(f"/ce/{c}" for c in self.codings), *self.locations,
                *(f"/xrt/{k}" for k in self.xrt), *self.html_pages, *self.url_pages, *self.enc,
                "/enc/replacement.html"]

    def expected(self) -> dict[str, set[str]]:
        """Host -> every path + query a correct crawl requests (robots.txt aside)."""
        edge = {"/", *self.index_paths(),
                "/t/early-hints", "/t/continue", "/t/http10", "/t/dup-cl-same", "/t/te-and-cl",
                "/t/ce-br", "/t/ce-deflate-raw", "/t/ce-deflate-zlib", "/t/ce-gzip-gzip", "/t/ce-gzip-no-trailer",
                "/t/ce-identity", "/t/ce-x-gzip", "/t/ce-GZIP", "/t/ce-empty",
                "/t/loc-dotdot", "/t/loc%20space", "/t/loc-caf%C3%A9", "/t/loc-credentials",
                "/t/loc-trailing-dot", "/t/no-reason", "/t/no-reason-no-space", "/t/bare-lf", "/t/refresh-header",
                "/t/xrt-noindex", "/t/xrt-otherbot",
                "/html/basedir/x", "/html/base2/y", "/t/blank-lead-trail", "/t/blank-inside",
                "/t/svg-xlink", "/t/svg-href", "/t/noscript", "/t/rel-ugc", "/t/rel-noopener",
                "/t/upper-a", "/t/upper-area", "/t/wp-feed", "/t/wp-fr", "/t/meta-max-preview", "/t/meta-noindex",
                "/t/pct-dotdot", "/t/pct-dotdot2", "/t/backslash",
                *(t for page in ENC_PAGES for t in targets(page))}
        robots = {robots_name(k): {"/", "/public/p", "/private/p"} for k in ("403", "html", "loop", "nowhere")}
        robots |= {robots_name(k): {"/", "/public/p"} for k in ("gzip", "bom", "cr", "xhost", "bomb")}
        robots[robots_name("pct")] = {"/", "/a.pdf?x=1", "/xabc", "/public/p", "/private/p"}
        robots[robots_name("503")] = set()
        return {EDGE: edge, EDGE2: {"/t/loc-scheme-relative", "/b/z"}, IDN: {"/t/idn"}, **robots}

    def tolerated(self) -> dict[str, set[str]]:
        """Host -> paths served but not judged: a body in a coding the crawler
        was not offered may be refused or, for x-foo, read as identity."""
        return {EDGE: {"/t/ce-zstd", "/t/ce-x-foo"}}

    def forbidden(self) -> dict[str, set[str]]:
        """Host -> paths a correct crawl never requests."""
        edge = {"/t/dup-cl-differ", "/t/xrt-nofollow", "/t/xrt-none", "/t/rel-nofollow-ugc",
                "/t/rel-nofollow-upper", "/t/meta-nofollow-upper", "/t/wp-oembed-json", "/t/wp-oembed-xml",
                "/t/wp-alt.css", "/t/replacement", "/html/x", "/html/y"}
        return {EDGE: edge, robots_name("503"): {"/", "/public/p", "/private/p"},
                robots_name("pct"): {"/caf%C3%A9", "/na%C3%AFve", "/a.pdf", "/xzzy"},
                **{robots_name(k): {"/private/p"} for k in ("gzip", "bom", "cr", "xhost", "bomb")}}

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.host == EDGE:
            return await self._edge(req, conn)
        if req.host.startswith("robots-"):
            return await self._robots_host(req, conn, req.host.split(".")[0][7:])
        if req.path in self.expected().get(req.host, ()):
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.path, "landed"))
        return await _not_found(req, conn)

    async def _edge(self, req: Request, conn: Conn) -> bool:
        path = req.path
        if path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if path == "/":
            return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                       _page("edges", _links(self.index_paths())))
        if path in self.raw:
            return await self.raw[path](req, conn)
        if path.startswith("/ce/"):
            return await self._coding(req, conn, path[4:])
        if path in self.locations:
            # header values go out as Latin-1 (wire.py): each char below 0x100 one byte
            return await send_response(conn, req, 302, [("Location", self.locations[path])])
        if path == "/http/refresh-header":  # the header form of <meta http-equiv=refresh>, which browsers follow
            headers = [("Content-Type", HTML), ("Refresh", "0; url=/t/refresh-header")]
            return await send_response(conn, req, 200, headers, _page(path, "moving"))
        if path.startswith("/xrt/") and path[5:] in self.xrt:
            return await send_response(conn, req, 200, [("Content-Type", HTML), ("X-Robots-Tag", self.xrt[path[5:]])],
                                       _page(path, f'<a href="/t/xrt-{path[5:]}">t</a>'))
        if path in self.html_pages:
            head, body = self.html_pages[path]
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, body, head))
        if path in self.url_pages:
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, self.url_pages[path]))
        if path in self.enc:
            page = self.enc[path]
            headers = [("Content-Type", value.removeprefix("Content-Type: ")) for value in page.header.split("\n")]
            return await send_response(conn, req, 200, headers, render(page))
        if path == "/enc/replacement.html":
            return await send_response(conn, req, 200, [("Content-Type", f"text/html; charset={REPLACEMENT_LABEL}")],
                                       b'<html><body><a href="/t/replacement">r</a></body></html>')
        if path in self.expected()[EDGE] | self.tolerated()[EDGE]:
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, "landed"))
        return await _not_found(req, conn)

    async def _coding(self, req: Request, conn: Conn, name: str) -> bool:
        if name not in self.codings:
            return await _not_found(req, conn)
        coding, encode = self.codings[name]
        body = encode(_page(req.path, f'<a href="/t/ce-{name}">t</a>'))
        return await send_response(conn, req, 200, [("Content-Type", HTML), ("Content-Encoding", coding)], body)

    async def _raw(self, conn: Conn, status: int, head: bytes, body: bytes) -> bool:
        conn.status = status
        await conn.send(head + body)
        return False

    async def _early_hints(self, req: Request, conn: Conn) -> bool:
        body = _page("hints", '<a href="/t/early-hints">t</a>')
        hints = response_head(103, [("Link", "</t/style.css>; rel=preload; as=style")], "Early Hints")
        return await self._raw(conn, 200, hints + _head(200, body), body)

    async def _continue(self, req: Request, conn: Conn) -> bool:
        body = _page("continue", '<a href="/t/continue">t</a>')
        return await self._raw(conn, 200, response_head(100, [], "Continue") + _head(200, body), body)

    async def _http10(self, req: Request, conn: Conn) -> bool:
        body = _page("http10", "x" * 3000 + '<a href="/t/http10">t</a>')
        return await self._raw(conn, 200, b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n", body)

    async def _dup_cl_same(self, req: Request, conn: Conn) -> bool:
        body = _page("dup", '<a href="/t/dup-cl-same">t</a>')
        return await self._raw(conn, 200, _head(200, body, extra=[("Content-Length", str(len(body)))]), body)

    async def _dup_cl_differ(self, req: Request, conn: Conn) -> bool:
        body = _page("dup", '<a href="/t/dup-cl-differ">t</a>')
        return await self._raw(conn, 200, _head(200, body, extra=[("Content-Length", str(len(body) - 20))]), body)

    async def _no_reason(self, req: Request, conn: Conn) -> bool:
        # RFC 9112 4: the reason may be empty; some servers drop the space before it too
        name = req.path.removeprefix("/http/")
        body = _page(name, f'<a href="/t/{name}">t</a>')
        line = b"200 \r\n" if name == "no-reason" else b"200\r\n"
        return await self._raw(conn, 200, _head(200, body).replace(b"200 OK\r\n", line, 1), body)

    async def _bare_lf(self, req: Request, conn: Conn) -> bool:
        body = _page("bare LF", '<a href="/t/bare-lf">t</a>')  # RFC 9112 2.2: a recipient MAY accept LF alone
        return await self._raw(conn, 200, _head(200, body).replace(b"\r\n", b"\n"), body)

    async def _te_and_cl(self, req: Request, conn: Conn) -> bool:
        body = _page("te", '<a href="/t/te-and-cl">t</a>')
        head = response_head(200, [("Content-Type", HTML), ("Content-Length", "10"),
                                   ("Transfer-Encoding", "chunked"), ("Connection", "close")])
        return await self._raw(conn, 200, head, b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))

    async def _robots_host(self, req: Request, conn: Conn, kind: str) -> bool:
        path = req.path
        if path in ("/robots.txt", "/robots-b.txt"):
            return await self._robots(req, conn, kind)
        if path == "/":
            links = ["/public/p", "/private/p"]
            if kind == "pct":
                links += ["/café", "/naïve", "/a.pdf", "/a.pdf?x=1", "/xzzy", "/xabc"]
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.host, _links(links)))
        if path in self.expected().get(req.host, SLOW_PAGES) | self.forbidden().get(req.host, set()):
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, "a page"))
        return await _not_found(req, conn)

    async def _robots(self, req: Request, conn: Conn, kind: str) -> bool:
        text = [("Content-Type", "text/plain")]
        if kind == "503":
            return await send_response(conn, req, 503, [("Retry-After", "3600")], b"down for maintenance")
        if kind == "403":
            return await send_response(conn, req, 403, [("Content-Type", HTML)], b"<html>forbidden</html>")
        if kind == "gzip":
            return await send_response(conn, req, 200, [*text, ("Content-Encoding", "gzip")],
                                       gzip.compress(DISALLOW_PRIVATE, mtime=0))
        if kind == "bom":
            return await send_response(conn, req, 200, text, b"\xef\xbb\xbf" + DISALLOW_PRIVATE.replace(b"\n", b"\r\n"))
        if kind == "cr":
            return await send_response(conn, req, 200, text, DISALLOW_PRIVATE.replace(b"\n", b"\r"))
        if kind == "html":
            return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                       _page("Page not found", "<h1>Sorry</h1><p>We could not find that page.</p>"))
        if kind == "xhost":
            return await send_response(conn, req, 301, [("Location", f"http://{ROBOTS_TARGET}:{self.port}/robots.txt")])
        if kind == "target":
            return await send_response(conn, req, 200, text, DISALLOW_PRIVATE)
        if kind == "loop":
            return await send_response(conn, req, 302, [("Location", "/robots-b.txt" if req.path == "/robots.txt"
                                                         else "/robots.txt")])
        if kind == "nowhere":  # a redirect that names no target: RFC 9309's "unavailable", not a server error
            return await send_response(conn, req, 302, [("Content-Type", HTML)], b"moved")
        if kind == "bomb":
            return await send_response(conn, req, 200, [*text, ("Content-Encoding", "gzip")], _robots_bomb())
        if kind == "slow":
            rules = f"User-agent: *\nCrawl-delay: {HUGE_CRAWL_DELAY}\n"
            return await send_response(conn, req, 200, text, rules.encode())
        if kind == "pct":
            rules = "User-agent: *\nDisallow: /caf%C3%A9\nDisallow: /naïve\nDisallow: /*.pdf$\nDisallow: /x*y\n"
            return await send_response(conn, req, 200, text, rules.encode())
        return await _not_found(req, conn)


def _head(status: int, body: bytes, extra=()) -> bytes:
    return response_head(status, [("Content-Type", HTML), ("Content-Length", str(len(body))), *extra,
                                  ("Connection", "close")])


@functools.cache
def _robots_bomb() -> bytes:
    """DISALLOW_PRIVATE, then ROBOTS_BOMB_BYTES of comment lines, gzipped (about 100 KB)."""
    line = b"#" * 63 + b"\n"
    return gzip.compress(DISALLOW_PRIVATE + line * (ROBOTS_BOMB_BYTES // len(line)), compresslevel=9, mtime=0)


def _raw_deflate(body: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(body) + compressor.flush()


async def _not_found(req: Request, conn: Conn) -> bool:
    return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
