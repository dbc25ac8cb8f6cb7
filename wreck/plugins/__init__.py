# The plugin API. A plugin is a class named by an entry point in the group
# `wreck.plugins` (pyproject.toml: [project.entry-points."wreck.plugins"]).
# `--plugin NAME` or `--plugin NAME=ARG` enables it: the class is called
# with ARG (or None) and its instance may define any of three hooks:
#
#   url_filter(url, ctx) -> bool   urlserver, for each new URL in scope:
#                                  False drops it (FILTERED, reason "plugin NAME")
#   document(meta, body) -> dict   storeserver, for each stored document: the
#                                  dict is stored with it (wreck-dump --json)
#   stats(status) -> None          urlserver, every --stats-interval seconds
#                                  and at the end, with /status's counters
#
# A process loads only the plugins that define a hook it runs. A hook that
# raises (or returns what cannot be stored) is logged with the plugin's name,
# counted, and that plugin is disabled for the rest of the run: a plugin can
# never crash a crawl. docs/plugins.md is the user's guide.
"""Plugins: discovery, loading, and calling hooks safely."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

GROUP = "wreck.plugins"
URL_FILTER, DOCUMENT, STATS = "url_filter", "document", "stats"
HOOKS = (URL_FILTER, DOCUMENT, STATS)

log = logging.getLogger("wreck.plugins")

if TYPE_CHECKING:
    import importlib.metadata  # imported by available() alone: a start without plugins does without it (issue 16)


class PluginError(Exception):
    """A plugin cannot be enabled (unknown name, bad argument, failing constructor)."""


class UrlContext(NamedTuple):
    """What a URL filter knows about a URL besides the URL itself."""

    host: str  # the host name, lowercase
    depth: int  # links from the seeds
    source: str | None  # the page that linked to it (or redirected to it); None for seeds


def available() -> dict[str, importlib.metadata.EntryPoint]:
    """Every installed plugin, by name."""
    import importlib.metadata

    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}


def describe() -> list[tuple[str, str, list[str]]]:
    """(name, first docstring line, hooks) of every installed plugin."""
    out = []
    for name, ep in sorted(available().items()):
        try:
            cls = ep.load()
            doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            hooks = [h for h in HOOKS if callable(getattr(cls, h, None))]
        except Exception as exc:  # noqa: BLE001 - listing must show a broken plugin, not die
            doc, hooks = f"cannot be loaded: {exc}", []
        out.append((name, doc, hooks))
    return out


def parse_spec(spec: str) -> tuple[str, str | None]:
    """'NAME' or 'NAME=ARG' -> (NAME, ARG or None)."""
    name, sep, arg = spec.partition("=")
    if not name.strip():
        raise PluginError(f"--plugin {spec!r}: give NAME or NAME=ARG")
    return name.strip(), arg if sep else None


class Plugins:
    """The enabled plugins of one process, and their hooks' safe callers."""

    def __init__(self, specs: tuple[str, ...] | list[str], *, hooks: tuple[str, ...]) -> None:
        found = available() if specs else {}  # scanning installed distributions takes milliseconds
        self.instances: dict[str, Any] = {}
        self.errors: dict[str, int] = {}
        self.disabled: dict[str, str] = {}
        for spec in specs:
            name, arg = parse_spec(spec)
            ep = found.get(name)
            if ep is None:
                known = ", ".join(sorted(found)) or "none"
                raise PluginError(f"no plugin named {name!r} (installed: {known}; see --list-plugins)")
            try:
                cls = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure is the plugin's
                raise PluginError(f"plugin {name!r} cannot be loaded: {exc}") from None
            if not any(callable(getattr(cls, h, None)) for h in hooks):
                continue  # another process runs its hooks
            try:
                self.instances[name] = cls(arg)
            except Exception as exc:  # noqa: BLE001
                raise PluginError(f"plugin {name!r} refused its argument {arg!r}: {exc}") from None
        self._by_hook = {h: [(n, getattr(p, h)) for n, p in self.instances.items() if callable(getattr(p, h, None))]
                         for h in HOOKS}

    def has(self, hook: str) -> bool:
        return bool(self._by_hook[hook])

    def fail(self, name: str, hook: str, exc: BaseException | str) -> None:
        """Log, count and disable plugin `name` after its `hook` failed."""
        self.errors[name] = self.errors.get(name, 0) + 1
        why = f"{hook} raised {type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else f"{hook}: {exc}"
        log.error("event=plugin_disabled plugin=%s reason=%r", name, why,
                  exc_info=exc if isinstance(exc, BaseException) else None)
        self.disabled[name] = why
        self.instances.pop(name, None)
        for h in HOOKS:
            self._by_hook[h] = [(n, f) for n, f in self._by_hook[h] if n != name]

    def url_reason(self, url: str, ctx: UrlContext) -> str | None:
        """'plugin NAME' if an enabled URL filter drops `url`, else None."""
        for name, hook in self._by_hook[URL_FILTER]:
            try:
                keep = hook(url, ctx)
            except Exception as exc:  # noqa: BLE001 - a plugin never crashes the crawl
                self.fail(name, URL_FILTER, exc)
                continue
            if not keep:
                return f"plugin {name}"
        return None

    def document(self, meta: dict, body: bytes) -> bytes | None:
        """The document hooks' metadata as one JSON object {NAME: value}, or None."""
        out = {}
        for name, hook in self._by_hook[DOCUMENT]:
            try:
                value = hook(meta, body)
                if value is not None:
                    msgspec.json.encode(value)  # storable, or this plugin is at fault
                    out[name] = value
            except Exception as exc:  # noqa: BLE001
                self.fail(name, DOCUMENT, exc)
        return msgspec.json.encode(out) if out else None

    def stats(self, status: dict) -> None:
        for name, hook in self._by_hook[STATS]:
            try:
                hook(status)
            except Exception as exc:  # noqa: BLE001
                self.fail(name, STATS, exc)

    def close(self) -> None:
        for name, plugin in list(self.instances.items()):
            close = getattr(plugin, "close", None)
            if callable(close):
                try:
                    close()
                except Exception as exc:  # noqa: BLE001
                    self.fail(name, "close", exc)

    def status(self) -> dict:
        """What /status shows under "plugins"."""
        return {"enabled": sorted(self.instances), "disabled": dict(self.disabled), "errors": dict(self.errors)}
