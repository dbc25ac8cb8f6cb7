# Which discovered URLs join the frontier. Rules run cheapest first: URL
# length, depth, scope (seed hosts, or their registered domains by the
# Public Suffix List via tldextract's bundled snapshot, never fetched),
# include/exclude regexes, repeated path segments (calendar and session
# traps; empty segments, a path grown by '//', count too), then the per-host
# budget (checked by the frontier, which owns the counts) and the hosts and
# URLs per domain (domainbudget.py). filter_reason() returns None to admit,
# else the reason.
"""Scope and trap rules for discovered URLs."""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

_EXTRACT = None  # tldextract's, made at the first registered_domain() (--scope domain alone needs it)


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


def psl_domain(host: str, *, private: bool = False) -> str | None:
    """The registrable domain of `host` when the Public Suffix List knows its
    suffix (its ICANN section, and its private one if `private`); None for an
    IP literal or a name under a suffix it does not know."""
    global _EXTRACT
    if _EXTRACT is None:
        # Imported here: it brings requests and urllib3, and its snapshot takes
        # ~40 ms to load, which a crawl in host or any scope never needs (issue 16).
        import tldextract

        _EXTRACT = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)
    parts = _EXTRACT(host, include_psl_private_domains=private)
    return f"{parts.domain}.{parts.suffix}" if parts.suffix and parts.domain else None


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
                 max_url_len: int, max_path_repeats: int) -> None:
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
        return None

    @property
    def url_rules(self) -> bool:
        """url_reason() may refuse a URL that is short enough and has at most 5 slashes."""
        return bool(self.include or self.exclude)


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
