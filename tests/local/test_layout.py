"""The data directory of a local crawl (wreck/local/layout.py)."""

from __future__ import annotations

import ast
import stat
from pathlib import Path

from wreck.local.layout import Layout

LOCAL = Path(__file__).resolve().parents[2] / "wreck" / "local"


def test_each_daemon_gets_its_own_part_of_the_data_directory(tmp_path):
    where = Layout(tmp_path / "crawl")
    assert where.store_data == tmp_path / "crawl"  # wreck-dump --data DIR reads the store
    assert where.frontier.parent == where.root and where.frontier != where.store_data
    assert where.log("spider").parent == where.logs != where.frontier
    assert where.seeds_stdin.parent == where.root
    assert len({where.frontier, where.logs, where.seeds_stdin}) == 3


def test_make_creates_private_directories_and_started_tells_a_resume(tmp_path):
    where = Layout(tmp_path / "crawl")
    assert not where.started()
    where.make()
    for directory in (where.root, where.logs):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    where.frontier.mkdir()
    assert where.started()


def test_no_module_of_wreck_local_but_layout_builds_a_path_from_a_literal():
    found = []
    for path in sorted(LOCAL.glob("*.py")):
        if path.name == "layout.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and any(
                    isinstance(side, (ast.Constant, ast.JoinedStr)) for side in (node.left, node.right)):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"paths of the data directory are named in layout.py only: {found}"
