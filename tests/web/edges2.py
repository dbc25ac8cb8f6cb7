# The edges of the web, second round, served when SiteSpec.edges2 is set:
# what real servers and pages do that edges.py does not cover. Each host sits
# on its own 127.66.10.x address. Every path a correct crawler requests is in
# Edges2Host.expected(); every path it must never request in forbidden();
# paths a crawler may or may not ask (a choice WRECK documents) in
# tolerated(); anything else gets a 404, so a wrong resolution shows in the
# request log. Each case page links /t/CASE when a browser would show that
# link, so "followed" and "not followed" both show as a request or none.
#
#   odd.wreck.test       allow-all robots.txt; '/' links every case page:
#     /ct/...            Content-Type absent (the MIME Sniffing Standard's HTML
#                        patterns: <title>, <p>, a comment first; a PDF; text),
#                        text/plain holding HTML, application/xhtml+xml,
#                        'text/html charset=utf-8' (no ';'), two types joined
#                        by a comma, ';;' and quotes, upper case, an empty
#                        body, a PNG served as text/html
#     /st/...            300/307/308 with a Location (followed), 305 Use Proxy
#                        (its Location is a proxy, never a page), a 301 to
#                        itself, a Location with a fragment, Locations to ftp:,
#                        file:, javascript:, data:, mailto:, 204, an unasked
#                        304, 401 with WWW-Authenticate, 451, 300 Set-Cookie
#                        headers, obs-folded headers (Location, Content-Type
#                        and another), a body cut mid-chunk,
#                        a header line without a colon, 'Content-Type :', a
#                        chunked body with a trailer, a CRLF before the status
#                        line, two Location headers
#     /u/...             IPv4 number forms (hex, one integer, octal, a short
#                        form) naming this host's address; entities in hrefs
#                        (&amp;, &#x2F;, the legacy '&copy=' left alone in an
#                        attribute); 'http:/path'; an upper-case scheme; '#' and
#                        '?' only; a 100 KB href before an ordinary link; a
#                        port written with leading zeros
#     /h/...             <meta http-equiv=refresh> quoting forms (single,
#                        double, none, a quoted URL with text after it, no
#                        'url=', a javascript: target, a delay alone, a page
#                        refreshing itself in 10 minutes); text
#                        that looks like links but is not (a comment, CDATA,
#                        <script>, <textarea>, <title>, <style>, <xmp>, a
#                        <form action>); <iframe> and <frame>; <link rel=
#                        canonical|next|prev>
#     /blog/             links two posts and its RSS feed (an <a>: a feed by its
#                        Content-Type), which lists a third post too
#   127.66.10.1          odd.wreck.test's address, as its IPv4 number forms resolve
#   robots2-*.wreck.test one robots.txt corner each ('/' links /public/p,
#                        /private/p and the host's own extra paths):
#     agent              rules before any User-agent line; a group of two
#                        User-agent lines, ours 'WRECK/1.0'; a Sitemap line
#                        inside the group (it must not end it); an Allow/
#                        Disallow tie (allow wins);
#                        a '*' group disallowing everything
#     botname            a group for 'wreck-bot' (another crawler's token); a
#                        redirect and a refresh into what robots.txt disallows
#     big                600 KiB, not compressed, the rules at 450 KiB
#     empty              'Disallow:' with no value: allow all
#     typed              the rules served as text/html
#     nolf               CRLF lines, the last rule without its line end
#     home               robots.txt redirected to the home page (an HTML page: no rules)
#     sitemaps           Sitemap: lines naming a text sitemap, an RSS feed (both
#                        sitemaps.org formats), an HTML page of links and, by a
#                        relative URL, another text sitemap (with --sitemaps,
#                        each lists a page '/' does not link)
#     tilde              'Disallow: /%7Ejoe/' and '/a%2db', escapes of unreserved
#                        characters (RFC 9309 2.2.2: compared decoded), while the
#                        pages link /~joe/p, /%7Ejoe/q and /a-b; 'Disallow: /my
#                        folder/' and '/a{b}', characters a URL never holds raw
"""Edges2Host: the second round of edge-case hosts; expected()/forbidden()/tolerated()."""

from __future__ import annotations

import functools
import html

from .spec import DOMAIN
from .wire import Conn, Request, response_head, send_response

