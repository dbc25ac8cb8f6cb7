# The edges of the web, fourth round, served when SiteSpec.edges4 is set:
# HTTP framing as real servers get it wrong, answered as raw bytes. The host
# sits on its own 127.66.12.x address. Every path a correct crawler requests
# is in Edges4Host.expected(); every path it must never request in
# forbidden(); paths a crawler may or may not ask (a choice WRECK documents)
# in tolerated(); anything else gets a 404, so a wrong resolution shows in
# the request log. Each case page links /t/NAME.
#
#   frame4.wreck.test    allow-all robots.txt; '/' links every case page:
#     /cut/...           the server closes before the body's end: a chunk
#                        announced as 4 KiB, the page sent, then the close; the
#                        whole page in its chunk, the last chunk never sent;
#                        Content-Length 5,000 for the page's bytes. Browsers show
#                        the page as received: asked once, stored, its link read
#     /read/...          framing a browser reads and libcurl too: a chunk
#                        extension, blanks after a chunk size, three 1xx answers
#                        before the 200, 'HTTP/1.1 200' with no reason, a
#                        Content-Length listing one value twice, a Content-Length
#                        shorter than the body on a kept-alive connection (the
#                        rest is no part of the answer: the link after it unread)
#     /refused/...       framing libcurl refuses: two Location headers that
#                        differ, two Content-Lengths that differ (Chrome refuses
#                        both too), a header line without a colon and a CRLF
#                        before the status line (browsers show those pages); each
#                        asked once, stored as a failure, its link unread
#     /status/...        a 204 and a 304 followed by a body on a kept-alive
#                        connection (no part of the answer, nor of the next);
#                        a status code outside 100-599 (999: LinkedIn's answer
#                        to robots, 600) with a page linking on: asked once
#     /html/srcdoc       an <iframe srcdoc> holding a link (HTML 4.8.5: the
#                        iframe's document, read), a <template> holding one (inert)
#   robots4-cut.wreck.test   robots.txt cut by the server's close after its
#                        'Allow: /public/' line, before its 'Disallow: /': unread
#                        (unreachable: complete disallow), '/' and /public/p never asked
"""Edges4Host: the fourth round's edge host; expected()/forbidden()/tolerated()."""

from __future__ import annotations

import html
import re

from .spec import DOMAIN
from .wire import Conn, Request, send_response

HTML = "text/html; charset=utf-8"
FRAME = f"frame4.{DOMAIN}"
ROBOTS_CUT = f"robots4-cut.{DOMAIN}"
# its robots.txt: the Content-Length of the whole, the bytes up to the cut
ROBOTS_WHOLE = b"User-agent: *\nAllow: /public/\nDisallow: /\n"
ROBOTS_SENT = ROBOTS_WHOLE[: ROBOTS_WHOLE.index(b"Disallow")]
CHUNK_ANNOUNCED = 0x1000  # bytes /cut/mid-chunk's chunk announces (the page is shorter)
LENGTH_ANNOUNCED = 5000  # bytes /cut/length-longer's Content-Length announces
SHORT_LENGTH_AT = "<!--cut-->"  # /read/length-shorter's Content-Length ends its body here


def _page(name: str, extra: str = "", *, link: bool = True) -> bytes:
    on = f'<a href="/t/{name}">on</a>' if link else ""
    return f"<!DOCTYPE html><html><head><title>{name}</title></head><body>{on}{extra}</body></html>\n".encode()


def _chunked(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n" + body


def _sized(status_line: bytes, body: bytes, extra: bytes = b"", length: int | None = None) -> bytes:
    return (status_line + b"\r\nContent-Type: text/html\r\n" + extra
            + b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body)


def _answers() -> dict[str, tuple[int, bytes, bool]]:
    """Path -> (the final status, the raw answer, whether the connection stays open after it)."""
    out: dict[str, tuple[bytes, bool]] = {}
    page = _page("cut-mid-chunk")
    out["/cut/mid-chunk"] = (_chunked(b"%x\r\n%s" % (CHUNK_ANNOUNCED, page)), False)
    page = _page("cut-no-last-chunk")
    out["/cut/no-last-chunk"] = (_chunked(b"%x\r\n%s\r\n" % (len(page), page)), False)
    out["/cut/length-longer"] = (_sized(b"HTTP/1.1 200 OK", _page("cut-length-longer"), length=LENGTH_ANNOUNCED),
                                 False)
    page = _page("read-chunk-ext")
    out["/read/chunk-ext"] = (_chunked(b"%x;name=value\r\n%s\r\n0\r\n\r\n" % (len(page), page)), True)
    page = _page("read-chunk-blanks")
    out["/read/chunk-blanks"] = (_chunked(b"%x  \r\n%s\r\n0\r\n\r\n" % (len(page), page)), True)
    out["/read/three-1xx"] = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\n"
                              b"Link: </s.css>; rel=preload\r\n\r\n" + _sized(b"HTTP/1.1 200 OK", _page("read-three-1xx")),
                              True)
    out["/read/no-reason"] = (_sized(b"HTTP/1.1 200", _page("read-no-reason")), True)
    page = _page("read-length-list")
    out["/read/length-list"] = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d, %d\r\n\r\n%s"
                                % (len(page), len(page), page), True)
    page = _page("read-length-shorter", f'{SHORT_LENGTH_AT}<a href="/t/after-length">after</a>')
    out["/read/length-shorter"] = (_sized(b"HTTP/1.1 200 OK", page, length=page.index(SHORT_LENGTH_AT.encode())),
                                   True)
    out["/refused/two-locations"] = (_sized(b"HTTP/1.1 302 Found", _page("refused-two-locations"),
                                            b"Location: /t/loc-a\r\nLocation: /t/loc-b\r\n"), False)
    out["/refused/two-lengths"] = (_sized(b"HTTP/1.1 200 OK", _page("refused-two-lengths"), b"Content-Length: 3\r\n"),
                                   False)
    out["/refused/no-colon"] = (_sized(b"HTTP/1.1 200 OK", _page("refused-no-colon"), b"X-Debug line here\r\n"), False)
    out["/refused/leading-crlf"] = (b"\r\n" + _sized(b"HTTP/1.1 200 OK", _page("refused-leading-crlf")), False)
    # a body after a 204 and an unasked 304 (RFC 9110 15.3.5, 15.4.5: none may follow), on a kept-alive
    # connection: the bytes are no answer, and must not be read as the next request's
    out["/status/204-body"] = (_sized(b"HTTP/1.1 204 No Content", _page("status-204-body")), True)
    out["/status/304-body"] = (b"HTTP/1.1 304 Not Modified\r\nContent-Type: text/html\r\n\r\n" + _page("status-304-body"),
                               True)
    out["/status/999"] = (_sized(b"HTTP/1.1 999 Request denied", _page("status-999")), False)
    out["/status/600"] = (_sized(b"HTTP/1.1 600 Odd", _page("status-600")), False)
    return {path: (int(re.findall(rb"HTTP/1\.1 (\d{3})", answer)[-1]), answer, keep) for path, (answer, keep) in out.items()}


