"""What session 10 left alone and an operator trips on, run as a user types
it (a subprocess): a --hosts file with a line that is not 'ADDRESS NAME...'
is one line naming the file and the line, exit 2, before anything starts
(it was skipped without a word, and the name then went to DNS)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wreck.deploy import SECRET_ENV

GOOD = "https://example.org/"
CRAWL = "wreck.local.cli"
URLSERVER = "wreck.urlserver.cli"
HOSTS_HEAD = "# pinned names\n\n127.0.0.2 a.test www.a.test  # the first site\n"


def _run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, SECRET_ENV: "l11-" + "s" * 40}  # a daemon run by hand warns without one
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env)


@pytest.mark.parametrize("module,more", [(CRAWL, []), (URLSERVER, ["--http", "off"])])
@pytest.mark.parametrize("line,words", [
    ("300.1.2.3 b.test", "'300.1.2.3' is not an IP address"),
    ("b.test 127.0.0.3", "'b.test' is not an IP address"),
    ("127.0.0.3", "127.0.0.3 names no host"),
    ("127.0.0.3 b.test http://c.test/", "'http://c.test/' is not a host name"),
])  # fmt: skip
def test_a_bad_line_in_a_hosts_file_is_one_line_naming_the_file_and_line_before_the_start(tmp_path, module, more,
                                                                                          line, words):
    (tmp_path / "hosts.txt").write_text(HOSTS_HEAD + line + "\n127.0.0.4 d.test\n")
    done = _run(module, GOOD, *more, "--data", "crawl", "--hosts", "hosts.txt", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "--hosts hosts.txt line 4: " + words in lines[0], lines[0]
    assert "ADDRESS NAME" in lines[0]  # what a line should be
    assert not (tmp_path / "crawl").exists()  # nothing started, nothing written


# --- a crawl whose every seed failed (wreck/local/nothingfetched.py; end to end:
# tests/e2e/test_leftovers11_nothing_fetched_e2e.py)

def _final(finish: str = "done", kinds: dict | None = None, **urls: int) -> dict:
    """A urlserver's last /status, as wreck-crawl reads it."""
    return {"finish_reason": finish, "urls": {"PENDING": 0, "FETCHED": 0, "ERROR": 0, **urls},
            "errors_by_kind": kinds or {}}


def test_a_crawl_that_fetched_a_page_or_was_refused_by_robots_txt_is_no_failure(tmp_path):
    from wreck.local.nothingfetched import why_nothing

    assert why_nothing(_final(FETCHED=1, ERROR=3, kinds={"DNS_NXDOMAIN": 3}), [tmp_path]) is None
    assert why_nothing(_final(REDIRECTED=1, ERROR=1, kinds={"CONNECT_FAILED": 1}), [tmp_path]) is None
    assert why_nothing(_final(DISALLOWED=2), [tmp_path]) is None  # the site's own answer
    assert why_nothing(_final(DISALLOWED=1, ERROR=1, kinds={"DNS_NXDOMAIN": 1}), [tmp_path]) is None
    assert why_nothing(_final(), [tmp_path]) is None  # nothing known at all (a resume with nothing to do)
    # a limit or a stop ended it: its seeds may not have had their turn
    assert why_nothing(_final("limit reached: --max-time 1s", PENDING=5), [tmp_path]) is None
    assert why_nothing(_final("interrupted", PENDING=5), [tmp_path]) is None


def test_every_seed_failed_names_the_first_reason_and_forbidden_addresses_get_the_hint(tmp_path):
    from wreck.local.nothingfetched import why_nothing

    # no store to read (tmp_path holds none): the urlserver's error kind names it
    line = why_nothing(_final(ERROR=2, kinds={"DNS_NXDOMAIN": 2}), [tmp_path])
    assert line.startswith("no seed could be fetched: its host name does not exist (DNS_NXDOMAIN); 2 URL(s)"), line
    line = why_nothing(_final("deferred retries", PENDING=1, kinds={}), [tmp_path])
    assert line.startswith("no seed could be fetched: every URL failed; 1 URL(s)"), line
    line = why_nothing(_final(ERROR=1, kinds={"FORBIDDEN_ADDRESS": 1}), [tmp_path])
    assert "nothing fetched" in line and "--allow-net 127.0.0.0/8" in line


def test_a_crawl_whose_every_url_was_filtered_says_no_seed_was_admitted(tmp_path):
    from wreck.local.nothingfetched import why_nothing

    final = {**_final(FILTERED=2), "filtered_by": {"url too long": 2}}
    line = why_nothing(final, [tmp_path])
    assert line.startswith("no seed was admitted: 2 URL(s) refused (url too long 2): nothing to crawl"), line
    # a resume: this run filtered nothing, the crawl's URLs are still all FILTERED
    assert why_nothing(_final(FILTERED=2), [tmp_path]).startswith("no seed was admitted: 2 URL(s) refused: ")
    assert why_nothing(_final(FILTERED=2, FETCHED=1), [tmp_path]) is None
