# Command line: run the test web (HTTP + DNS) until SIGINT or SIGTERM.
#
#   python -m tests.web --hosts 7 --pages 20 [--port P] [--log FILE] [--hosts-file FILE]
#                       [--first-ip IP] [--hostile-ip IP] [--dns-ip IP]
#
# Addresses default to loopback (127.x); the --*-ip options serve the web on
# other addresses, which only the across-hosts test uses (inside a network
# namespace it created, on addresses it gave that namespace).
#
# Prints one JSON line once everything listens: port, dns address, hosts file,
# seed URLs, the hostile host's URL, and the log path, so scripts (make demo,
# benchmarks) can read it and point a crawler at the site; then, on stderr
# (stdout stays that one line), the wreck-crawl command a newcomer pastes to
# crawl it (crawlhint.py; README.md, Quickstart).

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

from .crawlhint import hint, seeds_of
from .dns import LISTEN_IP as DNS_LISTEN_IP
from .names import write_hosts_file
from .server import TestWeb
from .spec import HOSTILE_IP, HOSTILE_NAME, HostileSpec, RevisitSpec, SiteSpec


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.web",
        description="Run WRECK's local test web (HTTP + DNS, on 127.0.0.0/8 unless told) until SIGINT/SIGTERM.")
    parser.add_argument("--hosts", type=int, default=7, help="ordinary hosts (default 7)")
    parser.add_argument("--pages", type=int, default=20, help="pages per host (default 20)")
    parser.add_argument("--links", type=int, default=5, help="same-host links per page")
    parser.add_argument("--hosts-per-ip", type=int, default=3, help="hosts sharing an address")
    parser.add_argument("--seed", type=int, default=2026, help="generation seed")
    parser.add_argument("--port", type=int, default=0, help="port on every address (0: any)")
    parser.add_argument("--crawl-delay", type=float, default=0.2, help="seconds, robots variant")
    parser.add_argument("--feed-interval", type=float, default=30.0, help="seconds per new story")
    parser.add_argument("--dns-ttl", type=int, default=60, help="TTL of DNS answers, seconds")
    parser.add_argument("--no-hostile", action="store_true", help=f"do not serve {HOSTILE_NAME}")
    parser.add_argument("--revisit", action="store_true",
                        help="also serve the recrawl/bandwidth hosts (news, files, nohead, busy, ...: tests/web/revisit.py)")
    parser.add_argument("--edges", action="store_true",
                        help="also serve the edge-case hosts (edge, robots-*, ...: tests/web/edges.py)")
    parser.add_argument("--edges2", action="store_true",
                        help="also serve the second round of edge-case hosts (odd, robots2-*: tests/web/edges2.py)")
    parser.add_argument("--edges3", action="store_true",
                        help="also serve the third round of edge-case hosts (enc3, robots3-*: tests/web/edges3.py)")
    parser.add_argument("--edges4", action="store_true",
                        help="also serve the fourth round's edge host (frame4: HTTP framing: tests/web/edges4.py)")
    parser.add_argument("--cookies", action="store_true",
                        help="also serve the hosts that need a cookie (check13, shop.cookie13.ltd.uk: tests/web/cookies.py)")
    parser.add_argument("--crawltraps", action="store_true",
                        help="also serve the crawl-level traps (*.wild.test by wildcard DNS, facets, dots, soft404, "
                             "redirwalk: tests/web/crawltraps.py); crawl them with --dns, not --hosts alone")
    parser.add_argument("--first-ip", default=SiteSpec.first_ip,
                        help="address of the first hosts; the others count up (default %(default)s)")
    parser.add_argument("--hostile-ip", default=HOSTILE_IP,
                        help=f"address of {HOSTILE_NAME} (default %(default)s)")
    parser.add_argument("--dns-ip", default=DNS_LISTEN_IP,
                        help="address of the DNS responder (default %(default)s)")
    parser.add_argument("--log", type=Path, help="append request records as JSON lines here")
    parser.add_argument("--hosts-file", type=Path, help="write /etc/hosts-style names here")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    spec = SiteSpec(hosts=args.hosts, pages_per_host=args.pages, links_per_page=args.links,
                    hosts_per_ip=args.hosts_per_ip, seed=args.seed, port=args.port,
                    crawl_delay=args.crawl_delay, hostile=not args.no_hostile,
                    hostile_spec=HostileSpec(feed_item_interval=args.feed_interval),
                    first_ip=args.first_ip, hostile_ip=args.hostile_ip,
                    revisit=RevisitSpec() if args.revisit else None, edges=args.edges,
                    edges2=args.edges2, edges3=args.edges3, edges4=args.edges4, cookies=args.cookies,
                    crawltraps=args.crawltraps)
    web = TestWeb(spec, log_path=args.log, dns_ttl=args.dns_ttl, dns_ip=args.dns_ip)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await web.start()
    temp_hosts = None
    try:
        hosts_file = args.hosts_file
        if hosts_file is None:
            fd, name = tempfile.mkstemp(prefix="wreck-hosts-", suffix=".txt")
            os.close(fd)
            hosts_file = temp_hosts = Path(name)
        write_hosts_file(web.site.addresses(), hosts_file)
        dns_ip, dns_port = web.dns.address
        print(json.dumps({
            "port": web.port, "dns": f"{dns_ip}:{dns_port}", "hosts_file": str(hosts_file),
            "seeds": web.site.seed_urls(), "log": str(args.log) if args.log else None,
            "hostile": web.site.url(HOSTILE_NAME) if spec.hostile else None,
            "revisit": [web.site.url(name) for name in web.revisit.addresses()] if web.revisit else [],
            "edges": web.edges.seeds(web.port) if web.edges else [],
            "edges2": web.edges2.seeds(web.port) if web.edges2 else [],
            "edges3": web.edges3.seeds(web.port) if web.edges3 else [],
            "edges4": web.edges4.seeds(web.port) if web.edges4 else [],
            "cookies": web.cookies.seeds(web.port) if web.cookies else [],
            "crawltraps": web.traps.seeds() if web.traps else [],
            "addresses": web.site.addresses(),
        }), flush=True)
        print(hint(seeds_of(web.site.seed_urls()), str(hosts_file), f"{dns_ip}:{dns_port}"), file=sys.stderr, flush=True)
        await stop.wait()
    finally:
        await web.stop()
        if temp_hosts:
            temp_hosts.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    asyncio.run(run(parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
