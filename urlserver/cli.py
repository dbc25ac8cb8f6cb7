# `urlserver`: a typer command that builds one frozen Settings, loads the
# seeds, and runs the server (uvloop) until a signal or, with
# --exit-when-done, until nothing is pending or in flight (exit 0). Every
# setting's option is generated from its field in settings.py
# (wreck/options.py); only what is not a setting is declared here: the seeds,
# the secret file, --list-plugins; -v/-q/--log-level and --version are
# every command's (wreck/cmdline.py). The settings are kept with the crawl
# (DATA/urlserver.toml, wreck/crawlfile.py): a restart reads them, and a flag
# that would change one is refused unless --reconfigure. One urlserver owns a
# --data directory at a time (wreck/dirlock.py).
"""The urlserver command line."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import sys
from typing import Annotated, Any, Optional

import msgspec
import typer

from pathlib import Path

from wreck import cmdline, collector, crawlfile, datadir, deploy, dirlock, hostsfile, manifest, oneline, options
from wreck.private import private_dir
from wreck.seedfile import SeedError, survey
from wreck.plugins import GROUP, STATS, PluginError, describe

from . import seeds
from .settings import Settings

app = cmdline.app("Own a crawl: frontier, DNS, robots.txt, politeness; hand URLs to spiders.")
log = logging.getLogger("urlserver")
# The last stdout line of a urlserver that stopped cleanly: this prefix, then
# the final /status as one JSON object, as committed. wreck-crawl reads it
# for its summary, as it reads the first lines for where the urlserver listens.
FINISHED_LINE = "urlserver finished "
KEPT = "urlserver.toml"  # the settings kept in --data
TABLE = "urlserver"  # its table in a settings file
# Settings each start chooses anew, not kept with the crawl: where the data
# is, where this run listens and stores, and whether it exits when done.
PER_RUN = ("data", "store", "store_data", "listen", "http", "store_http", "exit_when_done", "api_token_file")
PART = crawlfile.part(TABLE, Settings, PER_RUN)
# What a run imports beyond this module (lazily, so that --help and a refused
# start stay cheap): a parent that forks the urlserver after imports
# (wreck-crawl, wreck/local/fork.py) imports these first.
PRELOAD = ("uvloop", "wreck.urlserver.db", "wreck.urlserver.crawl", "wreck.urlserver.api", "wreck.urlserver.http",
           "wreck.urlserver.statusview", "wreck.urlserver.server", "wreck.urlserver.storeview")


EXAMPLES = cmdline.examples(
    ("Crawl two sites; spiders connect to port 7001, the dashboard is on port 7080",
     "urlserver --data crawl https://example.com/ https://example.org/"),
    ("Seeds from a file, the same registered domain, 2 s between requests to a host",
     "urlserver --data crawl --seeds seeds.txt --scope domain --delay 2s"),
    ("Resume the crawl, fetching again what ended in error",
     "urlserver --data crawl --retry-errors"),
)


@cmdline.command(app, EXAMPLES)
@options.command(Settings)
@cmdline.logging_options("info")
def run(
    urls: Annotated[Optional[list[str]], typer.Argument(help="Seed URLs", metavar="URL", show_default=False)] = None,
    seeds_file: Annotated[Optional[str], typer.Option("--seeds", metavar="FILE", rich_help_panel=options.INPUT,
                          help=cmdline.with_default("Seed file, or - for stdin ('feed:URL' lines are feeds)",
                                                    "none"))] = None,
    feeds: Annotated[Optional[str], typer.Option("--feeds", metavar="FILE", rich_help_panel=options.INPUT,
                     help=cmdline.with_default("File of feed URLs (RSS, Atom, JSON Feed), one a line",
                                               "none"))] = None,
    secret_file: Annotated[Optional[str], typer.Option(metavar="FILE", rich_help_panel=options.DAEMONS,
                           help=cmdline.with_default("Shared secret file, first line",
                                                     f"${deploy.SECRET_ENV}"))] = None,
    list_plugins: Annotated[bool, typer.Option("--list-plugins", is_eager=True, callback=lambda v: _list_plugins(v),
                                               metavar="", rich_help_panel=options.OUTPUT,
                                               help="List installed plugins and exit")] = False,
    config: Annotated[Optional[Path], typer.Option("--config", metavar="FILE", rich_help_panel=options.INPUT,
                      help=cmdline.with_default("Settings file (TOML, a \\[urlserver] table as --print-config "
                                                "shows); flags win over it", "none"))] = None,
    reconfigure: Annotated[bool, typer.Option("--reconfigure", metavar="", rich_help_panel=options.INPUT,
                           help=cmdline.with_default("Accept flags or --config values that differ from the "
                                                     "settings kept with the crawl, and keep them", "off"))] = False,
    print_config: Annotated[bool, typer.Option("--print-config", help="Print the effective settings (TOML) "
                            "and exit", metavar="", rich_help_panel=options.INPUT)] = False,
    settings_file: Annotated[Optional[Path], typer.Option("--settings-file", metavar="FILE", help=cmdline.with_default(
                             "Where the crawl's settings are kept (wreck-crawl passes its own)", f"DATA/{KEPT}"),
                             rich_help_panel=options.INPUT)] = None,
    *,
    chosen: dict[str, Any],
    log_level: int,
) -> None:
    """Own a crawl: frontier, DNS, robots.txt, politeness; hand URLs to spiders."""
    logging.basicConfig(level=log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    data = chosen.pop("data")
    if datadir.problem(data):
        typer.echo(f"urlserver: {datadir.problem(data)}", err=True)
        raise typer.Exit(2)
    kept = settings_file or Path(data) / KEPT
    try:
        text = open(secret_file, encoding="utf-8").read() if secret_file else None
        secret = deploy.secret_from(text, os.environ.get(deploy.SECRET_ENV))
        settled = crawlfile.settle(kept, [PART], {TABLE: chosen}, config=config, reconfigure=reconfigure)
        settings = Settings(data=data, **settled.of(TABLE), secret=secret)
        host = settings.listen.rpartition(":")[0].strip("[]")
        deploy.check_listen(host, secret)
        if settings.http:
            from .api import api_token
            from .http import check_address
            check_address(settings.http, secret, api_token(settings))
        if settings.hosts_file:  # read at start, in the server: a missing one was its traceback
            hostsfile.read(settings.hosts_file)  # a bad line: one line naming it, before the start
    except hostsfile.HostsFileError as exc:
        typer.echo(f"urlserver: {exc}", err=True)
        raise typer.Exit(2) from None
    except FileNotFoundError as exc:
        typer.echo(f"urlserver: --hosts {exc.filename}: {exc.strerror}", err=True)
        raise typer.Exit(2) from None
    except (OSError, deploy.DeployError, options.SettingsError, crawlfile.ConfigError, crawlfile.Changed) as exc:
        typer.echo(f"urlserver: {exc}", err=True)
        raise typer.Exit(2) from None
    if print_config:
        typer.echo(settled.text(), nl=False)
        raise typer.Exit(0)
    stdin = sys.stdin.read() if seeds_file == "-" else None
    _check_seeds(seeds_file, urls or [], feeds, settings.allow_net, stdin)
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)  # read once for the check; seeds.load reads it again from here
    crawlfile.take_data("urlserver", data, settled, lambda: dirlock.hold(private_dir(data), "urlserver"))
    warning = deploy.open_warning(host, secret)
    if warning:
        typer.echo(f"urlserver: warning: {warning}", err=True)
    import uvloop

    from wreck.cannotlisten import CannotListen

    from .db import StateError

    try:
        code = uvloop.run(serve(settings, seeds_file, urls or [], feeds))
    except KeyboardInterrupt:
        code = 0
    except CannotListen as exc:  # --listen or --http taken, or not this machine's
        typer.echo(f"urlserver: {exc}", err=True)
        code = 2
    except StateError as exc:  # at start: the state under --data cannot be opened or written
        typer.echo(f"urlserver: cannot open or write the crawl state under {settings.data}: {exc}", err=True)
        code = 1
    raise typer.Exit(code)


async def serve(settings: Settings, seeds_file: str | None, urls: list[str], feeds: str | None = None) -> int:
    from .crawl import Crawl
    from .api import api_token, keep_token_file
    from .http import HttpStatus, exposed
    from .statusview import summary
    from .server import UrlServer
    from .storeview import StoreView

    try:
        crawl = Crawl.open(settings)
    except PluginError as exc:
        print(f"urlserver: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    seeds.load(crawl, seeds_file, urls, log, feeds=feeds)
    _write_manifest(settings, crawl.crawl_id)
    # The hosts and records loaded so far live as long as the crawl: out of the
    # collector's generations, so a full collection does not walk them again
    # (about 10% of hand-out time at 30M URLs, bench/results/*frontier-notes.md),
    # and young collections are rarer (wreck/collector.py).
    collector.settle()
    server = UrlServer(settings, crawl)
    if settings.store_http:
        server.store_view = StoreView(settings.store_http)
        server.store_view.start()
    token = api_token(settings) if settings.http else None
    status = HttpStatus(server, token=token, exposed=bool(settings.http) and exposed(settings.http))
    keep_token_file(settings.data, None if settings.api_token_file else token)  # for the operator's curl
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    address = await server.start()
    print(f"urlserver listening on {address[0]}:{address[1]}", flush=True)
    if settings.http:
        bound = await status.start(settings.http)
        print(f"urlserver status on http://{bound[0]}:{bound[1]}/", flush=True)
        print(f"dashboard: http://{bound[0]}:{bound[1]}/", flush=True)  # docs/dashboard.md
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.finished.wait())]
    reporter = asyncio.ensure_future(_report_stats(server, settings.stats_interval))
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for w in (*waiters, reporter):
        w.cancel()
    await server.stop()
    await status.stop()
    if server.store_view is not None:
        server.store_view.stop()
    if server.broken is not None:
        crawl.abandon()  # the last commit stands; a restart resumes from it
        return 1
    final = summary(server)
    if crawl.plugins.has(STATS):
        crawl.plugins.stats(final)  # the final figures, even for a crawl shorter than an interval
    crawl.close()
    # After the last commit: the figures a resume starts from (wreck-crawl's summary).
    print(f"{FINISHED_LINE}{msgspec.json.encode(final).decode()}", flush=True)
    return 0


def _write_manifest(settings: Settings, crawl_id: str) -> None:
    """DATA/crawl.json: the crawl's stores in shard order, for readers of a
    sharded crawl (wreck/manifest.py); rewritten at each start, as --store
    may name new addresses."""
    data = [str(Path(d).resolve()) for d in settings.store_data]
    if data and len(data) != len(settings.store):
        log.warning("--store-data names %d directories for %d stores: the manifest leaves them out",
                    len(data), len(settings.store))
        data = []
    manifest.write(Path(settings.data), manifest.Manifest(format=manifest.FORMAT, crawl_id=crawl_id,
                                                          stores=tuple(settings.store), store_data=tuple(data)))


async def _report_stats(server, interval: float) -> None:
    """Call the plugins' stats hooks every `interval` seconds."""
    from .statusview import summary

    plugins = server.crawl.plugins
    while plugins.has(STATS):
        await asyncio.sleep(interval)
        plugins.stats(summary(server))