ANSWERS = _answers()
CUT = ("mid-chunk", "no-last-chunk", "length-longer")
READ = ("chunk-ext", "chunk-blanks", "three-1xx", "no-reason", "length-list", "length-shorter")
REFUSED = ("two-locations", "two-lengths", "no-colon", "leading-crlf")
SRCDOC = ('<iframe srcdoc="' + html.escape('<p>inside <a href="/t/srcdoc">the frame</a>') + '"></iframe>'
          '<template><a href="/t/template">inert</a></template>')


class Edges4Host:
    """Request router of the fourth round's edge host."""

    def __init__(self, port: int) -> None:
        self.port = port

    @staticmethod
    def addresses() -> dict[str, str]:
        return {FRAME: "127.66.12.1", ROBOTS_CUT: "127.66.12.2"}

    @staticmethod
    def address_of(host: str) -> str | None:
        return Edges4Host.addresses().get(host)

    @staticmethod
    def seeds(port: int) -> list[str]:
        return [f"http://{name}:{port}/" for name in Edges4Host.addresses()]

    @staticmethod
    def index_paths() -> list[str]:
        return [*ANSWERS, "/html/srcdoc"]

    def expected(self) -> dict[str, set[str]]:
        """Host -> every path + query a correct crawl requests (robots.txt aside)."""
        return {FRAME: {"/", *self.index_paths(), *(f"/t/cut-{k}" for k in CUT), *(f"/t/read-{k}" for k in READ),
                        "/t/srcdoc"}, ROBOTS_CUT: set()}

    def forbidden(self) -> dict[str, set[str]]:
        """Host -> paths a correct crawl never requests: what lies beyond a
        Content-Length, an inert <template>'s link."""
        return {FRAME: {"/t/after-length", "/t/template", "/t/status-204-body", "/t/status-304-body"},
                ROBOTS_CUT: {"/", "/public/p"}}

    def tolerated(self) -> dict[str, set[str]]:
        """Host -> paths served but not judged: the links of answers libcurl
        refuses (a browser shows some of them), of a status outside 100-599."""
        return {FRAME: {*(f"/t/refused-{k}" for k in REFUSED), "/t/loc-a", "/t/loc-b", "/t/status-999",
                        "/t/status-600"}}

    async def handle(self, req: Request, conn: Conn) -> bool:
        path = req.path
        if req.host == ROBOTS_CUT:
            return await self._robots_cut(req, conn)
        if path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if path == "/":
            links = "".join(f'<a href="{p}">{p}</a> ' for p in self.index_paths())
            return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                       f"<!DOCTYPE html><title>edges4</title><body>{links}</body>".encode())
        if path in ANSWERS:
            conn.status, answer, keep = ANSWERS[path]
            await conn.send(answer)
            return keep
        if path == "/html/srcdoc":
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page("html-srcdoc", SRCDOC, link=False))
        served = self.expected()[FRAME] | self.forbidden()[FRAME] | self.tolerated()[FRAME]
        if path in served:
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page("landed", link=False))
        return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")

    async def _robots_cut(self, req: Request, conn: Conn) -> bool:
        if req.path == "/robots.txt":
            conn.status = 200
            await conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                            % (len(ROBOTS_WHOLE), ROBOTS_SENT))
            return False
        if req.path in ("/", "/public/p"):
            body = b'<!DOCTYPE html><title>cut</title><a href="/public/p">p</a>'
            return await send_response(conn, req, 200, [("Content-Type", HTML)], body)
        return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
