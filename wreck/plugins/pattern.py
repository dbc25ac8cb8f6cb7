# The `pattern` plugin: drop URLs matching any of a file's regular
# expressions. `--plugin pattern=FILE` (or the file named by
# $WRECK_PATTERN_FILE). One Python regular expression a line, searched
# anywhere in the normalised URL; blank lines and lines starting with '#'
# are ignored. All patterns are joined into one alternation, compiled once,
# so a URL costs one regex search however many lines the file has.
"""Drop URLs that match a regex from a file (--plugin pattern=FILE)."""

from __future__ import annotations

import os
import re

ENV = "WRECK_PATTERN_FILE"


class PatternFilter:
    """Drop URLs matching any regex in FILE (one a line, # comments)."""

    def __init__(self, arg: str | None) -> None:
        path = arg or os.environ.get(ENV)
        if not path:
            raise ValueError(f"give the pattern file: --plugin pattern=FILE or ${ENV}")
        patterns = []
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                try:
                    re.compile(line)
                except re.error as exc:
                    raise ValueError(f"{path} line {number}: bad regex {line!r}: {exc}") from None
                patterns.append(f"(?:{line})")
        self.path = path
        self._search = re.compile("|".join(patterns)).search if patterns else None

    def url_filter(self, url: str, ctx) -> bool:
        return self._search is None or self._search(url) is None
