"""The dashboard page loads nothing from elsewhere (an operator may be
offline) and writes crawled text only as text (docs/dashboard.md)."""

from __future__ import annotations

import re

from wreck.urlserver.dashboard import PAGE

SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # a name, never fetched


def test_the_page_has_no_external_asset():
    page = PAGE.replace(SVG_NAMESPACE, "")
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", page), "a URL to somewhere else"
    assert not re.search(r"<link\b|\bsrc\s*=|@import|url\(", page, re.I), "an asset to load"
    assert "<style>" in page and "<script>" in page  # inline, both


def test_the_script_never_writes_markup():
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in PAGE, sink
    assert "textContent" in PAGE
