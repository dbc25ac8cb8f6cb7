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
# running the command again with the same --data resumes.
"""The wreck-crawl command."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from wreck import options
from wreck.private import private_dir, private_open

from .children import Child, ChildFailed
from wreck.urlserver.db import saved_counts
from .progress import Progress, store_counters, summary
from wreck.urlserver.seeds import has_feeds
from wreck.storeserver.settings import StoreSettings
from wreck.urlserver.settings import Settings

TICK_S = 1.0  # progress refresh and child check
EXIT_INTERRUPTED = 130

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
    try:  # refused here, before any child starts, as the urlserver and the store would refuse them
        Settings(data=str(data / "frontier"), **chosen)
        StoreSettings(data=data, **store_chosen)
    except options.SettingsError as exc:
        typer.echo(f"wreck-crawl: {exc}", err=True)
        raise typer.Exit(2) from None
    if not urls and not seeds and not feeds and not (data / "frontier").exists():
        typer.echo("wreck-crawl: give seed URLs, --seeds FILE or --feeds FILE (or --data of a crawl to resume)", err=True)
        raise typer.Exit(2)
    if seeds == "-":  # the urlserver child has no terminal: hand it a file
        private_dir(data)
        copy = data / "seeds-stdin.txt"
        with private_open(copy, "w") as fh:
            fh.write(sys.stdin.read())
        seeds = str(copy)
    passthrough = _urlserver_args(chosen, seeds, feeds)
    store_args = options.to_argv(StoreSettings, {**store_chosen, "plugins": chosen.get("plugins", ())})
    continuous = not exit_when_done and (feeds is not None or has_feeds(seeds, urls or []) or bool(chosen.get("recrawl")))
    raise typer.Exit(run(data, list(urls or []), passthrough, procs, concurrency, store_args, continuous=continuous))


def run(data: Path, urls: list[str], urlserver_args: list[str], procs: int, concurrency: int,
        store_args: list[str] = (), *, continuous: bool = False) -> int:
    """Run a local crawl; the process exit code."""
    console = Console()
    logs = data / "logs"
    private_dir(logs)
    os.chmod(data, 0o700)
    stopping = {"signal": None}

    def on_signal(signum, _frame) -> None:
        stopping["signal"] = signum

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    children: list[Child] = []
    progress = None
    started = time.monotonic()
    finished = False
    try:
        store = Child("storeserver", "wreck.storeserver.cli", ["--data", str(data), "--listen", "127.0.0.1:0", *store_args],
                      logs / "storeserver.log")  # fmt: skip
        children.append(store)
        store_addr = store.read_line("storeserver listening on ")
        store.drain()
        url = Child("urlserver", "wreck.urlserver.cli", [
            *urls, *urlserver_args, "--data", str(data / "frontier"), "--store", store_addr,
            "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", *([] if continuous else ["--exit-when-done"]),
        ], logs / "urlserver.log")  # fmt: skip
        children.append(url)
        url_addr = url.read_line("urlserver listening on ")
        status_url = url.read_line("urlserver status on ").rstrip("/") + "/status"
        url.drain()
        spider = Child("spider", "wreck.spider.cli", ["--connect", url_addr, "--procs", str(procs),
                                                "--concurrency", str(concurrency)], logs / "spider.log")
        children.append(spider)
        console.print(f"WRECK: crawling into {data} with {procs} spider worker(s); Ctrl-C stops, "
                      f"the same command resumes.", highlight=False)  # fmt: skip
        if continuous:
            console.print("WRECK: feeds and recrawled pages are refetched until Ctrl-C (--exit-when-done: one round).",
                          highlight=False)
        progress = Progress(status_url, data, console)
        while stopping["signal"] is None:
            progress.update()
            if not url.running():
                finished = url.proc.returncode == 0
                if not finished:
                    raise ChildFailed(f"urlserver exited with {url.proc.returncode}:\n{url.tail()}")
                break
            for child in (store, spider):
                if not child.running():
                    raise ChildFailed(f"{child.name} exited with {child.proc.returncode}:\n{child.tail()}")
            time.sleep(TICK_S)
    except ChildFailed as exc:
        if progress:
            progress.close()
        console.print(f"wreck-crawl: {exc}", markup=False)
        _stop_all(children)
        return 1
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    last = progress.last if progress else {}
    if progress:
        progress.close()
    _stop_all(children)
    counts = saved_counts(str(data / "frontier"))  # final, unlike the last /status
    if counts:
        last = {**last, "urls": counts}
    console.print(summary(last, store_counters(data), time.monotonic() - started, data, finished), markup=False)
    return 0 if finished else EXIT_INTERRUPTED


def _stop_all(children: list[Child]) -> None:
    """Spider first, then urlserver, then the store (it drains last)."""
    for child in reversed(children):
        child.stop()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
