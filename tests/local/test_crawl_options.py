"""wreck-crawl's command line: every urlserver setting is one of its options
(generated from the same field), except the few it sets itself, and what is
chosen reaches the urlserver child's Settings unchanged."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from tests.options_helpers import unlike_default
from wreck import options
from wreck.local import cli
from wreck.storeserver import cli as store_cli
from wreck.urlserver import cli as urlserver_cli
from wreck.urlserver.settings import Settings

WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}

@pytest.fixture
def started(monkeypatch):
    """Run wreck-crawl without starting children: what it would start."""
    seen = {}

    def fake_run(data, urls, urlserver_args, procs, concurrency, store_args=(), *, continuous=False, http=None,
                 log_args=(), shards=1, partitions=1):
        seen.update(urls=urls, urlserver_args=urlserver_args, store_args=store_args, continuous=continuous,
                    http=http, log_args=log_args, shards=shards, partitions=partitions)
        return 0

    monkeypatch.setattr(cli, "run", fake_run)
    return seen


def test_every_urlserver_setting_is_a_wreck_crawl_option_or_set_by_wreck_crawl_for_a_reason():
    params = {p.name for p in cli.app.registered_commands[0].callback.__signature__.parameters.values()}
    for field in dataclasses.fields(Settings):
        assert field.name in params or cli.URLSERVER_OWN.get(field.name), field.name
    assert not set(cli.URLSERVER_OWN) & {p for p in params if p not in ("data", "exit_when_done", "http", "partitions")}


def test_help_shows_urlserver_settings_with_defaults_and_units():
    result = CliRunner().invoke(cli.app, ["--help"], env=WIDE)
    text = " ".join(result.output.replace("│", " ").split())
    for words in ("--max-expiries", "[default: 3 claims]", "--robots-ttl", "[default: 1d]", "--dns-timeout",
                  "[default: 3s]", "--max-redirects", "--max-url-len", "--procs", "--concurrency", "--no-dedup",
                  "--near-dups", "--near-dup-distance"):
        assert words in text, words


def _store_settings(store_args: list[str], data, monkeypatch):
    """The StoreSettings a store child started with `store_args` runs with."""
    built = {}

    async def fake_run(settings):
        built["settings"] = settings
        return 0

    monkeypatch.setattr(store_cli, "run", fake_run)
    result = CliRunner().invoke(store_cli.app, [*store_args, "--data", str(data), "--listen", "127.0.0.1:0"])
    assert result.exit_code == 0, result.output
    return built["settings"]


def _urlserver_settings(urlserver_args: list[str], data, monkeypatch):
    """The Settings a urlserver child started with `urlserver_args` runs with."""
    built = {}

    async def fake_serve(settings, seeds_file, urls, feeds=None):
        built["settings"] = settings

    monkeypatch.setattr(urlserver_cli, "serve", fake_serve)
    result = CliRunner().invoke(urlserver_cli.app, [*urlserver_args, "--data", str(data)])
    assert result.exit_code == 0, result.output
    return built["settings"]


def test_every_chosen_setting_reaches_the_urlserver_unchanged(tmp_path, started, monkeypatch):
    chosen = {d.name: unlike_default(d) for d in options.declared(Settings) if d.name not in cli.URLSERVER_OWN}
    frontier = tmp_path / "crawl" / "frontier"
    expected = Settings(data=str(frontier), **chosen)
    argv = ["http://a.test/", "--data", str(tmp_path / "crawl"), *options.to_argv(Settings, chosen)]
    result = CliRunner().invoke(cli.app, argv)
    assert result.exit_code == 0, result.output
    assert _store_settings(started["store_args"], tmp_path / "crawl", monkeypatch).plugins == ("pattern=deny.txt",)
    built = _urlserver_settings(started["urlserver_args"], frontier, monkeypatch)
    assert built == expected
    for name in chosen:
        assert getattr(built, name) != getattr(Settings(data="x"), name), name


def test_the_children_start_from_the_crawls_settings_file(tmp_path, started, monkeypatch):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://b.test/\n")
    result = CliRunner().invoke(cli.app, ["http://a.test/", "--data", str(tmp_path / "c"), "--seeds", str(seeds),
                                          "--max-expiries", "7", "--backoff-max", "2m"])
    assert result.exit_code == 0, result.output
    kept = tmp_path / "c" / "crawl.toml"
    assert started["urlserver_args"] == ["--settings-file", str(kept), "--seeds", str(seeds)]
    text = kept.read_text()
    assert 'backoff_max = "2m"' in text and "max_expiries = 7" in text
    built = _urlserver_settings(started["urlserver_args"], tmp_path / "c" / "frontier", monkeypatch)
    assert built.max_expiries == 7 and built.backoff_max == 120 and built.delay == Settings(data="x").delay
    assert not started["continuous"]
    assert kept.read_text() == text  # the child read the crawl's file and wrote nothing of its own
    assert not (tmp_path / "c" / "frontier" / urlserver_cli.KEPT).exists()


def test_store_settings_reach_the_store(tmp_path, started, monkeypatch):
    result = CliRunner().invoke(cli.app, ["http://a.test/", "--data", str(tmp_path / "c"), "--no-dedup",
                                          "--near-dups", "--near-dup-distance", "2", "--plugin", "p=1"])
    assert result.exit_code == 0, result.output
    store = _store_settings(started["store_args"], tmp_path / "c", monkeypatch)
    assert (store.dedup, store.near_dups, store.near_dup_distance, store.plugins) == (False, True, 2, ("p=1",))
    assert _urlserver_settings(started["urlserver_args"], tmp_path / "c" / "frontier", monkeypatch).plugins == ("p=1",)
    assert not (tmp_path / "c" / store_cli.KEPT).exists()


def test_recrawl_makes_the_crawl_continuous(tmp_path, started):
    result = CliRunner().invoke(cli.app, ["http://a.test/", "--data", str(tmp_path / "c"), "--recrawl", "6h"])
    assert result.exit_code == 0 and started["continuous"]


@pytest.mark.parametrize("args, words", [
    (["--robots-ttl", "100000"], "--robots-ttl must be above 0 and at most 86400 s (RFC 9309 2.4)"),
    (["--max-expiries", "0"], "--max-expiries must be above 0"),
    (["--dns-timeout", "0"], "--dns-timeout"),
    (["--recrawl", "soon"], "not a duration"),
    (["--near-dup-distance", "9"], "--near-dup-distance must be at least 0 and at most 3 bits"),
])  # fmt: skip
def test_impossible_values_are_refused_before_anything_starts(tmp_path, started, args, words):
    result = CliRunner().invoke(cli.app, ["http://a.test/", "--data", str(tmp_path / "c"), *args])
    assert result.exit_code == 2 and words in result.output and not started
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("flags, log_args", [
    ([], []), (["-v"], ["--log-level", "debug"]), (["-qq"], ["--log-level", "error"]),
    (["--log-level", "warning"], ["--log-level", "warning"]),
])  # fmt: skip
def test_how_much_wreck_crawl_is_told_to_log_reaches_every_child(tmp_path, started, flags, log_args):
    result = CliRunner().invoke(cli.app, ["http://a.test/", "--data", str(tmp_path / "crawl"), *flags])
    assert result.exit_code == 0, result.output
    assert list(started["log_args"]) == log_args
