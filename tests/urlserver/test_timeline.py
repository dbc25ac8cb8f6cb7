"""The dashboard's last hour (history.py): one sample per 10 s, an hour kept
and no more, rates that are differences of totals over the time between."""

from __future__ import annotations

from wreck.urlserver.timeline import HISTORY_SAMPLES, SAMPLE_S, History


def test_a_sample_is_kept_once_per_interval_and_rates_come_from_totals():
    h = History()
    assert h.sample(0.0, pages=0, bytes_=0, frontier=100, errors=0)
    assert not h.sample(5.0, pages=50, bytes_=5000, frontier=90, errors=1)  # too soon: not kept
    assert h.sample(10.0, pages=50, bytes_=10_000, frontier=80, errors=2)
    assert h.sample(30.0, pages=70, bytes_=10_000, frontier=60, errors=2)  # idle for a while: one longer interval
    series = h.series()
    assert series == {"time": [10.0, 30.0], "pages_per_s": [5.0, 1.0], "bytes_per_s": [1000.0, 0.0],
                      "frontier": [80, 60], "errors": [2, 0]}


def test_the_ring_keeps_an_hour_whatever_the_crawl_length():
    h = History()
    for i in range(5 * HISTORY_SAMPLES):
        h.sample(i * SAMPLE_S, pages=i * 10, bytes_=i * 1000, frontier=i, errors=0)
    series = h.series()
    assert len(h.samples) == HISTORY_SAMPLES and len(series["time"]) == HISTORY_SAMPLES - 1
    assert series["time"][-1] - series["time"][0] == 3600 - SAMPLE_S  # the last hour, one point per interval
    assert set(series["pages_per_s"]) == {1.0}
