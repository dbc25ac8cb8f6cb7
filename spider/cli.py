# `spider --connect HOST:PORT [--procs N] [--concurrency N]`: the command
# operators start on each box. It reads the shared secret, then starts N
# worker processes (spawned, so each builds its own event loop and libcurl
# state from scratch) and supervises them: a worker that dies is restarted
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
from typing import Annotated, Optional

import typer

from wreck import oneline, supervise
from wreck.deploy import SECRET_ENV, DeployError, secret_from
from wreck.protocol.settings import split_host_port

from . import worker

LOG = logging.getLogger("spider")
# Seconds a stopping worker gets before it is killed.
STOP_GRACE_S = 10.0
# A worker that lived less than this before dying counts as crash-looping.
HEALTHY_RUN_S = 30.0
RESTART_BACKOFF_FIRST_S = 0.5
RESTART_BACKOFF_MAX_S = 60.0

app = typer.Typer(add_completion=False)


def _worker_main(options: worker.WorkerOptions, verbose: bool) -> None:
    supervise.die_with_parent()
    _setup_logging(verbose, options.name)
    sys.exit(worker.run(options))


def _setup_logging(verbose: bool, name: str) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format=f"%(asctime)s {name} %(levelname)s %(name)s: %(message)s",
    )


class Supervisor:
    """Keeps N worker processes running until stopped."""

    def __init__(self, options: list[worker.WorkerOptions], verbose: bool) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.options, self.verbose = options, verbose
        self.procs: dict[int, multiprocessing.Process] = {}
        self.started: dict[int, float] = {}
        self.backoff = [supervise.RestartBackoff(healthy_run_s=HEALTHY_RUN_S, first_s=RESTART_BACKOFF_FIRST_S,
                                                 max_s=RESTART_BACKOFF_MAX_S) for _ in options]
        self.stopping = False

    def _start(self, index: int) -> None:
        proc = self.ctx.Process(target=_worker_main, args=(self.options[index], self.verbose),
                                name=self.options[index].name, daemon=False)
        proc.start()
        self.procs[index], self.started[index] = proc, time.monotonic()

    def run(self) -> int:
        for index in range(len(self.options)):
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
        return 0

    def stop(self, *_: object) -> None:
        self.stopping = True
        for proc in supervise.stop(list(self.procs.values()), STOP_GRACE_S):
            LOG.warning("worker %s did not stop in %.0f s; killed it", proc.name, STOP_GRACE_S)


@app.command()
def spider(
    connect: Annotated[str, typer.Option(help="urlserver HOST:PORT; everything else comes from its handshake")],
    procs: Annotated[Optional[int], typer.Option(min=1, help="worker processes (default: CPUs)")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=10_000, help="transfers per worker")] = worker.DEFAULT_CONCURRENCY,
    secret_file: Annotated[Optional[Path], typer.Option(help=f"shared secret (first line); or set {SECRET_ENV}")] = None,
    name: Annotated[Optional[str], typer.Option(help="name shown to the urlserver (default: host-pid)")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Fetch what the urlserver assigns, store it, report DONE."""
    _setup_logging(verbose, "supervisor")
    try:
        split_host_port(connect)
        secret = secret_from(secret_file.read_text() if secret_file else None, os.environ.get(SECRET_ENV))
    except (DeployError, OSError) as exc:
        LOG.error("%s", exc)
        raise typer.Exit(2) from None
    except ValueError as exc:  # from split_host_port: a bad argument
        LOG.error("--connect: %s", exc)
        raise typer.Exit(2) from None
    count = procs or os.cpu_count() or 1
    base = name or f"{socket.gethostname().split('.')[0]}-{os.getpid()}"
    options = [worker.WorkerOptions(connect, secret, f"{base}-{i}"[:64], concurrency) for i in range(count)]
    supervisor = Supervisor(options, verbose)
    signal.signal(signal.SIGTERM, supervisor.stop)
    signal.signal(signal.SIGINT, supervisor.stop)
    raise typer.Exit(supervisor.run())


def main() -> None:
    oneline.main(app, "spider")


if __name__ == "__main__":
    main()
