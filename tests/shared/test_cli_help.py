"""Every command's --help as a user at an 80-column terminal reads it: no
line wider, options in the shared panels, every option's default shown (or
the option required), examples at the end; -h and --version; one way to say
how much to log; switches that read naturally; docs/cli.md in step."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import COMMANDS, DOC, WIDTH, document, help_text
from wreck import cmdline, options

# Options that act rather than set: nothing to default.
ACTIONS = {"--help", "--version", "--verbose", "--quiet", "--print-config", "--list-plugins"}
# An option's first row: the flag at the panel's left edge (a required one
# after a "*"); its help's later rows are indented past the flag column.
_OPTION = re.compile(r"^│ (\*)?\s{0,3}(--[a-z][a-z0-9-]*)")


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    return {command: help_text(command) for command in COMMANDS}


def _options(text: str) -> dict[str, str]:
    """Each option's rows of help, by its flag (the panels' frames removed)."""
    found: dict[str, str] = {}
    flag = None
    for line in text.splitlines():
        inner = line.strip().strip("│").rstrip()
        if not line.startswith("│"):
            flag = None
            continue
        m = _OPTION.match(line)
        if m:
            flag = m.group(2)
            found[flag] = inner
        elif flag:
            found[flag] += " " + inner.strip()
    return found


@pytest.mark.parametrize("command", COMMANDS)
def test_help_fits_80_columns_and_shows_panels_defaults_and_examples(helps, command):
    text = helps[command]
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    panels = re.findall(r"╭─ (.+?) ─", text)
    assert panels[0] in ("Arguments", "Options") and "Input" in panels
    assert all(p in ("Arguments", "Options", *options.PANELS) for p in panels), panels
    shared = [p for p in panels if p in options.PANELS]
    assert shared == sorted(shared, key=options.PANELS.index), "panels in the order of options.PANELS"
    rows = _options(text)
    assert len(rows) > 8
    for flag, row in rows.items():
        if flag in ACTIONS:
            continue
        words = " ".join(row.split())
        assert "[default: " in words or "[required]" in words, f"{command} {flag}: {words}"
        assert "--no-no-" not in words
    assert "Examples" in text
    examples = text[text.index("Examples"):].splitlines()[1:]
    assert sum(line.startswith(f"   {command} ") for line in examples) >= 2
    for line in filter(None, examples):  # what it does, then the command on one line (never wrapped)
        assert line.endswith(":") or line.startswith(f"   {command} "), line


@pytest.mark.parametrize("command", COMMANDS)
def test_h_is_help_and_version_is_the_package_version(helps, command):
    assert help_text(command, "-h") == helps[command]
    exe = Path(sys.executable).parent / command
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.split() == [command, "(WRECK)", cmdline.version()]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_says_how_much_to_log_the_same_way(helps, command):
    rows = _options(helps[command])
    assert {"--verbose", "--quiet", "--log-level"} <= set(rows)
    assert "-v" in rows["--verbose"] and "-q" in rows["--quiet"]


def test_a_wrong_log_level_is_one_line_and_exit_2():
    exe = Path(sys.executable).parent / "storeserver"
    done = subprocess.run([str(exe), "--log-level", "loud", "--data", "/nonexistent"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "debug, info" in done.stderr


def test_v_and_q_step_from_the_usual_level_and_log_level_names_it():
    assert cmdline.level("info", verbose=1) == 10 and cmdline.level("info", quiet=2) == 40
    assert cmdline.level("warning", verbose=5) == 10 and cmdline.level("info", quiet=9) == 50
    assert cmdline.level("info", verbose=2, named="error") == 40


def test_defaults_say_their_unit(helps):
    rows = {flag: " ".join(row.split()) for flag, row in _options(helps["urlserver"]).items()}
    assert "[default: 1h]" in rows["--retry-delay"] and "[default: 1s]" in rows["--delay"]
    assert "[default: 64GiB]" in rows["--map-size"] and "[default: 5 tries]" in rows["--max-retries"]


def test_every_switch_reads_naturally(helps):
    for command, text in helps.items():
        for flag, row in _options(text).items():
            assert not flag.startswith("--no-no") and "--no-no-" not in row, (command, flag)
            assert not re.search(r"--no-[a-z-]+\s+--no-", row), (command, flag)


def test_docs_cli_md_is_the_commands_help_as_generated():
    assert DOC.read_text(encoding="utf-8") == document(), "run: python -m tests.cli_helpers"
