"""The shared secret end to end, with the real daemons on loopback: a crawl
of the local test web with a secret on every side works and the secret
shows up nowhere (logs, --help, process command lines, /status,
/metrics); a wrong or missing secret on either side, a store that holds
another secret, and a server that cannot prove the secret each stop the
spider with a clear message and a non-zero exit, and the refusing server
logs the peer's address; servers refuse to listen beyond loopback without
a secret."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import RunningWeb, SiteSpec, compute_truth
from tests.web.truth import normalize

from tests.daemon_helpers import Daemon

SECRET = "e2e-secret-" + secrets.token_hex(16)
OTHER = "other-secret-" + secrets.token_hex(16)
CRAWL_TIMEOUT = 60.0
REFUSED = 2  # the spider's exit status when it was refused for good


def _spider(name: str, url_port: int, log: Path, *, secret_file: Path | None = None, env=None) -> Daemon:
    args = ["--connect", f"127.0.0.1:{url_port}", "--procs", "1", "--concurrency", "10", "--name", name, "-v"]
    if secret_file:
        args += ["--secret-file", str(secret_file)]
    return Daemon("wreck.spider.cli", args, log, env=env, wait_for=None)


def _get(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return resp.read().decode()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _titles(pids: list[int]) -> str:
    """Command lines and names of the processes, as ps would show them."""
    out = []
    for pid in pids:
        for name in ("cmdline", "comm"):
            try:
                out.append(Path(f"/proc/{pid}/{name}").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return "\n".join(out)


class RogueServer:
    """Greets like a urlserver, accepts any AUTH and answers with a proof it cannot have made."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with sock:
                sock.sendall(f"WRECK/1 HELLO urlserver {os.urandom(32).hex()}\n".encode())
                sock.recv(1024)
                sock.sendall(b"WELCOME " + b"0" * 64 + b"\nSET store 127.0.0.1:9\nREADY\n")
                sock.recv(1024)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth")
    right, wrong = tmp / "secret", tmp / "wrong"
    right.write_text(SECRET + "\n")
    wrong.write_text(OTHER + "\n")
    spec = SiteSpec(hosts=2, pages_per_host=6, hostile=False)
    daemons: list[Daemon] = []
    rogue = RogueServer()
    try:
        with RunningWeb(spec) as web:
            seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
            common = ["--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", "%s:%d" % web.dns_address,
                      "--allow-net", "127.0.0.0/8", "--delay", "0", "--http", "127.0.0.1:0", "-v"]
            # two stores and two urlservers, started side by side: the second urlserver
            # has no secret, and its store holds another one
            store = Daemon("wreck.storeserver.cli", ["--data", str(tmp / "store"), "--listen", "127.0.0.1:0",
                                               "--log-level", "debug"], tmp / "store.log",
                           env={"WRECK_SECRET": SECRET}, wait_for=None)
            store2 = Daemon("wreck.storeserver.cli", ["--data", str(tmp / "store2"), "--listen", "127.0.0.1:0"],
                            tmp / "store2.log", env={"WRECK_SECRET": OTHER}, wait_for=None)
            daemons += [store, store2]
            store.listening(), store2.listening()
            url = Daemon("wreck.urlserver.cli", [*seeds, "--data", str(tmp / "url"), "--store", f"127.0.0.1:{store.port}",
                                           "--listen", "127.0.0.1:0", "--secret-file", str(right), *common],
                         tmp / "url.log", wait_for=None)
            url2 = Daemon("wreck.urlserver.cli", ["--data", str(tmp / "url2"), "--store", f"127.0.0.1:{store2.port}",
                                            "--listen", "127.0.0.1:0", *common], tmp / "url2.log", wait_for=None)
            daemons += [url, url2]
            url.listening(), url2.listening()
            http_port = int(url.wait_for(r"status on http://[\d.]+:(\d+)/")[1])
            spider = _spider("good", url.port, tmp / "spider.log", secret_file=right)
            cases = {
                "wrong secret": _spider("intruder", url.port, tmp / "wrong.log", secret_file=wrong),
                "no secret": _spider("nosecret", url.port, tmp / "none.log"),
                "secret only on the spider": _spider("onlyme", url2.port, tmp / "onlyme.log",
                                                     env={"WRECK_SECRET": SECRET}),
                "store holds another secret": _spider("storeless", url2.port, tmp / "storeless.log"),
                "server cannot prove": _spider("fooled", rogue.port, tmp / "fooled.log", secret_file=right),
            }
            daemons += [spider, *cases.values()]
            codes = {what: proc.wait(CRAWL_TIMEOUT) for what, proc in cases.items()}
            deadline = time.monotonic() + CRAWL_TIMEOUT
            while not json.loads(_get(http_port, "/status"))["finished"]:
                assert time.monotonic() < deadline, "the crawl did not finish\n" + url.text()
                time.sleep(0.1)
            pages = {path: _get(http_port, path) for path in ("/status", "/metrics", "/")}
            titles = _titles([d.proc.pid for d in daemons if d.alive()]
                             + [c for d in daemons if d.alive() for c in _children(d.proc.pid)])
            truth = compute_truth(web.site, seeds)
    finally:
        rogue.close()
        for daemon in reversed(daemons):  # spiders first, so they do not log the servers' going
            daemon.stop()
    reader = ReadStore(tmp / "store")
    stored = [normalize(m.url) for m, _ in reader.iter_docs(with_documents=False)
              if not urlsplit(m.url).path.startswith("/robots")]
    reader.close()
    return {"codes": codes, "logs": {d.log.name: d.text() for d in daemons}, "pages": pages,
            "titles": titles, "stored": stored, "truth": truth, "tmp": tmp}


