# The hostile host, evil.wreck.test: every way a web server can hurt a crawler.
# SiteSpec.hostile_hosts > 1 serves copies named evil1, evil2, ... alike.
#
# HostileHost.handle() routes a request to a handler that writes raw bytes to
# the Conn; it returns whether the connection may be reused.  Paths:
#
#   /                      index linking to every path below
#   /robots.txt            allow-all (the host is hostile, not shy), one Sitemap: line
#                          (/sitemap-bulk.xml, or with HostileSpec.sitemap_bomb /sitemap-bomb.xml.gz)
#   /target                plain 200 page: where the redirects end
#   /redirect/chain/N      302 -> /redirect/chain/N-1 ... /redirect/chain/0 -> /target
#   /redirect/loop         302 -> /redirect/loop-back -> 302 -> /redirect/loop
#   /redirect/self         302 to itself
#   /redirect/cross-host   302 -> http://h0.wreck.test:PORT/
#   /redirect/relative     302 with 'Location: ../target'
#   /redirect/301 .. /308  that status (301, 302, 303, 307, 308) -> /target
#   /redirect/no-location  302 without Location
#   /redirect/unresolvable 302 -> http://nowhere.wreck.test:PORT/ (NXDOMAIN)
#   /redirect/non-http     302 -> ftp://evil.wreck.test/file
#   /redirect/to?url=U[&code=N]  an open redirect: N (302 default) -> U, any URL
#   /refresh/to?url=U      200 HTML whose meta refresh names U
#   /links/to?url=U&url=V  200 HTML linking to each U given
#                          (these three take their target from the query, so a
#                          test can point the crawler anywhere; the index does
#                          not link them; with HostileSpec.robots_redirect set,
#                          /robots.txt is a 301 there)
#   /status/N              status N (200..599) with a small HTML body; 503 and 429
#                          carry Retry-After: HostileSpec.retry_after; 408 closes
#   /meta-refresh          200 HTML with <meta http-equiv="refresh" content="0; url=/target">
#   /doc.pdf /image.png /notes.txt /data.json   application/pdf, image/png,
#                          text/plain, application/json
#   /no-content-type       HTML body without a Content-Type header
#   /mislabeled            PNG bytes served as text/html
#   /header-bytes/pdf /header-bytes/charset   a Content-Type with a byte that is
#                          not UTF-8 ('name=\xff.pdf', a Latin-1 'charset=\xe9'),
#                          as the real web serves (not linked from the index)
#   /robots/huge.txt       a 50 MB robots.txt starting 'User-agent: * / Disallow: /'
#   /robots/stall.txt      a robots.txt that sends its headers, then nothing
#                          (both reached with HostileSpec.robots_redirect='/robots/...';
#                          not linked from the index)
#   /nested-html?depth=N   N nested <div>s (200,000 by default, at most 1,000,000),
#                          gzip-encoded (3 KB on the wire), then a link to /target
#                          (not linked from the index)
#   /many-links?n=N        a page of N links (1,000,000 by default, about 15 MB),
#                          gzip-encoded (issue 14, finding 10; not linked from the index)
#   /feed.rss /feed.atom /feed.json /story/K   growing feeds (feeds.py)
#   /sitemap.xml ... /hidden/K   sitemaps and the pages only they list (sitemaps.py;
#                          not linked from the index)
#   /calendar/.. /s;jsessionid=../.. /deep/.. /params?page=N   traps (traps.py)
#   /slow-drip /stall-after-headers /no-answer /close-without-response
#   /headers-then-close /big /big-chunked /gzip-bomb /bad-gzip /bad-chunked
#   /length-mismatch /malformed-status /malformed-headers /no-status-line
#   /reset-mid-body /huge-headers /huge-header-line   broken transfers (breakage.py)
# Anything else is a plain 404.

from __future__ import annotations

import base64
import gzip
import html
import re
import time
import urllib.parse
from collections.abc import Callable

from .breakage import Breakage
from .feeds import Feeds
from .sitemaps import Sitemaps
from .spec import DOMAIN, HOSTILE_NAME, UNRESOLVABLE_NAME, HostileSpec
from .traps import FIRST_MONTH, Traps
from .wire import Conn, Request, send_response

