# The wreck-crawl command that crawls the local test web, as `python -m
# tests.web` prints it for a newcomer to paste (README.md, Quickstart) and
# as `make demo` runs it: names through the test web's own DNS responder and
# hosts file, 127.0.0.0/8 admitted (the crawler refuses private addresses
# unless told), two ordinary hosts as seeds. The newcomer's crawl keeps the
# default delay (a second between two requests to a host): it lasts about
# half a minute, time to open the dashboard and to try Ctrl-C and a resume;
# make demo passes a short one (QUICK_DELAY).
"""crawl_command(seeds, hosts_file, dns) -> the wreck-crawl argv."""

from __future__ import annotations

import shlex

QUICK_DELAY = "0.05"  # seconds between two requests to a test host
SEEDS = 2  # ordinary hosts to start from


def seeds_of(urls: list[str]) -> list[str]:
    """The seeds among the test web's host URLs: the first ordinary hosts."""
    return sorted(u for u in urls if u.startswith("http://h"))[:SEEDS]


def crawl_command(seeds: list[str], hosts_file: str, dns: str, *, data: str = "crawl",
                  program: str = "wreck-crawl", delay: str | None = None) -> list[str]:
    """The wreck-crawl argv for the test web (`dns`: its responder's IP:PORT)."""
    return [program, "--data", data, "--hosts", hosts_file, "--dns", dns, "--allow-net", "127.0.0.0/8",
            *(["--delay", delay] if delay else []), *seeds]


def hint(seeds: list[str], hosts_file: str, dns: str) -> str:
    """What `python -m tests.web` says after its JSON line: the command to paste."""
    line = shlex.join(crawl_command(seeds, hosts_file, dns))
    return (f"The test web is up (Ctrl-C stops it). In another terminal, with the venv active, crawl it:\n\n"
            f"  {line}\n")
