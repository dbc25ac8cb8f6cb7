"""wreck-crawl meets the daemons only as an operator would: their commands
(`python -m wreck.X.cli`), their stdout and /status, and the store's public
read API. It imports nothing else of theirs (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / "wreck" / "local"
DAEMONS = ("urlserver", "spider", "storeserver")
# What wreck/local may import of a daemon: the public read API, the command
# entry modules, and the urlserver's settings object (wreck-crawl's options
# are generated from its fields: a setting is declared once).
# The settings modules are public: wreck-crawl builds its options from them.
PUBLIC = {"wreck.storeserver.reader", "wreck.urlserver.settings", "wreck.storeserver.settings",
          "wreck.spider.settings",
          *(f"wreck.{daemon}.cli" for daemon in DAEMONS)}


def _imports(path: Path) -> list[str]:
    """Every module name `path` imports, absolute; `from wreck.X import name`
    counts as wreck.X.name, the submodule it may be."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("wreck.") and node.module.count(".") == 1:
                names += [f"{node.module}.{a.name}" for a in node.names]
            else:
                names.append(node.module)
    return names


def _crossings(path: Path) -> list[str]:
    """The daemon modules `path` imports beyond the public ones."""
    return [name for name in _imports(path) if _daemon_module(name) and name not in PUBLIC]


def _daemon_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] in DAEMONS or (parts[0] == "wreck" and len(parts) > 1 and parts[1] in DAEMONS)


def test_wreck_local_imports_only_the_public_modules_of_the_daemons():
    crossing = [f"{path.relative_to(ROOT)} imports {name}"
                for path in sorted(LOCAL.rglob("*.py")) for name in _crossings(path)]
    assert not crossing, "wreck-crawl uses only the daemons' public modules:\n" + "\n".join(crossing)


def test_the_rule_catches_an_internal_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from wreck.storeserver.store import ReadStore\nimport wreck.urlserver.db\n"
                   "from wreck.urlserver import seeds\nfrom wreck.storeserver import reader\n"
                   "import wreck.spider\nfrom wreck.storeserver.reader import read_counters\n")
    assert _crossings(bad) == ["wreck.storeserver.store", "wreck.urlserver.db", "wreck.urlserver.seeds", "wreck.spider"]
