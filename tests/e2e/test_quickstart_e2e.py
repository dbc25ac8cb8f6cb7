"""The README's quickstart, run as a newcomer runs it: the commands of its
code blocks, as written, in a shell whose PATH is the activated venv's. The
test web prints the crawl command (the README shows its shape); the crawl
prints its dashboard's address, which answers; Ctrl-C stops it and the same
command resumes it to the end; the dumps write JSON lines and a WARC.
`make demo` (the install: this venv) and `make test` (these tests) are the
two it does not run."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from wreck.storeserver.dumprecord import BODY_FIELDS, DEFAULT_FIELDS

ROOT = Path(__file__).resolve().parents[2]
NOT_RUN = ("make demo", "make test")  # the install this test runs in; the test suite itself
WAIT_S = 120  # for a line from the test web or the crawl (2 cores shared by many processes)
CRAWL_S = 300  # for a whole crawl of the quickstart's two test hosts


def quickstart() -> list[str]:
    """The commands of the README's Quickstart code blocks, comments cut."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def _lines(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        into.put(line)
    into.put(None)


def _until(lines: queue.Queue, pattern: str) -> re.Match:
    while True:
        line = lines.get(timeout=WAIT_S)
        assert line is not None, f"ended before a line matching {pattern!r}"
        found = re.search(pattern, line)
        if found:
            return found


def _shell(command: str, env: dict, cwd: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", command], env=env, cwd=cwd, text=True, start_new_session=True, **kw)


def _same_shape(template: str, printed: str) -> bool:
    """Whether `printed` is the README's line with its placeholders filled."""
    want, got = shlex.split(template), shlex.split(printed)
    pattern = lambda t: re.escape(t).replace("PORT", r"\d+").replace("XXXX", r"\w+")  # noqa: E731
    return len(want) == len(got) and all(re.fullmatch(pattern(w), g) for w, g in zip(want, got))


def test_the_readme_quickstart_runs_as_written(tmp_path):
    commands = quickstart()
    assert commands[0] == "make demo" and commands[-1] == "make test"
    activate, web_cmd, crawl_template, *dumps = [c for c in commands if c not in NOT_RUN]
    assert activate == ". .venv/bin/activate" and (ROOT / ".venv/bin/activate").exists()
    assert web_cmd.startswith("python -m tests.web") and crawl_template.startswith("wreck-crawl ")
    assert all(c.startswith("wreck-dump ") for c in dumps) and len(dumps) == 2
    # the activated venv: its bin first on PATH; the checkout importable, as from its root
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    web = _shell(web_cmd, env, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        said: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(web.stderr, said), daemon=True).start()
        assert json.loads(web.stdout.readline())["seeds"]  # stdout: one JSON line, for scripts
        crawl_cmd = _until(said, r"^  (wreck-crawl .*)$").group(1)
        assert _same_shape(crawl_template, crawl_cmd), (crawl_template, crawl_cmd)

        first = _shell(crawl_cmd, env, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(first.stdout, out), daemon=True).start()
        dashboard = _until(out, r"WRECK: dashboard at (http://\S+)").group(1)
        with urllib.request.urlopen(dashboard, timeout=WAIT_S) as page:
            assert page.status == 200 and "html" in page.headers.get("Content-Type", "")
        first.send_signal(signal.SIGINT)  # Ctrl-C (or the crawl had already ended)
        assert first.wait(CRAWL_S) in (0, 130)

        again = subprocess.run(["bash", "-c", crawl_cmd], env=env, cwd=tmp_path, capture_output=True, text=True,
                               timeout=CRAWL_S)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "Crawl finished" in again.stdout

        jsonl = subprocess.run(["bash", "-c", dumps[0]], env=env, cwd=tmp_path, capture_output=True, text=True,
                               timeout=WAIT_S)
        records = [json.loads(line) for line in jsonl.stdout.splitlines()]
        assert jsonl.returncode == 0 and len(records) == 3
        assert all(list(r) == [f for f in DEFAULT_FIELDS if f not in BODY_FIELDS] for r in records)
        warc = subprocess.run(["bash", "-c", dumps[1]], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=WAIT_S)
        assert warc.returncode == 0, warc.stderr
        warc_file = tmp_path / shlex.split(dumps[1])[-1]
        with open(warc_file, "rb") as fh:
            responses = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                         if r.rec_type == "response"]
        assert any(u.startswith("http://h0.wreck.test:") for u in responses)
        assert any(u.startswith("http://h1.wreck.test:") for u in responses)
    finally:
        os.killpg(web.pid, signal.SIGINT)
        web.wait(WAIT_S)
