# Crawl-level traps, served when SiteSpec.crawltraps is set: sites whose
# URL space has no end in ways the per-host budget alone does not see, or
# sees only late. Each host sits on its own 127.66.10.x address, so per-IP
# politeness never couples them; every robots.txt allows all.
#
#   *.wild.test            wildcard DNS (dns.py answers every name under
#                          wild.test): any path of any host answers 200 with
#                          links to five fresh subdomains (n1.wild.test,
#                          n2...) and two fresh paths of its own, forever
#   facets.traps.test      faceted navigation: '/shop' links to every facet
#                          added to its query, in both orders, a query that
#                          grows by one letter (q=a, q=aa...), and the same
#                          parameter repeated (&r=1&r=1...)
#   dots.traps.test        '/d/' and below: a path that grows by '/./' (the
#                          same URL once normalised) and by '//' (a new one
#                          each time), and a query that grows by '&r=1'
#   soft404.traps.test     answers 200 for any path, with links to three
#                          fresh paths: a soft 404 with no end
#   redirwalk.traps.test   /go/N answers 302 to /go/N+1: a redirect chain
#                          over ever-new URLs; '/' links /go/0
#   growq.traps.test       a query grown by a repeated parameter, as
#                          calendars and session-appending sites grow it:
#                          '/' links /cal?p=1&s=2 and /cal?a=1; each /cal
#                          page links its own URL with its first group
#                          appended once more (?p=1&s=2&p=1&s=2..., and
#                          ?a=1&a=1...), forever
#   paged.traps.test       not a trap but where pagination traps hide: an
#                          archive of PAGED_PAGES pages, /archive/N, whose
#                          pages link each other only by <link rel=next|prev>
#                          (and rel=canonical to themselves), beside a
#                          stylesheet and an icon (<link rel=stylesheet|icon>,
#                          never pages); '/' links /archive/1 alone
# Every host counts what it serves (TrapHosts.served) so a test can tell
# the crawl stayed within its bounds.
"""TrapHosts: the crawl-level trap hosts and the wildcard domain."""

from __future__ import annotations

import itertools
import urllib.parse

from .wire import Conn, Request, send_response

WILD_DOMAIN = "wild.test"
WILD_SEED = f"www.{WILD_DOMAIN}"
WILD_LINKS = 5  # fresh subdomains linked from each wildcard page
FACETS, DOTS, SOFT404, REDIRWALK, GROWQ, PAGED = (f"{n}.traps.test" for n in ("facets", "dots", "soft404",
                                                                                "redirwalk", "growq", "paged"))
PAGED_PAGES = 6  # the archive's pages: /archive/1 .. /archive/6
FACET_NAMES = ("color", "size", "brand", "price", "rating", "sort")
ADDRESSES = {f"*.{WILD_DOMAIN}": "127.66.10.1", FACETS: "127.66.10.2", DOTS: "127.66.10.3",
             SOFT404: "127.66.10.4", REDIRWALK: "127.66.10.5", GROWQ: "127.66.10.6", PAGED: "127.66.10.7"}
"""Name -> address; '*.wild.test' is a wildcard (dns.py), the others plain names."""


def _page(title: str, links) -> bytes:
    items = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>"
            f"<body><h1>{title}</h1>{items}</body></html>\n").encode()


