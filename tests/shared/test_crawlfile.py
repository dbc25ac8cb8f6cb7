"""Settings kept with a crawl (wreck/crawlfile.py): every setting survives
the file, a resume that would change one is refused naming it and leaves
the file alone, --reconfigure records the change, a --config file sits
between the kept settings and the flags."""

from __future__ import annotations

import tomllib

import pytest

from tests.options_helpers import unlike_default as _unlike_default
from wreck import crawlfile, dirlock, options
from wreck.storeserver.settings import StoreSettings
from wreck.urlserver.settings import Settings

URL = crawlfile.part("urlserver", Settings, ("listen", "http", "store", "exit_when_done"))
STORE = crawlfile.part("storeserver", StoreSettings)


@pytest.mark.parametrize("p", [URL, STORE], ids=lambda p: p.table)
def test_every_setting_is_written_with_a_comment_and_read_back_unchanged(tmp_path, p):
    values = {d.name: _unlike_default(d) for d in p.fields()}
    if p is STORE:
        values = {d.name: d.default for d in p.fields()} | {"near_dup_distance": 2, "dedup": False, "map_size": 1 << 31}
    path = tmp_path / "kept.toml"
    crawlfile.settle(path, [p], {p.table: values}).save()
    text = path.read_text()
    tomllib.loads(text)  # plain TOML
    for d in p.fields():
        assert f"# {d.flag}: {d.option.help}" in text, d.name
    again = crawlfile.settle(path, [p], {})
    assert again.of(p.table) == values and not again.changed


def test_a_resume_with_other_flags_is_refused_naming_them_and_changes_nothing(tmp_path):
    path = tmp_path / "kept.toml"
    crawlfile.settle(path, [URL], {"urlserver": {"allow_net": ("127.0.0.0/8",), "dns": "127.0.0.1:53"}}).save()
    before = path.read_bytes()
    with pytest.raises(crawlfile.Changed) as refused:
        crawlfile.settle(path, [URL], {"urlserver": {"allow_net": ("10.0.0.0/8",), "dns": "127.0.0.1:53",
                                                     "delay": 3.0, "listen": "127.0.0.1:0"}})
    assert refused.value.keys == ["--delay", "--allow-net"]  # --listen is chosen per run; --dns is the same
    assert path.read_bytes() == before
    settled = crawlfile.settle(path, [URL], {"urlserver": {"allow_net": ("10.0.0.0/8",)}}, reconfigure=True)
    settled.save()
    assert crawlfile.settle(path, [URL], {}).of("urlserver")["allow_net"] == ("10.0.0.0/8",)
    assert crawlfile.settle(path, [URL], {}).of("urlserver")["dns"] == "127.0.0.1:53"


def test_flags_win_over_a_config_file_which_wins_over_defaults(tmp_path):
    config = tmp_path / "wreck.toml"
    config.write_text('[urlserver]\ndelay = "2s"\nmax_depth = 4\n[storeserver]\nzstd_level = 9\n[other]\nx = 1\n')
    settled = crawlfile.settle(tmp_path / "kept.toml", [URL, STORE], {"urlserver": {"max_depth": 5}}, config=config)
    assert settled.of("urlserver") == {"delay": 2.0, "max_depth": 5}
    assert settled.of("storeserver") == {"zstd_level": 9}
    Settings(data="x", **settled.of("urlserver"))


@pytest.mark.parametrize("text, words", [
    ('[urlserver]\nmax_depth = "deep"\n', "[urlserver] max_depth: must be a number"),
    ("[urlserver]\nno_such = 1\n", "[urlserver] no_such is not a setting of urlserver"),
    ('[urlserver]\ndelay = "soon"\n', "[urlserver] delay:"),
    ("[urlserver\n", "not TOML"),
])  # fmt: skip
def test_a_wrong_config_file_is_refused_in_one_line_naming_the_key(tmp_path, text, words):
    config = tmp_path / "wreck.toml"
    config.write_text(text)
    with pytest.raises(crawlfile.ConfigError) as refused:
        crawlfile.settle(tmp_path / "kept.toml", [URL], {}, config=config)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_an_unset_setting_is_a_comment_and_a_missing_key_the_default(tmp_path):
    path = tmp_path / "kept.toml"
    crawlfile.settle(path, [URL], {}).save()
    assert "# dns = (unset)" in path.read_text()
    assert "dns" not in crawlfile.settle(path, [URL], {}).of("urlserver")  # absent: Settings' default (None)
    with pytest.raises(crawlfile.Changed):
        crawlfile.settle(path, [URL], {"urlserver": {"dns": "127.0.0.1:53"}})


@pytest.mark.parametrize("daemon", ["urlserver", "storeserver"])
def test_each_daemon_keeps_its_settings_in_its_data_directory(tmp_path, monkeypatch, daemon):
    from typer.testing import CliRunner

    from wreck.storeserver import cli as store_cli
    from wreck.urlserver import cli as url_cli

    built = []

    async def fake(settings, *args, **kwargs):
        built.append(settings)
        return 0

    module, flag, first, other, field = {
        "urlserver": (url_cli, "--delay", "2s", "3s", "delay"),
        "storeserver": (store_cli, "--zstd-level", "5", "7", "zstd_level"),
    }[daemon]
    monkeypatch.setattr(module, "serve" if daemon == "urlserver" else "run", fake)
    data = tmp_path / "d"
    base = ["--data", str(data), "--listen", "127.0.0.1:0"]

    def start(*args: str):
        try:
            return CliRunner().invoke(module.app, [*base, *args])
        finally:
            dirlock.release_all()  # as the process's exit would

    assert start(flag, first).exit_code == 0
    kept = data / module.KEPT
    text = kept.read_text()
    assert start().exit_code == 0 and getattr(built[-1], field) == getattr(built[0], field)
    refused = start(flag, other)
    assert refused.exit_code == 2 and flag in refused.output and "--reconfigure" in refused.output
    assert kept.read_text() == text and len(built) == 2
    shown = start(flag, other, "--reconfigure", "--print-config")
    assert shown.exit_code == 0 and f"[{daemon}]" in shown.output and kept.read_text() == text
    config = tmp_path / "c.toml"
    config.write_text(f'[{daemon}]\n{field} = "{other}"\n' if daemon == "urlserver" else f"[{daemon}]\n{field} = {other}\n")
    assert start("--config", str(config), "--reconfigure").exit_code == 0
    assert getattr(built[-1], field) != getattr(built[0], field) and kept.read_text() != text
    assert start().exit_code == 0 and getattr(built[-1], field) == getattr(built[-2], field)


def test_a_setting_declared_per_run_is_not_kept_and_may_change_on_a_resume(tmp_path):
    import dataclasses

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Limits:
        pages: int = options.setting(0, help="Pages in all", min=0, per_run=True)
        depth: int = options.setting(3, help="Link depth", min=0)

    p = crawlfile.part("limits", Limits)
    path = tmp_path / "kept.toml"
    crawlfile.settle(path, [p], {"limits": {"pages": 100, "depth": 2}}).save()
    assert "pages" not in path.read_text() and "depth = 2" in path.read_text()
    resumed = crawlfile.settle(path, [p], {"limits": {"pages": 200}})
    assert resumed.of("limits") == {"pages": 200, "depth": 2} and not resumed.changed
