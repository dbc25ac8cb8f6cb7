"""Building WRECK's wheel prints no warning: the license is an SPDX
expression with its file (PEP 639, setuptools>=77), the packages are listed,
nothing is deprecated. pip runs setuptools verbosely (-v) so that the build
backend's own warnings are shown, as `pip install .` would hide them."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# pip's notes about this machine's index configuration (a find-links or
# extra-index directory that does not exist here): not the project's.
MACHINE = ("is ignored: it is neither a file nor a directory",)


def test_the_wheel_builds_without_a_warning_and_carries_its_license(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its own "warning: byte-compiling"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", str(ROOT), "-w", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    warned = [line for line in (done.stdout + done.stderr).splitlines()
              if "warn" in line.lower() and not any(m in line for m in MACHINE)]
    assert warned == []
    (wheel,) = tmp_path.glob("wreck-*.whl")
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in z.namelist())
    assert "License-Expression: MIT" in metadata.splitlines()
