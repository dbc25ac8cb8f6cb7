# The oracle: what a correct crawler does to the generated site, from the model.
#
# A breadth-first walk over Link.target / Page.location values (never parsing
# served HTML), asking each host's RobotsPlan (never parsing served robots.txt),
# so it shares no code path with the server.  Scope is the whole site unless
# scope="host" keeps the crawl on the seeds' hosts.
#
# What "stored" means: a correct crawler stores a document for every page
# request it makes, whatever the status (2xx, the 301 of /moved.html, the 404 of
# /missing.html).  CrawlTruth.fetched maps each of those URLs to its status;
# ok_urls() is the 2xx subset (documents with content).  robots.txt fetches are
# listed apart in robots_fetched: they are requests, not stored documents.

from __future__ import annotations

import dataclasses
import urllib.parse
from collections import deque
from typing import TYPE_CHECKING

from . import robots

if TYPE_CHECKING:
    from .site import Site


@dataclasses.dataclass(frozen=True)
class CrawlTruth:
    """The outcome of a correct crawl of the site from some seeds."""

    fetched: dict[str, int]
    """URL -> HTTP status, for every page request (each is a stored document)."""
    robots_fetched: dict[str, int]
    """robots.txt URLs requested (including a redirect's target) -> status."""
    disallowed: frozenset[str]
    """Discovered URLs that robots.txt forbids: never requested."""
    unresolvable: frozenset[str]
    """Discovered URLs on hosts that do not resolve: never requested."""
    out_of_scope: frozenset[str]
    """Discovered URLs left out by scope='host'."""

    def ok_urls(self) -> set[str]:
        """URLs fetched with a 2xx status."""
        return {url for url, status in self.fetched.items() if 200 <= status < 300}


def normalize(url: str) -> str:
    """Lower-case scheme and host, drop the fragment, keep port, path and query."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.lower()
    path = parts.path or "/"
    return urllib.parse.urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def compute_truth(site: Site, seeds: list[str], *, user_agent_token: str = "wreck",
                  scope: str = "any") -> CrawlTruth:
    """Walk the site from `seeds` as a correct, robots-obeying crawler would.

    Seeds must be URLs of ordinary hosts (the hostile host is endless and out of
    the truth's reach).  `scope` is "any" (whole site) or "host" (seed hosts).
    """
    if scope not in ("any", "host"):
        raise ValueError(f"scope must be 'any' or 'host', not {scope!r}")
    queue = deque(normalize(s) for s in seeds)
    seed_hosts = set()
    for url in queue:
        host = urllib.parse.urlsplit(url).hostname
        if host not in site.hosts:
            raise ValueError(f"seed {url} is not on an ordinary host of the site")
        seed_hosts.add(host)
    fetched: dict[str, int] = {}
    robots_fetched: dict[str, int] = {}
    disallowed, unresolvable, out_of_scope, seen = set(), set(), set(), set(queue)
    while queue:
        url = queue.popleft()
        parts = urllib.parse.urlsplit(url)
        host = site.hosts.get(parts.hostname or "")
        if host is None or parts.port != site.port or parts.scheme != "http":
            unresolvable.add(url)
            continue
        if scope == "host" and host.name not in seed_hosts:
            out_of_scope.add(url)
            continue
        origin = f"http://{host.name}:{site.port}"
        robots_fetched[origin + robots.ROBOTS_PATH] = host.robots.status
        if host.robots.location:
            robots_fetched[origin + host.robots.location] = 200
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        if not host.robots.allows(target, user_agent_token):
            disallowed.add(url)
            continue
        page = host.pages.get(target)
        fetched[url] = page.status if page else 404
        nexts: list[str] = []
        if page and page.is_html:
            nexts = [link.target for link in page.links if link.target and not link.nofollow]
        elif page and page.location:
            nexts = [page.location]
        for nxt in map(normalize, nexts):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return CrawlTruth(fetched, robots_fetched, frozenset(disallowed), frozenset(unresolvable),
                      frozenset(out_of_scope))
