# The urlserver alone, over its sockets, with fsync on: one urlserver (a
# child process, so its CPU is its own) and scripted fake spiders in this
# process (tests/urlserver_helpers.FakeSpider) that answer every assignment
# at once with a DONE carrying the page's links. What the spiders and the
# store cost is left out, so the figures are the urlserver's: pages (DONEs)
# per second of wall time, and its CPU-ms per page (getrusage of the child:
# every thread, the LMDB writer's included).
#
# The web: --hosts hosts of --pages pages each, every page linking to
# LINKS_PER_PAGE URLs as documentation sites do: two pages new to the crawl
# (its children in a binary tree over the host's pages), the host's menu
# (the same MENU_LINKS on every page: known after the first) and a few pages
# of other hosts. With --profile the child runs cProfile on its event loop
# and reports the loop's top functions and the share of the DONEs' links
# (Frontier.discover_links) in it.
#
# --commit-on-loop waits for each commit on the event loop (as before the
# writer thread let the loop go on), for an A/B in one tree. --committed
# makes the fake spiders announce caps=committed and leave out of their
# DONEs the links COMMITTED made known (docs/protocol.txt 5.5.1), as real
# spiders do; without it they send every link, as older spiders did. The
# octets of the DONEs per page are reported either way.
#
#   .venv/bin/python -m bench.urlserver_bench [--hosts 50] [--pages 400] [--spiders 4] [--profile] [--committed]
"""The urlserver's pages/s and CPU-ms per page, fsync on, without spiders' or stores' work."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.urlserver_helpers import FakeSpider, fetched, not_found, running
from tests.web import write_hosts_file
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings

LINKS_PER_PAGE = 40
MENU_LINKS = 30  # of them, the host's menu: the same on every page
CROSS_LINKS = 8  # of them, pages of other hosts
CREDIT = 64  # assignments each fake spider holds, as a spider worker's window


def host(i: int) -> str:
    return f"h{i}.bench.test"


def links_of(url: str, hosts: int, pages: int) -> tuple[str, ...]:
    """A page's outlinks: its two children, the menu, and pages of other hosts."""
    name, _, path = url[len("http://"):].partition("/")
    h = int(name[1:name.index(".")])
    n = int(path[2:-5]) if path.startswith("p/") else 0
    base = f"http://{name}/p/"
    out = [f"{base}{c}.html" for c in (2 * n + 1, 2 * n + 2) if c < pages]
    out += [f"{base}{m}.html" for m in range(MENU_LINKS)]
    out += [f"http://{host((h + k * 7) % hosts)}/p/{(n + k) % pages}.html" for k in range(1, CROSS_LINKS + 1)]
    return tuple(out)


def serve(data: str, hosts: int, pages: int, profile: bool, commit_on_loop: bool = False) -> None:
    """Child: run the urlserver until the crawl is done; print its figures as JSON."""
    if commit_on_loop:  # A/B: each pump's commit waited for on the loop, as before the writer thread's overlap
        def commit_soon(crawl: Crawl) -> None:
            crawl.commit()

        Crawl.commit_soon = commit_soon  # None: server.py writes the assignments at once
    names = {host(i): f"127.0.{1 + i // 250}.{1 + i % 250}" for i in range(hosts)}
    settings = Settings(data=data, listen="127.0.0.1:0", http=None, delay=0.0, allow_net=("127.0.0.0/8",),
                        hosts_file=str(write_hosts_file(names, Path(data).with_suffix(".hosts"))),
                        host_concurrency=8, ip_concurrency=8, timeout_update=60.0, sync=True,
                        exit_when_done=True, linger=0.0)  # fmt: skip

    async def main() -> dict:
        async with running(settings, [f"http://{host(i)}/" for i in range(hosts)]) as (server, address):
            print(json.dumps({"port": address[1]}), flush=True)
            t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
            prof = cProfile.Profile() if profile else None
            if prof is not None:
                prof.enable()
            await server.finished.wait()
            if prof is not None:
                prof.disable()
            r1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
            out = {"wall_s": wall, "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                   "sys_s": r1.ru_stime - r0.ru_stime, "done": server.crawl.stats["done"],
                   "discovered": server.crawl.stats["discovered"], "pumps": server.wakeups}
            if prof is not None:
                out["profile"] = loop_profile(prof)
            return out

    print(json.dumps(asyncio.run(main())), flush=True)


