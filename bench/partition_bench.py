# The partition simulation of issue 19 (docs/scaling.md, "Partitions"): M
# urlserver partitions (M = 1, 2, 4, 8) on this box, each its own process
# with its own LMDB, joined by the real peer link, fed by scripted spiders
# (no HTTP, no store: a fake spider answers every assignment at once with a
# DONE carrying --links links, --site-links of them on the page's own host,
# the rest on hosts anywhere, so (M-1)/M of those belong to other partitions
# and are forwarded). After a warm-up, a window of --seconds is measured:
# per partition, hand-outs/s (counted by the spiders, per connection), the
# links it had to forward per second, and its CPU-seconds (from /proc), so
# that hand-outs per CPU-second show whether a partition's rate falls as
# partitions are added (on 2 cores, 8 partitions share the CPU: the
# per-CPU-second figure is the one that compares).
# Every host has its own address, so each IP token costs one round trip
# (docs/partitions.md, IP politeness); --shared-ips N puts the hosts on N
# addresses instead, which makes partitions pass tokens back and forth.
# Run: python -m bench.partition_bench [--partitions 1,2,4,8] [--seconds 10]
"""Hand-outs per second and per CPU-second of 1, 2, 4, 8 urlserver partitions."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
HOST = "127.0.0.1"
DOMAIN = "test"  # h7.test: each host its own registrable domain, so hosts spread over partitions
START_TIMEOUT = 60.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    for s in socks:
        s.bind((HOST, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def address(i: int, shared: int) -> str:
    n = i % shared if shared else i
    return f"127.{1 + n // 65536}.{n // 256 % 256}.{n % 256}"


# -- the scripted spider (its own process) -----------------------------------------------


class Web:
    """Page N of host H links --links pages: a share on H, the rest on hosts anywhere."""

    def __init__(self, hosts: int, links: int, site_links: float) -> None:
        self.hosts, self.links = hosts, links
        self.site = round(links * site_links)
        self.counter = 0

    def links_of(self, url: str) -> tuple[str, ...]:
        host = int(url.split("//h", 1)[1].split(".", 1)[0])
        out = []
        for j in range(self.links):
            self.counter += 1
            h = host if j < self.site else (host * 7919 + self.counter * 104729) % self.hosts
            out.append(f"http://h{h}.{DOMAIN}/p/{self.counter}")
        return tuple(out)


async def spider(ports: list[int], hosts: int, links: int, site_links: float, credit: int, partitions: int,
                 report: Path) -> None:
    from wreck.protocol import (NEED_DATA, Assignment, ControlConnection, Done, Get, Role, Specific,
                                Status)  # fmt: skip
    owner = (lambda host: 0) if partitions == 1 else _partition_of(partitions)

    web = Web(hosts, links, site_links)
    counts = {p: {"handouts": 0, "links": 0, "forwarded": 0} for p in range(len(ports))}

    async def serve(index: int, port: int) -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = ControlConnection(Role.CLIENT, secret=b"", nonce=os.urandom(32), name=f"bench-{os.getpid()}")
        mine = counts[index]
        while data := await reader.read(262144):
            conn.receive_data(data)
            out = []
            while (event := conn.next_event()) is not NEED_DATA:
                kind = type(event).__name__
                if kind == "Hello":
                    out.append(conn.authenticate())
                elif kind == "Ready":
                    out.append(conn.send(Get(credit)))
                elif type(event) is Assignment:
                    mine["handouts"] += 1
                    if event.url.endswith("/robots.txt"):
                        done = Done(event.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
                    else:
                        found = web.links_of(event.url)
                        mine["links"] += len(found)
                        mine["forwarded"] += sum(owner(u.split("/")[2]) != index for u in found)
                        done = Done(event.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=found)
                    out.append(conn.send(done))
                    out.append(conn.send(Get(1)))
                elif kind in ("Error", "Bye", "ConnectionClosed"):
                    return
            if out:
                writer.write(b"".join(out))

    async def tell() -> None:
        while True:
            with open(report, "a") as f:
                f.write(json.dumps({"t": time.time(), "counts": counts}) + "\n")
            await asyncio.sleep(0.5)

    teller = asyncio.ensure_future(tell())
    for outcome in await asyncio.gather(*(serve(i, p) for i, p in enumerate(ports)), return_exceptions=True):
        if isinstance(outcome, BaseException):
            print(f"scripted spider: {outcome!r}", file=sys.stderr)
    teller.cancel()


def _partition_of(partitions: int):
    from wreck.urlserver.partition import partition_of  # the one placement rule (docs/partitions.md)

    return lambda host: partition_of(host, partitions)


# -- the bench --------------------------------------------------------------------------


def run(partitions: int, args, tmp: Path) -> dict:
    hosts = args.hosts
    (tmp / "hosts").write_text("".join(f"{address(i, args.shared_ips)} h{i}.{DOMAIN}\n" for i in range(hosts)))
    (tmp / "seeds").write_text("".join(f"http://h{i}.{DOMAIN}/\n" for i in range(hosts)))
    ports = free_ports(partitions)
    peers = ",".join(f"{HOST}:{p}" for p in ports)
    crawl_id = secrets.token_hex(16)
    servers = []
    for i, port in enumerate(ports):
        extra = ["--partitions", str(partitions), "--partition", str(i), "--peers", peers,
                 "--crawl-id", crawl_id] if partitions > 1 else []
        log = open(tmp / f"url{i}.log", "w")
        servers.append(subprocess.Popen(
            [sys.executable, "-m", "wreck.urlserver.cli", "--seeds", str(tmp / "seeds"), "--data", str(tmp / f"url{i}"),
             "--listen", f"{HOST}:{port}", "--http", "off", "--store", f"{HOST}:9", "--hosts", str(tmp / "hosts"),
             "--allow-net", "127.0.0.0/8", "--delay", "0", "--ip-delay", "0", "--max-depth", "1000",
             "--max-pages", "1000000", "--no-sync", *extra],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        for i, srv in enumerate(servers):
            while "urlserver listening on" not in (tmp / f"url{i}.log").read_text(errors="replace"):
                if srv.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"urlserver {i} did not start:\n{(tmp / f'url{i}.log').read_text()}")
                time.sleep(0.05)
        report = tmp / "spider.jsonl"
        spiders = [subprocess.Popen([sys.executable, "-m", "bench.partition_bench", "--spider",
                                     ",".join(map(str, ports)), "--hosts", str(hosts), "--links", str(args.links),
                                     "--site-links", str(args.site_links), "--credit", str(args.credit),
                                     "--partitions", str(partitions), "--report", str(report)])
                   for _ in range(1)]
        time.sleep(args.warmup)
        first = _last(report)
        cpu0 = [cpu_seconds(s.pid) for s in servers]
        scpu0 = [cpu_seconds(s.pid) for s in spiders]
        time.sleep(args.seconds)
        last = _last(report)
        cpu1 = [cpu_seconds(s.pid) for s in servers]
        scpu1 = [cpu_seconds(s.pid) for s in spiders]
        for s in spiders:
            s.send_signal(signal.SIGTERM)
            s.wait()
    finally:
        for s in servers:
            s.send_signal(signal.SIGTERM)
        for s in servers:
            try:
                s.wait(30)
            except subprocess.TimeoutExpired:
                s.kill()
    span = last["t"] - first["t"]
    per = []
    for i in range(partitions):
        a, b = first["counts"][str(i)], last["counts"][str(i)]
        handouts = b["handouts"] - a["handouts"]
        cpu = cpu1[i] - cpu0[i]
        per.append({"partition": i, "handouts_per_s": round(handouts / span, 1),
                    "links_per_s": round((b["links"] - a["links"]) / span, 1),
                    "forwarded_per_s": round((b["forwarded"] - a["forwarded"]) / span, 1),
                    "cpu_s": round(cpu, 2), "handouts_per_cpu_s": round(handouts / cpu, 1) if cpu else None})
    total = sum(p["handouts_per_s"] for p in per)
    cpu_total = sum(cpu1) - sum(cpu0)
    return {"partitions": partitions, "window_s": round(span, 2), "per_partition": per,
            "handouts_per_s": round(total, 1), "handouts_per_s_per_partition": round(total / partitions, 1),
            "forwarded_per_s": round(sum(p["forwarded_per_s"] for p in per), 1),
            "urlserver_cpu_s": round(cpu_total, 2),
            "handouts_per_cpu_s": round(total * span / cpu_total, 1) if cpu_total else None,
            "spider_cpu_s": round(sum(scpu1) - sum(scpu0), 2)}


def _last(report: Path) -> dict:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if report.exists():
            lines = report.read_text().splitlines()
            if lines:
                return json.loads(lines[-1])
        time.sleep(0.1)
    raise SystemExit("the scripted spider reported nothing")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", default="1,2,4,8", help="partition counts to run, comma-separated")
    ap.add_argument("--seconds", type=float, default=10.0, help="measured window per count")
    ap.add_argument("--warmup", type=float, default=4.0, help="seconds before the window")
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--links", type=int, default=20, help="links per page")
    ap.add_argument("--site-links", type=float, default=0.8, help="share of a page's links on its own host")
    ap.add_argument("--credit", type=int, default=200, help="credits per spider connection")
    ap.add_argument("--shared-ips", type=int, default=0, help="put the hosts on this many addresses (0: one each)")
    ap.add_argument("--spider", help=argparse.SUPPRESS)
    ap.add_argument("--report", help=argparse.SUPPRESS)
    ap.add_argument("--out", help="results file (default bench/results/DATE-partitions.json)")
    args = ap.parse_args(argv)
    if args.spider:
        asyncio.run(spider([int(p) for p in args.spider.split(",")], args.hosts, args.links, args.site_links,
                           args.credit, int(args.partitions), Path(args.report)))
        return
    results = []
    for count in [int(c) for c in args.partitions.split(",")]:
        with tempfile.TemporaryDirectory(prefix=f"wreck-parts{count}-") as tmp:
            try:
                result = run(count, args, Path(tmp))
            except BaseException:
                for log in sorted(Path(tmp).glob("*.log")) + sorted(Path(tmp).glob("*.jsonl")):
                    print(f"== {log.name}\n{log.read_text(errors='replace')[-3000:]}", file=sys.stderr)
                raise
        results.append(result)
        print(f"{count} partition(s): {result['handouts_per_s']:,.0f} hand-outs/s "
              f"({result['handouts_per_s_per_partition']:,.0f} per partition), "
              f"{result['forwarded_per_s']:,.0f} links forwarded/s, "
              f"{result['handouts_per_cpu_s']:,.0f} hand-outs per urlserver CPU-second", flush=True)
    out = Path(args.out) if args.out else RESULTS / f"{date.today().isoformat()}-partitions.json"
    out.write_text(json.dumps({"bench": "partition_bench", "python": platform.python_version(),
                               "cpus": os.cpu_count(), "settings": {k: v for k, v in vars(args).items()
                                                                    if k not in ("spider", "report", "out")},
                               "results": results}, indent=2) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
