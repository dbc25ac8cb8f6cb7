"""Mistakes typed on a command line get one line on stderr, a non-zero exit
and no traceback, before anything starts (issue 13): run as a user types
them (a subprocess), for wreck-crawl and for the daemon each concerns. None
of these reaches a network: each is refused before a child starts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = "https://example.org/"
CRAWL = "wreck.local.cli"
URLSERVER = "wreck.urlserver.cli"
STORESERVER = "wreck.storeserver.cli"


def _run(module: str, *args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=60)


def _one_line(result: subprocess.CompletedProcess, *words: str) -> str:
    """The refusal: non-zero exit, exactly one stderr line holding `words`, nothing on stdout."""
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "WRECK: crawling" not in result.stdout  # nothing started
    return lines[0]


@pytest.fixture
def where(tmp_path: Path) -> Path:
    (tmp_path / "afile").write_text("not a directory\n")
    (tmp_path / "one-bad.txt").write_text("# my seeds\nexample.com\n")
    (tmp_path / "empty.txt").write_text("# nothing yet\n\n")
    return tmp_path


CRAWL_MISTAKES = [
    (["example.org"], ["wreck-crawl: ", "example.org", "did you mean https://example.org/?"]),
    (["not-a-url"], ["not-a-url", "not a URL"]),
    (["ftp://example.org/pub/"], ["ftp: URLs are not crawled"]),
    (["--seeds", "missing.txt"], ["--seeds", "missing.txt", "No such file"]),
    (["--seeds", "one-bad.txt"], ["one-bad.txt:2", "did you mean https://example.com/?", "no valid seed"]),
    (["--seeds", "empty.txt"], ["empty.txt holds no seed URL"]),
    (["--feeds", "missing.txt"], ["--feeds", "missing.txt"]),
    (["http://127.0.0.1:8080/"], ["loopback", "--allow-net 127.0.0.0/8"]),
    (["http://[::1]/"], ["loopback", "--allow-net ::1/128"]),
    ([GOOD, "--include", "(["], ["--include", "not a regular expression"]),
    ([GOOD, "--exclude", "a)"], ["--exclude", "not a regular expression"]),
    ([GOOD, "--allow-net", "localhost"], ["--allow-net", "not a CIDR"]),
    ([GOOD, "--allow-net", "127.0.0.1/8"], ["host bits set", "did you mean 127.0.0.0/8?"]),
    ([GOOD, "--procs", "0"], ["--procs must be at least 1"]),
    ([GOOD, "--concurrency", "0"], ["--concurrency must be at least 1"]),
    ([GOOD, "--max-pages", "0"], ["--max-pages"]),
    ([GOOD, "--user-agent", "bad\tagent"], ["--user-agent", "control character"]),
    ([GOOD, "--user-agent", "x" * 5000], ["--user-agent"]),
    ([GOOD, "--http", "nowhere"], ["--http", "not HOST:PORT"]),
]


@pytest.mark.parametrize("args,words", CRAWL_MISTAKES, ids=[" ".join(a)[:40] for a, _ in CRAWL_MISTAKES])
def test_wreck_crawl_refuses_a_mistake_in_one_line(where, args, words):
    _one_line(_run(CRAWL, *args, "--data", "crawl", cwd=where), *words)
    assert not (where / "crawl").exists()  # refused before anything was written


def test_wreck_crawl_refuses_data_that_is_a_file(where):
    _one_line(_run(CRAWL, GOOD, "--data", "afile", cwd=where), "--data afile is a file")
    _one_line(_run(CRAWL, GOOD, "--data", "afile/crawl", cwd=where), "afile is a file")


def test_wreck_crawl_refuses_a_read_only_data_directory(where):
    ro = where / "ro"
    ro.mkdir(mode=0o555)
    mounted = False
    if os.geteuid() == 0:  # root writes through a directory's mode: a read-only mount it cannot
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"root, and cannot mount a read-only tmpfs: {done.stderr.decode().strip()}")
        mounted = True
    try:
        _one_line(_run(CRAWL, GOOD, "--data", "ro/crawl", cwd=where), "not writable")
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=True)


def test_wreck_crawl_refuses_a_busy_http_address(where):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        _one_line(_run(CRAWL, GOOD, "--data", "crawl", "--http", f"127.0.0.1:{port}", cwd=where),
                  f"--http 127.0.0.1:{port}", "cannot listen")


def test_wreck_crawl_refuses_a_bad_seed_on_standard_input(where):
    _one_line(_run(CRAWL, "--seeds", "-", "--data", "crawl", cwd=where, stdin="example.org\n"),
              "<stdin>:1", "did you mean https://example.org/?")


DAEMON_MISTAKES = [
    (URLSERVER, ["example.org"], ["urlserver: ", "did you mean https://example.org/?"]),
    (URLSERVER, ["--seeds", "missing.txt"], ["--seeds", "missing.txt"]),
    (URLSERVER, ["--feeds", "missing.txt"], ["--feeds", "missing.txt"]),
    (URLSERVER, ["http://127.0.0.1/"], ["--allow-net 127.0.0.0/8"]),
    (URLSERVER, [GOOD, "--include", "(["], ["--include"]),
    (URLSERVER, [GOOD, "--allow-net", "127.0.0.1/8"], ["did you mean 127.0.0.0/8?"]),
    (URLSERVER, [GOOD, "--max-connections", "0"], ["--max-connections"]),
    (URLSERVER, [GOOD, "--user-agent", "bad\tagent"], ["--user-agent"]),
]


@pytest.mark.parametrize("module,args,words", DAEMON_MISTAKES,
                         ids=[f"{m.split('.')[1]} {' '.join(a)[:40]}" for m, a, _ in DAEMON_MISTAKES])
def test_a_daemon_run_by_hand_refuses_a_mistake_in_one_line(where, module, args, words):
    _one_line(_run(module, *args, "--data", "state", "--http", "off", cwd=where), *words)


@pytest.mark.parametrize("module", [URLSERVER, STORESERVER])
def test_a_daemon_refuses_data_that_is_a_file(where, module):
    _one_line(_run(module, "--data", "afile", "--listen", "127.0.0.1:0", cwd=where), "--data afile is a file")


USAGE_MISTAKES = [
    (CRAWL, [GOOD, "--data", "crawl", "--procs", "abc"], ["wreck-crawl: ", "--procs", "see wreck-crawl --help"]),
    (CRAWL, [GOOD, "--data", "crawl", "--bogus"], ["No such option: --bogus"]),
    (CRAWL, [GOOD], ["Missing option '--data'"]),
    (URLSERVER, ["--data", "state", "--max-pages", "many"], ["urlserver: ", "--max-pages"]),
    (STORESERVER, ["--data", "state", "--bogus"], ["storeserver: ", "--bogus"]),
    ("wreck.spider.cli", ["--connect", "127.0.0.1:7001", "--procs", "0"], ["spider: ", "--procs"]),
]


@pytest.mark.parametrize("module,args,words", USAGE_MISTAKES, ids=[" ".join(a)[:40] for _, a, _ in USAGE_MISTAKES])
def test_a_usage_mistake_is_one_line_not_a_usage_box(where, module, args, words):
    """Flags the command line parser refuses (unknown, not a number, below a bound)."""
    _one_line(_run(module, *args, cwd=where), *words)
