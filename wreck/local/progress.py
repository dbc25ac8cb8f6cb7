# What wreck-crawl shows while a crawl runs and when it ends. It reads the
# urlserver's /status (JSON over loopback HTTP) and the store's counters
# through the store's public read API (wreck.storeserver.reader, which never
# blocks the writer). On a terminal it keeps one
# live panel (rich); otherwise it prints a plain line every few seconds, so
# logs and CI output stay readable.
"""Live progress and the final summary of a local crawl."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.table import Table

from wreck.storeserver.reader import Counters, StoreError, read_counters

from .layout import Layout

STATUS_TIMEOUT_S = 2.0
PLAIN_EVERY_S = 5.0  # one plain line this often when stdout is not a terminal


def fetch_status(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=STATUS_TIMEOUT_S) as resp:  # loopback only
            return json.load(resp)
    except (OSError, ValueError):
        return None


def store_counters(store_data: Path) -> Counters:
    """Documents and bytes in the store, all 0 before it has any."""
    try:
        return read_counters(store_data)
    except StoreError:  # not created yet, or mid-creation
        return Counters()


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def line(st: dict, store: Counters, elapsed: float) -> str:
    urls = st.get("urls", {})
    rate = st.get("rates", {}).get("done_per_s", 0.0)
    errors = ", ".join(f"{k} {v}" for k, v in sorted(st.get("errors_by_kind", {}).items())) or "none"
    return (
        f"{elapsed:6.0f}s  fetched {urls.get('FETCHED', 0)}  {rate:.0f} pages/s  "
        f"stored {_human(store.raw_bytes)}  frontier {st.get('queued', 0)}  "
        f"in flight {st.get('in_flight', 0)}  hosts {st.get('hosts', {}).get('known', 0)}  errors: {errors}"
    )


def panel(st: dict, store: Counters, elapsed: float) -> Table:
    urls = st.get("urls", {})
    table = Table(title=f"WRECK crawl — {elapsed:.0f} s", show_header=False, expand=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("pages fetched", str(urls.get("FETCHED", 0)))
    table.add_row("pages/s", f"{st.get('rates', {}).get('done_per_s', 0.0):.1f}")
    table.add_row("stored", f"{store.docs} documents, {_human(store.raw_bytes)}")
    table.add_row("frontier", f"{st.get('queued', 0)} queued, {st.get('delayed_retries', 0)} waiting to retry")
    hosts = st.get("hosts", {})
    table.add_row("hosts", f"{hosts.get('known', 0)} known, {hosts.get('ready', 0)} ready")
    table.add_row("in flight", str(st.get("in_flight", 0)))
    states = ", ".join(f"{k.lower()} {v}" for k, v in urls.items() if v and k != "FETCHED")
    table.add_row("other URLs", states or "-")
    errors = ", ".join(f"{k} {v}" for k, v in sorted(st.get("errors_by_kind", {}).items()))
    table.add_row("errors", errors or "none")
    return table


class Progress:
    """Shows progress until closed; `update()` is called about once a second."""

    def __init__(self, status_url: str, store_data: Path, console: Console) -> None:
        self.status_url, self.store_data, self.console = status_url, store_data, console
        self.started = time.monotonic()
        self.last: dict = {}
        self._plain_at = 0.0
        self._live = Live(console=console, refresh_per_second=2) if console.is_terminal else None
        if self._live:
            self._live.start()

    def update(self) -> None:
        st = fetch_status(self.status_url)
        if st is None:
            return
        self.last = st
        elapsed = time.monotonic() - self.started
        store = store_counters(self.store_data)
        if self._live:
            self._live.update(panel(st, store, elapsed))
        elif elapsed - self._plain_at >= PLAIN_EVERY_S:
            self._plain_at = elapsed
            self.console.print(line(st, store, elapsed), highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._live:
            self._live.stop()


def summary(last_status: dict, store: Counters, elapsed: float, where: Layout, finished: bool) -> str:
    urls = last_status.get("urls", {})
    data = where.root
    raw, stored = store.raw_bytes, store.stored_bytes
    ratio = f"{raw / stored:.1f}x" if stored else "-"
    by_state = ", ".join(f"{k.lower()} {v}" for k, v in urls.items() if v) or "nothing yet"
    head = "Crawl finished" if finished else "Crawl stopped (run the same command again to resume)"
    counters = last_status.get("counters", {})
    feeds = [f"  feeds: {last_status['feeds']}, fetched {counters.get('feed_fetches', 0)} times this run "
             f"({counters.get('feed_redundant', 0)} redundant), {counters.get('feed_stories', 0)} new stories"
             ] if last_status.get("feeds") else []
    return "\n".join([
        f"{head} in {elapsed:.1f} s.",
        f"  URLs: {by_state}",
        *feeds,
        f"  stored: {store.docs} documents, {_human(raw)} ({_human(stored)} on disk, compression {ratio})"
        + (f"; {store.not_modified} not modified (304)" if store.not_modified else ""),
        f"  data: {data}  (logs in {where.logs})",
        "  read it:",
        f"    wreck-dump --data {data} --all --jsonl | head",
        f"    wreck-dump --data {data} --url URL --text",
        f"    wreck-dump --data {data} --all --warc crawl.warc.gz",
    ])  # fmt: skip
