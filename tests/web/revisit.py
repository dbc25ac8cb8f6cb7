# Hosts for recrawl and bandwidth tests, served when SiteSpec.revisit is set.
# All sit on RevisitSpec.ip; each has an allow-all robots.txt and a '/'
# linking to its paths.
#
#   news.wreck.test    /static-N.html: fixed pages with ETag and Last-Modified
#                      that answer 304 to a matching conditional request;
#                      /clock.html: changes every change_interval seconds
#                      (new body, ETag and Last-Modified each time)
#   files.wreck.test   HEAD answered correctly.  /report.pdf /archive.zip
#   nohead.wreck.test  /photo.jpg: small binaries; /video.mp4: big_bytes of
#   head501.wreck.test video/mp4 streamed; /misnamed.pdf: really text/html;
#                      /moved.pdf: 301 to /report.pdf;
#   liar.wreck.test    /page.html.  nohead answers HEAD with 405, head501
#   headbody.wreck.test with 501, liar with '200 text/html' whatever the
#   headreset.wreck.test path, headbody sends the body after a HEAD's
#                      headers (poisoning a reused connection), headreset
#                      resets the connection.
#   busy.wreck.test    /p-N.html: the first busy_429 page requests get 429
#                      with Retry-After: retry_after, the next busy_5xx get
#                      503 (no Retry-After), then pages are served normally.

from __future__ import annotations

import email.utils
import hashlib
import time
from collections.abc import Callable

from .breakage import STREAM_CHUNK
from .spec import DOMAIN, RevisitSpec
from .wire import Conn, Request, is_not_modified, send_response

HTML = "text/html; charset=utf-8"
NEWS, FILES, NOHEAD, HEAD501, LIAR, HEADBODY, HEADRESET, BUSY = (
    f"{n}.{DOMAIN}" for n in ("news", "files", "nohead", "head501", "liar", "headbody", "headreset", "busy"))
FILE_HOSTS = (FILES, NOHEAD, HEAD501, LIAR, HEADBODY, HEADRESET)
SMALL_FILES = {
    "/report.pdf": ("application/pdf", b"%PDF-1.4\n" + b"0" * 20_000 + b"\n%%EOF\n"),
    "/archive.zip": ("application/zip", b"PK\x05\x06" + b"\x00" * 18),
    "/photo.jpg": ("image/jpeg", b"\xff\xd8\xff\xe0" + b"J" * 30_000 + b"\xff\xd9"),
}
MISNAMED = "/misnamed.pdf"
MOVED = "/moved.pdf"  # 301 -> /report.pdf
VIDEO = "/video.mp4"