def loop_profile(prof: cProfile.Profile, top: int = 15) -> dict:
    stats = pstats.Stats(prof).stats
    total = sum(entry[2] for entry in stats.values()) or 1.0
    own = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    inclusive = {name: entry[3] / total for (_, _, name), entry in stats.items()
                 if name in ("discover_links", "done", "take", "commit_soon", "commit", "_pump", "settle",
                             "receive_data", "next_event", "begin")}  # fmt: skip
    return {"own_top": [[f"{Path(f).name}:{line}({name})", round(e[2] / total, 3)] for (f, line, name), e in own],
            "inclusive_share": {k: round(v, 3) for k, v in sorted(inclusive.items(), key=lambda kv: -kv[1])}}


async def drive(port: int, spiders: int, hosts: int, pages: int, credit: int, committed: bool) -> dict:
    def respond(a):
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        return fetched(a, *links_of(a.url, hosts, pages))

    caps = ("committed",) if committed else ()
    fakes = [FakeSpider(("127.0.0.1", port), respond=respond, credit=credit, name=f"bench{i}", caps=caps)
             for i in range(spiders)]
    for fake in fakes:
        await fake.start()
    while not all(fake.byes or fake._task.done() for fake in fakes):
        await asyncio.sleep(0.05)
    for fake in fakes:
        await fake.close()
    return {"done_bytes": sum(f.done_bytes for f in fakes),
            "links_left_out": sum(f.sent_links.left_out for f in fakes if f.sent_links is not None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--pages", type=int, default=400, help="pages per host")
    parser.add_argument("--spiders", type=int, default=4)
    parser.add_argument("--credit", type=int, default=CREDIT, help="assignments each fake spider holds")
    parser.add_argument("--profile", action="store_true", help="cProfile the urlserver's loop (slower)")
    parser.add_argument("--commit-on-loop", action="store_true",
                        help="A/B: wait for each commit on the event loop instead of going on meanwhile")
    parser.add_argument("--committed", action="store_true",
                        help="fake spiders announce caps=committed and leave known links out (5.5.1)")
    parser.add_argument("--out", help="write the result JSON here too")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.hosts, args.pages, args.profile, args.commit_on_loop)
    with tempfile.TemporaryDirectory(prefix="wreck-urlserver-bench-") as tmp:
        cmd = [sys.executable, "-m", "bench.urlserver_bench", "--serve", f"{tmp}/data", "--hosts", str(args.hosts),
               "--pages", str(args.pages)] + (["--profile"] if args.profile else []) + \
            (["--commit-on-loop"] if args.commit_on_loop else [])
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        port = json.loads(child.stdout.readline())["port"]
        sent = asyncio.run(drive(port, args.spiders, args.hosts, args.pages, args.credit, args.committed))
        figures = json.loads(child.stdout.readline())
        child.wait()
    pages = figures["done"]
    result = {"hosts": args.hosts, "pages_per_host": args.pages, "spiders": args.spiders, "credit": args.credit,
              "links_per_page": LINKS_PER_PAGE, "sync": True, "commit_on_loop": args.commit_on_loop,
              "committed": args.committed, "done": pages, "done_bytes_per_page": round(sent["done_bytes"] / pages, 1),
              "links_left_out_per_page": round(sent["links_left_out"] / pages, 1),
              "pages_per_s": round(pages / figures["wall_s"]),
              "cpu_ms_per_page": round(1000 * figures["cpu_s"] / pages, 3),
              "sys_ms_per_page": round(1000 * figures["sys_s"] / pages, 3),
              "pages_per_pump": round(pages / max(figures["pumps"], 1), 1), **figures}  # fmt: skip
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
