"""--max-hosts-per-domain: a wildcard-DNS site whose pages link to ever-new
subdomains adds hosts until its registered domain has the cap, then its
links to new hosts end FILTERED with the reason; a restart counts the hosts
it already has, so a resumed crawl admits no more in all."""

from __future__ import annotations

import pytest

from wreck.options import SettingsError
from wreck.urlserver.scope import TOO_MANY_HOSTS, owner_domain
from wreck.urlserver.settings import DEFAULT_MAX_HOSTS_PER_DOMAIN, Settings

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
    # the seed's host counts: CAP hosts of trap.test in all
    assert len(_hosts_of(c, "trap.test")) == CAP
    assert c.frontier.lookup("http://www.trap.test/more")["state"] == "PENDING"  # a known host's pages go on
    states = [c.frontier.lookup(url) for url in _subdomains(0, 20)]
    assert sum(s["state"] == "PENDING" for s in states) == CAP - 1
    assert {s["reason"] for s in states if s["state"] == "FILTERED"} == {TOO_MANY_HOSTS}
    assert c.frontier.filtered_by[TOO_MANY_HOSTS] == 20 - (CAP - 1)
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
    assert len(_hosts_of(c, "trap.test")) == CAP
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


def test_host_scope_and_a_cap_of_0_count_nothing(tmp_path):
    c = crawl_engine(tmp_path / "host", scope="host")
    assert c.frontier.scope.domain_hosts is None
    c.close()
    c = crawl_engine(tmp_path / "off", scope="any", max_hosts_per_domain=0)
    c.add_seed("http://www.trap.test/")
    _crawl_trap_page(c, _subdomains(0, 20))
    assert len(_hosts_of(c, "trap.test")) == 21
    c.close()


def test_the_cap_counts_an_owner_s_domain_as_the_public_suffix_list_s_private_section_says():
    # a.github.io and b.github.io are two owners; a.b.example.co.uk and c.example.co.uk one
    assert owner_domain("a.github.io") != owner_domain("b.github.io")
    assert owner_domain("a.b.example.co.uk") == owner_domain("c.example.co.uk") == "example.co.uk"
    assert owner_domain("a0.trap.test") == "trap.test"  # a suffix the PSL does not know: its default rule


def test_the_default_cap_is_on_and_named_in_help():
    assert Settings(data="d").max_hosts_per_domain == DEFAULT_MAX_HOSTS_PER_DOMAIN > 0
    with pytest.raises(SettingsError, match="--max-hosts-per-domain"):
        Settings(data="d", max_hosts_per_domain=-1)
