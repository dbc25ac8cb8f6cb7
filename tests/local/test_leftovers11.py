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

