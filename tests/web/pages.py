# Rendering of the ordinary hosts' resources to bytes.
#
# Pure functions from the site model (site.py) to (status, headers, body):
# HTML pages, PDFs, redirects, robots.txt and the 404 page.  The server adds
# transport concerns (conditional GET, gzip, keep-alive) on top.

from __future__ import annotations

import dataclasses
import email.utils
import hashlib
import html

from . import robots
from .site import Host, Page


@dataclasses.dataclass(frozen=True)
class Resource:
    """A rendered response before transport concerns."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    etag: str | None = None
    last_modified: float | None = None


def resolve(host: Host, target: str) -> Resource:
    """The response of `host` to a GET of `target` (path + query)."""
    plan = host.robots
    if target == robots.ROBOTS_PATH:
        if plan.status == 200:
            return _cacheable(200, "text/plain; charset=utf-8", plan.text().encode())
        if 300 <= plan.status < 400:
            return _redirect(plan.status, plan.location or "/")
        return _error(plan.status)
    if target == robots.MOVED_ROBOTS_PATH and plan.variant == robots.REDIRECT:
        return _cacheable(200, "text/plain; charset=utf-8", plan.text().encode())
    page = host.pages.get(target)
    if page is None:
        return _error(404)
    if 300 <= page.status < 400:
        return _redirect(page.status, page.location or "/")
    if page.raw_body is not None:
        return _cacheable(page.status, page.content_type, page.raw_body, page.last_modified)
    return _cacheable(page.status, page.content_type, render_html(page), page.last_modified)


def render_html(page: Page) -> bytes:
    """The HTML document of an HTML page."""
    esc = html.escape
    head = [f"<title>{esc(page.title)}</title>", '<meta charset="utf-8">']
    if page.base_href:
        head.append(f'<base href="{esc(page.base_href)}">')
    body = [f'<a name="top"></a><h1>{esc(page.title)}</h1>']
    links = list(page.links)
    for i, para in enumerate(page.paragraphs):
        body.append(f"<p>{esc(para)}</p>")
        if i == 0:
            body.append("<ul>")
            body += [_anchor(link) for link in links]
            body.append("</ul>")
    if not page.paragraphs:
        body += [_anchor(link) for link in links]
    body.append("<p><a>an anchor without href</a></p>")
    return ("<!DOCTYPE html>\n<html><head>" + "".join(head) + "</head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n").encode()


def _anchor(link) -> str:
    rel = ' rel="nofollow"' if link.nofollow else ""
    return f'<li><a href="{html.escape(link.href)}"{rel}>{html.escape(link.text)}</a></li>'


def _cacheable(status: int, ctype: str, body: bytes, modified: float = 1767225600.0) -> Resource:
    etag = 'W/"' + hashlib.sha256(body).hexdigest()[:20] + '"'
    headers = (
        ("Content-Type", ctype),
        ("ETag", etag),
        ("Last-Modified", email.utils.formatdate(modified, usegmt=True)),
    )
    return Resource(status, headers, body, etag, modified)


def _redirect(status: int, location: str) -> Resource:
    body = f'<html><body>Moved to <a href="{html.escape(location)}">here</a></body></html>\n'
    headers = (("Location", location), ("Content-Type", "text/html; charset=utf-8"))
    return Resource(status, headers, body.encode())


def _error(status: int) -> Resource:
    body = (f"<html><head><title>{status}</title></head>"
            f"<body><h1>Error {status}</h1></body></html>\n")
    return Resource(status, (("Content-Type", "text/html; charset=utf-8"),), body.encode())
