"""Test plugins, installed the way a user's would be: a module and a
*.dist-info directory naming its entry points (group wreck.plugins) in a
directory put on sys.path / PYTHONPATH, found by importlib.metadata."""

from __future__ import annotations

from pathlib import Path

MODULE = '''
class WordCount:
    """Store each HTML document's word count (document hook)."""

    def __init__(self, arg):
        self.key = arg or "words"

    def document(self, meta, body):
        if not meta["content_type"].startswith("text/html"):
            return None
        return {self.key: len(body.split()), "status": meta["http_code"]}


class Raising:
    """Raise from every hook (a plugin with a bug)."""

    def __init__(self, arg):
        pass

    def url_filter(self, url, ctx):
        raise RuntimeError("this plugin is broken")

    def document(self, meta, body):
        raise RuntimeError("this plugin is broken too")

    def stats(self, status):
        raise RuntimeError("and so is this")


class Unstorable:
    """Return metadata that is not JSON."""

    def __init__(self, arg):
        pass

    def document(self, meta, body):
        return {"an object": object()}


class Recorder:
    """Remember what the URL filter was asked (for unit tests)."""

    seen = []

    def __init__(self, arg):
        self.drop = arg

    def url_filter(self, url, ctx):
        Recorder.seen.append((url, ctx))
        return not (self.drop and self.drop in url)
'''

ENTRY_POINTS = """[wreck.plugins]
wordcount = wreck_test_plugins:WordCount
raising = wreck_test_plugins:Raising
unstorable = wreck_test_plugins:Unstorable
recorder = wreck_test_plugins:Recorder
"""


def install_test_plugins(directory: Path) -> Path:
    """Write the test plugins' module and metadata into `directory`; returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "wreck_test_plugins.py").write_text(MODULE)
    info = directory / "wreck_test_plugins-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wreck-test-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return directory
