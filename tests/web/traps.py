# Spider traps of the hostile host: URL spaces with no end.
#
#   /calendar/YYYY/MM      links to the previous and next month, forever
#   /calendar/             302 to /calendar/2026/11
#   /s;jsessionid=ID/pageN links to pageN+1 and page0 under a fresh session id on
#                          every visit, so no URL is ever seen twice; /s/pageN (no
#                          id, as a servlet container accepts) is the same page
#   /deep/a/a/.../         links to one level deeper ('a/') and back ('../')
#   /params?page=N         'next page' forever (N+1), plus a sort parameter shuffle
# A crawler's per-host budget and depth limit are what stop it here.

from __future__ import annotations

import itertools
import re
import urllib.parse

from .wire import Conn, Request, send_response

CALENDAR = re.compile(r"^/calendar/(\d{1,6})/(\d{1,2})$")
SESSION = re.compile(r"^/s(?:;jsessionid=([A-Za-z0-9]+))?/page(\d+)$")
FIRST_MONTH = "/calendar/2026/11"


class Traps:
    """Handlers for the trap URL spaces."""

    def __init__(self, seed: int) -> None:
        self._ids = itertools.count(seed * 1_000_003 + 1)

    def match(self, path: str):
        """The handler for `path` (path + query) if it is a trap URL, else None."""
        bare = urllib.parse.urlsplit(path).path
        if bare in ("/calendar", "/calendar/"):
            return self.calendar_root
        if CALENDAR.match(bare):
            return self.calendar
        if SESSION.match(bare) or bare == "/s":
            return self.session
        if bare.startswith("/deep/"):
            return self.deep
        if bare == "/params":
            return self.params
        return None

    async def calendar_root(self, req: Request, conn: Conn) -> bool:
        return await send_response(conn, req, 302, [("Location", FIRST_MONTH)])

    async def calendar(self, req: Request, conn: Conn) -> bool:
        year, month = map(int, CALENDAR.match(urllib.parse.urlsplit(req.path).path).groups())
        if not 1 <= month <= 12:
            return await send_response(conn, req, 404, [("Content-Type", "text/plain")],
                                       b"no such month")
        prev_y, prev_m = (year, month - 1) if month > 1 else (year - 1, 12)
        next_y, next_m = (year, month + 1) if month < 12 else (year + 1, 1)
        links = [(f"/calendar/{prev_y}/{prev_m:02d}", "previous month"),
                 (f"/calendar/{next_y}/{next_m:02d}", "next month")]
        return await _page(req, conn, f"Calendar {year}-{month:02d}", links)

    async def session(self, req: Request, conn: Conn) -> bool:
        found = SESSION.match(urllib.parse.urlsplit(req.path).path)
        n = int(found.group(2)) if found else 0
        fresh = f"{next(self._ids):x}{n:x}".upper()
        links = [(f"/s;jsessionid={fresh}/page{n + 1}", "next"),
                 (f"/s;jsessionid={fresh}/page0", "home")]
        return await _page(req, conn, f"Session page {n}", links)

    async def deep(self, req: Request, conn: Conn) -> bool:
        bare = urllib.parse.urlsplit(req.path).path
        if not bare.endswith("/"):
            return await send_response(conn, req, 301, [("Location", bare + "/")])
        depth = bare.count("/") - 2
        return await _page(req, conn, f"Depth {depth}", [("a/", "deeper"), ("../", "up")])

    async def params(self, req: Request, conn: Conn) -> bool:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(req.path).query))
        page = int(query["page"]) if query.get("page", "").isdigit() else 1
        links = [(f"/params?page={page + 1}", "next"),
                 (f"/params?page={page}&sort={'asc' if query.get('sort') != 'asc' else 'desc'}",
                  "re-sort")]
        return await _page(req, conn, f"Results page {page}", links)


async def _page(req: Request, conn: Conn, title: str, links: list[tuple[str, str]]) -> bool:
    items = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in links)
    body = (f"<html><head><title>{title}</title></head>"
            f"<body><h1>{title}</h1><ul>{items}</ul></body></html>")
    return await send_response(conn, req, 200, [("Content-Type", "text/html; charset=utf-8")],
                               body.encode())
