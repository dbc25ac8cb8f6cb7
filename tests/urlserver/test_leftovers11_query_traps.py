"""The repeated-parameter rule of urlserver/scope.py: a query in which one
parameter name occurs more than --max-query-repeats times (a query grown by
appending, as calendars and session-appending sites grow it: ?a=1&a=1&a=1...,
?p=1&s=2&p=1&s=2...) is FILTERED with its reason, on the frontier's column
path too; a query of many distinct names, a name repeated up to the bound,
and a '&' in the path are admitted. It took the per-host budget, thousands
of pages, to end such a site."""

from __future__ import annotations

import pytest

from wreck.urlnorm import normalize
from wreck.urlserver.scope import Scope

from tests.urlserver_helpers import crawl_engine

TRAP = "repeated query parameter (trap)"


def _scope(repeats: int = 3) -> Scope:
    return Scope(mode="host", seed_hosts={"cal.test"}, max_depth=1000, max_url_len=2048, max_path_repeats=3,
                 max_query_repeats=repeats)


@pytest.mark.parametrize("query, reason", [
    ("", None), ("?a=1", None), ("?a=1&a=1&a=1", None), ("?a=1&a=1&a=1&a=1", TRAP),
    ("?p=1&s=2&p=1&s=2&p=1&s=2", None), ("?p=1&s=2&p=1&s=2&p=1&s=2&p=1&s=2", TRAP),
    ("?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8", None),  # many names, each once: a form's fields
    ("?tag=a&x=1&tag=b&y=2&tag=c&z=3&tag=d", TRAP),  # not next to each other
    ("?a&a&a&a", TRAP), ("?a=1&a=2&a=3&a=4", TRAP),  # with no value, or another value each time
    ("?q=a&a=1&a=1&a=1&b=a=a=a", None),  # the name is what precedes '='
    ("?q=a?b&b=1&b=1&b=1", None), ("?b&q=a?b&b=1&b=1&b=1", TRAP),  # a '?' in the query starts no name
    ("?" + "&".join(f"f{i}=1" for i in range(200)), None),  # 200 names, each once
])  # fmt: skip
def test_a_query_grown_by_a_repeated_parameter_is_a_trap_past_the_bound(query, reason):
    url = normalize(f"http://cal.test/cal{query}")
    assert _scope().filter_reason(url, "cal.test", 1) == reason, url


def test_an_ampersand_in_the_path_is_not_a_parameter_and_the_bound_is_the_operators():
    url = normalize("http://cal.test/a&a&a&a&a/x?b=1")
    assert _scope().filter_reason(url, "cal.test", 1) is None
    grown = normalize("http://cal.test/cal?a=1&a=1&a=1&a=1&a=1")
    assert _scope(repeats=5).filter_reason(grown, "cal.test", 1) is None
    assert _scope(repeats=4).filter_reason(grown, "cal.test", 1) == TRAP


def test_a_page_of_a_calendar_has_its_grown_link_filtered_and_counted_and_its_others_queued(tmp_path):
    c = crawl_engine(tmp_path)
    c.add_seed("http://cal.test/")
    fr = c.frontier
    grown = "http://cal.test/cal?p=1&s=2&p=1&s=2&p=1&s=2&p=1&s=2"
    links = [f"http://cal.test/day/{i}?p=1&s=2" for i in range(20)] + [grown, "http://cal.test/cal?a=1&a=1&a=1"]
    assert fr.discover_links(links, depth=1, base="http://cal.test/") == 21
    assert fr.lookup(grown)["state"] == "FILTERED" and fr.lookup(grown)["reason"] == TRAP
    assert fr.lookup("http://cal.test/cal?a=1&a=1&a=1")["state"] == "PENDING"
    assert fr.filtered_by == {TRAP: 1}
    c.close()
