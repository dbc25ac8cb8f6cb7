# Network namespaces joined by veth pairs on one bridge, for tests that run
# WRECK's daemons as if on separate hosts (tests/e2e/test_across_hosts.py,
# tests/e2e/test_shards_across_hosts.py). A Net makes one namespace per role
# plus a switch namespace holding the bridge; each role's eth0 is the far
# end of a veth pair whose near end is a port of the bridge: one Ethernet
# segment, no routing, nothing added to the root namespace. Names are unique
# to the run (PREFIX<pid>-<random>-<role>); processes are started in
# sessions of their own, die with pytest (PR_SET_PDEATHSIG), and are killed by
# process group at teardown, which then deletes the namespaces. A later run
# deletes the namespaces of runs whose pid is gone. get_in_ns reads a URL
# from inside a namespace (a daemon's /status there) without a process: a
# thread that joins the namespace (setns) opens its sockets in it.
"""Net (namespaces, a bridge, veth pairs) and Proc (a process in one)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NS_PREFIX = "wreck-xh"
STALE_NS = re.compile(rf"^{NS_PREFIX}(\d+)-[0-9a-f]{{4}}-[a-z0-9]+$")
PR_SET_PDEATHSIG = 1
CLONE_NEWNET = 0x40000000  # setns(2): join a network namespace
PREFIX_LEN = 24  # every test net is one /24
START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20, check=check)


def die_with_pytest() -> None:
    """In the child before exec: SIGKILL when the test process dies, even by kill -9."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Proc:
    """A process started in a namespace; stdout goes to `log`, stderr to `log`.err."""

    popen: subprocess.Popen
    log: Path

    def out(self) -> str:
        return self.log.read_text()

    def err(self) -> str:
        return Path(f"{self.log}.err").read_text()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def wait_for_line(self, what: str, pattern: str, timeout: float = START_TIMEOUT) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if found := re.search(pattern, self.out(), re.M):
                return found
            if self.popen.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{what}: no {pattern!r} within {timeout:.0f} s "
                             f"(exit code {self.popen.poll()})\n{self.out()}{self.err()}")

    def signal(self, signum: int) -> None:
        """Signal its whole process group (its own session: it and its workers)."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signum)
            except ProcessLookupError:
                pass

    def stop(self) -> int | None:
        """SIGTERM and wait; teardown kills whatever does not stop."""
        self.signal(signal.SIGTERM)
        return self.wait(STOP_TIMEOUT)


@dataclass
class Net:
    """The namespaces of one run and the processes started in them."""

    nodes: dict[str, list[str]]  # role -> the addresses of its eth0
    tag: str = field(default_factory=lambda: f"{NS_PREFIX}{os.getpid()}-{secrets.token_hex(2)}")
    made: list[str] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return f"{self.tag}-{role}"

    def build(self) -> None:
        switch = self.ns("sw")
        for role in ("sw", *self.nodes):
            ip("netns", "add", self.ns(role))
            self.made.append(self.ns(role))
        ip("-n", switch, "link", "add", "br0", "type", "bridge")
        ip("-n", switch, "link", "set", "br0", "up")
        for role, addresses in self.nodes.items():
            ns = self.ns(role)
            # made inside the switch namespace with its peer straight in the
            # node's: neither end ever exists in the root namespace
            ip("-n", switch, "link", "add", f"v-{role}", "type", "veth", "peer", "name", "eth0",
                "netns", ns)
            ip("-n", switch, "link", "set", f"v-{role}", "master", "br0", "up")
            for address in addresses:
                ip("-n", ns, "addr", "add", f"{address}/{PREFIX_LEN}", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")

    def start(self, role: str, args: list[str], log: Path) -> Proc:
        """`python ARGS` inside the namespace of `role`, in a session of its own."""
        env = {k: v for k, v in os.environ.items() if k != "WRECK_SECRET"}
        with open(log, "w") as out, open(f"{log}.err", "w") as err:
            popen = subprocess.Popen(
                ["ip", "netns", "exec", self.ns(role), sys.executable, *args], cwd=REPO, env=env,
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True,
                preexec_fn=die_with_pytest)
        self.procs.append(Proc(popen, log))
        return self.procs[-1]

    def teardown(self) -> None:
        for proc in self.procs:
            proc.signal(signal.SIGKILL)
            proc.wait(STOP_TIMEOUT)
        for ns in reversed(self.made):
            ip("netns", "del", ns, check=False)


def get_in_ns(ns: str, url: str, timeout: float = 5.0) -> bytes:
    """GET `url` from inside network namespace `ns` (OSError if it fails):
    a thread of its own joins the namespace, so the test's other sockets stay where they are."""
    result: list = []

    def fetch() -> None:
        try:
            fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
            try:
                if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {ns}")
            finally:
                os.close(fd)
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                result.append(answer.read())
        except OSError as exc:  # URLError and timeouts are OSErrors too
            result.append(exc)

    thread = threading.Thread(target=fetch, name=f"in-{ns}")
    thread.start()
    thread.join(timeout + 5)
    if not result or isinstance(result[0], OSError):
        raise result[0] if result else OSError(f"no answer from {url} in {ns}")
    return result[0]


def sweep_stale_namespaces() -> None:
    """Delete namespaces an earlier run left behind because it was killed (its pid is gone)."""
    listed = ip("netns", "list", check=False).stdout.split("\n")
    for name in (line.split()[0] for line in listed if line.strip()):
        match = STALE_NS.match(name)
        if match and not Path(f"/proc/{match[1]}").exists():
            ip("netns", "del", name, check=False)


def skip_reason() -> str | None:
    if shutil.which("ip") is None:
        return "needs the `ip` command (iproute2) to create network namespaces"
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    return None




@contextlib.contextmanager
def built_net(nodes: dict[str, list[str]]):
    """A built Net of `nodes` (role -> addresses), torn down on exit; the
    test skips, saying why, where namespaces cannot be made."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    sweep_stale_namespaces()
    net = Net(nodes)
    try:
        try:
            net.build()
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot create network namespaces, a bridge and veth pairs here: "
                        f"`{' '.join(exc.cmd)}` said {exc.stderr.strip()!r}")
        yield net
    finally:
        net.teardown()
