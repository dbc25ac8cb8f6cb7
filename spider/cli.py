# `spider --connect HOST:PORT [--procs N] [--concurrency N]`: the command
# operators start on each box. It reads the shared secret, then starts N
# worker processes and supervises them. The workers are forked from this
# process, which has imported everything a worker runs (worker.py and what
# it imports) but never runs an event loop, a thread or a libcurl handle: so
# each worker builds its own loop and transfers from scratch, and N workers
# cost one interpreter start, not N+1 (spawn re-imported everything in each,
# about 0.2 CPU-s per worker, plus multiprocessing's resource tracker; issue
# 16). A forked worker first puts back the signal handlers and the logging
# this process set. A worker that dies is restarted
# after a backoff; one that was refused for good (wrong secret) stops the
# whole spider with its code. SIGTERM/SIGINT stop every worker and wait for
# them; workers also get SIGTERM if the supervisor itself dies (Linux
# PR_SET_PDEATHSIG), so no orphan keeps crawling. The dying with the parent,
# the stop with a grace and the restart backoff are wreck/supervise.py's,
# shared with wreck-crawl.
"""The spider command line."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from wreck import cmdline, oneline, options, supervise
from wreck.deploy import SECRET_ENV, DeployError, secret_from
from wreck.protocol.settings import split_host_port

from . import worker
from .settings import SpiderSettings

LOG = logging.getLogger("spider")
# Seconds a stopping worker gets before it is killed.
STOP_GRACE_S = 10.0
# A worker that lived less than this before dying counts as crash-looping.
HEALTHY_RUN_S = 30.0
RESTART_BACKOFF_FIRST_S = 0.5
RESTART_BACKOFF_MAX_S = 60.0
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}

app = cmdline.app("Fetch what the urlserver assigns, store it, report DONE.")


def _worker_main(options: worker.WorkerOptions, log_level: int) -> None:
    # Forked with the stop signals blocked: the supervisor's handlers would
    # stop *its* workers from here, so this process's own go in first.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    supervise.die_with_parent()
    _setup_logging(log_level, options.name)
    sys.exit(worker.run(options))


def _setup_logging(log_level: int, name: str) -> None:
    logging.basicConfig(
        level=log_level,
        format=f"%(asctime)s {name} %(levelname)s %(name)s: %(message)s",
        force=True,  # a forked worker replaces the supervisor's handler (its name in each line)
    )


class Supervisor:
    """Keeps N worker processes running until stopped."""

    def __init__(self, options: list[worker.WorkerOptions], log_level: int) -> None:
        self.ctx = multiprocessing.get_context("fork")  # after import: see the opening comment
        self.options, self.log_level = options, log_level
        self.procs: dict[int, multiprocessing.Process] = {}
        self.started: dict[int, float] = {}
        self.backoff = [supervise.RestartBackoff(healthy_run_s=HEALTHY_RUN_S, first_s=RESTART_BACKOFF_FIRST_S,
                                                 max_s=RESTART_BACKOFF_MAX_S) for _ in options]
        self.stopping = False

    def _start(self, index: int) -> None:
        proc = self.ctx.Process(target=_worker_main, args=(self.options[index], self.log_level),
                                name=self.options[index].name, daemon=False)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # held until the worker's own handlers
        try:
            proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self.procs[index], self.started[index] = proc, time.monotonic()

    def run(self) -> int:
        for index in range(len(self.options)):
            if self.stopping:  # a stop signal during the start: start no more
                break
            self._start(index)
        restart_at: dict[int, float] = {}
        while not self.stopping:
            sentinels = [p.sentinel for p in self.procs.values()]
            # Sleep until a worker ends or a restart is due: no polling (an
            # idle spider uses no CPU, issue 16). stop() runs in the signal
            # handler and ends the workers, which wakes this wait.
            wake = min(restart_at.values(), default=None)
            multiprocessing.connection.wait(sentinels, timeout=None if wake is None else max(0.0, wake - time.monotonic()))
            now = time.monotonic()
            for index, proc in list(self.procs.items()):
                if proc.is_alive() or self.stopping:
                    continue
                del self.procs[index]
                if proc.exitcode == worker.EXIT_REFUSED:
                    LOG.error("worker %s was refused by the urlserver or a store server; stopping", proc.name)
                    self.stop()
                    return worker.EXIT_REFUSED
                delay = self.backoff[index].after(now - self.started[index])
                LOG.warning("worker %s exited with %s; restarting in %.1f s", proc.name, proc.exitcode, delay)
                restart_at[index] = now + delay
            for index, when in list(restart_at.items()):
                if now >= when and not self.stopping:
                    del restart_at[index]
                    self._start(index)
        # A stop signal handled inside _start (the worker started, not yet
        # in self.procs) left that worker running: stop it too, or this
        # process would wait for it at exit, for ever.
        self.stop()
        return 0

    def stop(self, *_: object) -> None:
        self.stopping = True
        for proc in supervise.stop(list(self.procs.values()), STOP_GRACE_S):
            LOG.warning("worker %s did not stop in %.0f s; killed it", proc.name, STOP_GRACE_S)


EXAMPLES = cmdline.examples(
    ("Fetch for the urlserver of this machine, one worker per CPU", "spider --connect 127.0.0.1:7001"),
    ("Join a crawl on another machine: 4 workers, the crawl's shared secret",
     "spider --connect crawl1:7001 --procs 4 --secret-file secret.txt"),
    ("Fewer transfers at once, to spare a small link", "spider --connect 127.0.0.1:7001 --concurrency 20"),
)


@cmdline.command(app, EXAMPLES)
@options.command(SpiderSettings)
@cmdline.logging_options("info")
def spider(
    secret_file: Annotated[Optional[Path], typer.Option(metavar="FILE", rich_help_panel=options.DAEMONS,
                                                        help=cmdline.with_default("Shared secret, first line",
                                                                                  f"${SECRET_ENV}"))] = None,
    *,
    chosen: dict[str, Any],
    log_level: int,
) -> None:
    """Fetch what the urlserver assigns, store it, report DONE."""
    try:
        settings = SpiderSettings(**chosen)
    except options.SettingsError as exc:
        typer.echo(f"spider: {exc}", err=True)
        raise typer.Exit(2) from None
    _setup_logging(log_level, "supervisor")
    connect = settings.connect
    try:
        split_host_port(connect)
        secret = secret_from(secret_file.read_text() if secret_file else None, os.environ.get(SECRET_ENV))
    except (DeployError, OSError) as exc:
        LOG.error("%s", exc)
        raise typer.Exit(2) from None
    except ValueError as exc:  # from split_host_port: a bad argument
        LOG.error("--connect: %s", exc)
        raise typer.Exit(2) from None
    count = settings.procs or os.cpu_count() or 1
    base = settings.name or f"{socket.gethostname().split('.')[0]}-{os.getpid()}"
    workers = [worker.WorkerOptions(connect, secret, f"{base}-{i}"[:64], settings.concurrency) for i in range(count)]
    supervisor = Supervisor(workers, log_level)
    signal.signal(signal.SIGTERM, supervisor.stop)
    signal.signal(signal.SIGINT, supervisor.stop)
    raise typer.Exit(supervisor.run())


def main() -> None:
    oneline.main(app, "spider")


if __name__ == "__main__":
    main()
