"""The fuzz targets of tests/fuzz/ stay runnable and every crash they ever
found stays fixed: each target's seeds and saved crash inputs
(tests/fuzz/regressions/TARGET/) pass through it, and a short run of the
plain mutation driver finds nothing. `make fuzz` runs them for minutes."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.fuzz.driver import plain

TARGETS = ("handshake", "control_server", "control_client", "store_records", "store_frames")
REGRESSIONS = Path(__file__).resolve().parents[1] / "fuzz" / "regressions"


def _inputs():
    for name in TARGETS:
        for path in sorted((REGRESSIONS / name).glob("*")) if (REGRESSIONS / name).is_dir() else ():
            yield pytest.param(name, path, id=f"{name}/{path.name}")


@pytest.mark.parametrize("name, path", list(_inputs()))
def test_a_crash_once_found_stays_fixed(name, path):
    target = importlib.import_module(f"tests.fuzz.{name}")
    target.one_input(path.read_bytes())


@pytest.mark.parametrize("name", TARGETS)
def test_a_short_mutation_run_finds_no_crash(name, tmp_path):
    target = importlib.import_module(f"tests.fuzz.{name}")
    assert plain(target.one_input, target.SEEDS, seconds=0, runs=1500, crashes=tmp_path, seed=1) == 0
    assert not list(tmp_path.iterdir())
