"""Option parsing without pydantic (wreck/cmdline.py, issue 16): typer would
import it and build an adapter per declared option, about 0.08 CPU-s of
every daemon's start; WRECK's commands convert their plain option types
themselves, to the same values and with the same messages, and leave
typer's own conversion to the options it is still needed for, when given.
Each check runs its command in a fresh interpreter, as a user starts it."""

from __future__ import annotations

import json
import subprocess
import sys

# Run a command's app as its main() does, then say whether pydantic was imported.
RUN = """
import json, sys
from {module} import app
try:
    app(args={args!r}, standalone_mode=False, prog_name="cmd")
except SystemExit:
    pass
except Exception as exc:
    print("ERROR " + str(getattr(exc, "format_message", lambda: exc)()))
print("IMPORTED " + json.dumps("pydantic" in sys.modules))
"""


def _run(module: str, args: list[str]) -> tuple[str, bool]:
    out = subprocess.run([sys.executable, "-c", RUN.format(module=module, args=args)], capture_output=True,
                         text=True, timeout=120)
    text = out.stdout + out.stderr
    imported = json.loads(text.rsplit("IMPORTED ", 1)[1].split()[0])
    return text, imported


def test_a_start_s_options_are_parsed_to_their_values_without_pydantic(tmp_path):
    text, imported = _run("wreck.urlserver.cli", ["--data", str(tmp_path / "d"), "--print-config", "--max-pages", "7",
                                                  "--delay", "2s", "--include", "a", "--include", "b",
                                                  "--sitemaps", "--no-sync"])
    assert "max_pages = 7" in text and 'delay = "2s"' in text and 'include = ["a", "b"]' in text, text
    assert "sitemaps = true" in text and "sync = false" in text, text
    assert not imported


def test_a_bad_number_gets_typers_own_message():
    text, _ = _run("wreck.spider.cli", ["--connect", "127.0.0.1:1", "--concurrency", "many"])
    assert "Input should be a valid integer, unable to parse string as an integer" in text, text


def test_an_option_with_typer_bounds_is_still_checked_by_typer_when_given(tmp_path):
    text, _ = _run("wreck.local.cli", ["--data", str(tmp_path / "d"), "--partitions", "0", "http://example.com/"])
    assert "Input should be greater than or equal to 1" in text, text
