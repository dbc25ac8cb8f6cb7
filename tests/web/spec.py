# Settings for the local test web, as frozen dataclasses passed down explicitly.
#
# Every knob that shapes the generated site or the hostile host lives here with
# its unit and the reason for its default.  Nothing reads settings from globals
# or the environment: build a SiteSpec, hand it to TestWeb / build_site.

from __future__ import annotations

import dataclasses
import ipaddress

DOMAIN = "wreck.test"
"""Reserved TLD (RFC 2606): can never collide with a real name."""

FIRST_SITE_IP = ipaddress.IPv4Address("127.0.1.1")
"""Generated hosts live from here up; 127.0.0.1 stays free for other services."""

HOSTILE_IP = "127.66.6.6"
"""The hostile host sits alone on its own address, so its abuse never counts
against the per-IP politeness budget of the ordinary hosts."""

HOSTILE_NAME = f"evil.{DOMAIN}"
UNRESOLVABLE_NAME = f"nowhere.{DOMAIN}"
"""Linked from one page but absent from DNS and the hosts file (NXDOMAIN)."""


@dataclasses.dataclass(frozen=True)
class HostileSpec:
    """Knobs of the hostile host (evil.wreck.test).  Times in seconds."""

    drip_interval: float = 1.0
    """/slow-drip sends one body byte per interval."""
    drip_bytes: int = 3600
    """/slow-drip Content-Length: an hour at the default interval."""
    stall_seconds: float = 3600.0
    """Upper bound on how long /stall-after-headers and /no-answer hold a connection."""
    big_bytes: int = 50 * 1024 * 1024
    """/big announces and streams this many bytes (50 MiB)."""
    big_chunked_cap: int = 1024 * 1024 * 1024
    """/big-chunked stops (cleanly) after this many bytes: 'forever' for a crawler."""
    bomb_inflated_bytes: int = 1024 * 1024 * 1024
    """/gzip-bomb inflates to this (1 GiB); deflate's ~1030:1 ceiling puts ~1 MiB on the wire."""
    huge_headers_bytes: int = 200 * 1024
    """/huge-headers sends this much header data."""
    retry_after: int = 2
    """Retry-After value (seconds) on /status/503 and /status/429."""
    feed_initial_items: int = 3
    """Stories in each feed at start."""
    feed_item_interval: float = 30.0
    """A new story appears in the feeds every interval (tests shorten it)."""
    feed_max_items: int = 20
    """Feeds list only the newest items, like real ones."""
    sitemap_hidden_pages: int = 5
    """Pages /hidden/K listed only by the gzipped child of /sitemap.xml (linked nowhere)."""
    sitemap_bulk_urls: int = 60
    """URLs /bulk/K listed by /sitemap-bulk.xml (robots.txt's Sitemap: line): more
    than a test's --sitemap-max-urls, so the bound shows."""
    sitemap_many: int = 20
    """Child sitemaps /sitemap-many/K.xml (one page /many/K each) the index lists
    after the gzipped one: more than a test's --sitemaps-per-host."""
    reset_after_bytes: int = 1000
    """/reset-mid-body sends this many of its announced 100000 bytes before RST."""
    robots_redirect: str | None = None
    """When set, /robots.txt answers 301 to this URL (e.g. a forbidden address)."""
    sitemap_bomb: bool = False
    """When set, robots.txt's Sitemap: line names /sitemap-bomb.xml.gz (millions of
    tiny elements, tens of KB gzipped: issue 14, finding 5) instead of /sitemap-bulk.xml."""


@dataclasses.dataclass(frozen=True)
class RevisitSpec:
    """Knobs of the revisit hosts.  Times in seconds."""

    ip: str = "127.66.7.1"
    """All revisit hosts share this address (apart from the ordinary and hostile hosts)."""
    static_pages: int = 3
    """/static-N.html pages of news.wreck.test: never change, answer 304 when asked."""
    change_interval: float = 2.0
    """/clock.html on news changes this often."""
    big_bytes: int = 12 * 1024 * 1024
    """/video.mp4: below the default max_doc_size, so only a type filter stops it."""
    static_modified: float = 1767225600.0
    """Last-Modified of news' static pages (2026-01-01)."""
    busy_pages: int = 8
    """/p-N.html pages of busy.wreck.test."""
    busy_429: int = 2
    """The first busy_429 page requests get 429 with Retry-After: retry_after..."""
    busy_5xx: int = 2
    """... the next busy_5xx get 503; later ones are served normally."""
    retry_after: int = 1


