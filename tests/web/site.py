# The generated site: hosts, their addresses, pages and links, as plain data.
#
# build_site(spec, port) derives everything from a Random seeded per host, so a
# spec and port always give the same site.  Each Link records both how it is
# spelled in the HTML (href: absolute, root-relative, relative, under a <base>,
# with a fragment, odd case) and what a correct crawler makes of it (target:
# the absolute URL without fragment, or None when it must not be followed).
# The truth (truth.py) walks targets; the server renders hrefs (pages.py); a
# test checks that resolving every href gives its target.

from __future__ import annotations

import dataclasses
import importlib
import posixpath
import random
from collections.abc import Mapping

from . import robots
from .truth import compute_truth
from .spec import UNRESOLVABLE_NAME, SiteSpec

WORDS = (
    "crawler frontier politeness robots fetch spider queue host domain page link "
    "archive index feed story river mountain harbour lantern copper meadow signal "
    "orbit garden thunder marble velvet engine paper window silver harvest canyon "
    "quiet rapid ancient modern narrow gentle distant hollow bright steady"
).split()
PARAGRAPHS_PER_PAGE = (3, 8)
"""Enough text that pages weigh a few KB, like real ones."""
WORDS_PER_PARAGRAPH = (40, 120)
PDF_BODY = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
HTML_TYPE = "text/html; charset=utf-8"
MOVED_PATH = "/moved.html"  # 301 to page 1, linked from '/'
MISSING_PATH = "/missing.html"  # 404, linked from '/'
BASE_DIR = "/articles/"  # the <base href> of page 1 points here
COPY_PATHS = ("/copies/original.html", "/copies/exact.html", "/copies/near.html")  # SiteSpec.copies
# The optional host modules whose name -> address table is a class's (SiteSpec's flag, the
# module, the class), imported only when served; crawltraps' table holds '*.wild.test', a
# wildcard the DNS answers (dns.py).
_OPTIONAL_HOSTS = (("intl", "intl", "IntlHost"), ("edges", "edges", "EdgesHost"), ("edges2", "edges2", "Edges2Host"),
                   ("edges3", "edges3", "Edges3Host"), ("edges4", "edges4", "Edges4Host"),
                   ("cookies", "cookies", "CookieHosts"), ("crawltraps", "crawltraps", "TrapHosts"))


@dataclasses.dataclass(frozen=True)
class Link:
    """An <a> element: its spelling in the HTML and its meaning for a crawler."""

    href: str
    target: str | None
    text: str
    nofollow: bool = False


@dataclasses.dataclass(frozen=True)
class Page:
    """One resource of an ordinary host."""

    path: str
    status: int = 200
    content_type: str = HTML_TYPE
    title: str = ""
    paragraphs: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    base_href: str | None = None
    location: str | None = None
    """Absolute redirect target when status is 3xx."""
    raw_body: bytes | None = None
    """Body of non-HTML pages."""
    last_modified: float = 1767225600.0
    """Unix time served as Last-Modified (2026-01-01)."""

    @property
    def is_html(self) -> bool:
        return self.status == 200 and self.content_type.startswith("text/html")


@dataclasses.dataclass(frozen=True)
class Host:
    """An ordinary generated host."""

    index: int
    name: str
    ip: str
    robots: robots.RobotsPlan
    pages: Mapping[str, Page]