HTML = "text/html; charset=utf-8"
ODD = f"odd.{DOMAIN}"
ODD_IP = "127.66.10.1"
ROBOTS2_HOSTS = ("agent", "botname", "big", "empty", "typed", "nolf", "home", "tilde", "sitemaps")
BIG_HREF = 100 * 1024  # an href past the protocol's 8 KiB URL bound, twelve times over
COOKIES = 300  # Set-Cookie headers in one response, about 45 KB in all (under the spider's 64 KiB head bound)
ROBOTS_BIG_BYTES = 600 * 1024  # RFC 9309 2.5: a crawler parses at least 500 KiB
ROBOTS_BIG_RULES_AT = 450 * 1024  # where that robots.txt's only group starts
# robots2-sitemaps' Sitemap: lines, each a kind sitemaps.org allows or a site gets wrong: path -> kind
SITEMAP_FILES = {"/sitemap.txt": "txt", "/sitemap.html": "html", "/feed.rss": "rss", "/relative.txt": "relative"}
# /blog/feed's posts: /blog/ links the first two and the feed (by <a>: found a feed by its type)
BLOG_FEED = ("/blog/post-1", "/blog/post-2", "/blog/post-3")
# IPv4 number forms the URL Standard parses (host parser, "IPv4 parser"), all 127.66.10.1
IPV4_FORMS = {"hex": "0x7f.0x42.0xa.1", "int": "2135034369", "oct": "0177.0102.012.01", "short": "127.4327937"}


def robots2_name(kind: str) -> str:
    return f"robots2-{kind}.{DOMAIN}"


def _page(title: str, body: str, head: str = "") -> bytes:
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8>{head}<title>{title}</title></head>"
            f"<body>{body}</body></html>\n").encode()


def _links(paths) -> str:
    return "".join(f'<a href="{p}">{p}</a> ' for p in paths)


def _a(name: str) -> str:
    return f'<a href="/t/{name}">{name}</a>'


# Content-Type cases: name -> (Content-Type or None, body); each body links /t/ct-NAME
CT_CASES: dict[str, tuple[str | None, bytes]] = {
    "none-doctype": (None, _page("x", _a("ct-none-doctype"))),
    "none-title": (None, f"<title>untyped</title>\n<h2>Notes</h2>{_a('ct-none-title')}".encode()),
    "none-comment": (None, f"<!-- generated by a CMS -->\n<p>Hello {_a('ct-none-comment')}".encode()),
    "none-p": (None, f"\r\n  <p>Hello {_a('ct-none-p')}</p>".encode()),
    "none-text": (None, f"Notes\nThe link {_a('ct-none-text')} is text here.\n".encode()),
    "none-pdf": (None, f"%PDF-1.4\n1 0 obj << /URI ({_a('ct-none-pdf')}) >>\n".encode()),
    "text-plain": ("text/plain; charset=utf-8", _page("x", _a("ct-text-plain"))),
    "xhtml": ("application/xhtml+xml", f'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/'
                                       f'xhtml"><head><title>x</title></head><body>{_a("ct-xhtml")}</body></html>'
                                       .encode()),
    "no-semicolon": ("text/html charset=utf-8", _page("x", _a("ct-no-semicolon"))),
    "comma": ("text/html, text/html", _page("x", _a("ct-comma"))),
    "quoted": ('text/html;;charset="utf-8"', _page("x", _a("ct-quoted"))),
    "upper": ("TEXT/HTML; CHARSET=UTF-8", _page("x", _a("ct-upper"))),
    "empty": (HTML, b""),
    "html-png": (HTML, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8),
}
CT_FOLLOWED = ("none-doctype", "none-title", "none-comment", "none-p", "xhtml", "no-semicolon", "comma", "quoted",
               "upper")
CT_NOT_FOLLOWED = ("none-text", "none-pdf", "text-plain")

