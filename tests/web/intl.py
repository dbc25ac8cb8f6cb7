# intl.wreck.test, served when SiteSpec.intl is set: pages in legacy and
# non-Latin encodings, each linking non-ASCII paths and queries, with every
# target served only at the URL the WHATWG rules give (HTML 13.2.3 decides
# the page's encoding; the URL Standard encodes the path as UTF-8 and the
# query in the page's encoding, UTF-8 for a UTF-16 page). Any other spelling
# gets a 404, so a crawler that decodes a page wrongly requests a URL that
# is not there (the %EF%BF%BD of issue 15) and misses the real one.
#
# The encoded URLs are computed here from the URL Standard's byte sets, not
# with WRECK's code (wreck/urlnorm.py), so the test shares no path with it.
#
#   /                 links every page below (ASCII)
#   /cp1252.html      windows-1252, by the header
#   /latin1.html      ISO-8859-1 (windows-1252), by <meta charset> only
#   /sjis.html        Shift_JIS, by the header (a query byte of 本 is '{')
#   /eucjp.html       EUC-JP, by <meta http-equiv=Content-Type>
#   /gb18030.html     GB18030, by the header
#   /cp1251.html      windows-1251, by <meta charset> only
#   /utf16.html       UTF-16LE with a BOM, no charset anywhere
#   /late-meta.html   windows-1252 bytes, undeclared but for a <meta
#                     charset=iso-8859-5> after 1,024 bytes (ignored)
#   /disagree.html    windows-1251 by the header, the <meta> says UTF-8
#                     (the header wins)
"""IntlHost: the multilingual host; IntlHost.truth(): every URL it serves."""

from __future__ import annotations

import dataclasses
from urllib.parse import quote

from .spec import DOMAIN
from .wire import Conn, Request, send_response

INTL = f"intl.{DOMAIN}"
INTL_IP = "127.66.8.1"
# URL Standard 1.3: the query percent-encode set of a special URL (C0
# controls, space, '"', '#', '<', '>', "'"); bytes above 0x7E always.
_QUERY_SET = frozenset(range(0x20)) | frozenset(b' "#<>\'') | frozenset(range(0x7F, 0x100))


@dataclasses.dataclass(frozen=True)
class IntlPage:
    """A page in `codec`, linking `word.html` and `word.html?q=word`."""

    path: str
    codec: str  # Python codec of its bytes
    header: str  # Content-Type
    meta: str  # markup in <head>
    word: str  # the non-ASCII word of its links
    query_codec: str  # the encoding of its links' queries (the URL Standard's)
    bom: bytes = b""
    padding: int = 0  # bytes of comment before <head> (the late <meta> case)


PAGES = (
    IntlPage("/cp1252.html", "cp1252", "text/html; charset=windows-1252", "", "café", "cp1252"),
    IntlPage("/latin1.html", "cp1252", "text/html", '<meta charset="ISO-8859-1">', "naïve", "cp1252"),
    IntlPage("/sjis.html", "shift_jis", "text/html; charset=Shift_JIS", "", "日本", "shift_jis"),
    IntlPage("/eucjp.html", "euc_jp", "text/html",
             '<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">', "東京", "euc_jp"),
    IntlPage("/gb18030.html", "gb18030", "text/html; charset=GB18030", "", "中文", "gb18030"),
    IntlPage("/cp1251.html", "cp1251", "text/html", '<meta charset="windows-1251">', "дом", "cp1251"),
    IntlPage("/utf16.html", "utf-16-le", "text/html", "", "한국", "utf-8", bom=b"\xff\xfe"),
    IntlPage("/late-meta.html", "cp1252", "text/html", '<meta charset="iso-8859-5">', "zéro", "cp1252",
             padding=1100),
    IntlPage("/disagree.html", "cp1251", "text/html; charset=windows-1251", '<meta charset="utf-8">', "мир",
             "cp1251"),
)


def spec_path(text: str) -> str:
    """A path of letters as the URL Standard writes it: UTF-8, percent-encoded."""
    return quote(text, safe="/.")


def spec_query(text: str, codec: str) -> str:
    """A query as the URL Standard writes it in a document of `codec`."""
    raw = text.encode(codec, "xmlcharrefreplace")
    return "".join(f"%{b:02X}" if b in _QUERY_SET else chr(b) for b in raw)


def targets(page: IntlPage) -> tuple[str, str]:
    """The two URLs (path + query) `page` links, as a correct crawler requests them."""
    path = spec_path(f"/intl/{page.word}.html")
    return path, f"{path}?q={spec_query(page.word, page.query_codec)}"


def render(page: IntlPage) -> bytes:
    """The page's bytes: its links written raw, in the page's encoding."""
    href = f"/intl/{page.word}.html"
    html = ("<!DOCTYPE html>\n" + (f"<!-- {'x' * page.padding} -->" if page.padding else "")
            + f"<html><head>{page.meta}<title>{page.path}</title></head><body>"
            f'<p><a href="{href}">{page.word}</a> <a href="{href}?q={page.word}">?q={page.word}</a></p>'
            "</body></html>\n")
    return page.bom + html.encode(page.codec)


def _plain(title: str, links: list[str] = ()) -> bytes:
    anchors = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>"
            f"<body><ul>{anchors}</ul></body></html>\n").encode()


class IntlHost:
    """Request router of intl.wreck.test: exact targets only, 404 for any other."""

    def __init__(self) -> None:
        self.resources: dict[str, tuple[str, bytes]] = {
            "/": ("text/html; charset=utf-8", _plain("intl", [p.path for p in PAGES])),
        }
        for page in PAGES:
            self.resources[page.path] = (page.header, render(page))
            for target in targets(page):
                self.resources[target] = ("text/html; charset=utf-8", _plain(target))

    @staticmethod
    def addresses() -> dict[str, str]:
        return {INTL: INTL_IP}

    def truth(self) -> set[str]:
        """Every path + query served with a 200: what a correct crawl from '/' stores."""
        return set(self.resources)

    async def handle(self, req: Request, conn: Conn) -> bool:
        if req.path == "/robots.txt":
            return await send_response(conn, req, 200, [("Content-Type", "text/plain")],
                                       b"User-agent: *\nAllow: /\n")
        found = self.resources.get(req.path)
        if found is None:
            return await send_response(conn, req, 404, [("Content-Type", "text/plain")], b"not here\n")
        ctype, body = found
        return await send_response(conn, req, 200, [("Content-Type", ctype)], body)
