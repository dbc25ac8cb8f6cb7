"""A crawl its operator cannot lose by mistake, driven as a user types it
(issue 13): the settings are kept with the crawl, so a bare resume of a
crawl started with --dns/--hosts/--allow-net and stopped with Ctrl-C stores
what an uninterrupted crawl stores, a resume with another --allow-net is
refused naming it with nothing changed on disk, and --reconfigure records
the change; one process owns a data directory (a second wreck-crawl,
urlserver or storeserver is refused naming the first's pid, and a kill -9
never leaves a lock that blocks a restart); wreck-crawl's daemons hold a
fresh secret per run, refuse a local peer without it, and show it nowhere."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.daemon_helpers import ControlClient, Daemon
from tests.store_helpers import Client as StoreClient
from tests.proctree import alive, children, descendants
from tests.web import RunningWeb, SiteSpec
from tests.web.truth import normalize
from wreck.storeserver.store import ReadStore

RUN_TIMEOUT_S = 300.0  # a whole small crawl on a loaded machine
GONE_TIMEOUT_S = 60.0  # daemons of a killed wreck-crawl stop with a grace
CRAWL_FLAGS_TIMEOUT_S = 60.0
SLOW = ["--delay", "0.3"]  # pages come slowly enough for a Ctrl-C to land mid-crawl


def _crawl_cmd(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "wreck.local.cli", "--data", str(data), "--procs", "1", "--concurrency", "5", *args]


def _flags(web: RunningWeb, tmp: Path) -> list[str]:
    dns_ip, dns_port = web.dns_address
    return ["--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8"]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)


def stored_urls(crawl: Path) -> set[str]:
    """The page URLs stored in wreck-crawl's directory `crawl`, robots.txt left out."""
    reader = ReadStore(crawl)
    try:
        urls = {normalize(meta.url) for meta, _ in reader.iter_docs(with_documents=False)}
    finally:
        reader.close()
    return {u for u in urls if "/robots.txt" not in u}


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under `root`: size, mtime and, for small files, the bytes."""
    seen = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            seen[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns,
                                                 path.read_bytes() if st.st_size < 1 << 16 else b"")
    return seen


def _wait_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + GONE_TIMEOUT_S
    while {p for p in pids if alive(p)} and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (from /proc: its sockets' inodes)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                ports.add(int(cols[1].rpartition(":")[2], 16))
    return ports


class Crawling:
    """A continuous wreck-crawl (--recrawl) under way, its daemons found in /proc."""

    def __init__(self, cmd: list[str], web: RunningWeb) -> None:
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     stdin=subprocess.DEVNULL)
        web.log.wait_for(lambda records: len(records) > 2, timeout=CRAWL_FLAGS_TIMEOUT_S)  # all are up
        self.daemons = {_cmdline(pid).split(" -m ")[1].split()[0]: pid for pid in children(self.proc.pid)}
        self.everyone = descendants(self.proc.pid)

    def close(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        out = self.proc.communicate(timeout=RUN_TIMEOUT_S)[0]
        _wait_gone(self.everyone)
        return out


# -- 1. settings live with the crawl

def test_a_bare_resume_continues_with_the_kept_settings_and_a_changed_one_is_refused(tmp_path):
    with RunningWeb(SiteSpec(hosts=2, pages_per_host=12), log_path=tmp_path / "web.jsonl") as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
        flags = [*_flags(web, tmp_path), *SLOW, "--scope", "any"]
        whole = _run(_crawl_cmd(tmp_path / "whole", *seeds, *flags))
        assert whole.returncode == 0, whole.stdout + whole.stderr

        first = subprocess.Popen(_crawl_cmd(tmp_path / "cut", *seeds, *flags), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        fetched = len(web.log.records())  # the uninterrupted crawl's
        web.log.wait_for(lambda records: len(records) > fetched + 4, timeout=CRAWL_FLAGS_TIMEOUT_S)
        first.send_signal(signal.SIGINT)
        out = first.communicate(timeout=RUN_TIMEOUT_S)[0]
        assert first.returncode == 130, out
        cut = stored_urls(tmp_path / "cut")
        assert cut < stored_urls(tmp_path / "whole"), "the Ctrl-C landed after the crawl ended"

        resumed = _run(_crawl_cmd(tmp_path / "cut"))  # no flags, no seeds: as the README says
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert stored_urls(tmp_path / "cut") == stored_urls(tmp_path / "whole")

        before = _snapshot(tmp_path / "cut")
        refused = _run(_crawl_cmd(tmp_path / "cut", "--allow-net", "10.0.0.0/8"))
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "--allow-net" in lines[0] and "--reconfigure" in lines[0], refused.stderr
        assert _snapshot(tmp_path / "cut") == before

        again = _run(_crawl_cmd(tmp_path / "cut", "--allow-net", "127.0.0.0/8", "--allow-net", "10.0.0.0/8",
                                "--reconfigure"))
        assert again.returncode == 0, again.stdout + again.stderr
        shown = _run(_crawl_cmd(tmp_path / "cut", "--print-config"))
        assert shown.returncode == 0 and 'allow_net = ["127.0.0.0/8", "10.0.0.0/8"]' in shown.stdout, shown.stdout
        assert 'allow_net = ["127.0.0.0/8", "10.0.0.0/8"]' in (tmp_path / "cut" / "crawl.toml").read_text()


# -- 2. one owner per data directory

def test_a_second_wreck_crawl_on_one_directory_is_refused_and_a_kill_9_leaves_no_lock(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=5), log_path=tmp_path / "web.jsonl") as web:
        cmd = _crawl_cmd(tmp_path / "crawl", web.url("h0.wreck.test"), *_flags(web, tmp_path), "--recrawl", "1h")
        first = Crawling(cmd, web)
        try:
            second = _run(cmd)
            assert second.returncode == 1, second.stdout + second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1 and f"in use by pid {first.proc.pid} " in lines[0], second.stderr
            assert "wreck.local.cli" in lines[0]
            first.proc.kill()  # its daemons stop after it, the store committing what it holds
            first.proc.wait()
            third = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     stdin=subprocess.DEVNULL)
            try:
                said = [third.stdout.readline() for _ in range(3)]
                assert any("WRECK: crawling into" in line for line in said), said
            finally:
                third.send_signal(signal.SIGINT)
                out = third.communicate(timeout=RUN_TIMEOUT_S)[0]
            assert third.returncode == 130, said + [out]
        finally:
            first.close()


@pytest.mark.parametrize("module, args", [
    ("wreck.urlserver.cli", ["--listen", "127.0.0.1:0", "--http", "off", "--store", "127.0.0.1:9"]),
    ("wreck.storeserver.cli", ["--listen", "127.0.0.1:0"]),
])  # fmt: skip
def test_a_second_daemon_on_one_directory_is_refused_and_a_kill_9_leaves_no_lock(tmp_path, module, args):
    argv = ["--data", str(tmp_path / "data"), *args]
    first = Daemon(module, argv, tmp_path / "first.log")
    try:
        second = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True,
                                timeout=RUN_TIMEOUT_S)
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and f"in use by pid {first.proc.pid} ({sys.executable} -m {module}" in lines[0], lines
    finally:
        first.proc.kill()
        first.proc.wait()
    third = Daemon(module, argv, tmp_path / "third.log")  # it says it listens: it started
    assert third.stop() == 0


# -- 3. private by default

# wreck-crawl with the run's secret known to the test: its daemons are forked
# (wreck/local/fork.py), so their /proc/PID/environ shows the environment
# wreck-crawl was started with, not the one they run with; the secret is
# still drawn fresh for the run, by the test, and read from a private file.
KNOWN_SECRET_CRAWL = """
import secrets, types
from pathlib import Path

