# A crawl across network namespaces (tests/netns_helpers.py), shared by
# tests/e2e/test_shards_across_hosts.py and test_partitions_across_hosts.py:
# NetCrawl starts the daemons in order (stores, urlservers, spider boxes),
# each in its role's namespace, and kills and restarts any of them; at the
# end they are stopped in a safe order (spiders and urlservers, the web, then
# the stores, which commit what they hold), each shard is read, and check()
# asserts the stored set is the reachable allowed set, nothing twice, every
# page in its shard (doc id mod shards) and politeness by host and IP in the
# web's request log, with the figures issue 19 asks its chaos runs to report.
"""NetCrawl, and the Outcome of a crawl across namespaces: read it, figure it, check it."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import signal
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tests.netns_helpers import START_TIMEOUT, Net, Proc, built_net
from tests.web import build_site, compute_truth, gaps_by_host, gaps_by_ip, read_jsonl
from tests.web.truth import normalize
from wreck.storeserver.reader import open_store

CLOCK_RESOLUTION = 1e-6  # two wall-clock readings' float rounding: the only slack allowed


def web_ips(spec) -> list[str]:
    """The addresses a SiteSpec's hosts are served on, in order: the web namespace's."""
    return sorted({spec.host_ip(i) for i in range(spec.hosts)}, key=ipaddress.IPv4Address)


URL_PORT, STORE_PORT = 7001, 7002


def start_web(net: Net, tmp: Path, spec, web_ip: str) -> tuple[Proc, object, str]:
    """The test web (no hostile host) and its DNS responder in the "web"
    namespace, serving `spec` from `web_ip` on; (its process, the Site, the DNS address)."""
    web = net.start("web", [
        "-m", "tests.web", "--hosts", str(spec.hosts), "--pages", str(spec.pages_per_host),
        "--hosts-per-ip", str(spec.hosts_per_ip), "--no-hostile", "--first-ip", web_ip, "--dns-ip", web_ip,
        "--log", str(tmp / "web.jsonl"), "--hosts-file", str(tmp / "hosts"),
    ], tmp / "web.log")  # fmt: skip
    info = json.loads(web.wait_for_line("test web", r"^\{.*\}$")[0])
    site = build_site(spec, info["port"])
    assert info["addresses"] == site.addresses()
    return web, site, info["dns"]


class NetCrawl:
    """The daemons of a crawl in their namespaces; each can be killed and
    restarted. A subclass names the roles (role -> address dicts) and the
    secret, and gives the urlservers' crawl settings (urlserver_args) and
    which urlserver a spider box dials."""

    stores: dict[str, str]
    urlservers: dict[str, str]
    spiders: dict[str, str]
    secret: str

    def __init__(self, net: Net, tmp: Path, seeds: list[str], dns: str) -> None:
        self.net, self.tmp, self.seeds, self.dns = net, tmp, seeds, dns
        (tmp / "secret").write_text(self.secret + "\n")
        self.procs: dict[str, Proc] = {}
        self.starts: dict[str, int] = {}
        for group in (self.stores, self.urlservers):
            for role in group:
                self.start(role)
            for role in group:
                self.procs[role].wait_for_line(role, r"listening on")
        for role in self.spiders:
            self.start(role)

    def urlserver_args(self, role: str) -> list[str]:
        """A urlserver's settings beyond its data, stores, address, secret and DNS."""
        raise NotImplementedError

    def connects_to(self, role: str) -> str:
        """The urlserver address spider box `role` is given."""
        return next(iter(self.urlservers.values()))

    def args(self, role: str) -> list[str]:
        """`python` arguments of `role`'s daemon."""
        secret = ["--secret-file", str(self.tmp / "secret")]
        if role in self.stores:
            return ["-m", "wreck.storeserver.cli", "--data", str(self.tmp / role),
                    "--listen", f"{self.stores[role]}:{STORE_PORT}", *secret]
        if role in self.urlservers:
            stores = [a for address in self.stores.values() for a in ("--store", f"{address}:{STORE_PORT}")]
            return ["-m", "wreck.urlserver.cli", *self.seeds, "--data", str(self.tmp / role), *stores,
                    "--listen", f"{self.urlservers[role]}:{URL_PORT}", *secret, "--hosts", str(self.tmp / "hosts"),
                    "--dns", self.dns, *self.urlserver_args(role)]
        return ["-m", "wreck.spider.cli", "--connect", f"{self.connects_to(role)}:{URL_PORT}", "--procs", "1",
                "--concurrency", "20", "--name", role, *secret]

    def start(self, role: str) -> Proc:
        n = self.starts.get(role, 0)
        self.starts[role] = n + 1
        self.procs[role] = self.net.start(role, self.args(role), self.tmp / f"{role}-{n}.log")
        return self.procs[role]

    def kill(self, role: str) -> None:
        proc = self.procs[role]
        proc.signal(signal.SIGKILL)
        proc.wait(START_TIMEOUT)

    def logs(self) -> str:
        return "\n".join(f"--- {role}\n{p.out()[-2000:]}{p.err()[-3000:]}" for role, p in self.procs.items())


