"""What wreck-crawl prints (wreck/local/progress.py): the progress line and
the summary, from a /status object and the store's counters."""

from __future__ import annotations

from wreck.local.layout import Layout
from wreck.local.progress import line, store_counters, summary
from wreck.storeserver.reader import Counters

STATUS = {"urls": {"FETCHED": 40, "PENDING": 0, "ERROR": 2}, "queued": 5, "in_flight": 3,
          "hosts": {"known": 4}, "rates": {"done_per_s": 12.0}, "errors_by_kind": {"HTTP_ERROR": 2},
          "feeds": 3, "counters": {"feed_fetches": 9, "feed_redundant": 4, "feed_stories": 6}}
STORE = Counters(docs=42, raw_bytes=1_500_000, stored_bytes=500_000, not_modified=7)


def test_the_summary_says_what_was_crawled_stored_and_how_to_read_it(tmp_path):
    where = Layout(tmp_path / "crawl")
    text = summary(STATUS, STORE, 12.34, where, finished=True)
    assert text.startswith("Crawl finished in 12.3 s.")
    assert "URLs: fetched 40, error 2" in text and "pending" not in text  # zero counts left out
    assert "feeds: 3, fetched 9 times this run (4 redundant), 6 new stories" in text
    assert "stored: 42 documents, 1.5 MB (500.0 KB on disk, compression 3.0x); 7 not modified (304)" in text
    assert f"logs in {where.logs}" in text and f"wreck-dump --data {where.root} --all --warc" in text


def test_an_interrupted_crawl_says_how_to_resume_even_with_nothing_known(tmp_path):
    text = summary({}, Counters(), 0.5, Layout(tmp_path), finished=False)
    assert "Crawl stopped (run the same command again to resume)" in text
    assert "URLs: nothing yet" in text and "compression -" in text and "feeds" not in text


def test_the_progress_line_and_a_store_not_there_yet(tmp_path):
    assert store_counters(tmp_path / "no-store-yet") == Counters()
    text = line(STATUS, STORE, 7.0)
    assert "fetched 40" in text and "12 pages/s" in text and "frontier 5" in text and "in flight 3" in text
    assert "hosts 4" in text and "errors: HTTP_ERROR 2" in text and "stored 1.5 MB" in text


def test_the_summary_names_the_finish_reason_the_top_errors_and_the_deferred_urls(tmp_path):
    errors = {"HTTP_ERROR": 9, "DNS": 7, "TIMEOUT": 5, "TLS": 3, "REFUSED": 2, "ROBOTS_UNREACHABLE": 1,
              "TOO_BIG": 1}
    deferred = {"urls": 3, "retries": 1, "until": 1_000_000.0,
                "sample": [{"url": "http://busy.test/503", "due": 1_000_000.0, "why": "HTTP_ERROR (HTTP 503)"}],
                "hosts": [{"origin": "http://down.test", "urls": 2, "due": 1_000_060.0, "why": "robots retry"}]}
    st = {**STATUS, "errors_by_kind": errors, "finish_reason": "deferred retries", "deferred": deferred}
    text = summary(st, STORE, 3.0, Layout(tmp_path), finished=True)
    assert text.startswith("Crawl ended in 3.0 s.\n  finish reason: deferred retries")
    assert "errors: HTTP_ERROR 9, DNS 7, TIMEOUT 5, TLS 3, REFUSED 2, 2 other reasons 2" in text
    assert "deferred: 3 URLs wait for a retry, the first due at " in text
    assert "run the same command again to fetch them" in text
    assert "http://busy.test/503" in text and "http://down.test: 2 URLs (robots retry until" in text
    limited = summary({**STATUS, "finish_reason": "limit reached: --max-total-pages 5"}, STORE, 1.0,
                      Layout(tmp_path), finished=True)
    assert "finish reason: limit reached: --max-total-pages 5 (the same command with a higher limit" in limited
    stopped = summary({**STATUS, "finish_reason": "interrupted"}, STORE, 1.0, Layout(tmp_path), finished=False)
    assert stopped.startswith("Crawl stopped") and "finish reason: interrupted" in stopped


def test_the_line_says_what_the_crawl_waits_for_when_nothing_is_in_flight():
    idle = {**STATUS, "in_flight": 0, "rates": {"done_per_s": 0.0}, "waiting_for": ["robots retry", "backoff"]}
    text = line(idle, STORE, 9.0)
    assert text.endswith("waiting for robots retry, backoff") and "0 pages/s" in text
    assert "waiting for" not in line({**idle, "in_flight": 2}, STORE, 9.0)


def test_a_terminal_gets_the_live_panel_and_a_log_the_plain_line(tmp_path, monkeypatch):
    import io

    from rich.console import Console

    from wreck.local import progress

    monkeypatch.setattr(progress, "fetch_status", lambda url: STATUS)
    shown = {}
    for kind, console in (("terminal", Console(file=io.StringIO(), force_terminal=True, width=100)),
                          ("log", Console(file=io.StringIO(), force_terminal=False, width=100))):
        p = progress.Progress("http://127.0.0.1:9/status", tmp_path / "no-store-yet", console)
        p._plain_at = -progress.PLAIN_EVERY_S  # the first plain line is due at once
        p.update()
        p.close()
        shown[kind] = console.file.getvalue()
    assert "pages fetched" in shown["terminal"] and "40" in shown["terminal"]  # the panel's rows
    assert "fetched 40" in shown["log"] and "pages fetched" not in shown["log"]  # one plain line


def test_the_summary_lists_the_run_s_filtered_links_by_reason_and_none_when_none(tmp_path):
    filtered = {"too many hosts in domain (trap)": 40, "out of scope (host)": 7, "host page budget exhausted": 12}
    text = summary({**STATUS, "filtered_by": filtered}, STORE, 1.0, Layout(tmp_path), finished=True)
    assert ("filtered this run: too many hosts in domain (trap) 40, host page budget exhausted 12, "
            "out of scope (host) 7") in text
    assert "filtered this run" not in summary(STATUS, STORE, 1.0, Layout(tmp_path), finished=True)
