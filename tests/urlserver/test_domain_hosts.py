"""--max-hosts-per-domain and --max-pages-per-domain (urlserver/domainbudget.py):
a wildcard-DNS site whose pages link to ever-new subdomains adds hosts until
its registered domain has the cap, then its links to new hosts end FILTERED
with the reason, and the URLs of a domain's hosts stop at the domain's
budget; a restart counts what the crawl already has, so a resumed crawl
admits no more in all. The seeds' hosts are never held."""

from __future__ import annotations

import pytest

from wreck.options import SettingsError
from wreck.urlserver.domainbudget import DOMAIN_BUDGET, TOO_MANY_HOSTS
from wreck.urlserver.scope import registered_domain as owner_domain
from wreck.urlserver.settings import DEFAULT_MAX_HOSTS_PER_DOMAIN, DEFAULT_MAX_PAGES_PER_DOMAIN, Settings

from tests.urlserver_helpers import crawl_engine, fetched, serve_robots

CAP = 3


def _subdomains(first: int, last: int) -> list[str]:
    return [f"http://a{i}.trap.test/" for i in range(first, last)]


def _hosts_of(c, domain: str) -> set[str]:
    return {o for o in c.frontier.origins if o.endswith(f".{domain}") or o == f"http://{domain}"}


def _crawl_trap_page(c, links: list[str]) -> None:
    serve_robots(c, "http://www.trap.test")
    a = c.take("s", 0.0)
    assert a.url == "http://www.trap.test/"
    c.done("s", fetched(a, *links, "http://good.test/", "http://www.trap.test/more"), 0.0)


@pytest.mark.parametrize("scope", ["domain", "any"])
def test_a_page_linking_ever_new_subdomains_adds_hosts_only_up_to_the_cap(tmp_path, scope):
    c = crawl_engine(tmp_path, scope=scope, max_hosts_per_domain=CAP)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 20))
    # CAP hosts reached by links, and the seed's
    assert len(_hosts_of(c, "trap.test")) == CAP + 1
    assert c.frontier.lookup("http://www.trap.test/more")["state"] == "PENDING"  # a known host's pages go on
    states = [c.frontier.lookup(url) for url in _subdomains(0, 20)]
    assert sum(s["state"] == "PENDING" for s in states) == CAP
    assert {s["reason"] for s in states if s["state"] == "FILTERED"} == {TOO_MANY_HOSTS}
    assert c.frontier.filtered_by[TOO_MANY_HOSTS] == 20 - CAP
    if scope == "any":  # another domain is not held by trap.test's cap
        assert c.frontier.lookup("http://good.test/")["state"] == "PENDING"
    c.close()


def test_a_resumed_crawl_admits_no_more_hosts_of_a_capped_domain(tmp_path):
    c = crawl_engine(tmp_path, scope="any", max_hosts_per_domain=CAP)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 20))
    c.close()
    c = crawl_engine(tmp_path, scope="any", max_hosts_per_domain=CAP)
    before = set(c.frontier.origins)
    assert len(_hosts_of(c, "trap.test")) == CAP + 1
    # a page of a trap host fetched after the restart: its new subdomains are refused
    fr = c.frontier
    fr.discover_links(_subdomains(20, 40), depth=1, base="http://a0.trap.test/")
    assert set(fr.origins) - before == set()
    assert fr.lookup("http://a25.trap.test/")["reason"] == TOO_MANY_HOSTS
    c.close()


def test_seeds_hosts_are_never_held_by_the_cap(tmp_path):
    c = crawl_engine(tmp_path, scope="domain", max_hosts_per_domain=1)
    for i in range(4):
        c.add_seed(f"http://s{i}.trap.test/")
    assert len(_hosts_of(c, "trap.test")) == 4
    c.close()


def test_host_scope_and_caps_of_0_count_nothing(tmp_path):
    c = crawl_engine(tmp_path / "host", scope="host")
    assert c.frontier.domains is None
    c.close()
    c = crawl_engine(tmp_path / "off", scope="any", max_hosts_per_domain=0, max_pages_per_domain=0)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 20))
    assert len(_hosts_of(c, "trap.test")) == 21
    c.close()


def _pages(host: str, first: int, last: int) -> list[str]:
    return [f"http://{host}/p{i}" for i in range(first, last)]