CHAIN = re.compile(r"^/redirect/chain/(\d+)$")
STORY = re.compile(r"^/story/(\d+)$")
MAX_CHAIN = 10_000
DEFAULT_NESTING = 200_000
"""/nested-html's depth: what took a worker minutes to parse (issue 14, finding 2)."""
MAX_NESTING = 1_000_000
DEFAULT_LINKS = 1_000_000
"""/many-links' count: the page that peaked a worker at 587 MiB (issue 14, finding 10)."""
HUGE_ROBOTS = 50 * 1024 * 1024
"""/robots/huge.txt's announced size (issue 14, finding 3)."""
FILLER_LINE = 64
"""Longest chain served; keeps a typo from building an unbounded URL space."""
REDIRECT_CODES = (301, 302, 303, 307, 308)
TINY_PNG = base64.b64decode(  # a valid 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg==")
HTML = "text/html; charset=utf-8"


class HostileHost:
    """Request router of evil.wreck.test."""

    def __init__(self, spec: HostileSpec, *, port: int, seed: int,
                 clock: Callable[[], float] = time.monotonic, name: str = HOSTILE_NAME) -> None:
        self.spec, self.port = spec, port
        self.origin = f"http://{name}:{port}"
        self.breakage = Breakage(spec)
        self.feeds = Feeds(spec, self.origin, clock=clock)
        self.traps = Traps(seed)
        self.sitemaps = Sitemaps(spec, self.origin)
        self._exact = {
            **self.breakage.routes(),
            "/": self.index, "/robots.txt": self.robots, "/target": self.target,
            "/meta-refresh": self.meta_refresh, "/nested-html": self.nested_html,
            "/robots/huge.txt": self.huge_robots, "/robots/stall.txt": self.stalling_robots,
            "/feed.rss": self.feeds.rss, "/feed.atom": self.feeds.atom, "/feed.json": self.feeds.json,
        }

    async def handle(self, req: Request, conn: Conn) -> bool:
        """Serve one request; return whether the connection may be reused."""
        if self.spec.robots_redirect and req.path == "/robots.txt":
            return await send_response(conn, req, 301, [("Location", self.spec.robots_redirect)])
        path = req.path.split("?", 1)[0]
        handler = self._exact.get(path) or self.traps.match(req.path) or self.sitemaps.match(path)
        if handler:
            return await handler(req, conn)
        if path.startswith("/redirect/"):
            return await self.redirect(req, conn, path)
        if path.startswith("/status/") and path[8:].isdigit() and 200 <= int(path[8:]) <= 599:
            return await self.status(req, conn, int(path[8:]))
        if path == "/many-links":  # not in _exact: the index links none of its 15 MB
            return await self.many_links(req, conn)
        if path in ("/refresh/to", "/links/to"):
            return await (self.refresh_to if path == "/refresh/to" else self.links_to)(req, conn)
        if found := STORY.match(path):
            return await self.feeds.story(req, conn, int(found.group(1)))
        if path in CONTENT or path in HEADER_BYTES:
            ctype, body = CONTENT.get(path) or HEADER_BYTES[path]
            headers = [("Content-Type", ctype)] if ctype else []
            return await send_response(conn, req, 200, headers, body)
        return await send_response(conn, req, 404, [("Content-Type", HTML)],
                                   b"<html><body>not here</body></html>")

    async def index(self, req: Request, conn: Conn) -> bool:
        paths = [p for p in self._exact if p != "/"] + [
            "/redirect/chain/5", "/redirect/loop", "/redirect/self", "/redirect/cross-host",
            "/redirect/relative", *(f"/redirect/{c}" for c in REDIRECT_CODES),
            "/redirect/no-location", "/redirect/unresolvable", "/redirect/non-http",
            *(f"/status/{c}" for c in (404, 410, 500, 503, 429, 408)), *CONTENT,
            "/story/0", FIRST_MONTH, "/s;jsessionid=START/page0", "/deep/a/", "/params?page=1"]
        items = "".join(f'<li><a href="{p}">{p}</a></li>' for p in paths)
        body = f"<html><head><title>Evil</title></head><body><ul>{items}</ul></body></html>"
        return await send_response(conn, req, 200, [("Content-Type", HTML)], body.encode())

    async def robots(self, req: Request, conn: Conn) -> bool:
        return await send_response(conn, req, 200, [("Content-Type", "text/plain")],
                                   ("User-agent: *\nAllow: /\n" + self.sitemaps.robots_lines()).encode())

    async def target(self, req: Request, conn: Conn) -> bool:
        return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                   b"<html><head><title>Target</title></head>"
                                   b"<body>You have arrived.</body></html>")

    async def nested_html(self, req: Request, conn: Conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query)
        wanted = query.get("depth", [""])[0]
        depth = min(int(wanted), MAX_NESTING) if wanted.isdigit() else DEFAULT_NESTING
        page = b"<html><body>" + b"<div>" * depth + b'<a href="/target">deep</a>'
        return await send_response(conn, req, 200, [("Content-Type", HTML), ("Content-Encoding", "gzip")],
                                   gzip.compress(page, mtime=0))

    async def many_links(self, req: Request, conn: Conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query)
        wanted = query.get("n", [""])[0]
        count = min(int(wanted), DEFAULT_LINKS) if wanted.isdigit() else DEFAULT_LINKS
        page = b"<html><body>" + b"".join(b'<a href="/l/%d">.</a>' % i for i in range(count)) + b"</body></html>"
        return await send_response(conn, req, 200, [("Content-Type", HTML), ("Content-Encoding", "gzip")],
                                   gzip.compress(page, compresslevel=1, mtime=0))

    async def huge_robots(self, req: Request, conn: Conn) -> bool:
        rules = b"User-agent: *\nDisallow: /\n"
        filler = b"# " + b"x" * (FILLER_LINE - 3) + b"\n"
        await conn.send_head(200, [("Content-Type", "text/plain"), ("Content-Length", str(HUGE_ROBOTS))])
        if req.method != "HEAD":
            await conn.send(rules)
            chunk = filler * (64 * 1024 // FILLER_LINE)
            for _ in range((HUGE_ROBOTS - len(rules)) // len(chunk)):  # a crawler hangs up long before
                await conn.send(chunk)
        return False

    async def stalling_robots(self, req: Request, conn: Conn) -> bool:
        await conn.send_head(200, [("Content-Type", "text/plain"), ("Content-Length", "1000")])
        await conn.wait_for_peer_close(self.spec.stall_seconds)
        return False

    async def meta_refresh(self, req: Request, conn: Conn) -> bool:
        body = (b'<html><head><meta http-equiv="refresh" content="0; url=/target">'
                b"<title>Refreshing</title></head><body>Moving on...</body></html>")
        return await send_response(conn, req, 200, [("Content-Type", HTML)], body)

    async def redirect(self, req: Request, conn: Conn, path: str) -> bool:
        if path == "/redirect/to":
            return await self.redirect_to(req, conn)
        status, location = 302, self._location(path)
        if path[10:].isdigit() and int(path[10:]) in REDIRECT_CODES:
            status, location = int(path[10:]), "/target"
        if location is None and path != "/redirect/no-location":
            return await send_response(conn, req, 404, [("Content-Type", HTML)],
                                       b"no such redirect")
        headers = [("Content-Type", HTML)] + ([("Location", location)] if location else [])
        return await send_response(conn, req, status, headers,
                                   b"<html><body>redirect</body></html>")

    def _location(self, path: str) -> str | None:
        if found := CHAIN.match(path):
            hops = min(int(found.group(1)), MAX_CHAIN)
            return f"/redirect/chain/{hops - 1}" if hops > 0 else "/target"
        return {
            "/redirect/loop": "/redirect/loop-back",
            "/redirect/loop-back": "/redirect/loop",
            "/redirect/self": "/redirect/self",
            "/redirect/cross-host": f"http://h0.{DOMAIN}:{self.port}/",
            "/redirect/relative": "../target",
            "/redirect/unresolvable": f"http://{UNRESOLVABLE_NAME}:{self.port}/",
            "/redirect/non-http": f"ftp://{HOSTILE_NAME}/file",
        }.get(path)

    async def redirect_to(self, req: Request, conn: Conn) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query)
        code = int(query.get("code", ["302"])[0]) if query.get("code", [""])[0].isdigit() else 302
        if not query.get("url") or code not in REDIRECT_CODES:
            return await send_response(conn, req, 400, [("Content-Type", "text/plain")],
                                       b"want ?url=URL and optionally &code=301|302|303|307|308")
        return await send_response(conn, req, code, [("Location", query["url"][0])])

    async def refresh_to(self, req: Request, conn: Conn) -> bool:
        targets = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query).get("url", ["/target"])
        body = (f'<html><head><meta http-equiv="refresh" content="0; url={html.escape(targets[0])}">'
                f"<title>Refreshing</title></head><body>Moving on...</body></html>")
        return await send_response(conn, req, 200, [("Content-Type", HTML)], body.encode())

    async def links_to(self, req: Request, conn: Conn) -> bool:
        targets = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query).get("url", [])
        items = "".join(f'<li><a href="{html.escape(t)}">{html.escape(t)}</a></li>' for t in targets)
        body = f"<html><head><title>Links</title></head><body><ul>{items}</ul></body></html>"
        return await send_response(conn, req, 200, [("Content-Type", HTML)], body.encode())

    async def status(self, req: Request, conn: Conn, code: int) -> bool:
        headers = [("Content-Type", HTML)]
        if code in (429, 503):
            headers.append(("Retry-After", str(self.spec.retry_after)))
        body = f"<html><body>status {code}</body></html>".encode()
        return await send_response(conn, req, code, headers, body, keep_alive=code != 408)


