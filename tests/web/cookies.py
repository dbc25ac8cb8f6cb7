# Hosts that need a cookie, served when SiteSpec.cookies is set, each on its
# own 127.66.13.x address. Every page of check13 does what many real sites do
# (a PHP or Java front checking that the browser keeps cookies): a request
# without the cookie 'seen=1' gets a 302 back to the same URL that sets it;
# a request with it gets the page. A browser, and WRECK inside one fetch
# (docs/operating.md, "Cookies"), asks again once with the cookie; before
# that, WRECK stored every page as the redirect it was and never saw a link.
#
#   check13.wreck.test     allow-all robots.txt; every page behind the check:
#     /                    Location the same absolute URL; links /in/a, /rel
#                          and every /bad/CASE
#     /in/a                Location the same absolute URL; links /in/b
#     /in/b, /rel          Location relative ('/in/b', 'rel': the same URL)
#     /in/frag, /in/caps   Location the same URL spelt otherwise: '/in/frag#top'
#                          (a fragment), 'HTTP://CHECK13.WRECK.TEST:PORT/in/caps'
#                          (scheme and host in upper case): the same once
#                          normalised (docs/urls.md)
#     /bad/CASE            a cookie RFC 6265 refuses (never sent, so the
#                          redirect is stored and asked once):
#       domain-other       Domain= another site (5.3 step 6: the request host
#                          does not domain-match it)
#       secure             Secure on http (RFC 6265bis 5.6 step 12: only a
#                          secure origin sets it; never sent over http anyway)
#       max-age-0          'seen=1', then 'seen=1; Max-Age=0' (5.3 step 11:
#                          the second removes it)
#       huge               'seen=' with a value past MAX_COOKIE_BYTES alone
#     /big/many            'seen=1' and MANY_COOKIES more: a server answers 400
#                          when the Cookie header passes HEADER_FIELD_LIMIT
#                          (Apache's LimitRequestFieldSize), as real ones do
#     /big/huge-and-small  a cookie past the bound and 'seen=1': the small one
#                          is sent alone
#   shop.cookie13.ltd.uk   ltd.uk is a public suffix (the PSL's ICANN section):
#     /                    'seen=1; Domain=ltd.uk' (5.3 step 5: refused), the
#                          redirect stored, asked once
#   sess13.wreck.test      a request without the cookie JSESSIONID gets a new
#                          session (Set-Cookie) and its id in every link
#                          (';jsessionid=N', '?PHPSESSID=N'): a URL trap for a
#                          crawler that keeps neither cookies nor the URLs'
#                          session ids apart. '/' and each /sN link /s1../s3.
"""CookieHosts: sites that need a cookie; expected()/forbidden()/asked_twice()."""

from __future__ import annotations

from .spec import DOMAIN
from .wire import Conn, Request, send_response

HTML = "text/html; charset=utf-8"
CHECK = f"check13.{DOMAIN}"
SUFFIX = "shop.cookie13.ltd.uk"  # ltd.uk: a public suffix http.cookiejar's own heuristic lets through
SESSION = f"sess13.{DOMAIN}"
SESSION_PAGES = ("/", "/s1", "/s2", "/s3")
COOKIE = "seen=1"
BAD = {  # /bad/CASE -> its Set-Cookie lines
    "domain-other": ["seen=1; Domain=other13.example; Path=/"],
    "secure": ["seen=1; Secure; Path=/"],
    "max-age-0": ["seen=1; Path=/", "seen=1; Path=/; Max-Age=0"],
    "huge": ["seen=1" + "x" * 5000 + "; Path=/"],
}
MANY_COOKIES = 200
HEADER_FIELD_LIMIT = 8190  # Apache httpd's LimitRequestFieldSize default: a longer header line gets a 400
BIG = {
    "many": ["seen=1; Path=/", *(f"n{i:03}={'v' * 40}; Path=/" for i in range(MANY_COOKIES))],
    "huge-and-small": ["big=" + "y" * 5000 + "; Path=/", "seen=1; Path=/"],
}
LOCATION = {"/": "abs", "/in/a": "abs", "/in/b": "/in/b", "/rel": "rel",  # how each page names itself
            "/in/frag": "/in/frag#top", "/in/caps": "caps"}


