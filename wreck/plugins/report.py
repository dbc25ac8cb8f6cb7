# The `jsonl-report` plugin: one JSON line per stats interval, appended to
# FILE (`--plugin jsonl-report=FILE`, default wreck-report.jsonl), so a
# crawl's progress can be plotted or tailed (`jq`, pandas.read_json(lines=
# True)). Each line is the urlserver's /status object at that moment (URL
# counts by state, counters, rates, errors by kind, filtered_by, plugins).
# The file is opened on the first report, line-buffered, and flushed each
# line: a crash loses at most the line being written.
"""Append the crawl's /status as one JSON line per interval to a file."""

from __future__ import annotations

import msgspec

DEFAULT_FILE = "wreck-report.jsonl"


class JsonlReport:
    """Append /status as a JSON line per --stats-interval to FILE."""

    def __init__(self, arg: str | None) -> None:
        self.path = arg or DEFAULT_FILE
        self._file = None
        self._encode = msgspec.json.Encoder().encode

    def stats(self, status: dict) -> None:
        if self._file is None:
            self._file = open(self.path, "ab")
        self._file.write(self._encode(status) + b"\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
