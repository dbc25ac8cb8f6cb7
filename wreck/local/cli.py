# wreck-crawl: the whole crawler on one machine in one command. It starts a
# store server, a urlserver and a spider (one worker per CPU) as child
# processes on loopback ports the OS picks, shows progress from the
# urlserver's /status, and when the urlserver reports the crawl done (it runs
# with --exit-when-done) stops the spider and the store and prints a summary.
# A crawl with feeds (--feeds, or 'feed:' seeds) is continuous: the urlserver
# runs without --exit-when-done, refetching feeds until Ctrl-C, unless
# wreck-crawl is given --exit-when-done (one round; the next run refetches
# the feeds that are due).
# With --recrawl likewise: pages keep being revisited until Ctrl-C.
# Ctrl-C or SIGTERM stops the children in a safe order (spider, urlserver,
# store: the store drains last, so every record a spider sent is committed);
# running the command again with the same --data resumes. This module is the
# command line only; run.py runs the crawl.
"""The wreck-crawl command."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from wreck import options
from wreck.private import private_dir, private_open
from wreck.seedfile import has_feeds

from wreck.storeserver.settings import StoreSettings
from wreck.urlserver.settings import Settings

from .layout import Layout
from .run import run

app = typer.Typer(add_completion=False, help="Crawl from seed URLs with the whole of WRECK on this machine.")


# Urlserver settings that wreck-crawl sets itself, each with the reason; every
# other urlserver setting is a wreck-crawl option, generated from its field.
URLSERVER_OWN = {
    "data": "the urlserver's state is DIR/frontier of wreck-crawl's --data",
    "store": "wreck-crawl starts the store and passes its address",
    "listen": "a free loopback port, read back from the urlserver child",
    "http": "a free loopback port, for the progress line",
    "secret": "never on a command line (ps shows it); taken from the environment",
    "exit_when_done": "wreck-crawl's own --exit-when-done decides (one round of feeds or recrawls)",
}


# The store's settings a crawl chooses; the rest tune the store's server and
# storage (its defaults suit a local crawl), and several of them share a flag
# with a urlserver setting (--map-size, --max-connections).
STORE_CHOSEN = ("dedup", "near_dups", "near_dup_distance")


def _urlserver_args(chosen: dict[str, Any], seeds: str | None, feeds: str | None) -> list[str]:
    """The urlserver child's flags: the settings chosen on wreck-crawl's
    command line (the urlserver's own defaults apply to the rest), then the
    seed and feed files."""
    args = options.to_argv(Settings, chosen)
    for flag, value in (("--seeds", seeds), ("--feeds", feeds)):
        if value is not None:
            args += [flag, value]
    return args


@app.command()
@options.command(StoreSettings, only=STORE_CHOSEN, into="store_chosen", panel="Store")
@options.command(Settings, exclude=URLSERVER_OWN)
def crawl(
    urls: list[str] = typer.Argument(None, metavar="URL", help="Seed URLs."),
    seeds: str = typer.Option(None, "--seeds", metavar="FILE", help="Seed file, one URL a line ('-': stdin)."),
    data: Path = typer.Option(..., "--data", metavar="DIR", help="Directory of the crawl (created; run again to resume)."),
    procs: int = typer.Option(os.cpu_count() or 1, "--procs", metavar="N", help="Spider worker processes."),
    concurrency: int = typer.Option(200, "--concurrency", metavar="N", help="Transfers in flight per spider worker."),
    feeds: str = typer.Option(None, "--feeds", metavar="FILE", help="File of feed URLs (RSS, Atom, JSON Feed): refetched until Ctrl-C."),
    exit_when_done: bool = typer.Option(False, "--exit-when-done", help="With feeds or --recrawl: stop after one round instead of refetching."),
    *,
    chosen: dict[str, Any],
    store_chosen: dict[str, Any],
) -> None:
    """Crawl, show progress, print a summary; Ctrl-C stops, the same command resumes."""
    layout = Layout(data)
    try:  # refused here, before any child starts, as the urlserver and the store would refuse them
        Settings(data=str(layout.frontier), **chosen)
        StoreSettings(data=layout.store_data, **store_chosen)
    except options.SettingsError as exc:
        typer.echo(f"wreck-crawl: {exc}", err=True)
        raise typer.Exit(2) from None
    if not urls and not seeds and not feeds and not layout.started():
        typer.echo("wreck-crawl: give seed URLs, --seeds FILE or --feeds FILE (or --data of a crawl to resume)", err=True)
        raise typer.Exit(2)
    if seeds == "-":  # the urlserver child has no terminal: hand it a file
        private_dir(data)
        copy = layout.seeds_stdin
        with private_open(copy, "w") as fh:
            fh.write(sys.stdin.read())
        seeds = str(copy)
    passthrough = _urlserver_args(chosen, seeds, feeds)
    store_args = options.to_argv(StoreSettings, {**store_chosen, "plugins": chosen.get("plugins", ())})
    continuous = not exit_when_done and (feeds is not None or has_feeds(seeds, urls or []) or bool(chosen.get("recrawl")))
    raise typer.Exit(run(data, list(urls or []), passthrough, procs, concurrency, store_args, continuous=continuous))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
