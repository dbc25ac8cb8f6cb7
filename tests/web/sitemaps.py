# Sitemaps of the hostile host, and the pages only they list.
#
#   /robots.txt names /sitemap-bulk.xml in a Sitemap: line (or, with
#                           HostileSpec.sitemap_bomb, /sitemap-bomb.xml.gz)
#   /sitemap.xml            a sitemap index: /sitemap-pages.xml.gz, then
#                           /sitemap-many/0.xml .. /sitemap-many/{N-1}.xml
#   /sitemap-pages.xml.gz   a gzipped urlset (the file, not Content-Encoding)
#                           of /hidden/0 .. /hidden/{H-1}, linked from nowhere
#   /sitemap-bulk.xml       a urlset of /bulk/0 .. /bulk/{B-1}
#   /sitemap-many/K.xml     a urlset of /many/K
#   /sitemap-bomb.xml.gz    a gzipped urlset of BOMB_ELEMENTS empty elements:
#                           ~40 KB on the wire, 40 MB inflated (issue 14,
#                           finding 5); built once per process, on first request
#   /hidden/K /bulk/K /many/K   small HTML pages without links
#
# None of these paths is linked from the hostile index, so only a crawler
# that reads sitemaps finds them.

from __future__ import annotations

import functools
import gzip
import re
from xml.sax.saxutils import escape

from .spec import HostileSpec
from .wire import Conn, Request, send_response

LISTED = re.compile(r"^/(hidden|bulk|many)/(\d+)$")
MANY = re.compile(r"^/sitemap-many/(\d+)\.xml$")
XML = "application/xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
BOMB_ELEMENTS = 10_000_000
"""Empty '<x/>' elements of the bomb: ten times the spider's element bound, yet
40 MB inflated, under sitemaps.org's 50 MB, so only the element count can stop it."""


class Sitemaps:
    """Handlers of the sitemap paths; match() gives the handler of a path or None."""

    def __init__(self, spec: HostileSpec, origin: str) -> None:
        self.spec, self.origin = spec, origin
        self.counts = {"hidden": spec.sitemap_hidden_pages, "bulk": spec.sitemap_bulk_urls,
                       "many": spec.sitemap_many}

    def robots_lines(self) -> str:
        named = "/sitemap-bomb.xml.gz" if self.spec.sitemap_bomb else "/sitemap-bulk.xml"
        return f"Sitemap: {self.origin}{named}\n"

    def match(self, path: str):
        if path == "/sitemap.xml":
            return self.index
        if path == "/sitemap-pages.xml.gz":
            return self.pages_gz
        if path == "/sitemap-bomb.xml.gz":
            return self.bomb
        if path == "/sitemap-bulk.xml":
            return lambda req, conn: self._urlset(req, conn, "bulk", range(self.spec.sitemap_bulk_urls))
        if (found := MANY.match(path)) and int(found.group(1)) < self.spec.sitemap_many:
            return lambda req, conn: self._urlset(req, conn, "many", [int(found.group(1))])
        if (found := LISTED.match(path)) and int(found.group(2)) < self.counts[found.group(1)]:
            return lambda req, conn: self._page(req, conn, found.group(1), int(found.group(2)))
        return None

    async def index(self, req: Request, conn: Conn) -> bool:
        children = ["/sitemap-pages.xml.gz"] + [f"/sitemap-many/{k}.xml" for k in range(self.spec.sitemap_many)]
        body = "".join(f"<sitemap><loc>{escape(self.origin + c)}</loc></sitemap>" for c in children)
        return await send_response(conn, req, 200, [("Content-Type", XML)],
                                   f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>{body}'
                                   "</sitemapindex>\n".encode())

    async def pages_gz(self, req: Request, conn: Conn) -> bool:
        xml = self._urlset_xml("hidden", range(self.spec.sitemap_hidden_pages))
        return await send_response(conn, req, 200, [("Content-Type", "application/gzip")],
                                   gzip.compress(xml, mtime=0))

    async def bomb(self, req: Request, conn: Conn) -> bool:
        return await send_response(conn, req, 200, [("Content-Type", "application/gzip")], bomb_bytes())

    async def _urlset(self, req: Request, conn: Conn, kind: str, numbers) -> bool:
        return await send_response(conn, req, 200, [("Content-Type", XML)], self._urlset_xml(kind, numbers))

    def _urlset_xml(self, kind: str, numbers) -> bytes:
        body = "".join(f"<url><loc>{escape(f'{self.origin}/{kind}/{k}')}</loc></url>" for k in numbers)
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{body}</urlset>\n'.encode()

    async def _page(self, req: Request, conn: Conn, kind: str, k: int) -> bool:
        body = f"<html><head><title>{kind} {k}</title></head><body><p>Only a sitemap lists me.</p></body></html>"
        return await send_response(conn, req, 200, [("Content-Type", "text/html; charset=utf-8")], body.encode())


@functools.cache
def bomb_bytes() -> bytes:
    """The gzipped sitemap bomb: a urlset of BOMB_ELEMENTS '<x/>' then one <url>."""
    xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>'.encode() + b"<x/>" * BOMB_ELEMENTS
           + b"<url><loc>/target</loc></url></urlset>\n")
    return gzip.compress(xml, compresslevel=9, mtime=0)
