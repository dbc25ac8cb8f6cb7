"""What a daemon's start imports (issue 16: every crawl starts four Python
processes, and each import is paid by each). Libraries only some paths
need are imported on those paths: tldextract (and requests under it) for
--scope domain, prometheus_client at the first /metrics scrape, warcio for
--warc-dir, importlib.metadata for --version and plugins.
Each check runs in a fresh interpreter, as a daemon starts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# What the daemons import before they serve (their cli modules, and what
# the urlserver's serve() and the spider's workers import).
STARTS = {
    "urlserver": ("wreck.urlserver.cli", "wreck.urlserver.crawl", "wreck.urlserver.server", "wreck.urlserver.http",
                  "wreck.urlserver.api", "wreck.urlserver.statusview", "wreck.urlserver.storeview"),
    "storeserver": ("wreck.storeserver.cli",),
    "spider": ("wreck.spider.cli", "wreck.spider.worker"),
    "wreck-crawl": ("wreck.local.cli",),
}
ONLY_SOME_PATHS = ("tldextract", "requests", "prometheus_client", "warcio")


def _imported(modules: tuple[str, ...]) -> set[str]:
    code = f"import sys\nfor m in {modules!r}: __import__(m)\nprint(__import__('json').dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("daemon", sorted(STARTS))
def test_a_start_does_not_import_what_only_some_paths_need(daemon):
    loaded = _imported(STARTS[daemon])
    assert not [m for m in ONLY_SOME_PATHS if m in loaded]
    if daemon != "urlserver":  # dnspython imports it in the urlserver, which needs DNS anyway
        assert "importlib.metadata" not in loaded


def test_the_lazy_paths_still_work():
    from wreck.urlserver.scope import Scope, registered_domain

    assert registered_domain("www.example.co.uk") == "example.co.uk"
    scope = Scope(mode="domain", seed_hosts={"a.example.com"}, max_depth=9, max_url_len=999, max_path_repeats=0)
    assert scope.filter_reason("http://b.example.com/", "b.example.com", 1) is None
    assert scope.filter_reason("http://b.example.org/", "b.example.org", 1) == "out of scope (domain)"
