"""wreck-crawl's child processes (wreck/local/children.py)."""

from __future__ import annotations

import os
import resource

import pytest

from wreck.local.children import Child

MANY_FDS = 1100  # past select()'s FD_SETSIZE of 1024


def test_a_child_is_read_even_when_the_parent_holds_over_1024_descriptors(tmp_path):
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < MANY_FDS + 100:
        pytest.skip(f"the descriptor limit ({soft}) is below {MANY_FDS + 100}")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(MANY_FDS)]
    try:
        child = Child("calendar", "calendar", ["2026", "1"], tmp_path / "calendar.log")  # any module that prints
        assert child.proc.stdout.fileno() > 1024
        assert child.read_line("    January ") == "2026"
        child.proc.wait(30)
    finally:
        for fd in held:
            os.close(fd)
