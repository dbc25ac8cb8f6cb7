# wreck-crawl: the whole crawler on one machine in one command. It starts a
# store server, a urlserver and a spider (one worker per CPU) as child
# processes on loopback ports the OS picks, shows progress from the
# urlserver's /status, and when the urlserver reports the crawl done (it runs
# with --exit-when-done) stops the spider and the store and prints a summary.
# A crawl with feeds (--feeds, or 'feed:' seeds) is continuous: the urlserver
# runs without --exit-when-done, refetching feeds until Ctrl-C, unless
# wreck-crawl is given --exit-when-done (one round; the next run refetches
# the feeds that are due).
# With --recrawl likewise: pages keep being revisited until Ctrl-C.
# Ctrl-C or SIGTERM stops the children in a safe order (spider, urlserver,
# store: the store drains last, so every record a spider sent is committed);
# running the command again with the same --data resumes. This module is the
# command line only; run.py runs the crawl.
"""The wreck-crawl command."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from wreck.private import private_dir, private_open
from wreck.seedfile import has_feeds

from .layout import Layout
from .run import run

app = typer.Typer(add_completion=False, help="Crawl from seed URLs with the whole of WRECK on this machine.")


def _urlserver_args(opts: dict, repeatable: dict) -> list[str]:
    args: list[str] = []
    for flag, value in opts.items():
        if value is None or value is False:
            continue
        args += [flag] if value is True else [flag, str(value)]
    for flag, values in repeatable.items():
        for value in values or ():
            args += [flag, value]
    return args


@app.command()
def crawl(
    urls: list[str] = typer.Argument(None, help="Seed URLs."),
    seeds: str = typer.Option(None, "--seeds", help="Seed file, one URL a line ('-': stdin)."),
    data: Path = typer.Option(..., "--data", help="Directory of the crawl (created; run again to resume)."),
    procs: int = typer.Option(os.cpu_count() or 1, "--procs", help="Spider worker processes."),
    concurrency: int = typer.Option(200, "--concurrency", help="Transfers in flight per spider worker."),
    delay: float = typer.Option(None, "--delay", help="Seconds between requests to one host (urlserver default: 1)."),
    ip_delay: float = typer.Option(None, "--ip-delay", help="Seconds between requests to one IP."),
    host_concurrency: int = typer.Option(None, "--host-concurrency", help="Transactions in flight per host (default 1)."),
    ip_concurrency: int = typer.Option(None, "--ip-concurrency", help="Transactions in flight per IP."),
    max_pages: int = typer.Option(None, "--max-pages", help="URLs admitted per host (trap budget)."),
    max_depth: int = typer.Option(None, "--max-depth", help="Link depth from the seeds."),
    scope: str = typer.Option(None, "--scope", help="host | domain | any (default: host)."),
    include: list[str] = typer.Option(None, "--include", help="Only URLs matching REGEX (repeatable)."),
    exclude: list[str] = typer.Option(None, "--exclude", help="No URL matching REGEX (repeatable)."),
    user_agent: str = typer.Option(None, "--user-agent", help="User-Agent, with a contact."),
    dns: str = typer.Option(None, "--dns", help="Nameserver IP:PORT."),
    hosts: str = typer.Option(None, "--hosts", help="Static hosts file (wins over DNS)."),
    allow_net: list[str] = typer.Option(None, "--allow-net", help="Admit this CIDR, e.g. 127.0.0.0/8 (repeatable)."),
    timeout_update: float = typer.Option(None, "--timeout-update", help="Seconds a claim lives without WORKING."),
    timeout_req: float = typer.Option(None, "--timeout-req", help="Seconds one whole transfer may take."),
    max_doc_size: int = typer.Option(None, "--max-doc-size", help="Bytes of body per document."),
    retry_delay: float = typer.Option(None, "--retry-delay", help="Seconds before the first retry of a failed fetch."),
    max_retries: int = typer.Option(None, "--max-retries", help="Tries of a failing URL."),
    robots_retry: float = typer.Option(None, "--robots-retry", help="Seconds before retrying an unreachable robots.txt."),
    plugin: list[str] = typer.Option(None, "--plugin", help="Enable plugin NAME or NAME=ARG (repeatable; urlserver --list-plugins)."),
    url_filter_cmd: str = typer.Option(None, "--url-filter-cmd", help="Filter new URLs through CMD: URL lines in, kept lines out."),
    url_filter_timeout: float = typer.Option(None, "--url-filter-timeout", help="Seconds a batch may take in CMD before it is disabled."),
    stats_interval: float = typer.Option(None, "--stats-interval", help="Seconds between two calls of the plugins' stats hooks."),
    no_dedup: bool = typer.Option(False, "--no-dedup", help="Do not hash pages nor mark duplicates."),
    near_dups: bool = typer.Option(False, "--near-dups", help="Also mark near duplicates (simhash; about doubles the store's CPU per page)."),
    near_dup_distance: int = typer.Option(None, "--near-dup-distance", help="Simhash bits (0-3) within which a page is a near duplicate."),
    feeds: str = typer.Option(None, "--feeds", help="File of feed URLs (RSS, Atom, JSON Feed): refetched until Ctrl-C."),
    feed_min_interval: float = typer.Option(None, "--feed-min-interval", help="Seconds to a feed's next fetch after a new story (default 300)."),
    feed_max_interval: float = typer.Option(None, "--feed-max-interval", help="Longest wait between fetches of a feed (default a week)."),
    feed_backoff: float = typer.Option(None, "--feed-backoff", help="Wait multiplier after a feed fetch with nothing new (default 2)."),
    sitemaps: bool = typer.Option(False, "--sitemaps", help="Crawl what robots.txt Sitemap: lines and /sitemap.xml list."),
    sitemap_max_urls: int = typer.Option(None, "--sitemap-max-urls", help="URLs taken from one sitemap (default 10,000)."),
    sitemaps_per_host: int = typer.Option(None, "--sitemaps-per-host", help="Sitemaps fetched per host (default 50)."),
    sitemap_depth: int = typer.Option(None, "--sitemap-depth", help="Sitemap index nesting followed (default 2)."),
    recrawl: str = typer.Option(None, "--recrawl", help="Fetch pages again after DURATION (30s, 6h, 7d), conditionally; the crawl then runs until stopped."),
    recrawl_min: str = typer.Option(None, "--recrawl-min", help="Shortest recrawl interval (default: the smaller of --recrawl and 1h)."),
    recrawl_max: str = typer.Option(None, "--recrawl-max", help="Longest recrawl interval (default: the larger of --recrawl and 30d)."),
    recrawl_factor: float = typer.Option(None, "--recrawl-factor", help="Interval * this when a page did not change, / this when it did (default 2)."),
    backoff_max: str = typer.Option(None, "--backoff-max", help="Cap of a host's delay, which doubles on each 429/5xx answer (default 600s)."),
    accept_type: list[str] = typer.Option(None, "--accept-type", help="Only these media types (e.g. text/html,application/xhtml+xml); HEAD first for URLs whose extension names another."),
    exit_when_done: bool = typer.Option(False, "--exit-when-done", help="With feeds or --recrawl: stop after one round instead of refetching."),
) -> None:
    """Crawl, show progress, print a summary; Ctrl-C stops, the same command resumes."""
    if not urls and not seeds and not feeds and not Layout(data).started():
        typer.echo("wreck-crawl: give seed URLs, --seeds FILE or --feeds FILE (or --data of a crawl to resume)", err=True)
        raise typer.Exit(2)
    if seeds == "-":  # the urlserver child has no terminal: hand it a file
        private_dir(data)
        copy = Layout(data).seeds_stdin
        with private_open(copy, "w") as fh:
            fh.write(sys.stdin.read())
        seeds = str(copy)
    passthrough = _urlserver_args(
        {"--delay": delay, "--ip-delay": ip_delay, "--host-concurrency": host_concurrency,
         "--ip-concurrency": ip_concurrency, "--max-pages": max_pages, "--max-depth": max_depth,
         "--scope": scope, "--user-agent": user_agent, "--dns": dns, "--hosts": hosts,
         "--timeout-update": timeout_update, "--timeout-req": timeout_req, "--max-doc-size": max_doc_size,
         "--retry-delay": retry_delay, "--max-retries": max_retries, "--robots-retry": robots_retry,
         "--seeds": seeds, "--url-filter-cmd": url_filter_cmd, "--url-filter-timeout": url_filter_timeout,
         "--stats-interval": stats_interval, "--feeds": feeds, "--feed-min-interval": feed_min_interval,
         "--feed-max-interval": feed_max_interval, "--feed-backoff": feed_backoff, "--sitemaps": sitemaps,
         "--sitemap-max-urls": sitemap_max_urls, "--sitemaps-per-host": sitemaps_per_host,
         "--sitemap-depth": sitemap_depth, "--recrawl": recrawl, "--recrawl-min": recrawl_min,
         "--recrawl-max": recrawl_max, "--recrawl-factor": recrawl_factor, "--backoff-max": backoff_max},
        {"--include": include, "--exclude": exclude, "--allow-net": allow_net, "--plugin": plugin,
         "--accept-type": accept_type},
    )  # fmt: skip
    store_args = _urlserver_args({"--near-dup-distance": near_dup_distance, "--no-dedup": no_dedup, "--near-dups": near_dups},
                                 {"--plugin": plugin})
    continuous = not exit_when_done and (feeds is not None or has_feeds(seeds, urls or []) or recrawl is not None)
    raise typer.Exit(run(data, list(urls or []), passthrough, procs, concurrency, store_args, continuous=continuous))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
