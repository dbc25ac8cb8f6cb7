"""The systemd units in docs/systemd/ (docs/deploy.md) as an operator
installs them: each starts one of the project's commands with flags that
command has, takes the shared secret from a systemd credential file (never
argv or the environment), and is named in docs/deploy.md."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
UNITS = sorted((DOCS / "systemd").glob("*.service"))
COMMANDS = {"urlserver", "storeserver", "spider"}


def _directives(unit: Path) -> dict[str, list[str]]:
    """KEY -> values, continuation lines joined (systemd's syntax)."""
    found: dict[str, list[str]] = {}
    logical = ""
    for line in unit.read_text().splitlines():
        if line.lstrip().startswith(("#", ";")) and not logical:
            continue
        logical += line.strip()
        if logical.endswith("\\"):
            logical = logical[:-1] + " "
            continue
        key, sep, value = logical.partition("=")
        if sep and not logical.startswith("["):
            found.setdefault(key.strip(), []).append(value.strip())
        logical = ""
    return found


def test_there_is_a_unit_for_each_daemon():
    assert {u.name for u in UNITS} == {"urlserver.service", "storeserver@.service", "spider.service"}


@pytest.mark.parametrize("unit", UNITS, ids=[u.name for u in UNITS])
def test_a_unit_runs_a_command_with_flags_it_has_and_the_secret_from_a_credential(unit):
    d = _directives(unit)
    (exec_start,) = d["ExecStart"]
    program, *args = shlex.split(exec_start)
    command = Path(program).name
    assert command in COMMANDS
    assert "secret:/etc/wreck/secret" in d["LoadCredential"]
    assert "${CREDENTIALS_DIRECTORY}/secret" == args[args.index("--secret-file") + 1]
    assert not any("WRECK_SECRET" in v for vs in d.values() for v in vs)  # never in the environment
    assert d["RestartPreventExitStatus"] == ["2"]  # a usage error is not retried
    helped = subprocess.run([str(Path(sys.executable).parent / command), "--help"], capture_output=True,
                            text=True, timeout=60, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert helped.returncode == 0, helped.stderr
    for flag in (a for a in args if a.startswith("--")):
        assert flag in helped.stdout, f"{unit.name}: {command} has no {flag}"
    assert f"systemd/{unit.name}" in (DOCS / "deploy.md").read_text() or unit.name in (DOCS / "deploy.md").read_text()
