# wreck-crawl: the whole crawler on one machine in one command. It starts a
# store server, a urlserver and a spider (one worker per CPU) as child
# processes on loopback ports the OS picks, shows progress from the
# urlserver's /status, and when the urlserver reports the crawl done (it runs
# with --exit-when-done) stops the spider and the store and prints a summary.
# With --recrawl it runs until stopped: pages keep being revisited.
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

import typer
from rich.console import Console

from .children import Child, ChildFailed
from .db import saved_counts
from .progress import Progress, store_counters, summary

TICK_S = 1.0  # progress refresh and child check
EXIT_INTERRUPTED = 130

app = typer.Typer(add_completion=False, help="Crawl from seed URLs with the whole of WRECK on this machine.")


def _urlserver_args(opts: dict, repeatable: dict) -> list[str]:
    args: list[str] = []
    for flag, value in opts.items():
        if value is None or value is False:
            continue
        args += [flag] if value is True else [flag, str(value)]
    for flag, values in repeatable.items():
        for value in values or ():
            args += [flag, value]
    return args


@app.command()
def crawl(
    urls: list[str] = typer.Argument(None, help="Seed URLs."),
    seeds: str = typer.Option(None, "--seeds", help="Seed file, one URL a line ('-': stdin)."),
    data: Path = typer.Option(..., "--data", help="Directory of the crawl (created; run again to resume)."),
    procs: int = typer.Option(os.cpu_count() or 1, "--procs", help="Spider worker processes."),
    concurrency: int = typer.Option(200, "--concurrency", help="Transfers in flight per spider worker."),
    delay: float = typer.Option(None, "--delay", help="Seconds between requests to one host (urlserver default: 1)."),
    ip_delay: float = typer.Option(None, "--ip-delay", help="Seconds between requests to one IP."),
    host_concurrency: int = typer.Option(None, "--host-concurrency", help="Transactions in flight per host (default 1)."),
    ip_concurrency: int = typer.Option(None, "--ip-concurrency", help="Transactions in flight per IP."),
    max_pages: int = typer.Option(None, "--max-pages", help="URLs admitted per host (trap budget)."),
    max_depth: int = typer.Option(None, "--max-depth", help="Link depth from the seeds."),
    scope: str = typer.Option(None, "--scope", help="host | domain | any (default: host)."),
    include: list[str] = typer.Option(None, "--include", help="Only URLs matching REGEX (repeatable)."),
    exclude: list[str] = typer.Option(None, "--exclude", help="No URL matching REGEX (repeatable)."),
    user_agent: str = typer.Option(None, "--user-agent", help="User-Agent, with a contact."),
    dns: str = typer.Option(None, "--dns", help="Nameserver IP:PORT."),
    hosts: str = typer.Option(None, "--hosts", help="Static hosts file (wins over DNS)."),
    allow_net: list[str] = typer.Option(None, "--allow-net", help="Admit this CIDR, e.g. 127.0.0.0/8 (repeatable)."),
    timeout_update: float = typer.Option(None, "--timeout-update", help="Seconds a claim lives without WORKING."),
    timeout_req: float = typer.Option(None, "--timeout-req", help="Seconds one whole transfer may take."),
    max_doc_size: int = typer.Option(None, "--max-doc-size", help="Bytes of body per document."),
    retry_delay: float = typer.Option(None, "--retry-delay", help="Seconds before the first retry of a failed fetch."),
    max_retries: int = typer.Option(None, "--max-retries", help="Tries of a failing URL."),
    robots_retry: float = typer.Option(None, "--robots-retry", help="Seconds before retrying an unreachable robots.txt."),
    recrawl: str = typer.Option(None, "--recrawl", help="Fetch pages again after DURATION (30s, 6h, 7d), conditionally; the crawl then runs until stopped."),
    recrawl_min: str = typer.Option(None, "--recrawl-min", help="Shortest recrawl interval (default: the smaller of --recrawl and 1h)."),
    recrawl_max: str = typer.Option(None, "--recrawl-max", help="Longest recrawl interval (default: the larger of --recrawl and 30d)."),
    recrawl_factor: float = typer.Option(None, "--recrawl-factor", help="Interval * this when a page did not change, / this when it did (default 2)."),
    backoff_max: str = typer.Option(None, "--backoff-max", help="Cap of a host's delay, which doubles on each 429/5xx answer (default 600s)."),
    accept_type: list[str] = typer.Option(None, "--accept-type", help="Only these media types (e.g. text/html,application/xhtml+xml); HEAD first for URLs whose extension names another."),
) -> None:
    """Crawl, show progress, print a summary; Ctrl-C stops, the same command resumes."""
    if not urls and not seeds and not (data / "frontier").exists():
        typer.echo("wreck-crawl: give seed URLs or --seeds FILE (or --data of a crawl to resume)", err=True)
        raise typer.Exit(2)
    if seeds == "-":  # the urlserver child has no terminal: hand it a file
        data.mkdir(parents=True, exist_ok=True, mode=0o700)
        copy = data / "seeds-stdin.txt"
        copy.write_text(sys.stdin.read())
        seeds = str(copy)
    passthrough = _urlserver_args(
        {"--delay": delay, "--ip-delay": ip_delay, "--host-concurrency": host_concurrency,
         "--ip-concurrency": ip_concurrency, "--max-pages": max_pages, "--max-depth": max_depth,
         "--scope": scope, "--user-agent": user_agent, "--dns": dns, "--hosts": hosts,
         "--timeout-update": timeout_update, "--timeout-req": timeout_req, "--max-doc-size": max_doc_size,
         "--retry-delay": retry_delay, "--max-retries": max_retries, "--robots-retry": robots_retry,
         "--recrawl": recrawl, "--recrawl-min": recrawl_min, "--recrawl-max": recrawl_max,
         "--recrawl-factor": recrawl_factor, "--backoff-max": backoff_max, "--seeds": seeds},
        {"--include": include, "--exclude": exclude, "--allow-net": allow_net, "--accept-type": accept_type},
    )  # fmt: skip
    raise typer.Exit(run(data, list(urls or []), passthrough, procs, concurrency))


def run(data: Path, urls: list[str], urlserver_args: list[str], procs: int, concurrency: int) -> int:
    """Run a local crawl; the process exit code."""
    console = Console()
    logs = data / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
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
        store = Child("storeserver", "storeserver.cli", ["--data", str(data), "--listen", "127.0.0.1:0"],
                      logs / "storeserver.log")  # fmt: skip
        children.append(store)
        store_addr = store.read_line("storeserver listening on ")
        store.drain()
        url = Child("urlserver", "urlserver.cli", [
            *urls, *urlserver_args, "--data", str(data / "frontier"), "--store", store_addr,
            "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
            *([] if "--recrawl" in urlserver_args else ["--exit-when-done"]),  # a recrawl runs until stopped
        ], logs / "urlserver.log")  # fmt: skip
        children.append(url)
        url_addr = url.read_line("urlserver listening on ")
        status_url = url.read_line("urlserver status on ").rstrip("/") + "/status"
        url.drain()
        spider = Child("spider", "spider.cli", ["--connect", url_addr, "--procs", str(procs),
                                                "--concurrency", str(concurrency)], logs / "spider.log")
        children.append(spider)
        console.print(f"WRECK: crawling into {data} with {procs} spider worker(s); Ctrl-C stops, "
                      f"the same command resumes.", highlight=False)  # fmt: skip
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
