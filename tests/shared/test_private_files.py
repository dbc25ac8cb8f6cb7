"""What the daemons write is theirs alone: directories they create are 0700,
files 0600, even under umask 0 (which would otherwise leave them open to
every local user)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web import RunningWeb, SiteSpec
from wreck.local.children import Child

from tests.store_helpers import ServerProcess


@pytest.fixture
def open_umask():
    old = os.umask(0)  # children inherit it: the worst case
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    """Relative path -> permission bits, for root and everything under it."""
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        out[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return out


def _assert_private(root: Path) -> None:
    modes = _modes(root)
    dirs = {p for p in modes if (root / p).is_dir()}
    assert {p: oct(m) for p, m in modes.items() if p in dirs and m != 0o700} == {}
    assert {p: oct(m) for p, m in modes.items() if p not in dirs and m != 0o600} == {}


def test_the_store_server_creates_its_data_private(tmp_path, open_umask):
    data = tmp_path / "new" / "crawl"
    server = ServerProcess(data)
    assert server.stop() == 0
    _assert_private(tmp_path / "new")
    assert (data / "store" / "data.mdb").exists()


def test_the_urlserver_creates_its_data_private(tmp_path, open_umask):
    data = tmp_path / "new" / "frontier"
    child = Child("urlserver", "wreck.urlserver.cli", [
        "http://h0.wreck.test/", "--data", str(data), "--listen", "127.0.0.1:0", "--http", "off",
        "--store", "127.0.0.1:9", "--dns", "127.0.0.1:9",
    ], tmp_path / "urlserver.log")  # fmt: skip
    child.read_line("urlserver listening on ")
    assert child.stop() == 0
    _assert_private(tmp_path / "new")
    assert (data / "data.mdb").exists()


def test_wreck_crawl_keeps_data_and_logs_private(tmp_path, open_umask):
    data = tmp_path / "crawl"
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=3, hostile=False)) as web:
        dns_ip, dns_port = web.dns_address
        seed = web.url("h0.wreck.test")
        run = subprocess.run([
            sys.executable, "-m", "wreck.local.cli", "--seeds", "-", "--data", str(data),
            "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--delay", "0.05", "--procs", "1",
        ], input=seed + "\n", capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"URLs: .*fetched [1-9]", run.stdout), run.stdout  # the seed from stdin was crawled
    assert (data / "seeds-stdin.txt").read_text() == seed + "\n"  # the urlserver's copy (private, below)
    assert {p.name for p in (data / "logs").iterdir()} >= {"storeserver.log", "urlserver.log", "spider.log"}
    _assert_private(data)
