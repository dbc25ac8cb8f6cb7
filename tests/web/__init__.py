# The local test web of WRECK: a generated multi-host site, a hostile host,
# an HTTP server and a DNS responder, all on 127.0.0.0/8, plus the truth of
# what a correct crawl of it fetches.  See each module's opening comment.
"""Local test web for WRECK: site model, hostile host, HTTP server, DNS, request log."""

from .dns import DnsQuery, DnsResponder
from .names import hosts_file_text, write_hosts_file
from .reqlog import (RequestLog, RequestRecord, duplicate_requests, gaps_by_host, gaps_by_ip,
                     max_concurrency, read_jsonl, requests_per_host, robots_first)
from .server import RunningWeb, TestWeb, bind_all
from .site import Host, Link, Page, Site, build_site
from .spec import HOSTILE_IP, HOSTILE_NAME, UNRESOLVABLE_NAME, HostileSpec, RevisitSpec, SiteSpec
from .truth import CrawlTruth, compute_truth, normalize

__all__ = [
    "CrawlTruth", "DnsQuery", "DnsResponder", "HOSTILE_IP", "HOSTILE_NAME", "Host",
    "HostileSpec", "Link", "Page", "RequestLog", "RequestRecord", "RevisitSpec", "RunningWeb", "Site",
    "SiteSpec", "TestWeb", "UNRESOLVABLE_NAME", "bind_all", "build_site", "compute_truth",
    "duplicate_requests", "gaps_by_host", "gaps_by_ip", "hosts_file_text", "max_concurrency",
    "normalize", "read_jsonl", "requests_per_host", "robots_first", "write_hosts_file",
]
