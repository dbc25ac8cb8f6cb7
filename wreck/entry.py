# The installed commands' entry points (pyproject.toml [project.scripts]).
# Each imports its command with SIGINT at the system default first, so a
# Ctrl-C while the imports run (a fifth of a second, more on a cold cache)
# ends the command quietly, as any Unix tool, instead of a KeyboardInterrupt
# traceback from inside some import; once imported, Python's handler is
# back, and the command's own handling applies (wreck/oneline.py: exit 130;
# wreck-crawl then stops its daemons in order: wreck/local/run.py).
"""Entry points: each command's main(), imported quietly."""

from __future__ import annotations

import importlib
import signal


def _main(module: str) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    command = importlib.import_module(module)
    signal.signal(signal.SIGINT, previous)
    command.main()


def wreck_crawl() -> None:
    """wreck-crawl (wreck.local.cli)."""
    _main("wreck.local.cli")


def urlserver() -> None:
    """urlserver (wreck.urlserver.cli)."""
    _main("wreck.urlserver.cli")


def spider() -> None:
    """spider (wreck.spider.cli)."""
    _main("wreck.spider.cli")


def storeserver() -> None:
    """storeserver (wreck.storeserver.cli)."""
    _main("wreck.storeserver.cli")


def wreck_dump() -> None:
    """wreck-dump (wreck.storeserver.dump)."""
    _main("wreck.storeserver.dump")