@dataclass
class Outcome:
    finished: bool  # the crawl ended by itself (or was seen to end)
    shards: list[dict[int, str]]  # per shard: doc id -> normalised URL
    truth: object
    records: list
    killed: dict[str, int] = field(default_factory=dict)
    logs: str = ""


def stop_all(procs: dict, web, *, first: list[str], stores: list[str]) -> None:
    """Stop `first` (spiders, urlservers), the web, then the stores."""
    for role in first:
        procs[role].stop()
    web.stop()
    for role in stores:  # the stores commit what they hold, then exit
        procs[role].stop()


@contextlib.contextmanager
def running(crawl_cls: type[NetCrawl], tmp: Path, spec, web_ip: str):
    """A namespace for every role of `crawl_cls` and the web's addresses, the
    web started on `web_ip`, and a crawl (not yet started) seeded with two of
    its hosts: yields (crawl, web, site, seeds)."""
    roles = {**crawl_cls.urlservers, **crawl_cls.stores, **crawl_cls.spiders}
    with built_net({**{r: [a] for r, a in roles.items()}, "web": web_ips(spec)}) as net:
        web, site, dns = start_web(net, tmp, spec, web_ip)
        seeds = [site.url("h0.wreck.test"), site.url("h3.wreck.test")]
        yield crawl_cls(net, tmp, seeds, dns), web, site, seeds


def outcome(crawl: NetCrawl, web, site, seeds: list[str], tmp: Path, *, finished: bool, killed: dict) -> Outcome:
    """Stop everything (spiders and urlservers first, then the stores, which
    commit what they hold) and read what the crawl left."""
    logs = crawl.logs()
    stop_all(crawl.procs, web, first=[*crawl.spiders, *crawl.urlservers], stores=list(crawl.stores))
    return Outcome(finished, read_shards(tmp, list(crawl.stores)), compute_truth(site, seeds, scope="any"),
                   read_jsonl(tmp / "web.jsonl"), killed, logs)


def read_shards(tmp: Path, stores: list[str]) -> list[dict[int, str]]:
    """doc id -> normalised URL, per store shard (its data directory is tmp/ROLE)."""
    shards = []
    for role in stores:
        reader = open_store(tmp / role)
        try:
            shards.append({m.doc_id: normalize(m.url) for m, _ in reader.iter_docs(with_documents=False)})
        finally:
            reader.close()
    return shards


def pages(shards: list[dict[int, str]]) -> list[str]:
    """The page documents of every shard (robots.txt ones left out)."""
    return [url for docs in shards for url in docs.values() if not urlsplit(url).path.startswith("/robots")]


def figures(o: Outcome, *, delay: float, ip_delay: float) -> dict[str, int]:
    """What issue 19 asks the chaos run to report."""
    stored = pages(o.shards)
    host_gaps = [g for gaps in gaps_by_host(o.records, clock="wall_time").values() for g in gaps]
    ip_gaps = [g for gaps in gaps_by_ip(o.records, clock="wall_time").values() for g in gaps]
    return {
        "components_killed": sum(o.killed.values()),
        "documents_lost": len(set(o.truth.fetched) - set(stored)),
        "stored_twice": len(stored) - len(set(stored)),
        "wrong_shard": sum(1 for i, docs in enumerate(o.shards) for d in docs if d % len(o.shards) != i),
        "politeness_violations": sum(g < delay - CLOCK_RESOLUTION for g in host_gaps)
        + sum(g < ip_delay - CLOCK_RESOLUTION for g in ip_gaps),
    }


def check(o: Outcome, *, spiders: set[str], delay: float, ip_delay: float) -> dict[str, int]:
    """Assert what a crawl across namespaces must end with; its figures."""
    assert o.finished, o.logs
    found = figures(o, delay=delay, ip_delay=ip_delay)
    # nothing more than the reachable allowed set (an unresolvable link is a record of its own)
    assert set(pages(o.shards)) - o.truth.unresolvable == set(o.truth.fetched)
    assert all(o.shards), "every shard holds documents"
    assert {r.client_ip for r in o.records} <= spiders
    assert {k: v for k, v in found.items() if k != "components_killed"} == {
        "documents_lost": 0, "stored_twice": 0, "wrong_shard": 0, "politeness_violations": 0}
    return found
