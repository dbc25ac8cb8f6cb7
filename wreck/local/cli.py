# wreck-crawl: the whole crawler on one machine in one command. It starts a
# store server, a urlserver and a spider (one worker per CPU) as child
# processes, all at once, on loopback ports it binds first and hands to them
# (wreck/inherited.py, so none waits for another), shows progress from the
# urlserver's /status, and when the urlserver reports the crawl done (it runs
# with --exit-when-done) stops the spider and the store and prints a summary.
# A crawl with feeds (--feeds, or 'feed:' seeds) is continuous: the urlserver
# runs without --exit-when-done, refetching feeds until Ctrl-C, unless
# wreck-crawl is given --exit-when-done (one round; the next run refetches
# the feeds that are due).
# With --recrawl likewise: pages keep being revisited until Ctrl-C.
# Ctrl-C or SIGTERM stops the children in a safe order (spider, urlserver,
# store: the store drains last, so every record a spider sent is committed);
# running the command again with the same --data resumes. The crawl's
# settings (its urlserver's and store's) are kept in DIR/crawl.toml
# (wreck/crawlfile.py) and its children start from that file; a resume reads
# them, and a flag that would change one is refused unless --reconfigure.
# One wreck-crawl owns DIR at a time (wreck/dirlock.py). This module is the
# command line only; run.py runs the crawl. Once it has its exit code,
# wreck-crawl ends at once (_exit_at_once): Python's teardown of every module
# imported for the daemons, object by object, came after the summary and
# held the shell for tens of milliseconds for nothing (issue 16).
"""The wreck-crawl command."""

from __future__ import annotations

import atexit
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

import typer

from wreck import cmdline, crawlfile, datadir, dirlock, hostsfile, manifest, oneline, options
from wreck.private import private_dir, private_open
from wreck.protocol.settings import split_host_port
from wreck.seedfile import SeedError, has_feeds, survey

from wreck.spider.settings import SpiderSettings
from wreck.storeserver.settings import StoreSettings
from wreck.urlserver.settings import Settings

from .layout import Layout
from .run import run

app = cmdline.app("Crawl from seed URLs with the whole of WRECK on this machine.")


# Urlserver settings that wreck-crawl sets itself, each with the reason; every
# other urlserver setting is a wreck-crawl option, generated from its field.
URLSERVER_OWN = {
    "data": "the urlserver's state is DIR/frontier of wreck-crawl's --data",
    "store": "wreck-crawl starts the store and passes its address",
    "store_data": "wreck-crawl passes its store's directory (DIR) for the crawl manifest",
    "listen": "a loopback port wreck-crawl binds and hands to the urlserver child (wreck/inherited.py)",
    "http": "wreck-crawl's own --http (default: a free loopback port), read back for the progress line",
    "store_http": "wreck-crawl binds the store's --http on a loopback port, hands it to the store and passes it",
    "secret": "never on a command line (ps shows it); taken from the environment",
    "exit_when_done": "wreck-crawl's own --exit-when-done decides (one round of feeds or recrawls)",
    "partitions": "wreck-crawl's own --partitions: it starts that many urlservers",
    "partition": "wreck-crawl numbers its urlserver partitions",
    "peers": "wreck-crawl passes its partitions' loopback addresses",
    "crawl_id": "one urlserver draws the crawl's id; wreck-crawl gives its partitions one",
}


# The store's settings a crawl chooses; the rest tune the store's server and
# storage (its defaults suit a local crawl), and several of them share a flag
# with a urlserver setting (--map-size, --max-connections).
STORE_CHOSEN = ("dedup", "near_dups", "near_dup_distance", "warc_dir", "warc_size", "warc_prefix", "operator",
                "crawl_name")
# The spider's settings a crawl chooses (its connect is the urlserver
# child's address, its name the host's and pid's).
SPIDER_CHOSEN = ("procs", "concurrency")
# The crawl's settings file: a [urlserver] and a [storeserver] table, as the
# daemons read them (the store's plugins are the urlserver's).
# Every store setting is kept (those without a wreck-crawl flag are edited
# in the file, or given with --config).
PARTS = (crawlfile.part("urlserver", Settings, URLSERVER_OWN), crawlfile.part("storeserver", StoreSettings))
MAX_PARTITIONS = 8  # local urlservers: each is a process; more would only contend for the same cores
MAX_STORES = 16  # local shards: each is a process and a directory; more would only contend for the same disk
DEFAULT_HTTP = "127.0.0.1:0"  # the dashboard: loopback, a port the OS picks (printed at start)
FOREIGN_SHOWN = 3  # names of what is in a --data that is not a crawl's, quoted in its refusal
# The daemons of a wreck-crawl killed with -9 die with it, but the store
# first commits what it holds (supervise.py's grace): a restart waits for them.
LEFTOVER_WAIT_S = 30.0


