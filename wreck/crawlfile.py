# Settings kept with a crawl, and settings files (--config FILE): one TOML
# format for both, a table per command ([urlserver], [storeserver]), a key
# per setting named as its field, each preceded by a comment with the
# field's help, unit and default. Everything is generated from the fields'
# metadata (wreck/options.py), so urlserver, storeserver and wreck-crawl keep
# and read their settings the same way:
#   - `settle` works out a start's effective settings: defaults, then the
#     kept file, then --config FILE, then the flags (each wins over the one
#     before). A kept value that the file or a flag changes is refused
#     (`Changed`, naming every such key) unless the operator said
#     --reconfigure, so a resume runs exactly as the crawl began (a resume
#     without --dns once resolved a whole frontier into NXDOMAIN errors);
#     a field declared fixed=True (a urlserver's partition) is refused
#     (`Fixed`) even then;
#   - `Settled.save` writes the kept file when it is new or changed (atomic:
#     a temporary file renamed over it; only this command's tables change).
# tomlkit writes (it keeps comments), tomllib reads. A setting whose value is
# unset (None) has no TOML value: it is written as a comment, and a missing
# key means the default.
"""Settings kept with a crawl, and --config files (TOML)."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import tomlkit
import typer

from . import dirlock
from .options import Declared, _base, declared, number_text
from .private import private_open

HEADER = ("Settings of the crawl in this directory, kept by WRECK: every later start reads them.",
          "A flag that differs from a value here is refused unless given with --reconfigure, which records it.",
          "Edit with care: a value here is the crawl's from its next start on.")


class ConfigError(ValueError):
    """A settings file cannot be read, or holds a key or value it must not."""


class Changed(ValueError):
    """Flags or a --config file change settings kept with the crawl."""

    def __init__(self, path: Path, keys: list[str], details: list[str] | None = None) -> None:
        super().__init__(f"settings differ from those kept in {path}: {', '.join(details or keys)} "
                         f"(run without them to resume as before, or add --reconfigure to change them)")
        self.keys = keys


class Fixed(Changed):
    """Flags or a --config file change a setting that is the crawl's for
    life (declared fixed=True): refused even with --reconfigure."""

    def __init__(self, path: Path, keys: list[str], details: list[str]) -> None:
        ValueError.__init__(self, f"{', '.join(details)} cannot change in the crawl kept in {path}: it is fixed "
                                  f"when the crawl begins (run without it to resume, or start a new crawl in "
                                  f"another --data)")
        self.keys = keys


@dataclasses.dataclass(frozen=True)
class Part:
    """The settings of one command kept in a table of the file: `cls`'s
    declared fields, but not those in `per_run` (where a run listens and
    the like: each start chooses them anew)."""

    table: str
    cls: type
    per_run: frozenset[str] = frozenset()

    def fields(self) -> tuple[Declared, ...]:
        """The kept fields, in declaration order (a field declared
        per_run=True is never kept)."""
        return tuple(d for d in declared(self.cls) if d.name not in self.per_run and not d.option.per_run)

    def readable(self) -> dict[str, Declared]:
        """The fields a --config file may set: every declared one but `data`."""
        return {d.name: d for d in declared(self.cls) if d.name != "data"}


def part(table: str, cls: type, per_run: Iterable[str] = ()) -> Part:
    """A Part; `data` is never kept (it is where the file lies)."""
    return Part(table, cls, frozenset(per_run) | {"data"})


# -- reading

def read(path: Path, parts: Iterable[Part], *, missing_ok: bool = False) -> dict[str, dict[str, Any]]:
    """The values the file at `path` sets, by table, then by field name,
    parsed as the flags are; {} for a missing file if `missing_ok`."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not TOML ({exc})") from None
    known = {p.table: p for p in parts}
    values: dict[str, dict[str, Any]] = {}
    for table, keys in doc.items():
        if table not in known:
            continue  # another command's table (one file may serve them all)
        if not isinstance(keys, dict):
            raise ConfigError(f"{path}: {table} must be a table ([{table}])")
        fields = known[table].readable()
        for key, raw in keys.items():
            if key not in fields:
                raise ConfigError(f"{path}: [{table}] {key} is not a setting of {table}")
            try:
                values.setdefault(table, {})[key] = from_toml(fields[key], raw)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{path}: [{table}] {key}: {exc}") from None
    return values


def from_toml(d: Declared, raw: Any) -> Any:
    """A TOML value as the field's value; ValueError saying what it must be."""
    o = d.option
    if d.is_bool:
        if not isinstance(raw, bool):
            raise ValueError("must be true or false")
        return raw
    if o.repeatable:
        if not isinstance(raw, list):
            raise ValueError("must be a list, e.g. [\"a\", \"b\"]")
        items: list[Any] = []
        for item in raw:
            value = o.parse(_text(item)) if o.parse else _text(item)  # a repeated flag takes text
            items.extend(value) if isinstance(value, tuple) else items.append(value)
        return tuple(items)
    if o.parse:
        return o.parse(_text(raw))
    return _scalar(d, raw)


def _text(raw: Any) -> str:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ValueError("must be a string or a number")
    return raw if isinstance(raw, str) else number_text(raw)


def _scalar(d: Declared, raw: Any) -> Any:
    base = _base(d.type)
    if isinstance(raw, bool):
        raise ValueError("must not be true or false")
    if base is float and isinstance(raw, (int, float)):
        return float(raw)
    if base is int and isinstance(raw, int):
        return raw
    if base in (str, Path) and isinstance(raw, str):
        return base(raw)
    raise ValueError(f"must be {'a number' if base in (int, float) else 'a string'}")


