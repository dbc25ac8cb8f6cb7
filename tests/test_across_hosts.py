# Across hosts: the urlserver, the store server, two spiders and the test web,
# each in a network namespace of its own, crawl over a real (virtual) network
# with the shared secret on, so the protocols are proven beyond loopback.
#
# Address plan.  The test creates every namespace itself, with names unique
# to the run (wk<pid><random>-<role>), and every address lives inside them;
# nothing is added to the root namespace, and no namespace has a route
# anywhere but its own 10.231.0.0/24 link:
#
#     namespace   interface           address(es)
#     ...-sw      br0 (a bridge) + one veth end per node, no addresses
#     ...-url     eth0                10.231.0.2    urlserver :7001
#     ...-store   eth0                10.231.0.3    storeserver :7002
#     ...-sp1     eth0                10.231.0.11   spider 1 (and the intruder)
#     ...-sp2     eth0                10.231.0.12   spider 2
#     ...-web     eth0                10.231.0.100, 10.231.0.101
#                                     test web (`python -m tests.web --first-ip
#                                     10.231.0.100 --dns-ip 10.231.0.100`): its
#                                     hosts and its DNS responder
#
# Each node's eth0 is the far end of a veth pair whose near end is a port of
# br0 in the switch namespace: one Ethernet segment, no routing.  Fixed ports
# are fine, as every namespace has its own.  Parallel runs use the same
# addresses in different namespaces and never meet.  The urlserver gets the
# web's names from --hosts and points --dns at the web's own responder (which
# answers NXDOMAIN for nowhere.wreck.test), so no name reaches a system
# resolver; --allow-net admits only 10.231.0.0/24.  Every process is started
# in a new session and killed by its process group; the namespaces are
# deleted afterwards, whatever happened (their veth pairs and bridge go with
# them).  Without root, `ip` or the right to create namespaces, the test skips.

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from storeserver.store import ReadStore
from tests.web import SiteSpec, build_site, compute_truth, duplicate_requests, read_jsonl
from tests.web.truth import normalize

REPO = Path(__file__).resolve().parent.parent
PREFIX_LEN = 24
SUBNET = "10.231.0.0/24"
NODES = {"url": "10.231.0.2", "store": "10.231.0.3", "sp1": "10.231.0.11", "sp2": "10.231.0.12",
         "web": "10.231.0.100"}
URL_PORT, STORE_PORT = 7001, 7002
SPEC = SiteSpec(hosts=6, pages_per_host=12, hostile=False, first_ip=NODES["web"])
DELAY = 0.2  # enough politeness that the crawl outlasts both spiders' start-up
SECRET = "across-hosts-" + secrets.token_hex(8)
WRONG_SECRET = "not-the-secret-" + secrets.token_hex(8)
START_TIMEOUT = 20.0
CRAWL_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20, check=check)


