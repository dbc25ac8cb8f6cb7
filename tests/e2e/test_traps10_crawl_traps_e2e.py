"""wreck-crawl end to end on the crawl-level traps (tests/web/crawltraps.py)
among ordinary hosts, with --scope any: a wildcard-DNS domain whose pages
link to ever-new subdomains, faceted navigation, a path growing by '//',
a soft 404 with fresh links, a redirect walk over ever-new URLs. The crawl
is run as a user would, in two runs (the first ended by --max-time, the
second resuming it); what a user notices is checked: the exit code, the
summary, the test web's request log, the pages stored."""

from __future__ import annotations

import collections

import pytest

from wreck.storeserver.store import ReadStore

from tests.e2e_helpers import fetched, wreck_crawl
from tests.web import RunningWeb, SiteSpec, normalize
from tests.web.crawltraps import DOTS, FACETS, REDIRWALK, SOFT404, WILD_DOMAIN, WILD_SEED, TrapHosts

pytestmark = pytest.mark.e2e
SPEC = SiteSpec(hosts=3, pages_per_host=12, hostile=False, crawltraps=True)
MAX_PAGES = 40  # the per-host budget of this crawl (--max-pages), small so the traps reach it
MAX_HOSTS = 12  # --max-hosts-per-domain, small so the wildcard domain reaches it
DOMAIN_PAGES = 100  # --max-pages-per-domain: below MAX_HOSTS x MAX_PAGES, so the wildcard domain reaches it
CRAWL = ["--scope", "any", "--delay", "0", "--max-pages", str(MAX_PAGES), "--max-hosts-per-domain", str(MAX_HOSTS),
         "--max-pages-per-domain", str(DOMAIN_PAGES), "--concurrency", "20", "--linger", "1"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traps10")
    with RunningWeb(SPEC, log_path=tmp / "web.jsonl") as web:
        seeds = [*web.site.seed_urls(), *TrapHosts(web.port).seeds()]
        first = wreck_crawl(tmp, web, seeds, [*CRAWL, "--max-time", "2"])
        second = wreck_crawl(tmp, web, seeds, CRAWL)
        records = web.log.records()
        good = web.site.reachable_allowed(web.site.seed_urls())
    reader = ReadStore(tmp / "crawl")  # wreck-crawl's store: DATA/store
    try:
        stored = {normalize(meta.url) for meta, _ in reader.iter_docs(with_documents=False) if fetched(meta)}
    finally:
        reader.close()
    return first, second, records, good, stored


def _pages_by_host(records) -> dict[str, int]:
    counts = collections.Counter(r.host for r in records if r.target != "/robots.txt")
    return dict(counts)


def test_both_runs_end_by_themselves(crawled):
    first, second, *_ = crawled
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert "finish reason: done" in second.stdout, second.stdout[-3000:]


def test_a_wildcard_domain_adds_no_more_hosts_than_the_cap_over_both_runs(crawled):
    *_, records, _, _ = crawled
    wild = {r.host for r in records if r.host.endswith(f".{WILD_DOMAIN}")} - {WILD_SEED}
    assert 1 < len(wild) <= MAX_HOSTS, sorted(wild)


def test_the_hosts_of_a_wildcard_domain_hold_no_more_pages_than_its_budget(crawled):
    *_, records, _, _ = crawled
    pages = _pages_by_host(records)
    linked = sum(n for host, n in pages.items() if host.endswith(f".{WILD_DOMAIN}") and host != WILD_SEED)
    assert MAX_PAGES < linked <= DOMAIN_PAGES, pages  # more than one host's budget: the domain's bounds it
    assert pages[WILD_SEED] <= MAX_PAGES  # the seed's host: its own budget alone


def test_the_summary_names_the_hosts_the_cap_kept_out(crawled):
    first, second, *_ = crawled  # the run that met the cap says so
    assert "too many hosts in domain (trap)" in first.stdout + second.stdout, first.stdout[-3000:]


def test_every_trap_host_stays_within_the_per_host_budget(crawled):
    *_, records, _, _ = crawled
    pages = _pages_by_host(records)
    for host in (FACETS, DOTS, SOFT404, REDIRWALK):
        assert 1 <= pages.get(host, 0) <= MAX_PAGES, (host, pages)


def test_a_path_grown_by_empty_segments_stops_at_the_repeated_segment_bound(crawled):
    *_, records, _, _ = crawled
    paths = [r.target.partition("?")[0] for r in records if r.host == DOTS]
    assert "/d///" in paths and "/d/////" not in paths  # --max-path-repeats 3; '/./' adds no URL


def test_a_redirect_walk_stops_at_the_redirect_bound(crawled):
    *_, records, _, _ = crawled
    walked = [r.target for r in records if r.host == REDIRWALK and r.target.startswith("/go/")]
    assert 1 <= len(walked) <= 6  # --max-redirects 5: /go/0 and five hops


def test_every_page_of_the_ordinary_hosts_is_stored(crawled):
    *_, good, stored = crawled
    assert good and good - stored == set()


def test_the_test_web_s_dns_answers_every_name_under_a_wildcard_and_no_other():
    import dns.message
    import dns.rcode

    from tests.web import DnsResponder

    responder = DnsResponder({f"*.{WILD_DOMAIN}": "127.66.10.1", "facets.traps.test": "127.66.10.2"})

    def ask(name: str):
        reply = dns.message.from_wire(responder.answer(dns.message.make_query(name, "A").to_wire(), ("", 0), "udp"))
        return dns.rcode.to_text(reply.rcode()), [r.to_text() for rrset in reply.answer for r in rrset]

    assert ask(f"n1.{WILD_DOMAIN}") == ask(f"a.b.{WILD_DOMAIN}") == ("NOERROR", ["127.66.10.1"])
    assert ask("facets.traps.test") == ("NOERROR", ["127.66.10.2"])
    assert ask("other.traps.test")[0] == ask(WILD_DOMAIN)[0] == "NXDOMAIN"  # '*.wild.test' is not wild.test itself