def _urlserver_args(kept: Path, seeds: str | None, feeds: str | None, chosen: dict[str, Any], *,
                    partitioned: bool = False) -> list[str]:
    """The urlserver child's flags: its settings from the crawl's file, the
    settings of this run alone (per_run: the global limits) as given, then
    the seed and feed files. Partitions each keep their own settings file
    (their index differs), read from the crawl's as a --config whose changes
    wreck-crawl has already checked (--reconfigure)."""
    per_run = {d.name for d in options.declared(Settings) if d.option.per_run}
    source = ["--config", str(kept), "--reconfigure"] if partitioned else ["--settings-file", str(kept)]
    args = [*source,
            *options.to_argv(Settings, {k: v for k, v in chosen.items() if k in per_run})]
    for flag, value in (("--seeds", seeds), ("--feeds", feeds)):
        if value is not None:
            args += [flag, value]
    return args


EXAMPLES = cmdline.examples(
    ("Crawl a site into ./crawl; the dashboard's address is printed at start",
     "wreck-crawl --data crawl https://example.com/"),
    ("Seeds from a file, at most 10 pages a host, stop after an hour",
     "wreck-crawl --data crawl --seeds seeds.txt --max-pages 10 --max-time 1h"),
    ("Resume a crawl stopped with Ctrl-C", "wreck-crawl --data crawl"),
)
IN, OUT, DAEMONS = options.INPUT, options.OUTPUT, options.DAEMONS  # --help panels


