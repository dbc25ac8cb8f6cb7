"""The Grafana board (docs/grafana/wreck.json) against a real crawl (issue
17): every metric its queries use is in /metrics of a running wreck-crawl,
with the labels its queries group by; /metrics passes `promtool check
metrics` and every query is PromQL that promtool accepts (Debian's
prometheus package; .ci/run installs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e_helpers import _free_port
from tests.web import RunningWeb, SiteSpec

BOARD = Path(__file__).resolve().parents[2] / "docs/grafana/wreck.json"
PROMTOOL = shutil.which("promtool")
METRIC = re.compile(r"\b(wreck_[a-z_]+)\b")
GROUPED = re.compile(r"\bby \(([a-z_, ]+)\) \((?:rate\()?(wreck_[a-z_]+)")


def _queries() -> list[str]:
    board = json.loads(BOARD.read_text())
    return [t["expr"] for p in board["panels"] for t in p["targets"]]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read()


def _metrics_of_a_finished_crawl(tmp: Path) -> str:
    port = _free_port()
    base = f"http://127.0.0.1:{port}/"
    with RunningWeb(SiteSpec(hosts=3, pages_per_host=8)) as web:
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), web.url("h1.wreck.test"),
               "--data", str(tmp / "crawl"), "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8",
               "--procs", "1", "--delay", "0.05", "--http", f"127.0.0.1:{port}",
               "--recrawl", "1h"]  # continuous: /metrics answers once the round is done
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                try:
                    st = json.loads(_get(base + "status"))
                except OSError:
                    st = {}
                if st.get("finished") and st.get("store") and st["store"]["documents"]:
                    return _get(base + "metrics").decode()
                time.sleep(0.5)
            raise AssertionError(f"the crawl did not finish with store figures: {st}")
        finally:
            proc.terminate()
            proc.communicate(timeout=120)


def test_every_metric_the_grafana_board_queries_is_in_metrics_of_a_crawl(tmp_path):
    text = _metrics_of_a_finished_crawl(tmp_path)
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, set()).update(sample.labels)
    queries = _queries()
    used = {name for q in queries for name in METRIC.findall(q)}
    assert len(used) >= 15, used
    missing = sorted(used - set(samples))
    assert not missing, f"the board queries metrics /metrics lacks: {missing}"
    for q in queries:
        for labels, name in GROUPED.findall(q):
            for label in (x.strip() for x in labels.split(",")):
                assert label in samples[name], f"{name} has no label {label!r} ({q})"
    assert not any(re.search(r"wreck\.test|127\.0\.0\.", line) for line in text.splitlines()
                   if not line.startswith("#")), "a host name or an address in a label"
    if PROMTOOL is None:
        pytest.skip("promtool not installed (Debian's prometheus package): the names are checked, not the lint")
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(), lint.stdout + lint.stderr
    rules = tmp_path / "board-rules.yml"  # each query as a recording rule: promtool parses its PromQL
    rules.write_text("groups:\n- name: board\n  rules:\n" + "".join(
        f"  - record: wreck_board:q{i}\n    expr: {json.dumps(q)}\n" for i, q in enumerate(queries)))
    parsed = subprocess.run([PROMTOOL, "check", "rules", str(rules)], capture_output=True, text=True, timeout=60)
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr
