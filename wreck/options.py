# A setting is declared once, on its field of a frozen settings dataclass:
# `setting(default, help=..., unit=..., above=..., max=...)` is a
# dataclasses.field whose metadata holds an `Option` (flag, help, unit,
# bounds and their reason, parse and show hooks, --help panel). Everything
# else is generated from those fields:
#   - `validate(obj)` checks every field's bounds, choices and check hook; a
#     settings class calls it from __post_init__, so values built in code are
#     refused exactly as command-line values are, with a SettingsError that
#     names the flag;
#   - `command(cls)` decorates a typer command with one option per field, in
#     the --help panel its `panel=` names (one of PANELS, shared by every
#     command so that a flag sits under the same heading everywhere)
#     (typer reads the function's __signature__, built here from the fields),
#     each default shown with its unit in --help; an option left out stays
#     None, so the command sees only what was given, run through the field's
#     parse hook by the command itself (click would take a hook's None, as in
#     "--http off", for "not given");
#   - `to_argv(cls, values)` turns chosen values back into flags, for a parent
#     (wreck-crawl) that starts the daemon as a child process.
# The metadata is plain data, so a config file and the settings kept with a
# crawl are read and written from the same declarations (wreck/crawlfile.py;
# a field declared per_run=True is chosen anew by each start, not kept; one
# declared fixed=True never changes after the first start, not even with
# --reconfigure: docs/partitions.md).
"""Settings declared once: field metadata, validation, command lines."""

from __future__ import annotations

import dataclasses
import decimal
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Optional

import typer

KEY = "wreck.option"  # the field-metadata key holding an Option
REQUIRED: Any = dataclasses.MISSING  # setting(REQUIRED, ...): no default, the flag must be given

# The --help panels of every command, in the order a newcomer reads them
# (docs/cli.md): where the crawl starts and is kept, what it follows, how
# gently, when it ends, what it does on failure, what it fetches again, what
# it writes, and how the daemons run.
INPUT, SCOPE, POLITENESS, LIMITS = "Input", "Scope", "Politeness", "Limits"
RETRIES, FEEDS, OUTPUT, DAEMONS = "Retries", "Feeds and recrawl", "Output", "Daemons"
PANELS = (INPUT, SCOPE, POLITENESS, LIMITS, RETRIES, FEEDS, OUTPUT, DAEMONS)