class RevisitHosts:
    """Request router of the revisit hosts."""

    def __init__(self, spec: RevisitSpec, *, clock: Callable[[], float] = time.time) -> None:
        self.spec, self.clock = spec, clock
        self.busy_seen = 0  # page requests busy.wreck.test has answered

    def addresses(self) -> dict[str, str]:
        return {name: self.spec.ip for name in (NEWS, *FILE_HOSTS, BUSY)}

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")],
                                       b"User-agent: *\nAllow: /\n")
        if req.host == NEWS:
            return await self._news(req, conn)
        if req.host == BUSY:
            return await self._busy(req, conn)
        return await self._files(req, conn)

    # -- news: validators and 304 ------------------------------------------------

    async def _news(self, req: Request, conn: Conn) -> bool:
        n = self.spec.static_pages
        if req.path == "/":
            links = [f"/static-{k}.html" for k in range(n)] + ["/clock.html"]
            return await _page(conn, req, "News", links)
        if req.path == "/clock.html":
            epoch = int(self.clock() // self.spec.change_interval)
            body = f"<html><head><title>Clock</title></head><body>epoch {epoch}</body></html>"
            return await _cacheable(conn, req, body.encode(), epoch * self.spec.change_interval)
        for k in range(n):
            if req.path == f"/static-{k}.html":
                body = f"<html><head><title>Static {k}</title></head><body>{'same ' * 200}</body></html>"
                return await _cacheable(conn, req, body.encode(), self.spec.static_modified)
        return await _not_found(conn, req)

    # -- files: HEAD, its failures, and big unwanted types -------------------------

    async def _files(self, req: Request, conn: Conn) -> bool:
        if req.method == "HEAD" and req.host == NOHEAD:
            return await send_response(conn, req, 405, [("Allow", "GET")])
        if req.method == "HEAD" and req.host == HEAD501:
            return await send_response(conn, req, 501, [("Content-Type", HTML)])
        if req.method == "HEAD" and req.host == LIAR:
            return await send_response(conn, req, 200, [("Content-Type", HTML)])
        if req.method == "HEAD" and req.host == HEADRESET:
            conn.reset()
            return False
        if req.method == "HEAD" and req.host == HEADBODY and req.path in SMALL_FILES:
            ctype, body = SMALL_FILES[req.path]  # the body a HEAD must not carry, sent anyway
            await conn.send_head(200, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
            await conn.send(body)
            return True
        if req.path == "/":
            return await _page(conn, req, "Files", [*SMALL_FILES, VIDEO, MISNAMED, "/page.html", MOVED])
        if req.path == MOVED:
            return await send_response(conn, req, 301, [("Location", "/report.pdf")])
        if req.path in ("/page.html", MISNAMED):
            return await _page(conn, req, req.path, [])
        if req.path in SMALL_FILES:
            ctype, body = SMALL_FILES[req.path]
            return await send_response(conn, req, 200, [("Content-Type", ctype)], body)
        if req.path == VIDEO:
            size = self.spec.big_bytes
            await conn.send_head(200, [("Content-Type", "video/mp4"), ("Content-Length", str(size)),
                                       ("Connection", "close")])
            if req.method != "HEAD":
                chunk = b"V" * STREAM_CHUNK
                for _ in range(size // STREAM_CHUNK):
                    await conn.send(chunk)
                await conn.send(b"V" * (size % STREAM_CHUNK))
            return False
        return await _not_found(conn, req)

    # -- busy: 429 then 5xx, then fine ------------------------------------------------

    async def _busy(self, req: Request, conn: Conn) -> bool:
        links = [f"/p-{k}.html" for k in range(self.spec.busy_pages)]
        if req.path == "/":
            return await _page(conn, req, "Busy", links)
        if req.path not in links:
            return await _not_found(conn, req)
        self.busy_seen += 1
        s = self.spec
        if self.busy_seen <= s.busy_429:
            return await send_response(conn, req, 429, [("Content-Type", HTML),
                                                        ("Retry-After", str(s.retry_after))],
                                       b"<html><body>slow down</body></html>")
        if self.busy_seen <= s.busy_429 + s.busy_5xx:
            return await send_response(conn, req, 503, [("Content-Type", HTML)],
                                       b"<html><body>overloaded</body></html>")
        return await _page(conn, req, req.path, [])


async def _page(conn: Conn, req: Request, title: str, links: list[str]) -> bool:
    items = "".join(f'<li><a href="{p}">{p}</a></li>' for p in links)
    body = f"<html><head><title>{title}</title></head><body><ul>{items}</ul></body></html>"
    return await send_response(conn, req, 200, [("Content-Type", HTML)], body.encode())


async def _cacheable(conn: Conn, req: Request, body: bytes, modified: float) -> bool:
    etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    headers = [("ETag", etag), ("Last-Modified", email.utils.formatdate(modified, usegmt=True))]
    if is_not_modified(req, etag, modified):
        return await send_response(conn, req, 304, headers)
    return await send_response(conn, req, 200, [("Content-Type", HTML), *headers], body)


async def _not_found(conn: Conn, req: Request) -> bool:
    return await send_response(conn, req, 404, [("Content-Type", HTML)],
                               b"<html><body>not here</body></html>")
