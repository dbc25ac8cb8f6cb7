"""The storeserver command line: each flag is generated from its field of
StoreSettings, reaches the frozen settings, and impossible values are
refused before anything starts."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from wreck import options
from wreck.storeserver import cli
from wreck.storeserver.settings import StoreSettings


@pytest.fixture
def captured(monkeypatch):
    """Run the command without serving: the StoreSettings it built."""
    seen = {}

    async def fake_run(settings):
        seen["settings"] = settings
        return 0

    monkeypatch.setattr(cli, "run", fake_run)
    return seen


def _run(tmp_path, *args):
    return CliRunner().invoke(cli.app, ["--data", str(tmp_path / "d"), "--listen", "127.0.0.1:0", *args])


def test_flags_reach_the_settings(tmp_path, captured):
    result = _run(tmp_path, "--map-size", "64MiB", "--max-doc-len", "1000", "--commit-window-ms", "0.5",
                  "--no-dedup", "--near-dups", "--near-dup-distance", "1", "--zstd-level", "9",
                  "--handshake-timeout", "2", "--plugin", "a", "--plugin", "b=1")
    assert result.exit_code == 0, result.output
    s = captured["settings"]
    assert (s.map_size, s.max_doc_len, s.commit_window_ms, s.dedup, s.near_dups, s.near_dup_distance,
            s.zstd_level, s.handshake_timeout_s, s.plugins, s.port) == (
        64 << 20, 1000, 0.5, False, True, 1, 9, 2.0, ("a", "b=1"), 0)


def test_defaults_are_the_settings_defaults(tmp_path, captured):
    assert _run(tmp_path).exit_code == 0
    s, d = captured["settings"], StoreSettings(data=tmp_path / "d")
    for f in dataclasses.fields(StoreSettings):
        if f.name not in ("port", "secret"):
            assert getattr(s, f.name) == getattr(d, f.name), f.name


def test_every_setting_is_an_option_but_the_address_and_secret():
    declared = {d.name for d in options.declared(StoreSettings)}
    assert {f.name for f in dataclasses.fields(StoreSettings)} - declared == {"host", "port", "secret"}


@pytest.mark.parametrize("args, words", [
    (["--near-dup-distance", "4"], "--near-dup-distance must be at least 0 and at most 3 bits"),
    (["--max-doc-len", "1TiB"], "--max-doc-len"),
    (["--zstd-level", "0"], "--zstd-level"),
    (["--max-connections", "0"], "--max-connections must be above 0"),
    (["--map-size", "huge"], "not a size"),
])  # fmt: skip
def test_impossible_values_are_refused(tmp_path, captured, args, words):
    result = _run(tmp_path, *args)
    assert result.exit_code == 2 and words in result.output and "settings" not in captured
