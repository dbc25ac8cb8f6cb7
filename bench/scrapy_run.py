# The Scrapy side of bench/crawl.py, run with the bench's own venv
# (bench/.venv-scrapy, which has Scrapy; the project never depends on it):
#   python bench/scrapy_run.py --seeds FILE --hosts FILE --out DIR \
#          --concurrency N --max-seconds S
# A Spider that saves every body to DIR/pages and follows every a[href],
# robots.txt obeyed, no delay, no AutoThrottle. Names resolve from the hosts
# file only (HostsResolver, installed on the reactor): a name not in it fails
# with a DNS error, so no query ever leaves the machine. Prints one JSON
# summary line at the end.
"""Crawl the benchmark web with Scrapy."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time

import scrapy
from scrapy.crawler import CrawlerProcess
from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

HOSTS: dict[str, str] = {}
LOOKUPS = {"hits": 0, "misses": 0}


@implementer(IResolverSimple)
class HostsResolver:
    """Answers from the hosts file alone; never asks a DNS server."""

    def __init__(self, reactor) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler, reactor):
        return cls(reactor)

    def install_on_reactor(self) -> None:
        self.reactor.installResolver(self)

    def getHostByName(self, name: str, timeout=()):
        ip = HOSTS.get(name.lower())
        if ip is None:
            LOOKUPS["misses"] += 1
            return defer.fail(DNSLookupError(f"{name} is not in the bench hosts file"))
        LOOKUPS["hits"] += 1
        return defer.succeed(ip)


class SaveAndFollow(scrapy.Spider):
    name = "bench"

    def __init__(self, seeds: list[str], out: str, **kw) -> None:
        super().__init__(**kw)
        self.start_urls = seeds
        self.out = out
        self.saved = 0

    def parse(self, response):
        name = hashlib.sha1(response.url.encode()).hexdigest()
        with open(os.path.join(self.out, name[:2], name), "wb") as f:
            f.write(response.body)
        self.saved += 1
        if isinstance(response, scrapy.http.TextResponse):
            yield from response.follow_all(css="a::attr(href)", callback=self.parse)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--concurrency", type=int, default=400)
    parser.add_argument("--max-seconds", type=float, default=300)
    opts = parser.parse_args()
    for line in open(opts.hosts):
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#"):
            HOSTS[parts[1].lower()] = parts[0]
    seeds = [s.strip() for s in open(opts.seeds) if s.strip()]
    pages = os.path.join(opts.out, "pages")
    for i in range(256):
        os.makedirs(os.path.join(pages, f"{i:02x}"), exist_ok=True)
    settings = {
        "ROBOTSTXT_OBEY": True,
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": opts.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": opts.concurrency,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "TWISTED_DNS_RESOLVER": "__main__.HostsResolver",
        "DNS_RESOLVER": "__main__.HostsResolver",
        "CLOSESPIDER_TIMEOUT": opts.max_seconds,
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": 10,
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "USER_AGENT": "scrapy-bench (+wreck bench)",
        "REACTOR_THREADPOOL_MAXSIZE": 4,
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SaveAndFollow)
    started = time.monotonic()
    process.crawl(crawler, seeds=seeds, out=pages)
    process.start()
    elapsed = time.monotonic() - started
    stats = crawler.stats.get_stats()
    print(json.dumps({
        "seconds": round(elapsed, 3), "saved": crawler.spider.saved,
        "responses": stats.get("downloader/response_count", 0),
        "status_200": stats.get("downloader/response_status_count/200", 0),
        "robots_forbidden": stats.get("robotstxt/forbidden", 0),
        "finish_reason": stats.get("finish_reason"), "dns": LOOKUPS,
    }), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
