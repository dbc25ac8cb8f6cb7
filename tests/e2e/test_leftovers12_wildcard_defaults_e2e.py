"""A wildcard-DNS domain (every name under wild.test answers, each page
linking five fresh subdomains: tests/web/crawltraps.py) does not swallow a
--scope any crawl at the default domain caps: the crawl ends by itself,
having asked at most --max-hosts-per-domain's default (1000) hosts of the
domain besides the seed's, and its summary names the cap. Only the per-host
budget is lowered (--max-pages 1: each host's first page), so the run asks
about 2,000 requests, not the 1,000,000 pages --max-pages-per-domain's
default would allow."""

from __future__ import annotations

import pytest

from wreck.urlserver.domainbudget import TOO_MANY_HOSTS
from wreck.urlserver.settings import DEFAULT_MAX_HOSTS_PER_DOMAIN

from tests.e2e_helpers import crawl_logged
from tests.web import SiteSpec
from tests.web.crawltraps import WILD_DOMAIN, WILD_SEED

pytestmark = pytest.mark.e2e
SPEC = SiteSpec(hosts=1, pages_per_host=1, hostile=False, crawltraps=True)
CRAWL = ["--scope", "any", "--delay", "0", "--max-pages", "1", "--concurrency", "20", "--linger", "1"]


def test_a_wildcard_domain_stops_at_the_default_host_cap_and_the_crawl_ends(tmp_path):
    run, records, _ = crawl_logged(tmp_path, SPEC, lambda port: [f"http://{WILD_SEED}:{port}/"], CRAWL)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    wild = {r.host for r in records if r.host.endswith(f".{WILD_DOMAIN}")} - {WILD_SEED}
    assert len(wild) == DEFAULT_MAX_HOSTS_PER_DOMAIN, len(wild)  # reached, never passed
    assert TOO_MANY_HOSTS in run.stdout, run.stdout[-3000:]
