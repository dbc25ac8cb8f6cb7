# Every urlserver setting, declared once: its field below carries the flag,
# help, default, unit and bounds (wreck/options.py), and the urlserver's and
# wreck-crawl's command lines are generated from these fields. A Settings
# checks itself when built (__post_init__), so values typed on a command line
# and values built in code are refused alike, with the flag named. The
# command line builds one frozen Settings and passes it down explicitly;
# nothing reads options from globals or the environment after that.
"""Settings: the urlserver's configuration, frozen and validated."""

from __future__ import annotations

import dataclasses
import ipaddress
import re

from wreck.options import (DAEMONS, FEEDS, INPUT, LIMITS, OUTPUT, POLITENESS, REQUIRED, RETRIES, SCOPE,
                           SettingsError, number_text, parse_size, setting, size_text, validate)
from wreck.protocol import limits
from wreck.protocol.settings import is_media_range
from wreck.protocol.handshake import is_crawl_id, setting_problem

from .partition import MAX_PARTITIONS
from .recrawl import parse_duration, policy_for

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
# connection is dropped (silent and slow-loris peers hold no slot longer):
# one round trip after HELLO plus two HMACs, 3 s covers any WAN.
DEFAULT_HANDSHAKE_TIMEOUT = 3.0
# RFC 9309 2.4: robots.txt rules SHOULD NOT be cached longer than 24 hours.
ROBOTS_TTL_MAX = 24 * 3600.0
# LMDB reserves address space, not disk (sparse on Linux): a frontier of
# tens of millions of URLs fits.
DEFAULT_MAP_SIZE = 64 * 1024**3
SCOPES = ("host", "domain", "any")
# A site's own subdomains rarely pass a few hundred (wikipedia.org: about 700
# names, a language and its mobile site each); a wildcard-DNS trap stops here,
# after as many robots.txt fetches. An owner's domain: a.github.io and
# b.github.io are two (the Public Suffix List's private section, domainbudget.py).
DEFAULT_MAX_HOSTS_PER_DOMAIN = 1000
# Ten hosts' --max-pages: without it, a wildcard domain whose every host
# answers every path (a soft 404) would hold 1000 hosts x 100,000 URLs. A
# domain of one host is bounded by --max-pages alone.
DEFAULT_MAX_PAGES_PER_DOMAIN = 1_000_000
_PRODUCT_TOKEN = re.compile(r"[a-zA-Z_-]+")  # RFC 9309 2.2.1

# --help panels (wreck/options.py PANELS): the server's, the resolver's and
# the plugins' settings under the panels a crawl's reader looks for them in
SERVER, RECRAWL, DNS, PLUGINS = DAEMONS, FEEDS, DAEMONS, OUTPUT


def _cidrs(values: tuple[str, ...]) -> str | None:
    # Strict, as the spiders parse the handshake's allow_net (protocol/settings.py):
    # a CIDR with host bits set would pass here and be refused by every spider.
    for cidr in values:
        try:
            ipaddress.ip_network(cidr)
        except ValueError:
            try:
                meant = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                return f"{cidr!r} is not a CIDR (e.g. 127.0.0.0/8 or fd00::/8)"
            return f"{cidr!r} has host bits set: did you mean {meant}?"
    return None


def _regexes(values: tuple[str, ...]) -> str | None:
    for text in values:
        try:
            re.compile(text)
        except re.error as exc:
            return f"{text!r} is not a regular expression: {exc}"
    return None


def _media_types(text: str) -> tuple[str, ...]:
    """One --accept-type value: comma-separated media types, lowercased."""
    return tuple(t.strip().lower() for t in text.split(",") if t.strip())


def _media_ranges(values: tuple[str, ...]) -> str | None:
    for media in values:
        if not is_media_range(media):
            return f"{media!r} is not a media type such as text/html or image/*"
    if len(",".join(values)) > limits.MAX_SETTING_VALUE_LEN:  # one SET line (docs/protocol.txt 5.1)
        return f"must be at most {limits.MAX_SETTING_VALUE_LEN} characters in all (the handshake's limit)"
    return None