def _page(title: str, links: list[str]) -> bytes:
    body = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>\n".encode()


class CookieHosts:
    """Request router of the hosts that need a cookie."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sessions = 0  # sess13's sessions handed out so far: each id a new one

    @staticmethod
    def addresses() -> dict[str, str]:
        return {name: f"127.66.13.{i + 1}" for i, name in enumerate((CHECK, SUFFIX, SESSION))}

    @staticmethod
    def address_of(host: str) -> str | None:
        return CookieHosts.addresses().get(host)

    @staticmethod
    def seeds(port: int) -> list[str]:
        return [f"http://{name}:{port}/" for name in CookieHosts.addresses()]

    @staticmethod
    def pages() -> dict[str, list[str]]:
        """Path -> the links of the page a request with the cookie gets."""
        return {"/": ["/in/a", "/rel", "/in/frag", "/in/caps", *(f"/bad/{k}" for k in BAD),
                      *(f"/big/{k}" for k in BIG)],
                "/in/a": ["/in/b"], "/in/b": [], "/rel": [], "/in/frag": [], "/in/caps": [],
                **{f"/big/{k}": [] for k in BIG}}

    @staticmethod
    def refused() -> dict[str, set[str]]:
        """Host -> the paths whose cookie must never be sent: stored as redirects, asked once."""
        return {CHECK: {f"/bad/{k}" for k in BAD}, SUFFIX: {"/"}}

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")
        cookie = req.headers.get("cookie", "")
        if len(cookie) > HEADER_FIELD_LIMIT:
            return await send_response(conn, req, 400, [("Content-Type", "text/plain")], b"Cookie header too large\n")
        has = COOKIE in [c.strip() for c in cookie.split(";")]
        if req.host == SESSION:
            return await self._session(req, conn, cookie)
        if req.host == SUFFIX:
            if req.path != "/":
                return await _not_here(req, conn)
            return await self._check(req, conn, has, ["seen=1; Domain=ltd.uk; Path=/"], "abs", [])
        path = req.path
        if path.startswith("/bad/") and path[5:] in BAD:
            return await self._check(req, conn, has, BAD[path[5:]], "abs", [])
        if path.startswith("/big/") and path[5:] in BIG:
            return await self._check(req, conn, has, BIG[path[5:]], "abs", [])
        if path in LOCATION:
            return await self._check(req, conn, has, [f"{COOKIE}; Path=/"], LOCATION[path], self.pages()[path])
        return await _not_here(req, conn)

    async def _session(self, req: Request, conn: Conn, cookie: str) -> bool:
        path, _, _ = req.path.partition(";")
        if path.partition("?")[0] not in SESSION_PAGES:
            return await _not_here(req, conn)
        headers = [("Content-Type", HTML)]
        if "JSESSIONID=" in cookie:
            links = list(SESSION_PAGES[1:])
        else:
            self.sessions += 1
            n = f"{self.sessions:016X}"
            headers.append(("Set-Cookie", f"JSESSIONID={n}; Path=/; HttpOnly"))
            links = [f"/s1;jsessionid={n}", f"/s2;jsessionid={n}", f"/s3?PHPSESSID={n}"]
        return await send_response(conn, req, 200, headers, _page(path, links))

    async def _check(self, req: Request, conn: Conn, has: bool, set_cookie: list[str], location: str,
                     links: list[str]) -> bool:
        if has:
            return await send_response(conn, req, 200, [("Content-Type", HTML)], _page(req.path, links))
        if location == "abs":
            location = f"http://{req.host}:{self.port}{req.path}"
        elif location == "caps":
            location = f"HTTP://{req.host.upper()}:{self.port}{req.path}"
        elif location == "rel":
            location = req.path.rsplit("/", 1)[1]
        headers = [("Location", location), *(("Set-Cookie", line) for line in set_cookie)]
        return await send_response(conn, req, 302, headers, b"")


async def _not_here(req: Request, conn: Conn) -> bool:
    return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
