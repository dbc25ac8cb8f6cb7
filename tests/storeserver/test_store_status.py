"""storeserver --http: the store's figures (documents, bytes, compressed
bytes, disk free) at GET /status, as the urlserver's dashboard reads them."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from wreck.statusport import StatusUnavailable, fetch

from tests.store_helpers import Client, make_record


def _line(proc, prefix: str) -> str:
    for line in proc.stdout:
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    raise AssertionError(f"no line {prefix!r}: {proc.stderr.read()}")


def test_the_store_serves_its_figures_at_http_status(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "wreck.storeserver.cli", "--data", str(tmp_path / "s"),
                             "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        status_at = _line(proc, "storeserver status on http://").removesuffix("/status")
        port = int(_line(proc, "storeserver listening on ").rsplit(":", 1)[1])
        empty = asyncio.run(fetch(status_at, timeout=10))
        client = Client(port)
        client.send([make_record(i, size=4000) for i in range(1, 6)])
        client.acks(5)
        client.close()
        full = asyncio.run(fetch(status_at, timeout=10))
        try:
            asyncio.run(fetch(status_at, "/nothing", timeout=10))
            raise AssertionError("an unknown path answered")
        except StatusUnavailable as exc:
            assert "404" in str(exc)
    finally:
        proc.terminate()
        proc.wait(30)
    assert (empty["documents"], empty["bytes"]) == (0, 0) and empty["disk_free"] > 0
    assert full["documents"] == 5 and full["bytes"] > 5 * 4000
    assert 0 < full["compressed_bytes"] < full["bytes"]  # zstd did its job: the ratio the dashboard shows


def test_http_beyond_loopback_without_a_secret_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "wreck.storeserver.cli", "--data", str(tmp_path / "s"),
                           "--http", "0.0.0.0:0"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "0.0.0.0" in proc.stderr
