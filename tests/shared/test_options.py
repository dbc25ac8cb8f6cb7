"""Settings declared once (wreck/options.py): a field's bounds are checked in
the object itself, its typer option shows the default with its unit, and
chosen values go back to flags that parse to the same values."""

from __future__ import annotations

import dataclasses

import pytest
import typer
from typer.testing import CliRunner

from wreck import options
from wreck.options import REQUIRED, SettingsError, setting
from wreck.storeserver.settings import StoreSettings
from wreck.urlserver.settings import Settings


def _twice(text: str) -> tuple[str, ...]:
    return (text, text)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Toy:
    name: str = setting(REQUIRED, help="A name")
    ttl: float = setting(60.0, help="Time kept", unit="s", above=0, max=3600, why="RFC 0 1.2")
    tries: int = setting(3, help="Tries", unit="tries", min=1)
    mode: str = setting("a", help="Mode", choices=("a", "b", "c"))
    size: int = setting(1 << 20, help="Buffer", parse=options.parse_size, show=options.size_text)
    tags: tuple[str, ...] = setting((), help="Tags", repeatable=True, parse=_twice, flag="--tag",
                                    check=lambda v: "must not hold 'x'" if "x" in v else None)
    fast: bool = setting(False, help="Go fast")
    sync: bool = setting(True, help="fsync")
    path: str | None = setting(None, help="A file", default_help="none")
    peer: str | None = setting("h:1", help="A peer ('off': none)", parse=lambda t: None if t == "off" else t,
                               show=lambda v: v or "off")
    undeclared: bytes = b""

    def __post_init__(self) -> None:
        options.validate(self)


def _app(seen: dict) -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    @options.command(Toy, exclude=("path",))
    def main(verbose: bool = typer.Option(False, "-v"), *, chosen: dict) -> None:
        seen.update(chosen, verbose=verbose)

    return app


@pytest.mark.parametrize("values, message", [
    ({"ttl": 0.0}, "--ttl must be above 0 and at most 3600 s (RFC 0 1.2)"),
    ({"ttl": 3601.0}, "--ttl must be above 0 and at most 3600 s (RFC 0 1.2)"),
    ({"tries": 0}, "--tries must be at least 1"),
    ({"mode": "d"}, "--mode must be a, b or c"),
    ({"tags": ("x",)}, "--tag must not hold 'x'"),
])  # fmt: skip
def test_a_value_out_of_bounds_is_refused_when_built_naming_its_flag(values, message):
    with pytest.raises(SettingsError) as caught:
        Toy(name="n", **values)
    assert str(caught.value) == message and caught.value.flag == message.split()[0]


def test_values_within_bounds_are_kept():
    t = Toy(name="n", ttl=3600.0, tries=1, mode="c")
    assert (t.ttl, t.tries, t.mode) == (3600.0, 1, "c")


def test_the_command_line_has_one_option_per_declared_field_with_default_and_unit():
    result = CliRunner().invoke(_app({}), ["--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    text = " ".join(result.output.replace("│", " ").split())
    for words in ("--ttl", "Time kept [default: 60s]", "Tries [default: 3 tries]", "Buffer [default: 1MiB]",
                  "--tag", "--fast", "Go fast [default: off]", "--no-sync", "fsync [default: on]", "--name"):
        assert words in text, words
    assert "--path" not in text and "--undeclared" not in text and "--no-fast" not in text


def test_only_values_given_are_chosen_and_they_arrive_parsed():
    seen = {}
    result = CliRunner().invoke(_app(seen), ["--name", "n", "--size", "2MiB", "--tag", "t", "--no-sync", "-v"])
    assert result.exit_code == 0, result.output
    assert seen == {"name": "n", "size": 2 << 20, "tags": ("t", "t"), "sync": False, "verbose": True}


def test_a_value_parsed_to_none_is_chosen_not_taken_for_absent():
    seen = {}
    result = CliRunner().invoke(_app(seen), ["--name", "n", "--peer", "off"])
    assert result.exit_code == 0, result.output
    assert seen["peer"] is None
    assert options.to_argv(Toy, {"peer": None}) == ["--peer", "off"]


def test_a_value_its_parse_hook_refuses_exits_2_naming_the_flag():
    result = CliRunner().invoke(_app({}), ["--name", "n", "--size", "lots"])
    assert result.exit_code == 2 and "--size" in result.output and "not a size" in result.output


def test_to_argv_gives_flags_that_parse_back_to_the_same_values():
    values = {"name": "n", "ttl": 0.00001, "tries": 7, "mode": "b", "size": 3 << 30, "tags": ("p", "q"),
              "fast": True, "sync": False}
    argv = options.to_argv(Toy, values)
    assert argv[:2] == ["--name", "n"] and "0.00001" in argv and "3GiB" in argv
    seen = {}
    result = CliRunner().invoke(_app(seen), argv)
    assert result.exit_code == 0, result.output
    seen.pop("verbose")
    # the parse hook doubles each tag: to_argv writes items, parse reads them
    assert seen == {**values, "tags": ("p", "p", "q", "q")}


def test_a_switch_without_its_no_form_is_left_out_when_off():
    assert options.to_argv(Toy, {"fast": False, "sync": False}) == ["--no-sync"]


def test_to_argv_refuses_a_name_that_is_not_a_declared_setting():
    with pytest.raises(KeyError, match="undeclared"):
        options.to_argv(Toy, {"undeclared": b"x"})


@pytest.mark.parametrize("text, size", [("4096", 4096), ("512k", 512 << 10), ("64MiB", 64 << 20), ("1.5g", 3 << 29),
                                        ("2TB", 2 << 40)])
def test_sizes_parse_in_binary_multiples(text, size):
    assert options.parse_size(text) == size
    assert options.parse_size(options.size_text(size)) == size


def test_a_size_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="not a size"):
        options.parse_size("big")


def test_numbers_are_shown_without_float_noise():
    assert [options.number_text(v) for v in (86400.0, 0.5, 1e-05, 3)] == ["86400", "0.5", "0.00001", "3"]


def test_a_command_that_has_its_own_option_of_a_setting_must_exclude_it():
    def main(name: str = "x", *, chosen: dict) -> None: ...

    with pytest.raises(TypeError, match="exclude"):
        options.command(Toy)(main)
    options.command(Toy, exclude=("name",))(main)


@pytest.mark.parametrize("cls", [Settings, StoreSettings])
def test_every_numeric_daemon_setting_has_a_lower_bound_and_help(cls):
    for d in options.declared(cls):
        assert d.option.help, d.name
        if d.type in (int, float):
            assert d.option.min is not None or d.option.above is not None, d.name
