# Which processes a test's child left behind: read from /proc (Linux), so a
# test can prove that every daemon and worker of a crawl is gone.
"""descendants(pid), alive(pid): a process tree as /proc shows it."""

from __future__ import annotations

from pathlib import Path


def children(pid: int) -> set[int]:
    """The direct children of `pid` (every thread's)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, however deep."""
    found, todo = set(), [pid]
    while todo:
        new = children(todo.pop()) - found
        found |= new
        todo += new
    return found


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False