class SettingsError(ValueError):
    """A setting's value is impossible; the message names its flag."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclasses.dataclass(frozen=True, kw_only=True)
class Option:
    """How one setting appears on a command line and which values it takes."""

    help: str
    unit: str | None = None  # after numbers in --help and in errors: "s", "bytes"
    min: float | None = None  # inclusive lower bound
    above: float | None = None  # exclusive lower bound ("must be above 0")
    max: float | None = None  # inclusive upper bound
    why: str | None = None  # the bounds' reason, quoted in the error (an RFC, a limit)
    flag: str | None = None  # default: --field-name
    parse: Callable[[str], Any] | None = None  # command-line text -> value (an item, if repeatable)
    show: Callable[[Any], str] | None = None  # value -> command-line text (inverse of parse)
    check: Callable[[Any], str | None] | None = None  # why the whole value is wrong, or None
    choices: tuple[str, ...] = ()
    panel: str | None = None  # --help panel: one of PANELS
    repeatable: bool = False  # the flag may be given many times; the field is a tuple
    negatable: bool | None = None  # a switch's --no- form; None: only for a switch on by default
    metavar: str | None = None
    default_help: str | None = None  # what the default means, when its value alone does not say
    per_run: bool = False  # each start chooses it anew: not kept with the crawl (wreck/crawlfile.py)
    fixed: bool = False  # the crawl's for life: a resume that changes it is refused even with --reconfigure


def setting(default: Any = REQUIRED, **option: Any) -> Any:
    """A dataclass field declared with its command-line `Option` (keywords as
    Option's fields). Use in a kw_only dataclass; immutable defaults only."""
    if "group" in option:  # the panel's former name, in settings written before it was renamed
        option["panel"] = option.pop("group")
    return dataclasses.field(default=default, metadata={KEY: Option(**option)})


@dataclasses.dataclass(frozen=True)
class Declared:
    """One declared field of a settings class, its type resolved."""

    name: str
    type: Any
    default: Any
    option: Option

    @property
    def flag(self) -> str:
        return self.option.flag or "--" + self.name.replace("_", "-")

    @property
    def is_bool(self) -> bool:
        return self.type is bool

    @property
    def negatable(self) -> bool:
        """A switch with a --no- form: given, or else one that is on by default."""
        return self.is_bool and (self.default if self.option.negatable is None else self.option.negatable)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def text(self, value: Any) -> str:
        """A value as it is typed on the command line."""
        return self.option.show(value) if self.option.show else number_text(value)


@functools.cache
def declared(cls: type) -> tuple[Declared, ...]:
    """The fields of `cls` declared with setting(), in order."""
    hints = typing.get_type_hints(cls)
    return tuple(Declared(f.name, hints[f.name], f.default, f.metadata[KEY])
                 for f in dataclasses.fields(cls) if KEY in f.metadata)


def number_text(value: Any) -> str:
    """A number without float noise: 86400.0 -> '86400', 1e-05 -> '0.00001'."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else format(decimal.Decimal(repr(value)), "f")
    return str(value)


# -- validation

def validate(obj: Any) -> None:
    """Check every declared field of `obj`; SettingsError naming the first bad one."""
    for d in declared(type(obj)):
        problem = _problem(d, getattr(obj, d.name))
        if problem:
            raise SettingsError(d.flag, problem)


def _problem(d: Declared, value: Any) -> str | None:
    o = d.option
    if o.choices and value not in o.choices:
        return f"{d.flag} must be {_either(o.choices)}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low_ok = (o.min is None or value >= o.min) and (o.above is None or value > o.above)
        if not low_ok or (o.max is not None and value > o.max):
            return f"{d.flag} must be {bounds_text(o)}"
    if o.check:
        why = o.check(value)
        if why:
            return f"{d.flag} {why}"
    return None


def bounds_text(o: Option) -> str:
    """'above 0 and at most 86400 s (RFC 9309 2.4)'; '' without bounds."""
    parts = []
    if o.above is not None:
        parts.append(f"above {number_text(o.above)}")
    if o.min is not None:
        parts.append(f"at least {number_text(o.min)}")
    if o.max is not None:
        parts.append(f"at most {number_text(o.max)}")
    if not parts:
        return ""
    text = " and ".join(parts) + (f" {o.unit}" if o.unit and o.max is not None else "")
    return text + (f" ({o.why})" if o.why else "")


def _either(words: Iterable[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# -- the command line

def help_text(d: Declared) -> str:
    """The option's help with its default and unit: '... [default: 3 s]'."""
    o = d.option
    if d.required:
        return o.help
    if o.default_help is not None:
        shown = o.default_help
    elif d.is_bool:
        shown = "on" if d.default else "off"
    elif d.default in (None, ()):
        shown = "none"
    elif o.repeatable:
        shown = ",".join(d.text(v) for v in d.default)
    elif o.show or not o.unit:  # a show hook writes its own unit ("16MiB", "1d")
        shown = d.text(d.default)
    else:  # seconds as a duration is typed ("3s": it stays whole when the help wraps)
        shown = d.text(d.default) + (o.unit if o.unit == "s" else f" {o.unit}")
    return f"{o.help} \\[default: {shown}]"  # typer's help is rich markup: "\\[" is a bracket


def _base(tp: Any) -> Any:
    """`X | None` -> X."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        rest = [a for a in typing.get_args(tp) if a is not type(None)]
        return rest[0] if len(rest) == 1 else str
    return tp


def _metavar(d: Declared) -> str:
    if d.option.metavar:
        return d.option.metavar
    if d.option.choices:
        return "|".join(d.option.choices).upper()
    if d.option.unit in ("s", "ms"):
        return {"s": "SECONDS", "ms": "MS"}[d.option.unit]
    base = _base(d.type)
    if d.option.repeatable or d.option.parse or base is str:
        return "TEXT"
    return {int: "N", float: "NUMBER"}.get(base, "TEXT")


def parameter(d: Declared) -> inspect.Parameter:
    """The typer parameter of one declared field. Every option but a required
    one defaults to None (not given): the field's own default then applies,
    and a parent passing flags on sees only what was chosen."""
    o = d.option
    decls = [f"{d.flag}/--no-{d.flag[2:]}"] if d.negatable else [d.flag]
    # a switch takes no value: no metavar (typer would print "<bool>")
    info = dict(help=help_text(d), show_default=False, rich_help_panel=o.panel,
                metavar="" if d.is_bool else _metavar(d))
    if d.is_bool:
        tp = Optional[bool]
    elif o.repeatable:
        tp = Optional[list[str]]
    elif o.parse:  # parsed by the command (a hook may return None, which click reads as "not given")
        tp = Optional[str]
    else:
        tp = _base(d.type) if d.required else Optional[_base(d.type)]
    annotation = Annotated[tp, typer.Option(*decls, **info)]
    default = ... if d.required else None
    return inspect.Parameter(d.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def command(cls: type, *, exclude: Iterable[str] = (), only: Iterable[str] | None = None,
            into: str = "chosen", panel: str | None = None) -> Callable[[Callable], Callable]:
    """Decorate a typer command: its own parameters, then one option per
    declared field of `cls` (those in `only` if given, but never those in
    `exclude`; all in --help panel `panel` if given, else each in its own).
    The command receives the values given on the command line, parsed, by
    field name, as its keyword argument `into`; decorators for two settings
    classes stack, each with its own `into`."""
    skip, keep = set(exclude), None if only is None else set(only)
    fields = [d for d in declared(cls) if d.name not in skip and (keep is None or d.name in keep)]
    if panel:
        fields = [dataclasses.replace(d, option=dataclasses.replace(d.option, panel=panel)) for d in fields]
    generated = [parameter(d) for d in fields]

    def decorate(func: Callable) -> Callable:
        own = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.name != into]
        clash = {p.name for p in own} & {p.name for p in generated}
        if clash:
            raise TypeError(f"{func.__name__} has its own {', '.join(sorted(clash))}: exclude them from {cls.__name__}")

        @functools.wraps(func)
        def run(**kwargs: Any) -> Any:
            chosen = {}
            for d in fields:
                value = kwargs.pop(d.name)
                if value is None or value == []:
                    continue  # not given: the field's default applies
                chosen[d.name] = _parsed(d, value)
            return func(**kwargs, **{into: chosen})

        params = sorted((p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own + generated), key=_panel_rank)
        run.__signature__ = inspect.Signature(params)  # typer builds the options from this
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def _panel_rank(p: inspect.Parameter) -> int:
    """Where a parameter's --help panel comes (typer shows the panels in the
    order their first option comes): the general options, then PANELS in
    order, then any other. Typer passes every parameter by name, so all are
    keyword-only and any order is a valid signature."""
    found = [m for m in (*getattr(p.annotation, "__metadata__", ()), p.default) if hasattr(m, "rich_help_panel")]
    panel = found[0].rich_help_panel if found else None
    if panel is None or not isinstance(panel, str):
        return -1
    return PANELS.index(panel) if panel in PANELS else len(PANELS)


def _parsed(d: Declared, value: Any) -> Any:
    """A command-line value through the field's parse hook; a repeated flag's
    items make a tuple (a hook may turn one item into several)."""
    parse = d.option.parse
    try:
        if not d.option.repeatable:
            return parse(value) if parse else value
        items: list[Any] = []
        for text in value:
            item = parse(text) if parse else text
            items.extend(item) if isinstance(item, tuple) else items.append(item)
        return tuple(items)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=d.flag) from None


def to_argv(cls: type, values: Mapping[str, Any]) -> list[str]:
    """Command-line flags for `values` (field name -> value) of `cls`'s
    declared fields, in declaration order; other names are an error."""
    known = {d.name: d for d in declared(cls)}
    unknown = set(values) - set(known)
    if unknown:
        raise KeyError(f"not a declared setting of {cls.__name__}: {', '.join(sorted(unknown))}")
    argv: list[str] = []
    for d in known.values():
        if d.name not in values:
            continue
        value = values[d.name]
        if d.is_bool:
            if value or d.negatable:  # else off is the default: nothing to say
                argv.append(d.flag if value else f"--no-{d.flag[2:]}")
        elif d.option.repeatable:
            for item in value:
                argv += [d.flag, d.text(item)]
        else:
            argv += [d.flag, d.text(value)]
    return argv


# -- parse hooks shared by the daemons

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?")
_SIZE_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes in '64MiB', '1g', '512k' or plain '4096' (binary multiples); ValueError if not."""
    found = _SIZE.fullmatch(text.strip().lower())
    if not found:
        raise ValueError(f"{text!r} is not a size such as 4096, 512KiB, 64MiB or 1GiB")
    return int(float(found.group(1)) * _SIZE_UNIT[found.group(2)])


def size_text(n: int) -> str:
    """The shortest exact binary form of a size: 1073741824 -> '1GiB'."""
    for suffix, mult in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)
