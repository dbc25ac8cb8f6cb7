"""The dashboard in a real browser (issue 17): Debian's chromium, headless,
loads the page of a wreck-crawl of the local test web while it crawls and
once it has finished; the DOM after the page's script ran holds the crawl's
own figures (pages fetched, URLs by state, hosts, spiders, the store, the
settings), the chart is drawn, and a user agent carrying markup shows as text
and runs nothing. The screenshots go to the test's tmp dir, and to
$WRECK_DASHBOARD_SHOTS when set (docs/img/ holds the committed ones)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from tests.e2e_helpers import _free_port
from tests.web import RunningWeb, SiteSpec

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NEEDS_CHROMIUM = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get "
                                                              "install chromium; .ci/run installs it)")
# Markup in a setting the dashboard shows: it must appear as these characters, and do nothing.
HOSTILE_AGENT = 'wreck-test/1 <img src=x onerror="document.body.dataset.pwned=1"><b id=pwned>x</b>'
BROWSER_S = 120  # one chromium run, its start included, on a loaded machine
# Virtual time the page gets to run its script and read /status (network time does not count).
SCRIPT_BUDGET_MS = 5000


def _status(base: str) -> dict:
    with urllib.request.urlopen(base + "status", timeout=30) as answer:
        return json.loads(answer.read())


def _until(base: str, predicate, timeout: float = 180.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = _status(base)
        if predicate(st):
            return st
        time.sleep(0.5)
    raise AssertionError(f"the crawl never got there: {json.dumps(st)[:2000]}")


def _browser(*args: str, tmp: Path) -> str:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp / 'profile'}", f"--virtual-time-budget={SCRIPT_BUDGET_MS}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=BROWSER_S, check=True).stdout


def _look(base: str, tmp: Path, shot: Path) -> HTMLParser:
    """The dashboard's DOM after its script ran, and a screenshot of it."""
    dom = _browser("--dump-dom", base, tmp=tmp)
    _browser(f"--screenshot={shot}", "--window-size=1280,1000", base, tmp=tmp)
    assert shot.stat().st_size > 10_000, "an empty screenshot"
    shots = os.environ.get("WRECK_DASHBOARD_SHOTS")
    if shots:
        shutil.copy(shot, Path(shots) / shot.name)
    return HTMLParser(dom)


def _table(page: HTMLParser, table_id: str) -> list[list[str]]:
    return [[cell.text(strip=True) for cell in row.css("td")] for row in page.css(f"#{table_id} tr")
            if row.css("td")]


def _check_common(page: HTMLParser, st: dict) -> None:
    states = dict((row[0], row[1]) for row in _table(page, "states"))
    assert int(states["FETCHED"].replace(",", "")) >= 1
    summary = page.css_first("#summary").text()
    assert "pages fetched" in summary and "hosts" in summary
    assert page.css_first("#chart-pages polyline") is not None, "no line drawn in the pages/s chart"
    hosts = [row[0] for row in _table(page, "hosts")]
    assert any(h.startswith("http://h0.wreck.test") or h.startswith("http://h1.wreck.test") for h in hosts), hosts
    settings = dict((row[0], row[1]) for row in _table(page, "settings"))
    assert settings["user_agent"] == HOSTILE_AGENT  # the characters themselves, as text
    assert page.css_first("#pwned") is None and "data-pwned" not in page.html  # and nothing of it ran
    store = dict((row[0], row[1]) for row in _table(page, "store"))
    assert int(store["documents"].replace(",", "")) >= 1 and ": 1" in store["compression ratio"]


def test_the_urlserver_prints_the_dashboards_address_and_serves_it_there(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "wreck.urlserver.cli", "http://a.wreck.test/", "--data",
                             str(tmp_path / "d"), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                             "--store", "127.0.0.1:1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("dashboard: "):
                address = line.removeprefix("dashboard: ").strip()
                break
        with urllib.request.urlopen(address, timeout=30) as answer:
            page = answer.read().decode()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", address)
    assert "<title>WRECK crawl</title>" in page


@NEEDS_CHROMIUM
def test_the_dashboard_shows_a_running_and_a_finished_crawl_in_chromium(tmp_path):
    port = _free_port()
    base = f"http://127.0.0.1:{port}/"
    # 3 hosts of 100 pages at 0.4 s apart: 40 s of crawling at least, so the page is seen mid-crawl
    # with three history samples (10 s apart) for a line in the charts.
    with RunningWeb(SiteSpec(hosts=3, pages_per_host=100, robots_variants=("allow-all",), hostile=False)) as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), web.url("h1.wreck.test"),
               web.url("h2.wreck.test"), "--data", str(tmp_path / "crawl"), "--dns", f"{dns_ip}:{dns_port}",
               "--allow-net", "127.0.0.0/8", "--procs", "1", "--delay", "0.4", "--http", f"127.0.0.1:{port}",
               "--user-agent", HOSTILE_AGENT, "--recrawl", "1h"]  # continuous: it serves on once finished
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for line in proc.stdout:
                if line.startswith("WRECK: dashboard at "):
                    break
            running = _until(base, lambda st: len(st["history"].get("time", [])) >= 2 and not st["finished"])
            page = _look(base, tmp_path, tmp_path / "dashboard-running.png")
            assert page.body.attributes["data-state"] == "running", "finished before the running look"
            _check_common(page, running)
            spiders = _table(page, "spiders")
            assert spiders and spiders[0][1].startswith("127.0.0.1:")

            finished = _until(base, lambda st: st["finished"])
            page = _look(base, tmp_path, tmp_path / "dashboard-finished.png")
            assert page.body.attributes["data-state"] == "finished"
            _check_common(page, finished)
            states = dict((row[0], row[1]) for row in _table(page, "states"))
            assert int(states["FETCHED"].replace(",", "")) == finished["urls"]["FETCHED"]
        finally:
            proc.terminate()
            proc.communicate(timeout=120)
