"""The urlserver command line: every setting has a flag that reaches the
frozen Settings, and impossible values are refused before anything starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from urlserver import cli


@pytest.fixture
def captured(monkeypatch):
    """Run the command without serving: the Settings it built, or None."""
    seen = {}

    async def fake_serve(settings, seeds_file, urls):
        seen["settings"] = settings

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


def test_defaults_are_the_settings_defaults(tmp_path, captured):
    from urlserver.settings import Settings

    assert _run(tmp_path).exit_code == 0
    s, d = captured["settings"], Settings(data="x")
    for name in ("host_concurrency", "max_url_len", "dns_timeout", "max_expiries", "robots_ttl", "delay",
                 "ip_delay", "ip_concurrency", "max_pages", "max_depth", "timeout_update", "retry_delay",
                 "max_retries", "robots_retry", "max_redirects"):
        assert getattr(s, name) == getattr(d, name), name


@pytest.mark.parametrize("args, words", [
    (["--allow-net", "127.0.0.0/33"], "--allow-net '127.0.0.0/33' is not a CIDR"),
    (["--max-url-len", "100000"], "--max-url-len"),
    (["--robots-ttl", "100000"], "RFC 9309"),
    (["--host-concurrency", "0"], "--host-concurrency"),
    (["--dns-timeout", "0"], "--dns-timeout"),
    (["--scope", "planet"], "--scope"),
])  # fmt: skip
def test_impossible_values_are_refused(tmp_path, captured, args, words):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and words in result.output and "settings" not in captured
