# Which discovered URLs join the frontier. Rules run cheapest first: URL
# length, depth, scope (seed hosts, or their registered domains by the
# Public Suffix List via tldextract's bundled snapshot, never fetched),
# include/exclude regexes, repeated path segments (calendar and session
# traps; empty segments, a path grown by '//', count too), a repeated query
# parameter (a query grown by appending: ?a=1&a=1..., ?p=1&s=2&p=1&s=2...,
# as calendars and session-appending sites grow it), then the per-host
# budget (checked by the frontier, which owns the counts) and the hosts and
# URLs per domain (domainbudget.py). filter_reason() returns None to admit,
# else the reason.
"""Scope and trap rules for discovered URLs."""

from __future__ import annotations

import ipaddress
import operator
import re
from collections import Counter
from functools import lru_cache

from wreck.publicsuffix import psl_domain

# A query parameter's name, in the query with its '?': what follows '?' or
# '&' up to '=' or the next '&' (a '?' inside the query is a character of it).
_PARAM_NAME = re.compile(r"(?:\A\?|&)([^=&]*)")
_AMPERSANDS = operator.methodcaller("count", "&")


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registrable domain of `host`: what one owner holds, by the Public
    Suffix List with its private section (blogspot.com, github.io... count
    as public suffixes, so a.github.io and b.github.io are two domains, as
    browsers' cookie rules and Heritrix's PublicSuffixes have it). An IP
    literal is its own; an unknown suffix takes the PSL's default rule '*'."""
    if host[-1:] == "]" or host[-1:].isdigit():  # no top-level domain is all digits (RFC 3696 2)
        try:
            ipaddress.ip_address(host.strip("[]"))
            return host
        except ValueError:
            pass
    known = psl_domain(host, private=True)
    return known if known is not None else ".".join(host.split(".")[-2:])


def split_host(url: str) -> tuple[str, str]:
    """(origin, host name) of a normalised URL: 'http://a.b:8080', 'a.b'."""
    scheme_end = url.index("://") + 3
    slash = url.find("/", scheme_end)
    origin = url if slash < 0 else url[:slash]
    netloc = origin[scheme_end:]
    if netloc.startswith("["):
        name = netloc[: netloc.index("]") + 1]
    else:
        name = netloc.partition(":")[0]
    return origin, name


class Scope:
    """The admission rules of one crawl."""

    def __init__(self, *, mode: str, seed_hosts: set[str], include=(), exclude=(), max_depth: int,
                 max_url_len: int, max_path_repeats: int, max_query_repeats: int = 3) -> None:
        if mode not in ("host", "domain", "any"):
            raise ValueError(f"scope must be host, domain or any, not {mode!r}")
        self.mode = mode
        self.seed_hosts = set(seed_hosts)
        self.seed_domains = {registered_domain(h) for h in seed_hosts} if mode == "domain" else set()
        self.include = [re.compile(r) for r in include]
        self.exclude = [re.compile(r) for r in exclude]
        self.max_depth = max_depth
        self.max_url_len = max_url_len
        self.max_path_repeats = max_path_repeats
        self.max_query_repeats = max_query_repeats  # 0: no bound

    def add_seed_host(self, host: str) -> None:
        self.seed_hosts.add(host)
        if self.mode == "domain":  # only that scope reads them
            self.seed_domains.add(registered_domain(host))

    def filter_reason(self, url: str, host: str, depth: int) -> str | None:
        """None if `url` (normalised, on `host`, at `depth`) may be crawled."""
        if len(url) > self.max_url_len:
            return "url too long"
        return self.host_reason(host, depth) or self.url_reason(url)

    def host_reason(self, host: str, depth: int) -> str | None:
        """The rules that depend only on the host and the depth (filter_reason's
        second and third): a page's links share a few hosts, so the frontier
        asks once per host a page (Frontier.discover_links)."""
        if depth > self.max_depth:
            return "too deep"
        if host[-1:] == ".":
            host = host[:-1]  # 'a.example.' is the fully qualified spelling of the name 'a.example' (RFC 1034 3.1)
        if self.mode == "host":
            if host not in self.seed_hosts:
                return "out of scope (host)"
        elif self.mode == "domain" and registered_domain(host) not in self.seed_domains:
            return "out of scope (domain)"
        return None

    def url_reason(self, url: str) -> str | None:
        """The rules on the URL's text after the length (filter_reason's last)."""
        if self.include and not any(r.search(url) for r in self.include):
            return "not included"
        if self.exclude and any(r.search(url) for r in self.exclude):
            return "excluded"
        if self.max_path_repeats and url.count("/") > 5 and _repeats(url) > self.max_path_repeats:
            return "repeated path segments (trap)"
        bound = self.max_query_repeats
        if bound and url.count("&") >= bound and _repeated_param(url, bound):  # a name bound+1 times: bound '&'
            return "repeated query parameter (trap)"
        return None

    def query_trap(self, urls: list[str]) -> bool:
        """Whether url_reason() may refuse one of `urls` (normalised) for a
        repeated query parameter: the frontier's column path then takes the
        page's links one by one. One join and one count of C for a page
        whose links hold fewer than --max-query-repeats '&' in all (most
        pages), a count per link otherwise, its parameter names read only
        for a link with that many '&' itself."""
        bound = self.max_query_repeats
        if not bound or "\n".join(urls).count("&") < bound or max(map(_AMPERSANDS, urls)) < bound:
            return False
        return any(_repeated_param(url, bound) for url in urls if url.count("&") >= bound)

    @property
    def url_rules(self) -> bool:
        """url_reason() may refuse a URL that is short enough, has at most 5 slashes and no
        query parameter repeated past the bound (query_trap)."""
        return bool(self.include or self.exclude)


def _repeated_param(url: str, bound: int) -> bool:
    """Whether some parameter name of `url`'s query (what precedes '=', or
    a whole parameter without one) occurs more than `bound` times."""
    mark = url.find("?")
    if mark < 0:
        return False
    query = url[mark:]
    # A name seen bound+1 times leaves bound duplicates among the names, and so
    # among the query's pieces between '=' and '&' (every name is one of them):
    # most queries stop at this test, three calls of C (1.3 us a link with
    # three '&' where reading every such link's names cost 1.8 us,
    # bench/query_trap_bench.py).
    pieces = query[1:].replace("=", "&").split("&")
    if len(pieces) - len(set(pieces)) < bound:
        return False
    names = _PARAM_NAME.findall(query)
    return len(names) - len(set(names)) >= bound and max(Counter(names).values()) > bound


def _repeats(url: str) -> int:
    """How often the most repeated path segment occurs. An empty one counts
    (a path grown by '//': each a new URL to the crawl, the same page to
    most servers), but for the last: '/a/b/' is a directory's usual URL."""
    start = url.find("/", url.index("://") + 3)
    if start < 0:
        return 0
    segments = url[start + 1:].partition("?")[0].split("/")
    if not segments[-1]:
        segments.pop()
    if len(segments) <= 3:
        return 1
    counts: dict[str, int] = {}
    for s in segments:
        counts[s] = counts.get(s, 0) + 1
    return max(counts.values())