def test_the_urls_of_a_domain_s_hosts_stop_at_the_domain_budget_and_stay_stopped_after_a_restart(tmp_path):
    # --max-pages 10 a host, --max-pages-per-domain 25: three hosts of trap.test hold 25 URLs in all
    c = crawl_engine(tmp_path, scope="any", max_pages=10, max_pages_per_domain=25)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 3) + _pages("a0.trap.test", 1, 20) + _pages("a1.trap.test", 1, 20))
    fr = c.frontier
    admitted = {o: fr.origins[o].admitted for o in _hosts_of(c, "trap.test")}
    assert admitted == {"http://www.trap.test": 2, "http://a0.trap.test": 10, "http://a1.trap.test": 10,
                        "http://a2.trap.test": 1}
    fr.discover_links(_pages("a2.trap.test", 1, 20), depth=1, base="http://a0.trap.test/")
    held = {o: fr.origins[o].admitted for o in _hosts_of(c, "trap.test") - {"http://www.trap.test"}}
    assert sum(held.values()) == 25, held  # the seed's host aside
    assert fr.lookup("http://a2.trap.test/p10")["reason"] == DOMAIN_BUDGET
    assert fr.lookup("http://a0.trap.test/p15")["reason"] == "host page budget exhausted"
    c.close()
    c = crawl_engine(tmp_path, scope="any", max_pages=10, max_pages_per_domain=25)
    c.frontier.discover_links(_pages("a2.trap.test", 30, 40) + _subdomains(5, 8), depth=1,
                              base="http://a0.trap.test/")
    assert {c.frontier.lookup(u)["reason"] for u in _pages("a2.trap.test", 30, 40)} == {DOMAIN_BUDGET}
    assert {c.frontier.lookup(u)["reason"] for u in _subdomains(5, 8)} == {DOMAIN_BUDGET}  # no host joins it
    c.close()


def test_a_domain_of_one_host_is_held_by_its_host_budget_alone(tmp_path):
    c = crawl_engine(tmp_path, scope="any", max_pages=30, max_pages_per_domain=5)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _pages("one.test", 0, 40))
    assert c.frontier.origins["http://one.test"].admitted == 30
    c.close()


def test_the_cap_counts_an_owner_s_domain_as_the_public_suffix_list_s_private_section_says():
    # a.github.io and b.github.io are two owners; a.b.example.co.uk and c.example.co.uk one
    assert owner_domain("a.github.io") != owner_domain("b.github.io")
    assert owner_domain("a.b.example.co.uk") == owner_domain("c.example.co.uk") == "example.co.uk"
    assert owner_domain("a0.trap.test") == "trap.test"  # a suffix the PSL does not know: its default rule


def test_the_default_cap_is_on_and_named_in_help():
    assert Settings(data="d").max_hosts_per_domain == DEFAULT_MAX_HOSTS_PER_DOMAIN > 0
    assert Settings(data="d").max_pages_per_domain == DEFAULT_MAX_PAGES_PER_DOMAIN >= Settings(data="d").max_pages
    with pytest.raises(SettingsError, match="--max-hosts-per-domain"):
        Settings(data="d", max_hosts_per_domain=-1)


def test_a_page_s_links_to_the_known_hosts_of_a_domain_are_counted_in_bulk_against_its_budget(tmp_path):
    c = crawl_engine(tmp_path, scope="any", max_pages=1000, max_pages_per_domain=25)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 2))  # two hosts of trap.test: a crowd, 2 URLs
    fr = c.frontier
    assert fr.discover_links(_pages("a0.trap.test", 1, 11) + _pages("a1.trap.test", 1, 11), depth=1) == 20
    assert fr.discover_links(_pages("a0.trap.test", 11, 21), depth=1) == 3  # 25 in all
    assert fr.filtered_by[DOMAIN_BUDGET] == 7
    c.close()


def test_a_domain_s_one_host_counts_after_a_restart_once_a_second_host_comes(tmp_path):
    c = crawl_engine(tmp_path, scope="any", max_pages=1000, max_pages_per_domain=25)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 1) + _pages("a0.trap.test", 1, 20))  # one host of trap.test: 20 URLs
    c.close()
    c = crawl_engine(tmp_path, scope="any", max_pages=1000, max_pages_per_domain=25)
    fr = c.frontier
    assert fr.discover_links(_subdomains(1, 2) + _pages("a1.trap.test", 1, 20), depth=1) == 5
    assert fr.lookup("http://a1.trap.test/p10")["reason"] == DOMAIN_BUDGET
    c.close()