@dataclass
class Net:
    """The namespaces of one run and the processes started in them."""

    tag: str
    made: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return f"{self.tag}-{role}"

    def build(self) -> None:
        switch = self.ns("sw")
        for role in ("sw", *NODES):
            _ip("netns", "add", self.ns(role))
            self.made.append(self.ns(role))
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for role, address in NODES.items():
            ns = self.ns(role)
            # created inside the switch namespace, its peer straight in the node's:
            # neither end ever exists in the root namespace
            _ip("-n", switch, "link", "add", f"v-{role}", "type", "veth", "peer", "name", "eth0",
                "netns", ns)
            _ip("-n", switch, "link", "set", f"v-{role}", "master", "br0", "up")
            extra = web_ips() if role == "web" else [address]
            for ip in extra:
                _ip("-n", ns, "addr", "add", f"{ip}/{PREFIX_LEN}", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")

    def start(self, role: str, args: list[str], log: Path) -> subprocess.Popen:
        """`python ARGS` inside the namespace of `role`; stdout and stderr to log(.err)."""
        env = {k: v for k, v in os.environ.items() if k != "WRECK_SECRET"}
        with open(log, "w") as out, open(f"{log}.err", "w") as err:
            proc = subprocess.Popen(["ip", "netns", "exec", self.ns(role), sys.executable, *args],
                                    cwd=REPO, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        proc.args_log = log
        self.procs.append(proc)
        return proc

    def teardown(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: it and its workers
                except ProcessLookupError:
                    pass
            proc.wait(STOP_TIMEOUT)
        for ns in reversed(self.made):
            _ip("netns", "del", ns, check=False)


def web_ips() -> list[str]:
    return sorted({SPEC.host_ip(i) for i in range(SPEC.hosts)}, key=ipaddress.IPv4Address)


def _skip_reason() -> str | None:
    if shutil.which("ip") is None:
        return "needs the `ip` command (iproute2) to create network namespaces"
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    return None


def _wait_for(what: str, check: Callable[[], object], proc: subprocess.Popen | None = None,
              timeout: float = START_TIMEOUT, log: Path | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.05)
    detail = ""
    if log is not None:
        detail = "\n" + log.read_text() + Path(f"{log}.err").read_text()
    raise AssertionError(f"{what}: not there in {timeout:.0f} s{detail}")


def _err(proc: subprocess.Popen) -> str:
    """What a process started by Net.start wrote to stderr."""
    return Path(f"{proc.args_log}.err").read_text()


def _line(log: Path, pattern: str) -> Callable[[], re.Match | None]:
    return lambda: re.search(pattern, log.read_text(), re.M)


def _stop(proc: subprocess.Popen) -> int:
    """SIGTERM, wait; the caller's teardown kills whatever does not stop."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    return proc.wait(STOP_TIMEOUT)


@dataclass
class Run:
    url_rc: int
    url_log: str
    refused: dict[str, tuple[int, str]]
    intruder: tuple[int, str]
    records: list
    truth: object
    docs: list


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("across")
    net = Net(f"wk{os.getpid()}{secrets.token_hex(2)}")
    try:
        try:
            net.build()
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot create network namespaces and veth pairs here: "
                        f"`{' '.join(exc.cmd)}` said {exc.stderr.strip()!r}")
        yield _crawl(net, tmp)
    finally:
        net.teardown()


def _crawl(net: Net, tmp: Path) -> Run:
    (tmp / "secret").write_text(SECRET + "\n")
    (tmp / "wrong").write_text(WRONG_SECRET + "\n")
    url_addr, store_addr = f"{NODES['url']}:{URL_PORT}", f"{NODES['store']}:{STORE_PORT}"

    # the deployment rule: beyond loopback without a secret, neither server starts
    no_secret = {
        "storeserver": net.start("store", [
            "-m", "storeserver.cli", "--data", str(tmp / "nostore"),
            "--listen", f"{NODES['store']}:{STORE_PORT + 1}"], tmp / "store-nosecret.log"),
        "urlserver": net.start("url", [
            "-m", "urlserver.cli", "http://h0.wreck.test/", "--data", str(tmp / "nourl"),
            "--listen", f"{NODES['url']}:{URL_PORT + 1}", "--http", "off"], tmp / "url-nosecret.log"),
    }
    web_log = tmp / "web.log"
    web = net.start("web", [
        "-m", "tests.web", "--hosts", str(SPEC.hosts), "--pages", str(SPEC.pages_per_host),
        "--no-hostile", "--first-ip", NODES["web"], "--dns-ip", NODES["web"],
        "--log", str(tmp / "web.jsonl"), "--hosts-file", str(tmp / "hosts"),
    ], web_log)  # fmt: skip
    store_log = tmp / "store.log"
    store = net.start("store", ["-m", "storeserver.cli", "--data", str(tmp / "store"), "--listen",
                                store_addr, "--secret-file", str(tmp / "secret")], store_log)
    refused = {name: (proc.wait(START_TIMEOUT), _err(proc)) for name, proc in no_secret.items()}
    info = json.loads(_wait_for("test web's JSON line", _line(web_log, r"^\{.*\}$"), web, log=web_log)[0])
    _wait_for("storeserver listening", _line(store_log, "listening on"), store, log=store_log)
    site = build_site(SPEC, info["port"])
    assert sorted(info["addresses"].values()) == sorted(site.addresses().values())
    seeds = [site.url("h0.wreck.test"), site.url("h3.wreck.test")]

    url_log = tmp / "url.log"
    urlserver = net.start("url", [
        "-m", "urlserver.cli", *seeds, "--data", str(tmp / "crawl"), "--store", store_addr,
        "--listen", url_addr, "--http", "off", "--secret-file", str(tmp / "secret"),
        "--hosts", str(tmp / "hosts"), "--dns", info["dns"], "--allow-net", SUBNET,
        "--exit-when-done", "--delay", str(DELAY), "--scope", "any", "--robots-retry", "0.2",
        "--retry-delay", "0.2", "--max-retries", "2", "-v",
    ], url_log)  # fmt: skip
    _wait_for("urlserver listening", _line(url_log, "listening on"), urlserver, log=url_log)
    spider = ["-m", "spider.cli", "--connect", url_addr, "--procs", "1", "--concurrency", "20"]
    intruder = net.start("sp1", [*spider, "--secret-file", str(tmp / "wrong"), "--name", "intruder"],
                         tmp / "intruder.log")
    spiders = [net.start(role, [*spider, "--secret-file", str(tmp / "secret"), "--name", role],
                         tmp / f"{role}.log") for role in ("sp1", "sp2")]
    intruder_rc = intruder.wait(START_TIMEOUT)
    try:
        url_rc = urlserver.wait(CRAWL_TIMEOUT)
    except subprocess.TimeoutExpired:
        url_rc = None
    for proc in (*spiders, store, web):
        _stop(proc)
    reader = ReadStore(tmp / "store")
    docs = [meta for meta, _ in reader.iter_docs(with_documents=False)]
    reader.close()
    return Run(
        url_rc=url_rc, url_log=url_log.read_text() + _err(urlserver),
        refused=refused, intruder=(intruder_rc, _err(intruder)),
        records=read_jsonl(tmp / "web.jsonl"), truth=compute_truth(site, seeds, scope="any"),
        docs=docs,
    )


def test_servers_refuse_a_non_loopback_address_without_a_secret(crawled):
    for name, (rc, err) in crawled.refused.items():
        assert rc == 2, (name, err)
        assert f"{name}: refusing to listen on 10.231.0." in err, err
        assert "without a shared secret" in err and "--secret-file" in err, err


def test_the_crawl_finishes(crawled):
    assert crawled.url_rc == 0, crawled.url_log


def test_every_page_is_stored_exactly_once(crawled):
    pages = [d for d in crawled.docs if not urlsplit(d.url).path.startswith("/robots")]
    stored = [normalize(d.url) for d in pages]
    assert len(stored) == len(set(stored)), "a page was stored twice"
    assert set(stored) == set(crawled.truth.fetched)
    assert {normalize(d.url) for d in pages if d.success} == crawled.truth.ok_urls()


def test_requests_came_from_both_spider_namespaces_over_the_veth_network(crawled):
    spiders = {NODES["sp1"], NODES["sp2"]}
    assert {r.client_ip for r in crawled.records} == spiders
    assert {r.server_ip for r in crawled.records} <= set(web_ips())
    pages = [r for r in crawled.records if not r.target.startswith("/robots")]
    assert duplicate_requests(pages) == {}


def test_a_spider_with_the_wrong_secret_is_refused_clearly_on_both_sides(crawled):
    rc, err = crawled.intruder
    assert rc == 2, err
    assert "failed authentication (wrong or missing shared secret)" in err, err
    assert "check --secret-file" in err, err
    told = r"protocol_error .*client intruder\S* failed authentication \(wrong or missing shared secret\)"
    assert re.search(told, crawled.url_log), crawled.url_log