@dataclasses.dataclass(frozen=True)
class Site:
    """The whole generated web at one port: ordinary hosts plus the hostile one."""

    spec: SiteSpec
    port: int
    hosts: Mapping[str, Host]

    def url(self, host: str, path: str = "/") -> str:
        """Absolute URL of `path` on `host` (a name) at the site's port."""
        return f"http://{host}:{self.port}{path}"

    def addresses(self) -> dict[str, str]:
        """Every served host name -> IPv4 address (the DNS/hosts-file table)."""
        table = {h.name: h.ip for h in self.hosts.values()}
        table.update(dict.fromkeys(self.spec.hostile_names(), self.spec.hostile_ip))
        if self.spec.revisit is not None:
            from .revisit import RevisitHosts

            table.update(RevisitHosts(self.spec.revisit).addresses())
        for flag, module, name in _OPTIONAL_HOSTS:
            if getattr(self.spec, flag):
                table.update(getattr(importlib.import_module(f".{module}", __package__), name).addresses())
        return table

    def ips(self) -> list[str]:
        """Every address the server must listen on, sorted and unique."""
        return sorted(set(self.addresses().values()))

    def seed_urls(self) -> list[str]:
        """'/' of every ordinary host: the natural seed list."""
        return [self.url(h.name) for h in self.hosts.values()]

    def reachable_allowed(self, seeds: list[str], user_agent_token: str = "wreck") -> set[str]:
        """URLs a correct crawler, crawling from `seeds`, fetches with a 2xx answer.

        A correct crawler stores a document for *every* request it makes (3xx
        and 4xx included; see requested_urls); this is the subset with content.
        robots.txt fetches are in neither.  Details: truth.compute_truth.
        """
        return compute_truth(self, seeds, user_agent_token=user_agent_token).ok_urls()

    def copy_pairs(self) -> list[tuple[str, str, str]]:
        """(original URL, copy URL, 'exact' or 'near') of every host's copies (SiteSpec.copies)."""
        if not self.spec.copies:
            return []
        original, exact, near = COPY_PATHS
        return [pair for h in self.hosts.values()
                for pair in ((self.url(h.name, original), self.url(h.name, exact), "exact"),
                             (self.url(h.name, original), self.url(h.name, near), "near"))]

    def requested_urls(self, seeds: list[str], user_agent_token: str = "wreck") -> set[str]:
        """Every non-robots URL a correct crawler requests: each is a stored document."""
        return set(compute_truth(self, seeds, user_agent_token=user_agent_token).fetched)


def build_site(spec: SiteSpec, port: int) -> Site:
    """Generate the site described by `spec`, with absolute links using `port`."""
    variants = spec.robots_variants or robots.VARIANTS
    hosts = {}
    paths = [_page_paths(spec.pages_per_host) for _ in range(spec.hosts)]
    for index in range(spec.hosts):
        name = spec.host_name(index)
        plan = robots.plan_for(variants[index % len(variants)], crawl_delay=spec.crawl_delay)
        rng = random.Random(f"{spec.seed}:{index}")
        pages = _host_pages(spec, port, index, paths, rng)
        hosts[name] = Host(index, name, spec.host_ip(index), plan, pages)
    return Site(spec, port, hosts)


def _page_paths(count: int) -> list[str]:
    """Paths of a host's pages; the last (when count >= 3) is the nofollow-only orphan."""
    paths = ["/"]
    for k in range(1, count):
        if k % 7 == 3:
            paths.append(f"/private/{'open' if k % 14 == 3 else 'report'}-{k}.html")
        elif k % 9 == 5:
            paths.append(f"/files/paper-{k}.pdf")
        elif k % 4 == 0:
            paths.append(f"/section-{k}/")
        else:
            paths.append(f"/articles/{WORDS[k % len(WORDS)]}-{k}.html")
    return paths


