"""A crawl whose --seeds lines are all refused (here: bad URLs, reported at
the start with their file and line, and URLs longer than --max-url-len,
FILTERED by the urlserver) admits nothing: its summary is followed by one
line saying no seed was admitted and why, and it exits non-zero. It ended
"done" with exit 0 and nothing in the frontier."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.web import RunningWeb, SiteSpec

pytestmark = pytest.mark.e2e
EXIT_NOTHING_FETCHED = 3  # wreck/local/nothingfetched.py, docs/operating.md


def test_a_seeds_file_whose_every_line_is_refused_says_nothing_was_admitted_and_exits_non_zero(tmp_path):
    with RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False)) as web:
        long_one = web.url("h0.wreck.test", "/" + "a" * 40)
        (tmp_path / "seeds.txt").write_text(f"# all refused\nh0.wreck.test/no-scheme\n{long_one}\n{long_one}?b=1\n")
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", "--seeds", "seeds.txt", "--data", str(tmp_path / "crawl"),
               "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8", "--procs", "1", "--linger", "1",
               "--max-url-len", "40"]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp_path,
                                stdin=subprocess.DEVNULL)
    assert result.returncode == EXIT_NOTHING_FETCHED, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("wreck-crawl: seeds.txt:2: h0.wreck.test/no-scheme: no scheme"), lines
    assert len(lines) == 2, lines
    assert lines[1] == ("wreck-crawl: no seed was admitted: 2 URL(s) refused (url too long 2): nothing to crawl; "
                        "check the seeds against the crawl's settings (--print-config shows them)"), lines[1]
    assert "  URLs: filtered 2" in result.stdout, result.stdout