import wreck.local.run

known = Path(__file__).with_name("secret.txt").read_text().strip()
wreck.local.run.secrets = types.SimpleNamespace(token_urlsafe=lambda _n: known, token_hex=secrets.token_hex)
from wreck.local.cli import main

main()
"""


def test_wreck_crawls_daemons_refuse_a_local_peer_without_the_runs_secret_and_show_it_nowhere(tmp_path, monkeypatch):
    import secrets as random_secrets

    secret = random_secrets.token_urlsafe(32)
    wrapper = tmp_path / "wrapper"
    wrapper.mkdir()
    (wrapper / "known_secret_crawl.py").write_text(KNOWN_SECRET_CRAWL)
    (wrapper / "secret.txt").write_text(secret)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(wrapper), os.environ.get("PYTHONPATH")])))
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=5), log_path=tmp_path / "web.jsonl") as web:
        cmd = _crawl_cmd(tmp_path / "crawl", web.url("h0.wreck.test"), *_flags(web, tmp_path), "--recrawl", "1h")
        cmd[cmd.index("wreck.local.cli")] = "known_secret_crawl"
        crawl = Crawling(cmd, web)
        try:
            url_pid, store_pid = crawl.daemons["wreck.urlserver.cli"], crawl.daemons["wreck.storeserver.cli"]
            assert len(secret) >= 32
            pages, url_port = {}, None
            for port in _listening_ports(url_pid):
                try:
                    pages = {p: urllib.request.urlopen(f"http://127.0.0.1:{port}{p}", timeout=10).read().decode()
                             for p in ("/status", "/metrics")}
                except (OSError, http.client.HTTPException):  # the spiders' port: no HTTP there
                    url_port = port
            assert pages and url_port, "no /status, or no spiders' port"
            intruder = ControlClient(url_port, secret=b"", name="intruder")
            assert not intruder.ready and "AUTH" in str(intruder.answer), intruder.answer
            intruder.close()
            store_port = None
            for port in _listening_ports(store_pid):  # the spiders' port, and --http's (the dashboard's figures)
                try:
                    pages["store /status"] = urllib.request.urlopen(f"http://127.0.0.1:{port}/status",
                                                                   timeout=10).read().decode()
                except (OSError, http.client.HTTPException):
                    store_port = port
            assert store_port and "store /status" in pages, "no store port, or no store /status"
            store_peer = StoreClient(store_port, handshake=False)
            assert "AUTH" in str(store_peer.handshake())
            argvs = {pid: _cmdline(pid) for pid in descendants(crawl.proc.pid) | {crawl.proc.pid} if alive(pid)}
        finally:
            out = crawl.close()
    logs = {p.name: p.read_text(errors="replace") for p in (tmp_path / "crawl" / "logs").iterdir()}
    for where, text in {**logs, **pages, **{f"argv of {pid}": a for pid, a in argvs.items()}, "stdout": out}.items():
        assert secret not in text, where
    assert len(argvs) >= 4  # wreck-crawl, store, urlserver, spider (and its workers)


def test_a_daemon_started_by_hand_on_loopback_without_a_secret_warns_once(tmp_path):
    daemon = Daemon("wreck.storeserver.cli", ["--data", str(tmp_path / "d"), "--listen", "127.0.0.1:0"],
                    tmp_path / "store.log")
    assert daemon.stop() == 0
    assert daemon.text().count("any local user can connect") == 1