def _addresses(text: str) -> tuple[str, ...]:
    """One --peers value: comma-separated HOST:PORT addresses."""
    return tuple(a.strip() for a in text.split(",") if a.strip())


def _peer_addresses(values: tuple[str, ...]) -> str | None:
    for address in values:
        host, colon, port = address.rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            return f"{address!r} is not HOST:PORT"
    # every partition announces them in one SET line (docs/protocol.txt 5.1)
    return setting_problem(",".join(values)) if values else None


def _nameserver(text: str | None) -> str | None:
    """--dns is an address and a port (dns.py hands them to dnspython as they are)."""
    if text is None:
        return None
    ip, colon, port = text.rpartition(":")
    try:
        ipaddress.ip_address(ip.strip("[]"))
    except ValueError:
        return f"{text!r} is not IP:PORT (a nameserver's address, e.g. 127.0.0.1:53)"
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        return f"{text!r} is not IP:PORT (a nameserver's address, e.g. 127.0.0.1:53)"
    return None


def _crawl_id(text: str | None) -> str | None:
    if text is None or is_crawl_id(text):
        return None
    return "must be 32 lowercase hex digits (e.g. from: openssl rand -hex 16)"


def _regex(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        re.compile(text)
    except re.error as e:
        return f"{text!r} is not a regular expression ({e})"
    return None


def _handshake_value(text: str) -> str | None:
    return setting_problem(text)  # announced in a SET line (docs/protocol.txt 3.1, 5.1)


def _product_token(text: str) -> str | None:
    return None if _PRODUCT_TOKEN.fullmatch(text) else "must be letters, '_' and '-' only (RFC 9309 2.2.1)"


def _http(text: str) -> str | None:
    return None if text == "off" else text


def _duration_text(seconds: float) -> str:
    """Seconds in the largest unit that divides them: 86400 -> '1d', 90 -> '90s'."""
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{number_text(seconds / size)}{unit}"
    return f"{number_text(seconds)}s"


# Every time setting is a duration: 30s, 6h, 7d or plain seconds (urlserver/recrawl.py).
DURATION = dict(parse=parse_duration, show=_duration_text, unit="s", metavar="DURATION")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    """The urlserver's configuration. Times in seconds unless named _ms."""

    data: str = setting(REQUIRED, help="Directory of the crawl's LMDB state", metavar="DIR",
                         panel=INPUT)
    store: tuple[str, ...] = setting(("127.0.0.1:7002",), help="Store server HOST:PORT (repeatable)",
                                     repeatable=True, metavar="HOST:PORT", panel=SERVER)
    store_data: tuple[str, ...] = setting((), help="Each store's --data, in --store order, where the stores run on "
                                          "this box: written to DATA/crawl.json for wreck-dump --manifest",
                                          repeatable=True, metavar="DIR", panel=SERVER)
    listen: str = setting(DEFAULT_LISTEN, help="Spider listener HOST:PORT", metavar="HOST:PORT", panel=SERVER)
    http: str | None = setting(DEFAULT_HTTP, help="Status HTTP HOST:PORT ('off' to disable)", parse=_http,
                               show=lambda v: v or "off", metavar="HOST:PORT", panel=SERVER)
    store_http: str | None = setting(None, help="The store's status HOST:PORT (storeserver --http), read for the "
                                     "dashboard's store figures", default_help="no store figures", metavar="HOST:PORT",
                                     panel=SERVER, per_run=True)
    secret: bytes = b""  # from --secret-file or the environment, never from argv (ps shows argv)
    api_token_file: str | None = setting(None, help="Operator API token (/api, docs/api.md): the file's first line; "
                                                    "default: derived from the shared secret",
                                         metavar="FILE", group=SERVER, per_run=True)
    max_connections: int = setting(DEFAULT_MAX_CONNECTIONS, help="Spider connections at once; more are told 'busy'",
                                   above=0, panel=SERVER)
    max_unauthenticated: int = setting(DEFAULT_MAX_UNAUTHENTICATED, help="Connections still in their handshake at once",
                                       above=0, panel=SERVER)
    handshake_timeout: float = setting(DEFAULT_HANDSHAKE_TIMEOUT, **DURATION,
                                       help="Time a connection has to complete its handshake", above=0, panel=SERVER)
    exit_when_done: bool = setting(False, panel=SERVER, help="Exit 0 when nothing is pending, or nothing is "
                                                             "fetchable within --linger (feeds' and recrawls' future "
                                                             "fetches do not count)")
    map_size: int = setting(DEFAULT_MAP_SIZE, help="LMDB map size (address space, not disk)", parse=parse_size,
                            show=size_text, above=0, metavar="SIZE", panel=SERVER)
    sync: bool = setting(True, help="fsync every commit (--no-sync: benchmarks only)", panel=SERVER)
    # partitions (docs/partitions.md): fixed for a crawl's life, so a host
    # never changes owner; the peers' addresses may change between starts
    partitions: int = setting(1, help="Urlservers sharing this crawl, each owning the hosts whose registrable "
                              "domain hashes to it (docs/partitions.md)", min=1, max=MAX_PARTITIONS,
                              why="the peers' addresses fit one SET line", fixed=True, panel=SERVER)
    partition: int = setting(0, help="This urlserver's partition, 0 to --partitions minus 1", min=0, fixed=True,
                             panel=SERVER)
    peers: tuple[str, ...] = setting((), help="The --partitions urlservers' spider addresses, in partition order, "
                                     "this one's included (comma-separated or repeated)", parse=_addresses,
                                     check=_peer_addresses, repeatable=True, metavar="HOST:PORT", per_run=True,
                                     panel=SERVER)
    crawl_id: str | None = setting(None, help="The crawl's id, 32 hex digits, the same for every partition",
                                   check=_crawl_id, default_help="drawn at the first start", fixed=True,
                                   metavar="HEX", panel=SERVER)
    # politeness
    delay: float = setting(1.0, help="Time between requests to one host (Crawl-delay may raise it)", **DURATION,
                           min=0, panel=POLITENESS)
    # one host's 'Crawl-delay: 100000000' must not hold a crawl for years (Heritrix caps it at 300 s too)
    max_crawl_delay: float = setting(300.0, help="Cap of a robots.txt Crawl-delay (a larger one is read as this)",
                                     **DURATION, min=0, panel=POLITENESS)
    ip_delay: float = setting(0.0, help="Time between requests to one IP address", **DURATION, min=0, panel=POLITENESS)
    ip_concurrency: int = setting(4, help="Transactions in flight per IP address", above=0, panel=POLITENESS)
    host_concurrency: int = setting(1, help="Transactions in flight per host", above=0, panel=POLITENESS)
    host_lookahead: int = setting(16, help="With no --delay or --ip-delay (nor Crawl-delay), URLs of a busy host "
                                  "handed ahead to the spider fetching it, each started as the transfer before "
                                  "it ends, so the next request follows a response at once (0: none)", min=0,
                                  max=1000, why="transactions one spider holds ahead for one host",
                                  panel=POLITENESS)
    user_agent: str = setting(DEFAULT_USER_AGENT, help="User-Agent, with a contact", check=_handshake_value,
                              default_help="WRECK/0.1 with the project's URL and contact", panel=POLITENESS)
    robots_token: str = setting(ROBOTS_TOKEN, help="Product token matched against robots.txt User-agent lines",
                                check=_product_token, panel=POLITENESS)
    robots_ttl: float = setting(ROBOTS_TTL_MAX, help="Time robots.txt rules are cached", **DURATION, above=0,
                                max=ROBOTS_TTL_MAX, why="RFC 9309 2.4", panel=POLITENESS)
    robots_retry: float = setting(60.0, help="First retry of a 5xx or unreachable robots.txt (it doubles)", **DURATION,
                                  above=0, panel=POLITENESS)
    robots_max_tries: int = setting(5, help="Tries of a robots.txt before the host's URLs end as ERROR", unit="tries",
                                    above=0,
                                    panel=POLITENESS)
    backoff_max: float = setting(600.0, help="Cap of a host's delay, which doubles on each 429/5xx answer", above=0,
                                 panel=POLITENESS, **DURATION)
    # scope and traps
    scope: str = setting("host", help="Which links are followed: same host, same registered domain (by the PSL with its private section), any",
                         choices=SCOPES, panel=SCOPE)
    include: tuple[str, ...] = setting((), help="Only URLs matching REGEX (repeatable)", repeatable=True,
                                       check=_regexes, metavar="REGEX", default_help="every URL", panel=SCOPE)
    exclude: tuple[str, ...] = setting((), help="No URL matching REGEX (repeatable)", repeatable=True,
                                       check=_regexes, metavar="REGEX", panel=SCOPE)
    max_depth: int = setting(1000, help="Link depth from the seeds", unit="links", min=0, panel=SCOPE)
    max_url_len: int = setting(2048, help="Longer URLs are FILTERED", unit="octets", min=1, max=limits.MAX_URL_LEN,
                               why="the protocol's limit", panel=SCOPE)
    max_path_repeats: int = setting(3, help="A path segment seen more often is a trap", min=1, panel=SCOPE)
    # 3: a multi-valued field of a form or a facet (?tag=a&tag=b&tag=c) repeats
    # its name a few times; more is a query grown by appending, whose every
    # visit adds a URL (urlserver/scope.py); the same bound as a path segment's
    max_query_repeats: int = setting(3, help="A query parameter name seen more often is a trap (0: no bound)", min=0,
                                     panel=SCOPE)
    max_pages: int = setting(100_000, help="URLs admitted per host (trap budget)", unit="URLs", above=0, panel=SCOPE)
    max_redirects: int = setting(5, help="Hops of a redirect chain", unit="hops", min=0, panel=SCOPE)
    # a wildcard-DNS site answers every name under it and may link to ever-new
    # subdomains: with --scope domain or any, these bound it (urlserver/domainbudget.py,
    # docs/operating.md, Spider traps)
    max_hosts_per_domain: int = setting(DEFAULT_MAX_HOSTS_PER_DOMAIN, help="Hosts (origins) reached by links "
                                        "admitted per registered domain (--scope domain, any; 0: no cap)",
                                        unit="hosts", min=0, panel=SCOPE)
    max_pages_per_domain: int = setting(DEFAULT_MAX_PAGES_PER_DOMAIN, help="URLs admitted in all to one registered "
                                        "domain's hosts reached by links (--scope domain, any; 0: no cap)",
                                        unit="URLs", min=0, panel=SCOPE)
    # transactions and retries
    timeout_update: float = setting(30.0, help="A claim expires without WORKING or DONE within this", **DURATION,
                                    above=0, panel=RETRIES)
    timeout_req: float = setting(120.0, help="Whole-transfer bound announced to spiders", **DURATION, above=0,
                                 panel=RETRIES)
    connect_timeout: float = setting(10.0, help="TCP and TLS connect bound announced to spiders", **DURATION, above=0,
                                     panel=RETRIES)
    max_doc_size: int = setting(limits.DEFAULT_MAX_DOC_SIZE, help="Body per document; larger transfers are aborted",
                                parse=parse_size, show=size_text, metavar="SIZE", min=1, max=limits.MAX_DOC_LEN,
                                why="what a store accepts", panel=RETRIES)
    max_expiries: int = setting(3, help="Claims of a URL that may expire before it ends as ERROR", unit="claims",
                                above=0, panel=RETRIES)
    retry_delay: float = setting(3600.0, help="First retry after FETCH_ERROR (it doubles)", **DURATION, min=0,
                                 panel=RETRIES)
    max_retries: int = setting(5, help="Tries of a URL that keeps failing transiently", unit="tries",
                                 min=0, panel=RETRIES)
    linger: float = setting(60.0, help="A one-shot crawl (--exit-when-done) ends when nothing is fetchable "
                                       "within this; retries due later stay deferred for the next run", **DURATION, min=0,
                            panel=RETRIES)
    # feeds and sitemaps (docs/operating.md, Feeds and sitemaps)
    feed_min_interval: float = setting(300.0, help="A feed's next fetch after a fetch that found a new story",
                                       **DURATION, above=0, panel=FEEDS)
    feed_max_interval: float = setting(7 * 24 * 3600.0, help="Longest wait between two fetches of a feed",
                                       **DURATION, above=0, panel=FEEDS)
    feed_backoff: float = setting(2.0, help="Wait multiplier after a feed fetch that found nothing new", min=1,
                                  why="a feed is never polled faster for finding nothing", panel=FEEDS)
    sitemaps: bool = setting(False, help="Crawl what robots.txt Sitemap: lines and /sitemap.xml list", panel=FEEDS)
    sitemap_max_urls: int = setting(limits.MAX_OUTLINKS, help="URLs taken from one sitemap", unit="URLs", min=1,
                                    max=limits.MAX_OUTLINKS, why="what one DONE carries", panel=FEEDS)
    sitemaps_per_host: int = setting(50, help="Sitemaps fetched per host", above=0, panel=FEEDS)
    sitemap_depth: int = setting(2, help="Sitemap index nesting followed", min=0, panel=FEEDS)
    # recrawl (0: off): first interval after a fetch, adapted within [min, max]
    recrawl: float = setting(0.0, help="Fetch pages again after DURATION (30s, 6h, 7d), conditionally; adapts to how "
                                       "often each changes", min=0, default_help="off", panel=RECRAWL, **DURATION)
    recrawl_min: float = setting(0.0, help="Shortest recrawl interval", min=0, panel=RECRAWL,
                                 default_help="the smaller of --recrawl and 1h", **DURATION)
    recrawl_max: float = setting(0.0, help="Longest recrawl interval", min=0, panel=RECRAWL,
                                 default_help="the larger of --recrawl and 30d", **DURATION)
    recrawl_factor: float = setting(2.0, help="Interval * this when a page did not change, / this when it did",
                                    min=1, panel=RECRAWL)
    # bandwidth: media types a page may have (empty: any); HEAD first for URLs
    # whose extension names another type
    accept_type: tuple[str, ...] = setting(
        (), help="Only fetch pages of these media types (comma-separated or repeated, e.g. "
                 "text/html,application/xhtml+xml); others are aborted at the headers, and URLs whose extension "
                 "names one get HEAD first", parse=_media_types, check=_media_ranges, repeatable=True,
        metavar="TYPES", default_help="any", panel=SCOPE)
    # cookies: the spiders' cookie check inside one fetch, on as in Heritrix and
    # Scrapy (docs/operating.md, Cookies); a plain switch, so --help's Scope
    # panel keeps its width (a --x/--no-x pair widens its option column)
    no_cookies: bool = setting(False, help="Never send a cookie (by default a page whose redirect to itself sets "
                                           "one is asked again once with it, as a browser does)", panel=SCOPE)
    # DNS
    dns: str | None = setting(None, help="Nameserver IP:PORT", default_help="the system resolver",
                              check=_nameserver, metavar="IP:PORT", panel=DNS)
    hosts_file: str | None = setting(None, flag="--hosts", help="Static hosts file (wins over DNS)", metavar="FILE",
                                     panel=DNS)
    allow_net: tuple[str, ...] = setting((), help="Admit this CIDR, e.g. 127.0.0.0/8 (repeatable)", check=_cidrs,
                                         repeatable=True, metavar="CIDR", default_help="public addresses only",
                                         panel=SCOPE)
    dns_timeout: float = setting(3.0, help="Wait for one DNS answer", **DURATION, above=0, panel=DNS)
    dns_tries: int = setting(3, help="DNS queries of a name before it fails", unit="tries", above=0, panel=DNS)
    dns_min_ttl: float = setting(60.0, help="Shortest time a DNS answer is kept", **DURATION, min=0, panel=DNS)
    dns_max_ttl: float = setting(3600.0, help="Longest time a DNS answer is kept", **DURATION, min=0, panel=DNS)
    dns_negative_ttl: float = setting(300.0, help="Time a failed lookup is kept", **DURATION, min=0, panel=DNS)
    # plugins (docs/plugins.md)
    plugins: tuple[str, ...] = setting((), flag="--plugin", help="Enable plugin NAME or NAME=ARG (repeatable; see "
                                       "--list-plugins)", repeatable=True, metavar="NAME[=ARG]", panel=PLUGINS)
    url_filter_cmd: str | None = setting(None, help="Filter new URLs through CMD: URL lines in, kept lines out "
                                         "(docs/plugins.md)", metavar="CMD", panel=SCOPE)
    url_filter_timeout: float = setting(10.0, help="Time a batch may take in --url-filter-cmd before it is disabled",
                                        **DURATION, above=0, panel=SCOPE)
    stats_interval: float = setting(10.0, help="Time between two calls of the plugins' stats hooks", **DURATION,
                                    above=0, panel=PLUGINS)
    # global limits (0: none); reaching one stops the handouts, lets the
    # transactions in flight end, and finishes with it as the reason. They
    # belong to a run (per_run): a resume with a higher limit continues
    # without --reconfigure.
    max_total_pages: int = setting(0, help="End the crawl once this many pages are fetched in all (not per host: "
                                           "--max-pages)", unit="pages", min=0, default_help="no limit", panel=LIMITS, per_run=True)
    max_time: float = setting(0.0, help="End the crawl after this much wall time (this run's)", **DURATION, min=0,
                              default_help="no limit", panel=LIMITS, per_run=True)
    max_bytes: int = setting(0, help="End the crawl once this many bytes of documents (headers and bodies) are "
                                     "fetched in all", parse=parse_size,
                             show=size_text, metavar="SIZE", min=0, default_help="no limit", panel=LIMITS, per_run=True)
    # retry on request (issue 13): this start puts ERROR and deferred URLs
    # back in the queue (Crawl._retry_on_request); a run's choice, never kept.
    retry_errors: bool = setting(False, help="Queue ERROR and deferred URLs (retries, robots.txt retries) again now, "
                                 "with their full tries", panel=RETRIES, per_run=True)
    retry_only: str | None = setting(None, flag="--only", help="With --retry-errors: only URLs matching REGEX",
                                     check=_regex, metavar="REGEX", default_help="all", panel=RETRIES, per_run=True)

    def __post_init__(self) -> None:
        """Refuse impossible values: every field's bounds, then the rules
        between fields. SettingsError names the flag to change."""
        validate(self)
        if self.recrawl:
            policy = policy_for(self.recrawl, self.recrawl_min, self.recrawl_max, self.recrawl_factor)
            if not 0 < policy.least <= policy.first <= policy.most:
                raise SettingsError("--recrawl-min", "--recrawl-min <= --recrawl <= --recrawl-max must hold")
        if self.feed_max_interval < self.feed_min_interval:
            raise SettingsError("--feed-max-interval", "--feed-max-interval must be at least --feed-min-interval")
        if self.dns_max_ttl < self.dns_min_ttl:
            raise SettingsError("--dns-max-ttl", "--dns-max-ttl must be at least --dns-min-ttl")
        if self.partition >= self.partitions:
            raise SettingsError("--partition", f"--partition must be below --partitions ({self.partitions})")
        if self.partitions > 1 and len(self.peers) != self.partitions:
            raise SettingsError("--peers", f"--peers must name the {self.partitions} partitions' addresses "
                                           f"in partition order (got {len(self.peers)})")
        if self.partitions > 1 and self.crawl_id is None:
            raise SettingsError("--crawl-id", "--crawl-id must be given to every partition, the same for all: "
                                              "their stores hold one crawl (docs/partitions.md)")
        if self.partitions > 1 and self.exit_when_done:
            raise SettingsError("--exit-when-done", "--exit-when-done cannot end one partition alone: links may "
                                "still come from the others (wreck-crawl ends them together; docs/partitions.md)")
        if self.partitions == 1 and self.peers:
            raise SettingsError("--peers", "--peers names the other partitions: give --partitions too")
        if self.retry_only is not None and not self.retry_errors:
            raise SettingsError("--only", "--only chooses among the URLs of --retry-errors: give both")