@cmdline.command(app, EXAMPLES)
@options.command(StoreSettings, only=STORE_CHOSEN, into="store_chosen", panel=OUT)
@options.command(Settings, exclude=URLSERVER_OWN)
@options.command(SpiderSettings, only=SPIDER_CHOSEN, into="spider_chosen")
@cmdline.logging_options("info")
def crawl(
    urls: list[str] = typer.Argument(None, metavar="URL", help="Seed URLs.", show_default=False),
    seeds: str = typer.Option(None, "--seeds", metavar="FILE", rich_help_panel=IN,
                              help=cmdline.with_default("Seed file, one URL a line ('-': stdin)", "none")),
    data: Path = typer.Option(..., "--data", metavar="DIR", rich_help_panel=IN,
                              help="Directory of the crawl (created; run again to resume)"),
    feeds: str = typer.Option(None, "--feeds", metavar="FILE", rich_help_panel=IN,
                              help=cmdline.with_default("File of feed URLs (RSS, Atom, JSON Feed): refetched until "
                                                        "Ctrl-C", "none")),
    exit_when_done: bool = typer.Option(False, "--exit-when-done", metavar="", rich_help_panel=options.FEEDS,
                                        help=cmdline.with_default("With feeds or --recrawl: stop after one round "
                                                                  "instead of refetching", "off")),
    config: Path = typer.Option(None, "--config", metavar="FILE", rich_help_panel=IN,
                                help=cmdline.with_default("Settings file (TOML: \\[urlserver] and \\[storeserver] "
                                                          "tables, as --print-config shows); flags win over it",
                                                          "none")),
    reconfigure: bool = typer.Option(False, "--reconfigure", metavar="", rich_help_panel=IN,
                                     help=cmdline.with_default("Accept flags or --config values that differ from the "
                                                               "settings kept with the crawl, and keep them", "off")),
    print_config: bool = typer.Option(False, "--print-config", metavar="", rich_help_panel=IN,
                                      help="Print the crawl's effective settings (TOML) and exit"),
    partitions: int = typer.Option(None, "--partitions", metavar="M", min=1, max=MAX_PARTITIONS,
                                   rich_help_panel=DAEMONS,
                                   help=cmdline.with_default("urlserver partitions to run, each owning the hosts "
                                                             "whose registrable domain hashes to it (fixed for the "
                                                             "crawl; docs/partitions.md)", "1")),
    stores: int = typer.Option(None, "--stores", metavar="N", min=1, max=MAX_STORES, rich_help_panel=DAEMONS,
                               help=cmdline.with_default("Store shards to run (doc id D in shard D mod N; fixed for "
                                                         "the crawl: a resume keeps its count)", "1")),
    http: str = typer.Option(DEFAULT_HTTP, "--http", metavar="HOST:PORT", rich_help_panel=OUT,
                             help="Where the dashboard and /status listen (printed at start; port 0: one the OS "
                                  "picks)"),
    *,
    chosen: dict[str, Any],
    store_chosen: dict[str, Any],
    spider_chosen: dict[str, Any],
    log_level: int,
) -> None:
    """Crawl, show progress, print a summary; Ctrl-C stops, the same command resumes."""
    layout = Layout(data, _shards(Layout(data), stores), _partitions(Layout(data), partitions))
    try:
        spider = SpiderSettings(connect="", **spider_chosen)  # where to connect: the urlserver child's address
    except options.SettingsError as exc:
        _refuse(str(exc))
    _refuse(datadir.problem(data) or _foreign_problem(layout, (seeds, feeds, config, chosen.get("hosts_file")))
            or _http_problem(http))
    if "plugins" in chosen:
        store_chosen = {**store_chosen, "plugins": chosen["plugins"]}
    try:  # refused here, before any child starts (or anything is written), as the daemons would refuse them
        settled = crawlfile.settle(layout.settings, PARTS, {"urlserver": chosen, "storeserver": store_chosen},
                                   config=config, reconfigure=reconfigure)
        settled.values["storeserver"]["plugins"] = settled.values["urlserver"].get("plugins", ())
        Settings(data=str(layout.frontier), **settled.of("urlserver"))
        StoreSettings(data=layout.store_data, **settled.of("storeserver"))
    except (options.SettingsError, crawlfile.ConfigError, crawlfile.Changed) as exc:
        typer.echo(f"wreck-crawl: {exc}", err=True)
        raise typer.Exit(2) from None
    if print_config:
        typer.echo(settled.text(), nl=False)
        raise typer.Exit(0)
    hosts_file = settled.of("urlserver").get("hosts_file")
    if hosts_file and not os.path.isfile(hosts_file):  # kept with the crawl: a /tmp file may be gone by a resume
        _refuse(f"--hosts {hosts_file}: no such file (a hosts file the test web printed lives in /tmp only while "
                f"it runs)" if not os.path.exists(hosts_file) else f"--hosts {hosts_file}: not a file")
    if hosts_file:
        try:
            hostsfile.read(hosts_file)  # a bad line: one line naming it, before any child starts
        except (hostsfile.HostsFileError, OSError) as exc:
            _refuse(str(exc) if isinstance(exc, hostsfile.HostsFileError) else f"--hosts {hosts_file}: {exc.strerror}")
    if not urls and not seeds and not feeds and not layout.started():
        typer.echo("wreck-crawl: give seed URLs, --seeds FILE or --feeds FILE (or --data of a crawl to resume)", err=True)
        raise typer.Exit(2)
    stdin = sys.stdin.read() if seeds == "-" else None
    if urls or seeds or not layout.started():
        _check_seeds(seeds, urls or [], settled.values["urlserver"].get("allow_net", ()), stdin)
    if feeds is not None:
        try:
            survey(feeds, ())  # readable; its bad lines are the urlserver's to report, with the feeds' rules
        except SeedError as exc:
            _refuse(f"--feeds: {exc}")
    def lock() -> None:
        layout.make()
        dirlock.hold(data, "crawl")
        for directory, name in layout.daemon_locks():
            held = dirlock.holder(directory, name)
            if held:
                pid, _, cmd = held.partition(" ")
                typer.echo(f"wreck-crawl: waiting for a daemon of an earlier run to stop (pid {pid}, {name})", err=True)
                if dirlock.wait_free(directory, name, LEFTOVER_WAIT_S):
                    raise dirlock.DirLocked(f"{directory} is in use by pid {pid} ({cmd}); stop it first")

    crawlfile.take_data("wreck-crawl", data, settled, lock)
    if seeds == "-":  # the urlserver child has no terminal: hand it a file
        private_dir(data)
        copy = layout.seeds_stdin
        with private_open(copy, "w") as fh:
            fh.write(stdin)
        seeds = str(copy)
    passthrough = _urlserver_args(layout.settings, seeds, feeds, chosen, partitioned=layout.partitions > 1)
    store_args = ["--settings-file", str(layout.settings)]
    continuous = not exit_when_done and (feeds is not None or has_feeds(seeds, urls or [], stdin) or bool(settled.of("urlserver").get("recrawl")))
    # the children log as much as asked of wreck-crawl (their logs: DATA/logs)
    log_args = cmdline.level_args(log_level, logging.INFO)
    procs = spider.procs or os.cpu_count() or 1
    raise typer.Exit(run(data, list(urls or []), passthrough, procs, spider.concurrency, store_args,
                         continuous=continuous, http=http, log_args=log_args, shards=layout.shards,
                         partitions=layout.partitions))


