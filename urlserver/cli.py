# `urlserver`: a typer command that builds one frozen Settings, loads the
# seeds, and runs the server (uvloop) until a signal or, with
# --exit-when-done, until nothing is pending or in flight (exit 0).
"""The urlserver command line."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import sys
from typing import Annotated, Optional

import typer

from wreck import deploy
from wreck.protocol import limits
from wreck.plugins import GROUP, STATS, PluginError, describe

from wreck.protocol.settings import is_media_range

from . import seeds
from .recrawl import parse_duration, policy_for
from .settings import (
    DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_HTTP, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_UNAUTHENTICATED,
    DEFAULT_USER_AGENT, Settings,
)  # fmt: skip

app = typer.Typer(add_completion=False)
ROBOTS_TTL_MAX = 24 * 3600.0  # RFC 9309 2.4: rules SHOULD NOT be cached longer
log = logging.getLogger("urlserver")


@app.command()
def run(
    urls: Annotated[Optional[list[str]], typer.Argument(help="Seed URLs")] = None,
    seeds_file: Annotated[Optional[str], typer.Option("--seeds", help="Seed file, or - for stdin ('feed:URL' lines are feeds)")] = None,
    feeds: Annotated[Optional[str], typer.Option("--feeds", help="File of feed URLs (RSS, Atom, JSON Feed), one a line")] = None,
    data: Annotated[str, typer.Option(help="Directory of the crawl's LMDB state")] = ...,
    store: Annotated[list[str], typer.Option(help="Store server HOST:PORT (repeatable)")] = ["127.0.0.1:7002"],
    listen: Annotated[str, typer.Option(help="Spider listener HOST:PORT")] = DEFAULT_LISTEN,
    http: Annotated[str, typer.Option(help="Status HTTP HOST:PORT ('off' to disable)")] = DEFAULT_HTTP,
    secret_file: Annotated[Optional[str], typer.Option(help=f"Shared secret file, first line (else ${deploy.SECRET_ENV})")] = None,
    max_connections: Annotated[int, typer.Option(help="Spider connections at once; more are told 'busy'")] = DEFAULT_MAX_CONNECTIONS,
    max_unauthenticated: Annotated[int, typer.Option(help="Connections still in their handshake at once")] = DEFAULT_MAX_UNAUTHENTICATED,
    handshake_timeout: Annotated[float, typer.Option(help="Seconds a connection has to complete its handshake")] = DEFAULT_HANDSHAKE_TIMEOUT,
    delay: Annotated[float, typer.Option(help="Seconds between requests to one host")] = 1.0,
    ip_delay: Annotated[float, typer.Option(help="Seconds between requests to one IP")] = 0.0,
    ip_concurrency: Annotated[int, typer.Option(help="Transactions in flight per IP")] = 4,
    host_concurrency: Annotated[int, typer.Option(help="Transactions in flight per host")] = 1,
    max_pages: Annotated[int, typer.Option(help="URLs admitted per host (trap budget)")] = 100_000,
    max_depth: Annotated[int, typer.Option(help="Link depth from the seeds")] = 1000,
    max_url_len: Annotated[int, typer.Option(help="Longer URLs are FILTERED, octets")] = 2048,
    scope: Annotated[str, typer.Option(help="host | domain | any")] = "host",
    include: Annotated[Optional[list[str]], typer.Option(help="Only URLs matching REGEX")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="No URL matching REGEX")] = None,
    user_agent: Annotated[str, typer.Option(help="User-Agent with a contact")] = DEFAULT_USER_AGENT,
    dns: Annotated[Optional[str], typer.Option(help="Nameserver IP:PORT")] = None,
    hosts: Annotated[Optional[str], typer.Option(help="Static hosts file (wins over DNS)")] = None,
    allow_net: Annotated[Optional[list[str]], typer.Option(help="Admit this CIDR (repeatable)")] = None,
    dns_timeout: Annotated[float, typer.Option(help="Seconds to wait for one DNS answer")] = 3.0,
    timeout_update: Annotated[float, typer.Option(help="Seconds a claim lives without WORKING")] = 30.0,
    max_expiries: Annotated[int, typer.Option(help="Claims of a URL that may expire before it is ERROR")] = 3,
    timeout_req: Annotated[float, typer.Option(help="Whole-transfer bound, seconds")] = 120.0,
    max_doc_size: Annotated[int, typer.Option(help="Bytes of body per document")] = 16 * 1024 * 1024,
    retry_delay: Annotated[float, typer.Option(help="First retry after FETCH_ERROR, seconds")] = 3600.0,
    max_retries: Annotated[int, typer.Option(help="Tries of a transiently failing URL")] = 5,
    robots_retry: Annotated[float, typer.Option(help="First robots.txt retry, seconds")] = 60.0,
    robots_ttl: Annotated[float, typer.Option(help="Seconds robots.txt rules are cached (RFC 9309: 24 h at most)")] = 86400.0,
    max_redirects: Annotated[int, typer.Option(help="Hops of a redirect chain")] = 5,
    plugin: Annotated[Optional[list[str]], typer.Option(help="Enable plugin NAME or NAME=ARG (repeatable; see --list-plugins)")] = None,
    url_filter_cmd: Annotated[Optional[str], typer.Option(help="Filter new URLs through CMD: URL lines in, kept lines out (docs/plugins.md)")] = None,
    url_filter_timeout: Annotated[float, typer.Option(help="Seconds a batch may take in --url-filter-cmd before it is disabled")] = 10.0,
    stats_interval: Annotated[float, typer.Option(help="Seconds between two calls of the plugins' stats hooks")] = 10.0,
    list_plugins: Annotated[bool, typer.Option("--list-plugins", is_eager=True, callback=lambda v: _list_plugins(v),
                                               help="List installed plugins and exit")] = False,
    feed_min_interval: Annotated[float, typer.Option(help="Seconds to a feed's next fetch after it had a new story")] = 300.0,
    feed_max_interval: Annotated[float, typer.Option(help="Longest wait between two fetches of a feed, seconds")] = 7 * 86400.0,
    feed_backoff: Annotated[float, typer.Option(help="Wait multiplier after a feed fetch with nothing new")] = 2.0,
    sitemaps: Annotated[bool, typer.Option("--sitemaps", help="Crawl what robots.txt Sitemap: lines and /sitemap.xml list")] = False,
    sitemap_max_urls: Annotated[int, typer.Option(help="URLs taken from one sitemap")] = limits.MAX_OUTLINKS,
    sitemaps_per_host: Annotated[int, typer.Option(help="Sitemaps fetched per host")] = 50,
    sitemap_depth: Annotated[int, typer.Option(help="Sitemap index nesting followed")] = 2,
    recrawl: Annotated[Optional[str], typer.Option(help="Fetch pages again after DURATION (30s, 6h, 7d), conditionally; adapts to how often each changes")] = None,
    recrawl_min: Annotated[Optional[str], typer.Option(help="Shortest recrawl interval (default: the smaller of --recrawl and 1h)")] = None,
    recrawl_max: Annotated[Optional[str], typer.Option(help="Longest recrawl interval (default: the larger of --recrawl and 30d)")] = None,
    recrawl_factor: Annotated[float, typer.Option(help="Recrawl interval * this when a page did not change, / this when it did")] = 2.0,
    backoff_max: Annotated[str, typer.Option(help="Cap of a host's delay, which doubles on each 429/5xx answer")] = "600s",
    accept_type: Annotated[Optional[list[str]], typer.Option(help="Only fetch pages of these media types (comma-separated or repeated, e.g. text/html,application/xhtml+xml); other types are aborted at the headers, and URLs whose extension names one get HEAD first")] = None,
    exit_when_done: Annotated[bool, typer.Option(help="Exit 0 when nothing is pending (feeds' and recrawls' future fetches do not count)")] = False,
    no_sync: Annotated[bool, typer.Option(help="Skip fsync on commit (benchmarks only)")] = False,
    verbose: Annotated[bool, typer.Option("-v", help="Log every state change")] = False,
) -> None:
    """Own a crawl: frontier, DNS, robots.txt, politeness; hand URLs to spiders."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    log.setLevel(logging.INFO)
    try:
        text = open(secret_file, encoding="utf-8").read() if secret_file else None
        secret = deploy.secret_from(text, os.environ.get(deploy.SECRET_ENV))
        deploy.check_listen(listen.rpartition(":")[0].strip("[]"), secret)
    except (OSError, deploy.DeployError) as exc:
        typer.echo(f"urlserver: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        durations = {name: parse_duration(text) if text else 0.0 for name, text in
                     (("recrawl", recrawl), ("recrawl_min", recrawl_min), ("recrawl_max", recrawl_max),
                      ("backoff_max", backoff_max))}
    except ValueError as exc:
        typer.echo(f"urlserver: {exc}", err=True)
        raise typer.Exit(2) from None
    types = tuple(t.strip().lower() for item in accept_type or () for t in item.split(",") if t.strip())
    settings = Settings(
        data=data, store=tuple(store), listen=listen, http=None if http == "off" else http,
        secret=secret, max_connections=max_connections, max_unauthenticated=max_unauthenticated,
        handshake_timeout=handshake_timeout, delay=delay, ip_delay=ip_delay, ip_concurrency=ip_concurrency,
        host_concurrency=host_concurrency, max_pages=max_pages, max_depth=max_depth,
        max_url_len=max_url_len, scope=scope, include=tuple(include or ()),
        exclude=tuple(exclude or ()), user_agent=user_agent, dns=dns, hosts_file=hosts,
        allow_net=tuple(allow_net or ()), dns_timeout=dns_timeout, timeout_update=timeout_update,
        max_expiries=max_expiries, timeout_req=timeout_req, max_doc_size=max_doc_size,
        retry_delay=retry_delay, max_retries=max_retries, robots_retry=robots_retry,
        robots_ttl=robots_ttl, max_redirects=max_redirects, exit_when_done=exit_when_done,
        plugins=tuple(plugin or ()), url_filter_cmd=url_filter_cmd,
        url_filter_timeout=url_filter_timeout, stats_interval=stats_interval,
        feed_min_interval=feed_min_interval, feed_max_interval=feed_max_interval, feed_backoff=feed_backoff,
        sitemaps=sitemaps, sitemap_max_urls=sitemap_max_urls, sitemaps_per_host=sitemaps_per_host,
        sitemap_depth=sitemap_depth,
        sync=not no_sync, recrawl_factor=recrawl_factor, accept_type=types, **durations,
    )  # fmt: skip
    problem = check(settings)
    if problem:
        typer.echo(f"urlserver: {problem}", err=True)
        raise typer.Exit(2)
    import uvloop

    from .db import StateError

    try:
        code = uvloop.run(serve(settings, seeds_file, urls or [], feeds))
    except KeyboardInterrupt:
        code = 0
    except StateError as exc:  # at start: the state under --data cannot be opened or written
        typer.echo(f"urlserver: cannot open or write the crawl state under {settings.data}: {exc}", err=True)
        code = 1
    raise typer.Exit(code)


