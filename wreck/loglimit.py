# Warnings about peers that did not prove who they are (a wrong secret, a
# missing API token), rate-limited per source address: an operator learns
# that an address misbehaves, not each of its attempts. Each address gets a
# window of LOG_WINDOW_S in which at most LOG_LINES_PER_ADDRESS lines are
# written; the first line of its next window says how many were suppressed.
# Without the bound, 5,000 bad handshakes made 1.1 MB of log (issue 14,
# finding 10). Used by wreck/listener.py (the daemons' TCP listeners) and
# wreck/httpserve.py (the urlserver's HTTP port).
"""LogLimiter: per-address rate-limited warnings."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

LOG_LINES_PER_ADDRESS = 10
LOG_WINDOW_S = 60.0
LOG_ADDRESSES = 4096  # addresses whose windows are remembered (bounded: addresses are cheap to vary)


class LogLimiter:
    """Writes warnings to `log`, at most LOG_LINES_PER_ADDRESS per address and window."""

    def __init__(self, log: logging.Logger, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.log = log
        self.clock = clock
        self._windows: dict[str, list] = {}  # address -> [window start, lines, suppressed]

    def warn(self, host: str, fmt: str, *args: object) -> None:
        """Log a warning about `host` unless its window is full (then count it)."""
        now = self.clock()
        windows = self._windows
        window = windows.get(host)
        if window is None or now - window[0] >= LOG_WINDOW_S:
            if window is None and len(windows) >= LOG_ADDRESSES:
                windows.clear()  # forget every address rather than grow: at worst a few lines more
            suppressed = window[2] if window is not None else 0
            window = windows[host] = [now, 0, 0]
            if suppressed:
                fmt += " suppressed=%d"
                args += (suppressed,)
        if window[1] >= LOG_LINES_PER_ADDRESS:
            window[2] += 1
            return
        window[1] += 1
        self.log.warning(fmt, *args)