def _partitions(layout: Layout, given: int | None) -> int:
    """How many urlserver partitions the crawl runs: a started crawl keeps
    its count (a host's partition cannot change, docs/partitions.md)."""
    if not layout.started():
        return given or 1
    kept = layout.kept_partitions()
    if given is not None and given != kept:
        _refuse(f"--partitions {given}: this crawl's hosts are split among {kept} urlserver partition(s), and the "
                "count cannot change during a crawl (docs/partitions.md); start a new crawl in another --data")
    return kept


def _shards(layout: Layout, given: int | None) -> int:
    """How many store shards the crawl runs: a started crawl keeps the
    count its manifest names (doc id mod n cannot change, docs/deploy.md)."""
    try:
        kept = len(manifest.read(layout.frontier).stores) if layout.manifest.exists() else None
    except manifest.ManifestError as exc:
        _refuse(str(exc))
    if kept is None and layout.started():
        kept = 1  # started before the manifest existed: one store
    if kept is not None and given is not None and given != kept:
        _refuse(f"--stores {given}: this crawl keeps its documents in {kept} store shard(s), and the count cannot "
                "change during a crawl (doc id mod n, docs/deploy.md); start a new crawl in another --data")
    return kept or given or 1


def _refuse(problem: str | None) -> None:
    """A mistake in the command: one line on stderr, exit 2, nothing started."""
    if problem:
        typer.echo(f"wreck-crawl: {problem}", err=True)
        raise typer.Exit(2)


def _foreign_problem(layout: Layout, given: tuple[Any, ...]) -> str | None:
    """Whether --data is someone else's directory (files, none a crawl's
    nor named by this command)."""
    names = layout.foreign(given)
    if not names:
        return None
    shown = ", ".join(names[:FOREIGN_SHOWN]) + (", ..." if len(names) > FOREIGN_SHOWN else "")
    return (f"--data {layout.root} holds files that are not a crawl's ({shown}); give a new or empty directory "
            f"(a crawl fills it and makes it private to you)")


def _http_problem(address: str) -> str | None:
    """Whether the urlserver child could serve --http there: asked by binding
    it once now, so a busy port is one line here, not a child's traceback."""
    try:
        host, port = split_host_port(address, listen=True)
    except ValueError as exc:
        return f"--http {exc}"
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's server does
            probe.bind((host or "0.0.0.0", port))
    except OSError as exc:
        return f"--http {address}: cannot listen there: {exc.strerror or exc}"
    return None


def _check_seeds(seeds: str | None, urls: list[str], allow_net, stdin: str | None) -> None:
    """Bad seeds: one line each on stderr, and the crawl goes on with the
    good ones; none good at all (or the seeds file unreadable): exit 2."""
    try:
        found = survey(seeds, urls, allow_net, stdin)
    except SeedError as exc:
        _refuse(f"--seeds: {exc}")
    if not found.good and found.problems:
        *others, (last, _) = found.problems
        for line, _ in others:
            typer.echo(f"wreck-crawl: {line}", err=True)
        _refuse(f"{last} (no valid seed: nothing to crawl)")
    for line in found.lines():
        typer.echo(f"wreck-crawl: {line}", err=True)
    if not found.good and (seeds is not None or urls):
        _refuse(f"{'standard input' if seeds == '-' else seeds or 'the command line'} holds no seed URL")


def main() -> None:
    try:
        oneline.main(app, "wreck-crawl")
    except SystemExit as exc:
        _exit_at_once(exc.code)


def _exit_at_once(code: int | str | None) -> NoReturn:
    """Exit with `code` as an ordinary exit would, less the teardown of the
    interpreter's modules: wreck-crawl imported every daemon's (fork.py's
    preload: numpy, lmdb, lexbor, rich ...) and Python frees them object by
    object at exit, after the summary, while the kernel frees the memory
    at once. What an exit owes is done first: the threads that are not
    daemons joined (as Python does), the exit handlers run (multiprocessing
    reaps the forked daemons, logging flushes), stdout and stderr flushed.
    The daemons are stopped and their logs complete by now (run.py, Child.stop)."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # as sys.exit(TEXT) does
        code = 1
    for thread in threading.enumerate():
        if not thread.daemon and thread is not threading.current_thread():
            thread.join()
    atexit._run_exitfuncs()  # what Python itself calls at exit (CPython's, private but there since 3.0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (wreck-crawl | head): nothing more to say
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    main()