class TrapHosts:
    """Request router of the trap hosts."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._fresh = itertools.count(1)  # subdomains and soft-404 paths never given before
        self.served: dict[str, int] = {}  # host -> requests answered, robots.txt aside

    @staticmethod
    def addresses() -> dict[str, str]:
        return dict(ADDRESSES)

    @staticmethod
    def ips() -> set[str]:
        return set(ADDRESSES.values())

    def address_of(self, host: str) -> str | None:
        """The address `host` is served on, None if it is none of these hosts."""
        if host.endswith(f".{WILD_DOMAIN}"):
            return ADDRESSES[f"*.{WILD_DOMAIN}"]
        return ADDRESSES.get(host)

    def seeds(self) -> list[str]:
        return [f"http://{name}:{self.port}/" for name in (WILD_SEED, FACETS, DOTS, SOFT404, REDIRWALK, GROWQ, PAGED)]

    async def handle(self, req: Request, conn: Conn) -> bool:
        html = [("Content-Type", "text/html; charset=utf-8")]
        if req.path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        self.served[req.host] = self.served.get(req.host, 0) + 1
        parts = urllib.parse.urlsplit(req.path)
        if req.host.endswith(f".{WILD_DOMAIN}"):
            fresh = [f"http://n{next(self._fresh)}.{WILD_DOMAIN}:{self.port}/" for _ in range(WILD_LINKS)]
            fresh += [f"/w{next(self._fresh)}" for _ in range(2)]
            return await send_response(conn, req, 200, html, _page(req.host, fresh))
        if req.host == FACETS:
            return await send_response(conn, req, 200, html, _page("shop", _facet_links(parts.query)))
        if req.host == DOTS:
            if not parts.path.startswith("/d/"):
                return await send_response(conn, req, 200, html, _page("dots", ["/d/"]))
            more = f"?{parts.query}&r=1" if parts.query else "?r=1"
            links = [f"{parts.path}./", f"{parts.path}/", more]
            return await send_response(conn, req, 200, html, _page("dots", links))
        if req.host == SOFT404:
            fresh = [f"/p{next(self._fresh)}/" for _ in range(3)]
            return await send_response(conn, req, 200, html, _page("Page not found", fresh))
        if req.host == REDIRWALK:
            if parts.path.startswith("/go/") and parts.path[4:].isdigit():
                return await send_response(conn, req, 302, [("Location", f"/go/{int(parts.path[4:]) + 1}")])
            return await send_response(conn, req, 200, html, _page("walk", ["/go/0"]))
        if req.host == GROWQ:
            if parts.path != "/cal":
                return await send_response(conn, req, 200, html, _page("calendar", ["/cal?p=1&s=2", "/cal?a=1"]))
            group = "p=1&s=2" if parts.query.startswith("p=") else "a=1"
            return await send_response(conn, req, 200, html, _page("calendar", [f"/cal?{parts.query}&{group}"]))
        if req.host == PAGED:
            return await self._paged(req, conn, parts.path)
        return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")

    async def _paged(self, req: Request, conn: Conn, path: str) -> bool:
        """paged.traps.test: '/' links the archive's first page; each page
        names its neighbours in <link rel> only."""
        if path == "/":
            return await send_response(conn, req, 200, [("Content-Type", "text/html; charset=utf-8")],
                                       _page("archive", ["/archive/1"]))
        number = path.removeprefix("/archive/")
        if not path.startswith("/archive/") or not number.isdigit() or not 1 <= int(number) <= PAGED_PAGES:
            return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
        n = int(number)
        rels = [f'<link rel="canonical" href="/archive/{n}">', '<link rel="stylesheet" href="/style.css">',
                '<link rel="icon" href="/favicon.ico">', '<link rel="alternate stylesheet" href="/dark.css">']
        rels += [f'<link rel="Prev" href="/archive/{n - 1}">'] if n > 1 else []
        rels += [f'<link rel="next" href="{n + 1}">'] if n < PAGED_PAGES else []
        body = (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>archive {n}</title>{''.join(rels)}</head>"
                f"<body><h1>archive, page {n}</h1><p>older posts: see the next page</p></body></html>\n")
        return await send_response(conn, req, 200, [("Content-Type", "text/html; charset=utf-8")], body.encode())


def _facet_links(query: str) -> list[str]:
    """Every facet not in `query` added to it, at its end and at its start;
    the q= value one letter longer; the r=1 pair once more."""
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    have = {name for name, _ in pairs}
    links = []
    for name in FACET_NAMES:
        if name not in have:
            links.append("/shop?" + urllib.parse.urlencode([*pairs, (name, "1")]))
            links.append("/shop?" + urllib.parse.urlencode([(name, "1"), *pairs]))
    q = dict(pairs).get("q", "")
    links.append("/shop?" + urllib.parse.urlencode([*(p for p in pairs if p[0] != "q"), ("q", q + "a")]))
    links.append("/shop?" + urllib.parse.urlencode([*pairs, ("r", "1")]))
    return links
