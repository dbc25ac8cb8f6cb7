# The house rules of docs/architecture.md, checked on the source: protocol/
# does no I/O, and no daemon imports another daemon's package (they meet only
# on the wire, or through a daemon's public read API).
"""Import layering."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DAEMONS = ("urlserver", "spider", "storeserver")
# protocol/ is sans-I/O: these modules do I/O or read clocks.
IO_MODULES = {"os", "socket", "time", "select", "selectors", "subprocess", "asyncio", "uvloop", "lmdb", "pycurl"}


def _imports(path: Path) -> list[str]:
    """Every module name `path` imports, absolute."""
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _package(name: str) -> str | None:
    """The WRECK part a module name belongs to ('urlserver', 'protocol', ...)."""
    parts = name.split(".")
    if parts[0] == "wreck" and len(parts) > 1:
        return parts[1]
    return parts[0] if parts[0] in (*DAEMONS, "protocol") else None


@pytest.mark.parametrize("path", sorted((ROOT / "protocol").glob("*.py")), ids=lambda p: p.name)
def test_protocol_imports_no_io_module(path):
    bad = [n for n in _imports(path) if n.split(".")[0] in IO_MODULES]
    assert not bad, f"{path.name} imports {bad}: protocol/ is sans-I/O (docs/architecture.md)"


@pytest.mark.parametrize("daemon", DAEMONS)
def test_no_daemon_imports_another_daemon(daemon):
    crossing = []
    for path in sorted((ROOT / daemon).rglob("*.py")):
        for name in _imports(path):
            part = _package(name)
            if part in DAEMONS and part != daemon:
                crossing.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not crossing, "daemons meet only on the wire (docs/architecture.md):\n" + "\n".join(crossing)


@pytest.mark.parametrize("folder", ["protocol", *DAEMONS, "wreck"])
def test_code_uses_the_installed_wreck_names(folder):
    """`import urlserver` would load a second copy beside `wreck.urlserver`."""
    bare = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        bare += [f"{path.relative_to(ROOT)}: {n}" for n in _imports(path)
                 if n.split(".")[0] in (*DAEMONS, "protocol")]
    assert not bare, "\n".join(bare)


def test_the_shared_layer_imports_no_daemon():
    crossing = []
    for path in sorted((ROOT / "wreck").rglob("*.py")):
        if "local" in path.relative_to(ROOT / "wreck").parts:
            continue  # wreck-crawl sits above the daemons and starts them
        crossing += [f"{path.relative_to(ROOT)} imports {n}" for n in _imports(path) if _package(n) in DAEMONS]
    assert not crossing, "\n".join(crossing)


def test_no_test_imports_another_test_module_or_bench():
    """Shared fixtures live in tests/*_helpers.py and tests/web/; bench may
    use tests' code, never the other way round."""
    crossing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "bench" or any(p.startswith("test_") for p in parts[1:]):
                crossing.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not crossing, "\n".join(crossing)