def check(s: Settings) -> str | None:
    """Why `s` cannot run a crawl, or None."""
    for cidr in s.allow_net:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            return f"--allow-net {cidr!r} is not a CIDR (e.g. 127.0.0.0/8 or fd00::/8)"
    if s.scope not in ("host", "domain", "any"):
        return "--scope must be host, domain or any"
    if not 0 < s.max_url_len <= limits.MAX_URL_LEN:
        return f"--max-url-len must be 1 to {limits.MAX_URL_LEN} (the protocol's limit)"
    for flag, value in (("--max-connections", s.max_connections), ("--max-unauthenticated", s.max_unauthenticated),
                        ("--handshake-timeout", s.handshake_timeout)):
        if value <= 0:
            return f"{flag} must be above 0"
    if not 0 < s.robots_ttl <= ROBOTS_TTL_MAX:
        return f"--robots-ttl must be above 0 and at most {ROBOTS_TTL_MAX:.0f} s (RFC 9309 2.4)"
    for media in s.accept_type:
        if not is_media_range(media):
            return f"--accept-type: {media!r} is not a media type such as text/html or image/*"
    if len(",".join(s.accept_type)) > limits.MAX_SETTING_VALUE_LEN:
        return f"--accept-type: at most {limits.MAX_SETTING_VALUE_LEN} characters in all (the handshake's limit)"
    if s.recrawl:
        policy = policy_for(s.recrawl, s.recrawl_min, s.recrawl_max, s.recrawl_factor)
        if not 0 < policy.least <= policy.first <= policy.most:
            return "--recrawl-min <= --recrawl <= --recrawl-max must hold"
        if policy.factor < 1:
            return "--recrawl-factor must be at least 1"
    if s.backoff_max <= 0:
        return "--backoff-max must be above 0"
    for flag, value in (("--url-filter-timeout", s.url_filter_timeout), ("--stats-interval", s.stats_interval),
                        ("--host-concurrency", s.host_concurrency), ("--ip-concurrency", s.ip_concurrency),
                        ("--max-expiries", s.max_expiries), ("--dns-timeout", s.dns_timeout),
                        ("--feed-min-interval", s.feed_min_interval), ("--sitemaps-per-host", s.sitemaps_per_host)):
        if value <= 0:
            return f"{flag} must be above 0"
    if s.feed_max_interval < s.feed_min_interval:
        return "--feed-max-interval must be at least --feed-min-interval"
    if s.feed_backoff < 1:
        return "--feed-backoff must be at least 1 (a feed is never polled faster for finding nothing)"
    if not 0 < s.sitemap_max_urls <= limits.MAX_OUTLINKS:
        return f"--sitemap-max-urls must be 1 to {limits.MAX_OUTLINKS} (what one DONE carries)"
    if s.sitemap_depth < 0:
        return "--sitemap-depth must be 0 or more"
    return None


