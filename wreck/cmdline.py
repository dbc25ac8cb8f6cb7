# What every WRECK command has in common on its command line: `-h` beside
# `--help`, `--version` (the installed package's), two or three examples
# under the options (the command's epilog), and one way to say how much to
# log: `-v` (repeatable) and `-q` step from the command's usual level,
# `--log-level LEVEL` names it outright. `app()` makes the typer app;
# `logging_options(usual)` decorates a command as options.command does, by
# adding parameters to its signature, and hands the command the chosen level
# as its keyword argument `log_level` (a logging level number).
# Typer (0.2x) turns each option's text into its type through a pydantic
# TypeAdapter, built for every declared option, given or not: importing
# pydantic and building about 80 adapters cost a daemon's start about 0.08
# CPU-s (issue 16, `python -X importtime`, time.process_time). app() puts a
# plain conversion in their place for the types WRECK's options use (str,
# int and float without typer bounds, Path, lists of them), the same values
# and the same error messages; any other type goes to typer's own, built
# only when the option is given. Typer without
# that machinery (older or newer) is left as it is.
"""Shared command-line options: -h, --version, -v/-q/--log-level, examples."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import os
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Optional

import typer

PACKAGE = "wreck"  # the distribution whose version --version prints
HELP_FLAGS = ["-h", "--help"]
# From most to least said; -v steps left, -q right, at the ends they stay.
LEVELS = ("debug", "info", "warning", "error", "critical")


def app(help: str) -> typer.Typer:
    """A WRECK command's typer app, without shell-completion flags."""
    _plain_conversions()
    return typer.Typer(add_completion=False, help=help, rich_markup_mode="rich")


# typer's message for each plain number type, as its pydantic adapter words it
_NUMBER_ERRORS = {int: "Input should be a valid integer, unable to parse string as an integer",
                  float: "Input should be a valid number, unable to parse string as a number"}


def _plain_conversions() -> None:
    """Replace typer's pydantic conversion for the plain types (see the top); once."""
    try:
        from pathlib import Path

        from typer import _coercion, _param_types, core
        from typer._click.exceptions import BadParameter
        from typer._typing import get_args, get_origin
    except ImportError:  # another typer: its own conversion stands
        return
    typer_build = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if typer_build is None or base is None or getattr(typer_build, "wreck_plain", False):
        return

    def convert(kind: type, info: Any, value: Any, param: Any, ctx: Any) -> Any:
        if kind is str:
            return value.decode() if isinstance(value, bytes) else str(value)
        if kind in _NUMBER_ERRORS:
            if isinstance(value, kind) and not isinstance(value, bool):
                return value
            try:
                return kind(str(value).strip())
            except ValueError:
                raise BadParameter(_NUMBER_ERRORS[kind], ctx=ctx, param=param) from None
        if isinstance(value, (str, os.PathLike)) and not isinstance(value, kind):
            value = kind(value)  # what typer's adapter makes of the text, without pydantic
        return _param_types.coerce_cli_path(value, info, path_type=kind, param=param, ctx=ctx)

    class Plain(base):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            kind = self.annotation
            if get_origin(kind) is list:
                items = value if isinstance(value, (list, tuple)) else [value]
                return [convert(get_args(kind)[0], self.parameter_info, v, param, ctx) for v in items]
            return convert(kind, self.parameter_info, value, param, ctx)

    def plain_kind(kind: Any, info: Any) -> bool:
        if kind is str:
            return True
        if kind in _NUMBER_ERRORS:
            return info.min is None and info.max is None and not info.clamp
        return (isinstance(kind, type) and issubclass(kind, Path) and info.path_type is None
                and _param_types.routes_to_path(kind, info))

    @dataclasses.dataclass(frozen=True)
    class Deferred(base):
        """Typer's own conversion, built only for a value given (never for None)."""

        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            return typer_build(self.descriptor)._coerce_value(value, param, ctx)

    def build(descriptor: Any) -> Any:
        kind, info = descriptor.annotation, descriptor.parameter_info
        inner = get_args(kind)[0] if get_origin(kind) is list and len(get_args(kind)) == 1 else kind
        if (descriptor.file_annotation is None and info.parser is None and getattr(info, "click_type", None) is None
                and plain_kind(inner, info)):
            return Plain(parameter_info=info, annotation=kind)
        return Deferred(parameter_info=info, annotation=kind, descriptor=descriptor)

    build.wreck_plain = True
    core.build_runtime_param = build