# /st/NAME answered with a status and a Location: name -> (status, Location)
REDIRECTS: dict[str, tuple[int, str]] = {
    "300": (300, "/t/st-300"), "307": (307, "/t/st-307"), "308": (308, "/t/st-308"),
    "305": (305, "/t/st-305-proxy"),  # RFC 9110 15.4.6: the Location names a proxy
    "self": (301, "/st/self"), "fragment": (302, "/t/st-fragment#part"),
    "ftp": (302, "ftp://{host}/t/st-ftp"), "file": (302, "file:///t/st-file"),
    "javascript": (302, "javascript:location='/t/st-javascript'"), "data": (302, "data:text/html,x"),
    "mailto": (302, "mailto:webmaster@odd.wreck.test"),
}
# /st/NAME answered with these raw heads (LEN: the body's length), each body linking /t/st-NAME
ODD_HEADS = {
    # a CGI's debug line among the headers (browsers skip a line without a colon)
    "no-colon": b"HTTP/1.1 200 OK\r\nX-Powered-By PHP/5.2 debug\r\nContent-Type: text/html\r\nContent-Length: LEN\r\n"
                b"Connection: close\r\n\r\n",
    "space-colon": b"HTTP/1.1 200 OK\r\nContent-Type : text/html\r\nContent-Length: LEN\r\nConnection: close\r\n\r\n",
    "trailers": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n"
                b"Connection: close\r\n\r\n",
    "leading-crlf": b"\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: LEN\r\nConnection: close\r\n\r\n",
    "fold-location": b"HTTP/1.1 302 Found\r\nLocation:\r\n /t/st-fold-location\r\nContent-Length: 0\r\n"
                     b"Connection: close\r\n\r\n",
    "fold-type": b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n charset=utf-8\r\nContent-Length: LEN\r\n"
                 b"Connection: close\r\n\r\n",
    "two-locations": b"HTTP/1.1 302 Found\r\nLocation: /t/st-two-locations-a\r\nLocation: /t/st-two-locations-b\r\n"
                     b"Content-Length: 0\r\nConnection: close\r\n\r\n",
}
STATUS_PAGES = {"204": 204, "304": 304, "401": 401, "451": 451}

REFRESHES = {  # /h/refresh-NAME: <meta http-equiv=refresh content=...>
    "single": "0; url='/t/refresh-single'", "double": '0;URL="/t/refresh-double"',
    "bare": "0; URL = /t/refresh-bare", "no-url": "0; /t/refresh-no-url",
    "trailing": "0;url='/t/refresh-trailing' (old page)", "javascript": "0;url=javascript:go('/t/refresh-js')",
    "delay-only": "30",
}
NOT_LINKS = ('<!-- <a href="/t/not-comment">old</a> -->'
             '<![CDATA[<a href="/t/not-cdata">]]>'
             "<script>document.write('<a href=\"/t/not-script\">s</a>')</script>"
             '<textarea><a href="/t/not-textarea">t</a></textarea>'
             '<style>a { background: url("/t/not-style") }</style>'
             '<xmp><a href="/t/not-xmp">x</xmp>'
             '<form action="/t/not-form" method="get"><input name="q"></form>'
             '<svg><![CDATA[<a href="/t/not-svg-cdata">]]></svg>'
             '<iframe src="/t/iframe"></iframe>')