def test_a_crawl_with_the_secret_on_every_side_stores_every_page(run):
    assert sorted(run["stored"]) == sorted(run["truth"].fetched)


@pytest.mark.parametrize("what, says", [
    ("wrong secret", "urlserver 127.0.0.1:\\d+ rejected this spider's shared secret"),
    ("no secret", "urlserver 127.0.0.1:\\d+ rejected this spider's shared secret"),
    ("secret only on the spider", "urlserver 127.0.0.1:\\d+ rejected this spider's shared secret"),
    ("store holds another secret", "store server 127.0.0.1:\\d+ rejected this spider's shared secret"),
    ("server cannot prove", "urlserver 127.0.0.1:\\d+ failed to prove it holds the shared secret"),
])  # fmt: skip
def test_a_refused_spider_says_who_refused_it_and_stops(run, what, says):
    log = {"wrong secret": "wrong.log", "no secret": "none.log", "secret only on the spider": "onlyme.log",
           "store holds another secret": "storeless.log", "server cannot prove": "fooled.log"}[what]
    text = run["logs"][log]
    assert run["codes"][what] == REFUSED, text
    assert re.search(says, text), text
    assert "check --secret-file / WRECK_SECRET" in text
    assert len(re.findall(says, text)) == 1, "it retried"


def test_the_refusing_server_logs_the_failure_with_the_peer_address(run):
    url, url2, store2 = run["logs"]["url.log"], run["logs"]["url2.log"], run["logs"]["store2.log"]
    for name, log in (("intruder", url), ("nosecret", url), ("onlyme", url2)):
        assert re.search(rf"event=auth_failed peer=127\.0\.0\.1:\d+ name=\S*#\d+ code=AUTH "
                         rf"reason='client {name}-0 failed authentication", log), log
    assert re.search(r"event=auth_failed peer=127\.0\.0\.1:\d+ name=\S+ code=AUTH reason='client storeless-0 "
                     r"failed authentication", store2), store2


def test_the_secret_appears_nowhere(run):
    env = {**os.environ, "WRECK_SECRET": SECRET}
    procs = [subprocess.Popen([sys.executable, "-m", module, "--help"], stdout=subprocess.PIPE, text=True, env=env)
             for module in ("wreck.urlserver.cli", "wreck.storeserver.cli", "wreck.spider.cli", "wreck.local.cli")]
    helps = "".join(proc.communicate(timeout=60)[0] for proc in procs)
    assert "--secret-file" in helps and "WRECK_SECRET" in helps
    places = {**run["logs"], **run["pages"], "process titles": run["titles"], "--help": helps}
    assert re.search(r"event=peer_connected peer=127\.0\.0\.1:\d+ name=good-0", run["logs"]["url.log"])  # the verbose logs
    for where, text in places.items():
        assert SECRET not in text and OTHER not in text, where


@pytest.mark.parametrize("module, listen", [("wreck.urlserver.cli", "0.0.0.0:0"), ("wreck.storeserver.cli", "[::]:0")])
def test_servers_refuse_to_listen_beyond_loopback_without_a_secret(tmp_path, module, listen):
    args = ["--data", str(tmp_path / "d"), "--listen", listen]
    if module == "wreck.urlserver.cli":
        args += ["--http", "off", "--store", "127.0.0.1:9"]
    done = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "WRECK_SECRET"})
    assert done.returncode == 2
    host = listen.rpartition(":")[0].strip("[]")
    assert f"refusing to listen on {host} without a shared secret" in done.stderr, done.stderr
    assert "--secret-file" in done.stderr and "WRECK_SECRET" in done.stderr
