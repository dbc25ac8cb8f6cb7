"""Which seeds the operator's filters refuse (urlserver/seedfilter.py),
without sockets: --exclude and a url_filter plugin win over a seed;
--include and the trap bounds, which judge what a crawl finds, do not."""

from __future__ import annotations

from wreck.plugins import URL_FILTER, Plugins
from wreck.urlserver.scope import Scope
from wreck.urlserver.seedfilter import SEED_EXCLUDED, seed_refusal
from wreck.urlserver.urlfilter import UrlFilter


def _scope(**rules) -> Scope:
    return Scope(mode="host", seed_hosts=set(), max_depth=0, max_url_len=2000, max_path_repeats=3, **rules)


def test_a_seed_the_exclude_regex_matches_is_refused_and_one_outside_include_is_not():
    scope = _scope(include=[r"/docs/"], exclude=[r"\.pdf$"])
    assert seed_refusal(scope, None, "http://a.example/paper.pdf", "a.example") == SEED_EXCLUDED
    assert seed_refusal(scope, None, "http://a.example/", "a.example") is None  # not under /docs/: a seed all the same


def test_a_seed_with_a_repeated_path_segment_is_the_operators_choice():
    assert seed_refusal(_scope(), None, "http://a.example/a/a/a/a/a/a/", "a.example") is None


def test_a_seed_a_url_filter_plugin_refuses_is_refused_with_the_plugins_name(tmp_path):
    patterns = tmp_path / "deny.txt"
    patterns.write_text("/private/\n")
    url_filter = UrlFilter(Plugins([f"pattern={patterns}"], hooks=(URL_FILTER,)))
    assert seed_refusal(_scope(), url_filter, "http://a.example/private/x", "a.example") == "seed plugin pattern"
    assert seed_refusal(_scope(), url_filter, "http://a.example/public/x", "a.example") is None
