"""The urlserver command line: every setting has a flag that reaches the
frozen Settings, and impossible values are refused before anything starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wreck.urlserver import cli


@pytest.fixture
def captured(monkeypatch):
    """Run the command without serving: the Settings it built, or None."""
    seen = {}

    async def fake_serve(settings, seeds_file, urls, feeds=None):
        seen["settings"], seen["feeds"] = settings, feeds

    monkeypatch.setattr(cli, "serve", fake_serve)
    return seen


def _run(tmp_path, *args):
    return CliRunner().invoke(cli.app, ["--data", str(tmp_path / "d"), "--http", "off", *args])


def test_flags_reach_the_settings(tmp_path, captured):
    result = _run(tmp_path, "--host-concurrency", "2", "--max-url-len", "1000", "--dns-timeout", "0.5",
                  "--max-expiries", "7", "--robots-ttl", "600", "--ip-concurrency", "3")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert (s.host_concurrency, s.max_url_len, s.dns_timeout, s.max_expiries, s.robots_ttl, s.ip_concurrency) == (
        2, 1000, 0.5, 7, 600.0, 3)


def test_feed_and_sitemap_flags_reach_the_settings(tmp_path, captured):
    result = _run(tmp_path, "--feeds", "feeds.txt", "--feed-min-interval", "1", "--feed-max-interval", "8",
                  "--feed-backoff", "3", "--sitemaps", "--sitemap-max-urls", "20", "--sitemaps-per-host", "2",
                  "--sitemap-depth", "1")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert captured["feeds"] == "feeds.txt"
    assert (s.feed_min_interval, s.feed_max_interval, s.feed_backoff, s.sitemaps, s.sitemap_max_urls,
            s.sitemaps_per_host, s.sitemap_depth) == (1.0, 8.0, 3.0, True, 20, 2, 1)


def test_recrawl_and_bandwidth_flags_reach_the_settings(tmp_path, captured):
    result = _run(tmp_path, "--recrawl", "6h", "--recrawl-max", "7d", "--backoff-max", "2m",
                  "--accept-type", "text/html,application/xhtml+xml", "--accept-type", "Image/*")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert (s.recrawl, s.recrawl_min, s.recrawl_max, s.backoff_max) == (21600.0, 0.0, 604800.0, 120.0)
    assert s.accept_type == ("text/html", "application/xhtml+xml", "image/*")


def test_defaults_are_the_settings_defaults(tmp_path, captured):
    from wreck.urlserver.settings import Settings

    assert _run(tmp_path).exit_code == 0
    s, d = captured["settings"], Settings(data="x")
    for name in ("host_concurrency", "max_url_len", "dns_timeout", "max_expiries", "robots_ttl", "delay",
                 "ip_delay", "ip_concurrency", "max_pages", "max_depth", "timeout_update", "retry_delay",
                 "max_retries", "robots_retry", "max_redirects", "feed_min_interval", "feed_max_interval",
                 "feed_backoff", "sitemaps", "sitemap_max_urls", "sitemaps_per_host", "sitemap_depth",
                 "recrawl", "recrawl_min", "recrawl_max", "recrawl_factor", "backoff_max", "accept_type"):
        assert getattr(s, name) == getattr(d, name), name


@pytest.mark.parametrize("args, words", [
    (["--allow-net", "127.0.0.0/33"], "--allow-net '127.0.0.0/33' is not a CIDR"),
    (["--max-url-len", "100000"], "--max-url-len"),
    (["--robots-ttl", "100000"], "RFC 9309"),
    (["--host-concurrency", "0"], "--host-concurrency"),
    (["--dns-timeout", "0"], "--dns-timeout"),
    (["--scope", "planet"], "--scope"),
    (["--feed-min-interval", "10", "--feed-max-interval", "5"], "--feed-max-interval"),
    (["--feed-backoff", "0.5"], "--feed-backoff"),
    (["--sitemap-max-urls", "50000"], "--sitemap-max-urls"),
    (["--recrawl", "soon"], "not a duration"),
    (["--recrawl", "1h", "--recrawl-min", "2h"], "--recrawl-min"),
    (["--accept-type", "html"], "--accept-type"),
    (["--accept-type", ",".join(f"type{i}/sub" for i in range(200))], "handshake"),
])  # fmt: skip
def test_impossible_values_are_refused(tmp_path, captured, args, words):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and words in result.output and "settings" not in captured