@dataclasses.dataclass(frozen=True)
class SiteSpec:
    """Shape of the generated multi-host site.

    The same spec (and port) always yields the same site, byte for byte.
    """

    hosts: int = 7
    """Number of ordinary hosts h0..h{n-1}; 7 shows every robots.txt variant once."""
    pages_per_host: int = 20
    """Generated pages per host, including '/' and one nofollow-only orphan."""
    links_per_page: int = 5
    """Same-host links on each HTML page (besides the fixed extras)."""
    cross_links_per_page: int = 1
    """Links from each HTML page to a random page of another host."""
    seed: int = 2026
    """Seed of every random choice: text, link targets, link spellings."""
    port: int = 0
    """TCP port on every address; 0 lets the OS choose a free one."""
    hosts_per_ip: int = 3
    """Consecutive hosts sharing one address, so per-IP politeness is testable."""
    crawl_delay: float = 0.2
    """Crawl-delay (seconds) of the crawl-delay robots variant: small so tests run fast."""
    robots_variants: tuple[str, ...] | None = None
    """Override of the robots plan: variant names (see robots.VARIANTS), cycled over
    hosts.  None uses every variant in order."""
    copies: bool = False
    """Give every host three pages under /copies/ (linked from '/'): an original,
    a byte-identical copy and a copy with one word changed, for the store's
    duplicate marks (site.copy_pairs lists them)."""
    hostile: bool = True
    """Serve evil.wreck.test too."""
    hostile_spec: HostileSpec = HostileSpec()
    hostile_hosts: int = 1
    """Hostile hosts served when hostile is set: evil.wreck.test, then evil1, evil2, ...
    (all alike, on hostile_ip), so a test can mix many among the ordinary hosts."""
    keepalive_timeout: float = 15.0
    """Idle keep-alive connections are closed after this many seconds."""
    first_ip: str = str(FIRST_SITE_IP)
    """Address of the first hosts; the others count up from it.  Loopback by
    default; the across-hosts test serves the web on a network namespace's own
    address instead, so other namespaces can reach it."""
    hostile_ip: str = HOSTILE_IP
    """Address of the hostile host (never one of the ordinary hosts' addresses)."""
    revisit: RevisitSpec | None = None
    """Serve the recrawl and bandwidth hosts (news, files, ...: revisit.py) too."""
    intl: bool = False
    """Serve intl.wreck.test too: pages in legacy encodings linking non-ASCII URLs (intl.py)."""
    edges: bool = False
    """Serve the edge-case hosts too: edge.wreck.test, robots-*.wreck.test... (edges.py)."""
    edges2: bool = False
    """Serve the second round of edge-case hosts too: odd.wreck.test, robots2-*.wreck.test (edges2.py)."""
    edges3: bool = False
    """Serve the third round of edge-case hosts too: enc3.wreck.test, robots3-*.wreck.test (edges3.py)."""
    edges4: bool = False
    """Serve the fourth round's edge host too: frame4.wreck.test, HTTP framing as raw bytes (edges4.py)."""
    cookies: bool = False
    """Serve the hosts that need a cookie too: check13.wreck.test, shop.cookie13.ltd.uk (cookies.py)."""
    crawltraps: bool = False
    """Serve the crawl-level trap hosts too: *.wild.test (wildcard DNS), facets, dots,
    soft404, redirwalk, growq and paged.traps.test (crawltraps.py)."""

    def __post_init__(self) -> None:
        if min(self.hosts, self.pages_per_host, self.hosts_per_ip, self.hostile_hosts) < 1:
            raise ValueError("hosts, pages_per_host, hosts_per_ip and hostile_hosts must be >= 1")
        if self.hosts > 250 * 250:
            raise ValueError("at most 62500 hosts fit the address plan")
        ipaddress.IPv4Address(self.first_ip)  # ValueError on anything but IPv4
        ipaddress.IPv4Address(self.hostile_ip)
        if self.hostile and self.hostile_ip in {self.host_ip(i) for i in range(self.hosts)}:
            raise ValueError(f"hostile_ip {self.hostile_ip} is also an ordinary host's address")

    def host_name(self, index: int) -> str:
        """Name of ordinary host number `index`."""
        return f"h{index}.{DOMAIN}"

    def hostile_names(self) -> list[str]:
        """Names of the hostile hosts served (none unless hostile is set)."""
        if not self.hostile:
            return []
        return [HOSTILE_NAME] + [f"evil{k}.{DOMAIN}" for k in range(1, self.hostile_hosts)]

    def host_ip(self, index: int) -> str:
        """Address of host `index`: hosts_per_ip consecutive hosts share one."""
        slot = index // self.hosts_per_ip
        third, fourth = divmod(slot, 250)
        return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(self.first_ip)) + third * 256 + fourth))