CONTENT: dict[str, tuple[str | None, bytes]] = {
    "/doc.pdf": ("application/pdf", b"%PDF-1.4\n%%EOF\n"),
    "/image.png": ("image/png", TINY_PNG),
    "/notes.txt": ("text/plain; charset=utf-8",
                   b"Plain text notes.\nhttp://h0.wreck.test/ is not a link here.\n"),
    "/data.json": ("application/json", b'{"links": ["/target"], "note": "not HTML"}'),
    "/no-content-type": (None, b"<html><body><a href=\"/target\">untyped</a></body></html>"),
    "/mislabeled": ("text/html", TINY_PNG),
}
"""Path -> (Content-Type or None, body) of the fixed non-HTML / odd-type resources."""

HEADER_BYTES: dict[str, tuple[str, bytes]] = {
    # the header is written as Latin-1 (tests/web/wire.py): '\xff' and '\xe9' go out as one byte each
    "/header-bytes/pdf": ("application/pdf; name=\xff.pdf", b"%PDF-1.4\n%%EOF\n"),
    "/header-bytes/charset": ("text/html; charset=\xe9",
                              b'<html><body><a href="/target">caf\xe9</a></body></html>'),
}
"""Path -> (Content-Type with a non-UTF-8 byte, body): issue 14, finding 1."""