# -- writing

def render(values: Mapping[str, Mapping[str, Any]], parts: Iterable[Part], old: str | None = None) -> str:
    """TOML of `values` (table -> field -> value) for every kept field of
    `parts`, each with its comment; other tables of `old` are kept as they are."""
    doc = tomlkit.parse(old) if old else tomlkit.document()
    if not old:
        for line in HEADER:
            doc.add(tomlkit.comment(line))
    for p in parts:
        table = tomlkit.table()
        for d in p.fields():
            value = values.get(p.table, {}).get(d.name, d.default)
            table.add(tomlkit.nl())
            table.add(tomlkit.comment(_about(d)))
            shown = to_toml(d, value)
            if shown is None:
                table.add(tomlkit.comment(f"{d.name} = (unset)"))
            else:
                table.add(d.name, shown)
        if p.table in doc:
            doc.remove(p.table)
        doc.add(p.table, table)
    return tomlkit.dumps(doc)


def _about(d: Declared) -> str:
    """The comment above a key: help, unit, default."""
    o = d.option
    unit = f" (unit: {o.unit})" if o.unit and not o.show else ""
    if d.required:
        default = ""
    elif o.default_help is not None:
        default = f"; default: {o.default_help}"
    else:
        shown = to_toml(d, d.default)
        default = "; default: unset" if shown is None else f"; default: {tomlkit.item(shown).as_string()}"
    return f"{d.flag}: {o.help}{unit}{default}"


def to_toml(d: Declared, value: Any) -> Any:
    """The field's value as TOML writes it (the command line's text where a
    show hook makes one, "1d", "64GiB"), or None when it has none."""
    o = d.option
    if value is None:
        return o.show(value) if o.show else None
    if d.is_bool:
        return bool(value)
    if o.repeatable:
        return [d.text(item) if (o.show or o.parse) else _plain(item) for item in value]
    if o.show:
        return d.text(value)
    return _plain(value)


def _shown(d: Declared, value: Any) -> str:
    """A value as the file writes it, for a message."""
    shown = to_toml(d, value)
    return "unset" if shown is None else tomlkit.item(shown).as_string()


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def write(path: Path, text: str) -> None:
    """Replace the file at `path` with `text` atomically, private to this user."""
    tmp = path.with_name(path.name + ".tmp")
    with private_open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


# -- a start

@dataclasses.dataclass
class Settled:
    """A start's effective settings, and whether the kept file needs writing."""

    path: Path
    parts: tuple[Part, ...]
    values: dict[str, dict[str, Any]]  # table -> field -> value: every readable field that is not the default
    changed: bool

    def of(self, table: str) -> dict[str, Any]:
        """The effective values of a table (fields left out take their default)."""
        return dict(self.values.get(table, {}))

    def text(self) -> str:
        """The kept file as it will be after this start (--print-config)."""
        return render(self.values, self.parts, _old(self.path))

    def save(self) -> None:
        """Write the kept file if it is new or this start changes it."""
        if self.changed:
            write(self.path, self.text())


def _old(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def settle(kept_path: Path, parts: Iterable[Part], flags: Mapping[str, Mapping[str, Any]], *,
           config: Path | None = None, reconfigure: bool = False) -> Settled:
    """Effective settings of a start: defaults < kept file < --config file <
    flags (`flags`: table -> the field values given on the command line).
    Changed if a kept value would change without `reconfigure`; ConfigError
    if a file is unreadable or wrong. Reads only: nothing is written here."""
    parts = tuple(parts)
    exists = kept_path.exists()
    kept = read(kept_path, parts, missing_ok=True)
    given = read(config, parts) if config is not None else {}
    for table, values in flags.items():
        given.setdefault(table, {}).update(values)
    values: dict[str, dict[str, Any]] = {}
    differing: list[str] = []
    details: list[str] = []
    fixed: list[str] = []
    for p in parts:
        before = kept.get(p.table, {})
        now = {**before, **given.get(p.table, {})}
        for d in p.fields():
            old = before.get(d.name, d.default)
            new = now.get(d.name, d.default)
            if exists and new != old:  # a first start keeps what it is given
                differing.append(d.flag)
                details.append(f"{d.flag} (kept {_shown(d, old)}, given {_shown(d, new)})")
                if d.option.fixed:
                    fixed.append(d.flag)
        values[p.table] = now
    if fixed:
        raise Fixed(kept_path, fixed, [x for f, x in zip(differing, details) if f in fixed])
    if differing and not reconfigure:
        raise Changed(kept_path, differing, details)
    return Settled(kept_path, parts, values, changed=bool(differing) or not exists)


EXIT_IN_USE = 1  # another process owns the data directory
EXIT_UNUSABLE = 2  # the data directory cannot be created or written


def take_data(prog: str, data: Path | str, settled: Settled, lock: Callable[[], object]) -> None:
    """Own the data directory (`lock()` takes its lock), then write the kept
    settings; a refusal is one line on stderr and typer.Exit: EXIT_IN_USE
    when another process holds the directory, EXIT_UNUSABLE when it cannot
    be used. Shared by the urlserver, the storeserver and wreck-crawl."""
    try:
        lock()
        settled.save()
    except dirlock.DirLocked as exc:
        typer.echo(f"{prog}: {exc}", err=True)
        raise typer.Exit(EXIT_IN_USE) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(data) else ""  # the part at fault
        typer.echo(f"{prog}: cannot use --data {data}: {where}{exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_UNUSABLE) from None