def command(app: typer.Typer, epilog: str) -> Callable[[Callable], Any]:
    """Register the app's command, its examples under the options. Its -h
    and --help are logging_options' (typer's own would show a "<bool>")."""
    return app.command(epilog=epilog, add_help_option=False)


def with_default(help: str, default: str) -> str:
    """An option's help ending in its default as typer shows it (rich
    markup, hence the escaped bracket): for options outside a settings class."""
    return f"{help} \\[default: {default}]"


def examples(*pairs: tuple[str, str]) -> str:
    """A command's epilog: each example is what it does, then the command line
    (rich markup: a blank line keeps lines apart, brackets are escaped)."""
    lines = ["[bold]Examples[/bold]"]
    for what, line in pairs:
        lines.append(f"{what}:\n  [cyan]{line.replace('[', chr(92) + '[')}[/cyan]")
    return "\n\n".join(lines)


def version() -> str:
    """The installed package's version ('unknown' from a bare checkout)."""
    import importlib.metadata  # here: only --version asks (issue 16: every start imported it)

    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _print_help(ctx: typer.Context, wanted: bool) -> None:
    if wanted and not ctx.resilient_parsing:
        typer.echo(ctx.get_help(), color=ctx.color)
        raise typer.Exit(0)


def _print_version(ctx: typer.Context, wanted: bool) -> None:
    if wanted:
        typer.echo(f"{ctx.find_root().info_name} (WRECK) {version()}")
        raise typer.Exit(0)


def _level_name(text: str | None) -> str | None:
    if text is not None and text.lower() not in LEVELS:
        raise typer.BadParameter(f"{text!r} is not one of {', '.join(LEVELS)}")
    return text


def level(usual: str, verbose: int = 0, quiet: int = 0, named: str | None = None) -> int:
    """The logging level chosen: `named` if given, else `usual` moved one
    step per -v towards debug and one per -q towards critical."""
    if named is not None:
        return logging.getLevelNamesMapping()[named.upper()]
    at = min(max(LEVELS.index(usual) - verbose + quiet, 0), len(LEVELS) - 1)
    return logging.getLevelNamesMapping()[LEVELS[at].upper()]


def _params(usual: str) -> list[inspect.Parameter]:
    def option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)

    return [
        option("verbose", Annotated[int, typer.Option("-v", "--verbose", count=True, metavar="", show_default=False,
               help="Log more: one step per -v (-vv: debug)")], 0),
        option("quiet", Annotated[int, typer.Option("-q", "--quiet", count=True, metavar="", show_default=False,
               help="Log less: one step per -q (-qq: errors only)")], 0),
        option("log_level_name", Annotated[Optional[str], typer.Option(
            "--log-level", metavar="LEVEL", callback=lambda v: _level_name(v),
            help=with_default(f"Log at LEVEL: {', '.join(LEVELS)} (wins over -v and -q)", usual))], None),
        option("show_version", Annotated[bool, typer.Option(
            "--version", is_eager=True, callback=_print_version, metavar="",
            help="Print the version and exit")], False),
        option("show_help", Annotated[bool, typer.Option(*HELP_FLAGS, is_eager=True, callback=_print_help,
               metavar="", help="Show this help and exit")], False),
    ]


def logging_options(usual: str) -> Callable[[Callable], Callable]:
    """Decorate a typer command with -v/--verbose, -q/--quiet, --log-level,
    --version and -h/--help (register it with `command`). The command
    receives `log_level` (a number); `usual` (a name in LEVELS) is what it
    logs at when none of them is given."""
    assert usual in LEVELS, usual
    added = _params(usual)

    def decorate(func: Callable) -> Callable:
        own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != "log_level"]

        @functools.wraps(func)
        def run(**kwargs: Any) -> Any:
            chosen = level(usual, kwargs.pop("verbose"), kwargs.pop("quiet"), kwargs.pop("log_level_name"))
            kwargs.pop("show_version"), kwargs.pop("show_help")
            return func(**kwargs, log_level=chosen)

        params = sorted(own + added, key=lambda p: p.kind)  # keyword-only after the rest
        run.__signature__ = inspect.Signature(params)
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def level_args(log_level: int, usual: int) -> Sequence[str]:
    """The --log-level flag a parent passes to a child, if it differs from
    the child's usual level (so a child's log says as much as its parent's)."""
    return [] if log_level == usual else ["--log-level", logging.getLevelName(log_level).lower()]