def _host_pages(spec: SiteSpec, port: int, index: int, paths: list[list[str]],
                rng: random.Random) -> dict[str, Page]:
    own = paths[index]
    name = spec.host_name(index)
    origin = f"http://{name}:{port}"
    orphan = own[-1] if len(own) >= 3 else None
    linkable = [p for p in own if p != orphan]
    pages: dict[str, Page] = {}
    for k, path in enumerate(own):
        if path.endswith(".pdf"):
            pages[path] = Page(path, content_type="application/pdf", raw_body=PDF_BODY)
            continue
        base = f"{origin}{BASE_DIR}" if k == 1 else None
        speller = _Speller(rng, origin, base or origin + path)
        links = []
        if k + 1 < len(own) and own[k + 1] != orphan:
            links.append(speller.link(own[k + 1], "next"))
        for _ in range(spec.links_per_page):
            links.append(speller.link(rng.choice(linkable), _words(rng, 2)))
        for _ in range(spec.cross_links_per_page if spec.hosts > 1 else 0):
            other = rng.choice([i for i in range(spec.hosts) if i != index])
            other_paths = paths[other][:-1] if len(paths[other]) >= 3 else paths[other]
            target = f"http://{spec.host_name(other)}:{port}{rng.choice(other_paths)}"
            links.append(Link(target, target, f"elsewhere: {_words(rng, 2)}"))
        nofollow_to = orphan if (k == 0 and orphan) else rng.choice(own)
        links.append(dataclasses.replace(speller.link(nofollow_to, "sponsored"), nofollow=True))
        links += [
            Link(f"mailto:webmaster@{name}", None, "mail us"),
            Link("javascript:void(0)", None, "menu"),
            # a fragment-only href resolves against <base> too (HTML: document base URL)
            Link("#top", base or origin + path, "back to top"),
        ]
        if k == 0:
            links.append(speller.link(MOVED_PATH, "old address"))
            links.append(speller.link(MISSING_PATH, "broken link"))
            if index == 0:
                gone = f"http://{UNRESOLVABLE_NAME}:{port}/"
                links.append(Link(gone, gone, "a host that does not exist"))
        rng.shuffle(links)
        if k == 0 and spec.copies:
            links += [Link(origin + path, origin + path, "a copy") for path in COPY_PATHS]
        title = f"{_words(rng, 3).title()} — {name}"
        text = tuple(_words(rng, rng.randint(*WORDS_PER_PARAGRAPH)).capitalize() + "."
                     for _ in range(rng.randint(*PARAGRAPHS_PER_PAGE)))
        pages[path] = Page(path, title=title, paragraphs=text, links=tuple(links), base_href=base)
    first = own[1] if len(own) > 1 else "/"
    pages[MOVED_PATH] = Page(MOVED_PATH, status=301, location=origin + first)
    if spec.copies:
        pages.update(_copies(random.Random(f"{spec.seed}:{index}:copies"), name))
    return pages


def _copies(rng: random.Random, name: str) -> dict[str, Page]:
    """An original page, an exact copy (the same bytes) and a near copy (one word changed)."""
    original, exact, near = COPY_PATHS
    title = f"{_words(rng, 3).title()} — {name} (copied)"
    text = tuple(_words(rng, 100).capitalize() + "." for _ in range(12))
    words = text[3].split()
    words[40] = "changed" if words[40] != "changed" else "altered"
    edited = (*text[:3], " ".join(words), *text[4:])
    return {original: Page(original, title=title, paragraphs=text),
            exact: Page(exact, title=title, paragraphs=text),
            near: Page(near, title=title, paragraphs=edited)}


class _Speller:
    """Writes a same-host link in one of several equivalent spellings."""

    STYLES = ("absolute", "root", "relative", "fragment", "upper")

    def __init__(self, rng: random.Random, origin: str, base_url: str) -> None:
        self.rng, self.origin = rng, origin
        self.base_dir = posixpath.dirname(base_url[len(origin):]) or "/"

    def link(self, path: str, text: str) -> Link:
        target = self.origin + path
        style = self.rng.choice(self.STYLES)
        if style == "absolute":
            href = target
        elif style == "root":
            href = path
        elif style == "relative":
            href = posixpath.relpath(path, self.base_dir)
            href = "./" if href == "." else href
            if path.endswith("/") and not href.endswith("/"):
                href += "/"
        elif style == "fragment":
            href = f"{path}#section-{self.rng.randint(1, 9)}"
        else:  # scheme and host are case-insensitive; a crawler must normalise them
            href = self.origin.upper() + path
        return Link(href, target, text)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))
