"""The urlserver command line: every setting has a flag that reaches the
frozen Settings, and impossible values are refused before anything starts."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from wreck import options
from wreck.urlserver import cli
from wreck.urlserver.settings import Settings


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
    assert s.http is None  # --http off


def test_feed_and_sitemap_flags_reach_the_settings(tmp_path, captured):
    feeds = tmp_path / "feeds.txt"  # a feeds file that cannot be read is refused at start
    feeds.write_text("https://example.org/feed.xml\n")
    result = _run(tmp_path, "--feeds", str(feeds), "--feed-min-interval", "1", "--feed-max-interval", "8",
                  "--feed-backoff", "3", "--sitemaps", "--sitemap-max-urls", "20", "--sitemaps-per-host", "2",
                  "--sitemap-depth", "1")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert captured["feeds"] == str(feeds)
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
    assert _run(tmp_path).exit_code == 0
    s, d = captured["settings"], Settings(data="x")
    names = [f.name for f in options.declared(Settings)]
    assert len(names) > 50  # every declared setting, not a hand-kept list
    for name in names:
        if name not in ("data", "http"):  # given by _run
            assert getattr(s, name) == getattr(d, name), name


def test_every_setting_but_the_secret_is_an_option_of_the_urlserver():
    # the secret comes from --secret-file or the environment: ps shows argv
    declared = {d.name for d in options.declared(Settings)}
    assert {f.name for f in dataclasses.fields(Settings)} - declared == {"secret"}
    params = {p.name for p in cli.app.registered_commands[0].callback.__signature__.parameters.values()}
    assert declared <= params


def test_help_shows_each_default_with_its_unit():
    result = CliRunner().invoke(cli.app, ["--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    text = " ".join(result.output.replace("\u2502", " ").split())
    for words in ("--max-expiries", "[default: 3 claims]", "--robots-ttl", "[default: 1d]",
                  "--dns-timeout", "[default: 3s]", "--max-doc-size", "[default: 16MiB]", "--backoff-max",
                  "[default: 10m]", "--no-sync", "--hosts", "--plugin", "--seeds", "--feeds", "--secret-file"):
        assert words in text, words


def test_settings_built_in_code_are_checked_as_flags_are():
    with pytest.raises(options.SettingsError) as caught:
        Settings(data="x", robots_ttl=100_000.0)
    assert str(caught.value) == "--robots-ttl must be above 0 and at most 86400 s (RFC 9309 2.4)"
    with pytest.raises(options.SettingsError, match="--recrawl-min"):
        Settings(data="x", recrawl=3600.0, recrawl_min=7200.0)


def test_sizes_and_durations_take_their_units(tmp_path, captured):
    result = _run(tmp_path, "--max-doc-size", "2MiB", "--map-size", "1GiB", "--backoff-max", "90")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert (s.max_doc_size, s.map_size, s.backoff_max) == (2 << 20, 1 << 30, 90.0)


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
    (["--robots-token", "wreck/1.0"], "--robots-token"),
    (["--max-doc-size", "1TiB"], "--max-doc-size"),
    (["--dns-min-ttl", "60", "--dns-max-ttl", "30"], "--dns-max-ttl"),
    (["--recrawl", "1h", "--recrawl-factor", "0.5"], "--recrawl-factor"),
])  # fmt: skip
def test_impossible_values_are_refused(tmp_path, captured, args, words):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and words in result.output and "settings" not in captured
