# Every urlserver default in one place, with its unit. The command line
# (cli.py) builds one frozen Settings and passes it down explicitly; nothing
# reads options from globals or the environment after that.
"""Settings: the urlserver's configuration, frozen."""

from __future__ import annotations

import dataclasses

from wreck.protocol import limits

DEFAULT_LISTEN = "127.0.0.1:7001"
DEFAULT_HTTP = "127.0.0.1:7080"
DEFAULT_USER_AGENT = "WRECK/0.1 (+https://github.com/wreck-crawler/wreck; crawler@wreck.invalid)"
ROBOTS_TOKEN = "wreck"  # product token matched against User-agent lines (RFC 9309 2.2.1)

# Spider connections: a few worker processes per box, a few boxes; each
# costs a receive buffer of at most one DONE (about 4.5 MB) once in.
DEFAULT_MAX_CONNECTIONS = 256
# Connections still in their handshake: a fleet reconnecting after a
# restart needs a few dozen at once; a peer that opens many and says
# nothing gets "busy" here instead of starving the connection cap.
DEFAULT_MAX_UNAUTHENTICATED = 64
# A handshake is three short lines: seconds to finish it before the
# connection is dropped (silent and slow-loris peers hold no slot longer).
DEFAULT_HANDSHAKE_TIMEOUT = 5.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    """The urlserver's configuration. Times in seconds unless named _ms."""

    data: str
    store: tuple[str, ...] = ("127.0.0.1:7002",)
    listen: str = DEFAULT_LISTEN
    http: str | None = DEFAULT_HTTP
    secret: bytes = b""
    # politeness
    delay: float = 1.0  # between two handouts to one host (Crawl-delay may raise it)
    ip_delay: float = 0.0  # between two handouts to one IP address
    ip_concurrency: int = 4  # transactions in flight per IP address
    host_concurrency: int = 1  # transactions in flight per host
    user_agent: str = DEFAULT_USER_AGENT
    robots_token: str = ROBOTS_TOKEN
    robots_ttl: float = 24 * 3600.0  # RFC 9309 2.4: cache for at most 24 hours
    robots_retry: float = 60.0  # first retry after a 5xx/unreachable robots.txt, doubling
    robots_max_tries: int = 5  # then the host's URLs end as ERROR
    # scope and traps
    scope: str = "host"  # host | domain | any
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int = 1000
    max_url_len: int = 2048
    max_path_repeats: int = 3  # a path segment seen more often than this is a trap
    max_pages: int = 100_000  # per-host budget of URLs admitted to the frontier
    max_redirects: int = 5  # hops of a redirect chain
    # transactions and retries
    timeout_update: float = 30.0  # a claim expires without WORKING/DONE within this
    timeout_req: float = 120.0  # announced whole-transfer bound
    connect_timeout: float = 10.0
    max_doc_size: int = limits.DEFAULT_MAX_DOC_SIZE
    max_expiries: int = 3  # claims of one URL that may expire before it ends as ERROR
    retry_delay: float = 3600.0  # first retry after FETCH_ERROR, doubling (seeds/000)
    max_retries: int = 5  # tries of a URL that keeps failing transiently
    # feeds (seeds/000) and sitemaps
    feed_min_interval: float = 300.0  # next fetch after a fetch that found a new story
    feed_max_interval: float = 7 * 24 * 3600.0  # a feed is fetched at least weekly
    feed_backoff: float = 2.0  # interval multiplier after a fetch that found nothing new
    sitemaps: bool = False  # admit robots.txt Sitemap: lines and /sitemap.xml
    sitemap_max_urls: int = limits.MAX_OUTLINKS  # URLs taken from one sitemap (one DONE's outlinks)
    sitemaps_per_host: int = 50  # sitemaps admitted per host
    sitemap_depth: int = 2  # sitemap index nesting followed
    backoff_max: float = 600.0  # cap of a host's delay after 429/5xx answers (it doubles)
    # recrawl (0: off): first interval after a fetch, adapted within [min, max]
    recrawl: float = 0.0
    recrawl_min: float = 0.0  # 0: the smaller of --recrawl and an hour
    recrawl_max: float = 0.0  # 0: the larger of --recrawl and 30 days
    recrawl_factor: float = 2.0  # unchanged: interval * factor; changed: / factor
    # bandwidth: media types a page may have (empty: any); HEAD first for URLs
    # whose extension names another type
    accept_type: tuple[str, ...] = ()
    # DNS
    dns: str | None = None  # IP:PORT of the nameserver; None: system resolver
    hosts_file: str | None = None
    allow_net: tuple[str, ...] = ()
    dns_timeout: float = 3.0
    dns_tries: int = 3
    dns_min_ttl: float = 60.0
    dns_max_ttl: float = 3600.0
    dns_negative_ttl: float = 300.0
    # plugins (docs/plugins.md)
    plugins: tuple[str, ...] = ()  # NAME or NAME=ARG of each enabled plugin
    url_filter_cmd: str | None = None  # external filter: URL lines in, kept lines out
    url_filter_timeout: float = 10.0  # a batch unanswered this long disables the command
    stats_interval: float = 10.0  # between two calls of the stats hooks
    # server
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_unauthenticated: int = DEFAULT_MAX_UNAUTHENTICATED
    handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    exit_when_done: bool = False
    map_size: int = 64 * 1024**3  # LMDB map (sparse on Linux)
    sync: bool = True  # fsync every commit