def _check_seeds(source: str | None, urls: list[str], feeds: str | None, allow_net, stdin: str | None) -> None:
    """Before anything starts: a seeds or feeds file that cannot be read, or
    seeds given with none valid, is one line on stderr and exit 2; bad seeds
    beside good ones are reported (file and line) and skipped."""
    try:
        found = survey(source, urls, allow_net, stdin)
    except SeedError as exc:
        typer.echo(f"urlserver: --seeds: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        feed_lines = survey(feeds, (), allow_net) if feeds is not None else None
    except SeedError as exc:
        typer.echo(f"urlserver: --feeds: {exc}", err=True)
        raise typer.Exit(2) from None
    problems = found.problems + (feed_lines.problems if feed_lines else [])
    given = source is not None or bool(urls)
    if given and not found.good and not (feed_lines and feed_lines.good):
        for line, _ in problems[:-1]:
            typer.echo(f"urlserver: {line}", err=True)
        if problems:
            typer.echo(f"urlserver: {problems[-1][0]} (no valid seed: nothing to crawl)", err=True)
        else:
            typer.echo(f"urlserver: {'standard input' if source == '-' else source or 'the command line'} holds no seed URL", err=True)
        raise typer.Exit(2)
    for line, outcome in problems:
        typer.echo(f"urlserver: {line} ({outcome})", err=True)


def _list_plugins(wanted: bool) -> None:
    if wanted:
        typer.echo(plugins_text())
        raise typer.Exit(0)


def plugins_text() -> str:
    """--list-plugins: every installed plugin, its hooks and what it does."""
    rows = describe()
    if not rows:
        return f"no plugins installed (entry point group {GROUP})"
    return "\n".join(f"{name:<16} {','.join(hooks) or '-':<22} {doc}" for name, doc, hooks in rows)


def main() -> None:
    oneline.main(app, "urlserver")


if __name__ == "__main__":
    main()