class Edges2Host:
    """Request router of the second round's edge hosts."""

    def __init__(self, port: int) -> None:
        self.port = port
        ip = f"http://{{}}:{port}"
        self.html_pages: dict[str, tuple[str, str]] = {  # path -> (head, body)
            **{f"/h/refresh-{k}": (f'<meta http-equiv="refresh" content="{html.escape(v)}">', "moving")
               for k, v in REFRESHES.items()},
            "/h/not-links": ("<title>x <a href=\"/t/not-title\">t</a></title>", NOT_LINKS),
            "/h/link-rels": ('<link rel="canonical" href="/t/canonical"><link rel="next" href="/t/next">'
                             '<link rel="prev" href="/t/prev">', ""),
            "/u/ipv4": ("", _links(ip.format(form) + f"/t/ipv4-{name}" for name, form in IPV4_FORMS.items())),
            "/u/entities": ("", '<a href="/t/ent?a=1&amp;b=2">a</a><a href="&#x2F;t&#x2F;ent-slash">b</a>'
                                '<a href="/t/ent-copy?x=1&copy=2">c</a><a href="/t/ent-not?a=1&notify=2">d</a>'),
            "/u/relative": ("", f'<a href="http:/t/one-slash">a</a><a href="HTTP://ODD.WRECK.TEST:{port}/t/upper-'
                                f'scheme">b</a><a href="#top">c</a><a href="?">d</a><a href="">e</a>'),
            "/u/big-href": ("", f'<a href="/t/big?q={"b" * BIG_HREF}">big</a>{_a("after-big-href")}'),
            "/blog/": ("", _links([*BLOG_FEED[:2], "/blog/feed"])),
            "/u/port-zeros": ("", f'<a href="http://{ODD}:000{port}/t/port-zeros">z</a>'),
            "/h/refresh-self": ('<meta http-equiv="refresh" content="600; url=/h/refresh-self">',
                                _a("refresh-self-link")),
        }
        self.raw = {"/st/fold": self._fold, "/st/cut-chunk": self._cut_chunk, "/h/frameset": self._frameset,
                    **{f"/st/{name}": functools.partial(self._odd_head, name) for name in ODD_HEADS}}

    @staticmethod
    def addresses() -> dict[str, str]:
        names = [ODD, *(robots2_name(k) for k in ROBOTS2_HOSTS)]
        return {name: f"127.66.10.{i + 1}" for i, name in enumerate(names)}

    @staticmethod
    def address_of(host: str) -> str | None:
        """The address serving `host` (a name, or odd.wreck.test's address as an IP host), else None."""
        return ODD_IP if host == ODD_IP else Edges2Host.addresses().get(host)

    @staticmethod
    def seeds(port: int) -> list[str]:
        """The hosts a crawl starts from (odd.wreck.test's address is reached by links)."""
        return [f"http://{name}:{port}/" for name in Edges2Host.addresses()]

    def index_paths(self) -> list[str]:
        return [*(f"/ct/{k}" for k in CT_CASES), *(f"/st/{k}" for k in (*REDIRECTS, *STATUS_PAGES)),
                "/st/cookies", *self.raw, *self.html_pages]

    def expected(self) -> dict[str, set[str]]:
        """Host -> every path + query a correct crawl requests (robots.txt aside)."""
        odd = {"/", *self.index_paths(), *(f"/t/ct-{k}" for k in CT_FOLLOWED),
               "/t/st-300", "/t/st-307", "/t/st-308", "/t/st-fragment", "/t/st-cookies", "/t/st-fold",
               *(f"/t/refresh-{k}" for k in ("single", "double", "bare", "no-url", "trailing")),
               "/t/iframe", "/t/frame", "/t/ent?a=1&b=2", "/t/ent-slash", "/t/ent-copy?x=1&copy=2",
               "/t/ent-not?a=1&notify=2", "/t/one-slash", "/t/upper-scheme", "/t/after-big-href", "/t/port-zeros",
               "/t/refresh-self-link", "/blog/feed", *BLOG_FEED, *(f"/t/st-{name}" for name in ("space-colon", "trailers", "fold-location", "fold-type"))}
        robots = {robots2_name(k): {"/", "/public/p"} for k in ("botname", "big", "typed", "nolf")}
        robots[robots2_name("botname")] |= {"/go/private", "/go/refresh"}
        robots[robots2_name("home")] = {"/", "/public/p", "/private/p"}
        robots[robots2_name("tilde")] = {"/", "/public/p", "/private/p"}
        robots[robots2_name("sitemaps")] = {"/", "/public/p", "/private/p", *SITEMAP_FILES,
                                            *(f"/from-{kind}" for kind in SITEMAP_FILES.values())}
        robots[robots2_name("empty")] = {"/", "/public/p", "/private/p"}
        robots[robots2_name("agent")] = {"/", "/public/p", "/tie/p", "/other/p"}
        return {ODD: odd, ODD_IP: {f"/t/ipv4-{name}" for name in IPV4_FORMS}, **robots}

    def forbidden(self) -> dict[str, set[str]]:
        """Host -> paths a correct crawl never requests."""
        odd = {*(f"/t/ct-{k}" for k in CT_NOT_FOLLOWED), "/t/st-305-proxy", "/t/st-javascript", "/t/refresh-js",
               "/t/not-comment", "/t/not-cdata", "/t/not-script", "/t/not-textarea", "/t/not-style", "/t/not-xmp",
               "/t/not-form", "/t/not-form?q=", "/t/not-svg-cdata", "/t/not-title", "/t/refresh-trailing'%20(old%20page)"}
        return {ODD: odd, **{robots2_name(k): {"/private/p"} for k in ("agent", "botname", "big", "typed", "nolf")},
                robots2_name("tilde"): {"/~joe/p", "/%7Ejoe/q", "/~joe/q", "/a-b", "/a%2Db", "/my%20folder/x",
                                        "/a%7Bb%7D"}}

    def tolerated(self) -> dict[str, set[str]]:
        """Host -> paths served but not judged: the page's own URL with an
        empty query (docs/urls.md keeps the '?'), <link> relations (followed
        since session 11 as Heritrix and Nutch follow them; judged on
        paged.traps.test by tests/e2e/test_leftovers11_link_rels_e2e.py), and the links of
        answers libcurl refuses where a browser shows a page (a body cut
        mid-chunk, a header line without a colon, a CRLF before the status
        line) or a redirect (two Locations)."""
        return {ODD: {"/u/relative?", "/t/canonical", "/t/next", "/t/prev", "/t/st-cut-chunk", "/t/st-leading-crlf",
                      "/t/st-no-colon",
                      "/t/st-two-locations-a", "/t/st-two-locations-b"}}

    @staticmethod
    def asked_twice() -> dict[str, set[str]]:
        """Host -> paths a correct crawl asks twice: robots.txt's redirect
        target, fetched as robots.txt (RFC 9309 2.3.1.2), then as a page."""
        return {robots2_name("home"): {"/"}}

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.host in (ODD, ODD_IP):
            return await self._odd(req, conn)
        if req.host.startswith("robots2-"):
            return await self._robots_host(req, conn, req.host.split(".")[0][8:])
        return await _not_found(req, conn)

    async def _odd(self, req: Request, conn: Conn) -> bool:
        path = req.path
        if path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        if req.host == ODD_IP:  # only the IPv4 number forms' targets are served there
            return await self._landed(req, conn, self.expected()[ODD_IP])
        if path == "/":
            return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                       _page("edges, second round", _links(self.index_paths())))
        if path.startswith("/ct/") and path[4:] in CT_CASES:
            ctype, body = CT_CASES[path[4:]]
            return await send_response(conn, req, 200, [("Content-Type", ctype)] if ctype else [], body)
        if path.startswith("/st/") and path[4:] in REDIRECTS:
            status, location = REDIRECTS[path[4:]]
            location = location.format(host=f"{ODD}:{self.port}")
            return await send_response(conn, req, status, [("Location", location), ("Content-Type", HTML)],
                                       _page("moved", "moved"))
        if path.startswith("/st/") and path[4:] in STATUS_PAGES:
            headers = [("Content-Type", HTML), ("WWW-Authenticate", 'Basic realm="odd"')]
            return await send_response(conn, req, STATUS_PAGES[path[4:]], headers, _page("status", "no entry"))
        if path == "/st/cookies":
            cookies = [("Set-Cookie", f"c{i}={'v' * 120}; Path=/; HttpOnly") for i in range(COOKIES)]
            return await send_response(conn, req, 200, [("Content-Type", HTML), *cookies], _page("c", _a("st-cookies")))
        if path == "/blog/feed":  # its posts, and one the blog page does not link yet
            items = "".join(f"<item><title>{p}</title><link>http://{ODD}:{self.port}{p}</link></item>" for p in BLOG_FEED)
            body = f'<?xml version="1.0"?><rss version="2.0"><channel><title>blog</title>{items}</channel></rss>'
            return await send_response(conn, req, 200, [("Content-Type", "application/rss+xml")], body.encode())
        if path in self.raw:
            return await self.raw[path](req, conn)
        if path in self.html_pages:
            head, body = self.html_pages[path]
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(path, body, head))
        return await self._landed(req, conn, self.expected()[ODD] | self.tolerated()[ODD] | self.forbidden()[ODD])

    async def _landed(self, req: Request, conn: Conn, served: set[str]) -> bool:
        if req.path in served:
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.path, "landed"))
        return await _not_found(req, conn)

    async def _fold(self, req: Request, conn: Conn) -> bool:
        # RFC 9112 5.2: obs-fold, a header value continued on a line that starts with a blank
        body = _page("fold", _a("st-fold"))
        head = (b"HTTP/1.1 200 OK\r\nX-Note: first part\r\n  second part\r\nContent-Type: text/html\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
        conn.status = 200
        await conn.send(head + body)
        return False

    async def _cut_chunk(self, req: Request, conn: Conn) -> bool:
        # a chunk announced as 4 KiB, 200 bytes of it sent, then the connection closed
        head = response_head(200, [("Content-Type", HTML), ("Transfer-Encoding", "chunked"), ("Connection", "close")])
        conn.status = 200
        await conn.send(head + b"1000\r\n" + _page("cut", _a("st-cut-chunk"))[:200])
        return False

    async def _odd_head(self, name: str, req: Request, conn: Conn) -> bool:
        body = _page(name, _a(f"st-{name}"))
        if name == "trailers":
            body = b"%x\r\n%s\r\n0\r\nX-Checksum: abc\r\n\r\n" % (len(body), body)
        head = ODD_HEADS[name].replace(b"LEN", b"%d" % len(body))
        conn.status = 200
        await conn.send(head + body)
        return False

    async def _sitemap_file(self, req: Request, conn: Conn, kind: str) -> bool:
        url = f"http://{req.host}:{self.port}/from-{kind}"
        if kind in ("txt", "relative"):  # sitemaps.org's text format: one URL a line
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], f"{url}\r\n\r\n".encode())
        if kind == "html":  # a page of links named as a sitemap (a common mistake)
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page("site map", _links([url])))
        body = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>news</title><link>{url}</link>'
                f"<item><title>one</title><link>{url}</link></item></channel></rss>").encode()
        return await send_response(conn, req, 200, [("Content-Type", "application/rss+xml")], body)

    async def _frameset(self, req: Request, conn: Conn) -> bool:
        body = b'<!DOCTYPE html><html><frameset cols="*"><frame src="/t/frame"></frameset></html>'
        return await send_response(conn, req, 200, [("Content-Type", HTML)], body)

    async def _robots_host(self, req: Request, conn: Conn, kind: str) -> bool:
        path = req.path
        if path == "/robots.txt" and kind == "home":  # the whole site redirected to its home page, robots.txt too
            return await send_response(conn, req, 301, [("Location", f"http://{req.host}:{self.port}/")])
        if path == "/robots.txt":
            ctype = HTML if kind == "typed" else "text/plain"
            return await send_response(conn, req, 200, [("Content-Type", ctype)], _robots(kind, self.port))
        if path == "/":
            links = ["/public/p", "/private/p", *(("/tie/p", "/other/p") if kind == "agent" else ()),
                     *(("/go/private", "/go/refresh") if kind == "botname" else ()),
                     *(("/~joe/p", "/%7Ejoe/q", "/a-b", "/my folder/x", "/a{b}") if kind == "tilde" else ())]
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.host, _links(links)))
        if kind == "sitemaps" and path in SITEMAP_FILES:
            return await self._sitemap_file(req, conn, SITEMAP_FILES[path])
        if path == "/go/private":  # a redirect into what robots.txt disallows
            return await send_response(conn, req, 302, [("Location", "/private/p")])
        if path == "/go/refresh":
            return await send_response(conn, req, 200, [("Content-Type", HTML)],
                                       _page("r", "", '<meta http-equiv="refresh" content="0; url=/private/p">'))
        served = self.expected().get(req.host, set()) | self.forbidden().get(req.host, set())
        return await self._landed(req, conn, served)