async def serve(settings: Settings, seeds_file: str | None, urls: list[str], feeds: str | None = None) -> int:
    from .crawl import Crawl
    from .http import HttpStatus
    from .http import status as status_of
    from .server import UrlServer

    try:
        crawl = Crawl.open(settings)
    except PluginError as exc:
        print(f"urlserver: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    seeds.load(crawl, seeds_file, urls, log, feeds=feeds)
    server = UrlServer(settings, crawl)
    status = HttpStatus(server)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    address = await server.start()
    print(f"urlserver listening on {address[0]}:{address[1]}", flush=True)
    if settings.http:
        bound = await status.start(settings.http)
        print(f"urlserver status on http://{bound[0]}:{bound[1]}/", flush=True)
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.finished.wait())]
    reporter = asyncio.ensure_future(_report_stats(server, settings.stats_interval))
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for w in (*waiters, reporter):
        w.cancel()
    await server.stop()
    await status.stop()
    if server.broken is not None:
        crawl.abandon()  # the last commit stands; a restart resumes from it
        return 1
    if crawl.plugins.has(STATS):
        crawl.plugins.stats(status_of(server))  # the final figures, even for a crawl shorter than an interval
    crawl.close()
    return 0


async def _report_stats(server, interval: float) -> None:
    """Call the plugins' stats hooks every `interval` seconds."""
    from .http import status as status_of

    plugins = server.crawl.plugins
    while plugins.has(STATS):
        await asyncio.sleep(interval)
        plugins.stats(status_of(server))


def _list_plugins(wanted: bool) -> None:
    if wanted:
        typer.echo(plugins_text())
        raise typer.Exit(0)


def plugins_text() -> str:
    """--list-plugins: every installed plugin, its hooks and what it does."""
    rows = describe()
    if not rows:
        return f"no plugins installed (entry point group {GROUP})"
    return "\n".join(f"{name:<16} {','.join(hooks) or '-':<22} {doc}" for name, doc, hooks in rows)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
