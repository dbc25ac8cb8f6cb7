# Growing RSS, Atom and JSON feeds of the hostile host, and their story pages.
#
# The feeds hold HostileSpec.feed_initial_items stories at start and gain one
# every feed_item_interval seconds (measured on an injected monotonic clock, so
# tests can drive it).  All three feeds list the newest feed_max_items stories; story
# k lives at /story/k and exists only once published.  Feeds carry an ETag and
# Last-Modified that change exactly when a story is added, so conditional GET
# answers 304 while nothing is new.

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from xml.sax.saxutils import escape

from .spec import HostileSpec
from .wire import Conn, Request, is_not_modified, send_response


class Feeds:
    """State and handlers of /feed.rss, /feed.atom, /feed.json and /story/<k>."""

    def __init__(self, spec: HostileSpec, origin: str, *,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.spec, self.origin, self.clock = spec, origin, clock
        self.started = clock()
        self.started_wall = wall_clock()

    def count(self) -> int:
        """Stories published so far."""
        grown = int((self.clock() - self.started) / self.spec.feed_item_interval)
        return self.spec.feed_initial_items + max(0, grown)

    def story_url(self, k: int) -> str:
        return f"{self.origin}/story/{k}"

    def published(self, k: int) -> float:
        """Wall time story k appeared (initial stories: at start)."""
        extra = max(0, k - self.spec.feed_initial_items + 1)
        return self.started_wall + extra * self.spec.feed_item_interval

    async def rss(self, req: Request, conn: Conn) -> bool:
        return await self._feed(req, conn, "application/rss+xml", self._rss_body)

    async def atom(self, req: Request, conn: Conn) -> bool:
        return await self._feed(req, conn, "application/atom+xml", self._atom_body)

    async def json(self, req: Request, conn: Conn) -> bool:
        return await self._feed(req, conn, "application/feed+json", self._json_body)

    async def story(self, req: Request, conn: Conn, k: int) -> bool:
        if k >= self.count():
            return await send_response(conn, req, 404, [("Content-Type", "text/html")],
                                       b"<html><body>no such story (yet)</body></html>")
        body = (f"<html><head><title>Story {k}</title></head><body><h1>Story {k}</h1>"
                f"<p>Breaking news number {k}.</p><a href=\"/feed.rss\">feed</a></body></html>")
        return await send_response(conn, req, 200, [("Content-Type", "text/html; charset=utf-8")],
                                   body.encode())

    async def _feed(self, req: Request, conn: Conn, ctype: str, render) -> bool:
        n = self.count()
        etag, modified = f'"feed-{n}"', self.published(n - 1)
        headers = [("ETag", etag), ("Last-Modified", email.utils.formatdate(modified, usegmt=True))]
        if is_not_modified(req, etag, modified):
            return await send_response(conn, req, 304, headers)
        return await send_response(conn, req, 200, [("Content-Type", ctype), *headers],
                                   render(n).encode())

    def _newest(self, n: int) -> range:
        return range(n - 1, max(-1, n - 1 - self.spec.feed_max_items), -1)

    def _rss_body(self, n: int) -> str:
        items = "".join(
            f"<item><title>Story {k}</title><link>{escape(self.story_url(k))}</link>"
            f"<guid>{escape(self.story_url(k))}</guid>"
            f"<pubDate>{email.utils.formatdate(self.published(k), usegmt=True)}</pubDate></item>"
            for k in self._newest(n))
        return ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>'
                f"<title>Evil news</title><link>{escape(self.origin)}/</link>"
                f"<description>A feed that grows</description>{items}</channel></rss>\n")

    def _json_body(self, n: int) -> str:
        items = [{"id": self.story_url(k), "url": self.story_url(k), "title": f"Story {k}",
                  "content_text": f"Breaking news number {k}.",
                  "date_published": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.published(k)))}
                 for k in self._newest(n)]
        return json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "Evil news",
                           "home_page_url": f"{self.origin}/", "feed_url": f"{self.origin}/feed.json",
                           "items": items})

    def _atom_body(self, n: int) -> str:
        def stamp(t: float) -> str:
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

        entries = "".join(
            f'<entry><title>Story {k}</title><link href="{escape(self.story_url(k))}"/>'
            f"<id>{escape(self.story_url(k))}</id><updated>{stamp(self.published(k))}</updated>"
            "</entry>" for k in self._newest(n))
        return ('<?xml version="1.0" encoding="utf-8"?>\n'
                '<feed xmlns="http://www.w3.org/2005/Atom"><title>Evil news</title>'
                f'<id>{escape(self.origin)}/feed.atom</id>'
                f"<updated>{stamp(self.published(n - 1))}</updated>{entries}</feed>\n")