@functools.cache
def _robots(kind: str, port: int) -> bytes:
    if kind == "agent":
        return (f"Disallow: /public/\n\nUser-agent: otherbot\nUser-agent: WRECK/1.0\n"
                f"Sitemap: http://{robots2_name('agent')}:{port}/sitemap.xml\nDisallow: /private/\n"
                f"Allow: /tie/p\nDisallow: /tie/p\n\nUser-agent: *\nDisallow: /\n").encode()
    if kind == "botname":
        return b"User-agent: wreck-bot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n"
    if kind == "typed":  # rules served as text/html: RFC 9309 names no media type
        return b"User-agent: *\nDisallow: /private/\n"
    if kind == "nolf":
        return b"User-agent: *\r\nDisallow: /private/"
    if kind == "sitemaps":
        base = f"http://{robots2_name(kind)}:{port}"
        lines = [f"Sitemap: {'' if kind == 'relative' else base}{path}\n" for path, kind in SITEMAP_FILES.items()]
        return "".join(lines).encode() + b"User-agent: *\nDisallow:\n"
    if kind == "tilde":  # escapes of unreserved characters: RFC 9309 2.2.2 compares them decoded
        return b"User-agent: *\nDisallow: /%7Ejoe/\nDisallow: /a%2db\nDisallow: /my folder/\nDisallow: /a{b}\n"
    if kind == "empty":
        return b"User-agent: *\nDisallow:\n"
    line = b"# " + b"-" * 61 + b"\n"
    before = line * (ROBOTS_BIG_RULES_AT // len(line))
    after = line * ((ROBOTS_BIG_BYTES - ROBOTS_BIG_RULES_AT) // len(line))
    return before + b"User-agent: *\nDisallow: /private/\n" + after


async def _not_found(req: Request, conn: Conn) -> bool:
    return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
