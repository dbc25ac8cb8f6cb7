# The last hour of a crawl for the dashboard's charts: one sample per
# SAMPLE_S (the running totals of pages fetched, bytes fetched and URLs
# ended in ERROR, and the frontier's size then), in a ring of HISTORY_SAMPLES
# (a deque with maxlen: the oldest falls off, memory is bounded whatever the
# crawl's length). Rates are differences of totals between neighbouring
# samples divided by their time apart, so a sample missed while the server
# was idle (nothing pumps) stretches one interval rather than inventing zeros.
"""History: a bounded ring of crawl samples and the rates between them."""

from __future__ import annotations

import collections

SAMPLE_S = 10.0  # one sample per this many seconds
HISTORY_SAMPLES = 361  # an hour of samples, and the one before it to rate the first


class History:
    """Samples of (time, pages, bytes, frontier, errors), oldest first."""

    def __init__(self, *, every: float = SAMPLE_S, size: int = HISTORY_SAMPLES) -> None:
        self.every = every
        self.samples: collections.deque = collections.deque(maxlen=size)

    def sample(self, now: float, *, pages: int, bytes_: int, frontier: int, errors: int) -> bool:
        """Keep a sample if the last is SAMPLE_S old or more; whether one was kept."""
        if self.samples and now - self.samples[-1][0] < self.every:
            return False
        self.samples.append((now, pages, bytes_, frontier, errors))
        return True

    def series(self) -> dict[str, list]:
        """The chart's data: per interval its end time, pages/s, bytes/s, the
        frontier size and the errors added in it."""
        out: dict[str, list] = {"time": [], "pages_per_s": [], "bytes_per_s": [], "frontier": [], "errors": []}
        prev = None
        for sample in self.samples:
            if prev is not None:
                span = sample[0] - prev[0]
                if span > 0:
                    out["time"].append(round(sample[0], 3))
                    out["pages_per_s"].append(round((sample[1] - prev[1]) / span, 3))
                    out["bytes_per_s"].append(round((sample[2] - prev[2]) / span, 1))
                    out["frontier"].append(sample[3])
                    out["errors"].append(sample[4] - prev[4])
            prev = sample
        return out
