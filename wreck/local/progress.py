# What wreck-crawl shows while a crawl runs and when it ends. It reads the
# urlserver's /status (JSON over loopback HTTP) and the store's counters
# through the store's public read API (wreck.storeserver.reader, which never
# blocks the writer). On a terminal it keeps one
# live panel (rich); otherwise it prints a plain line every few seconds, so
# logs and CI output stay readable (and rich's live display and tables are
# not even imported: 0.03 CPU-s of a start, issue 16). The summary says why the crawl ended
# (the urlserver's finish_reason), the errors by reason (top five) and what
# is deferred until when, with the command that picks it up.
"""Live progress and the final summary of a local crawl."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from wreck.storeserver.reader import Counters, StoreError, read_counters

from .layout import Layout

if TYPE_CHECKING:
    from rich.table import Table

STATUS_TIMEOUT_S = 2.0
PLAIN_EVERY_S = 5.0  # one plain line this often when stdout is not a terminal
TOP_ERRORS = 5  # error reasons named in the line and the summary; the rest are summed


def fetch_status(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=STATUS_TIMEOUT_S) as resp:  # loopback only
            return json.load(resp)
    except (OSError, ValueError):
        return None


def store_counters(store_data: Path | list[Path]) -> Counters:
    """Documents and bytes in the store (summed over shards given as a
    list), all 0 before it has any."""
    found = []
    for data in store_data if isinstance(store_data, list) else [store_data]:
        try:
            found.append(read_counters(data))
        except StoreError:  # not created yet, or mid-creation
            pass
    return Counters(**{f: sum(getattr(c, f) for c in found) for f in Counters.__struct_fields__})


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"


def errors_text(st: dict, key: str = "errors_by_kind") -> str:
    """The error reasons (or the reasons of another count by reason, such
    as filtered_by), most frequent first: the top five with counts, then the rest summed."""
    ranked = sorted(st.get(key, {}).items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{kind} {n}" for kind, n in ranked[:TOP_ERRORS]]
    rest = sum(n for _, n in ranked[TOP_ERRORS:])
    if rest:
        parts.append(f"{len(ranked) - TOP_ERRORS} other reasons {rest}")
    return ", ".join(parts) or "none"


def clock(when: float) -> str:
    """A wall time as the operator's local HH:MM:SS."""
    return time.strftime("%H:%M:%S", time.localtime(when))


def waiting_text(st: dict) -> str:
    """'  waiting for robots retry, backoff' when nothing is in flight and something holds the crawl."""
    waits = st.get("waiting_for") or []
    return f"  waiting for {', '.join(waits)}" if waits and not st.get("in_flight") else ""


def line(st: dict, store: Counters, elapsed: float) -> str:
    urls = st.get("urls", {})
    rate = st.get("rates", {}).get("done_per_s", 0.0)
    return (
        f"{elapsed:6.0f}s  fetched {urls.get('FETCHED', 0)}  {rate:.0f} pages/s  "
        f"stored {_human(store.raw_bytes)}  frontier {st.get('queued', 0)}  "
        f"in flight {st.get('in_flight', 0)}  hosts {st.get('hosts', {}).get('known', 0)}  "
        f"errors: {errors_text(st)}{waiting_text(st)}"
    )


def panel(st: dict, store: Counters, elapsed: float) -> Table:
    from rich.table import Table  # a terminal's only (the opening comment)

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
    table.add_row("errors", errors_text(st))
    waits = waiting_text(st).strip()
    if waits:
        table.add_row("waiting", waits.removeprefix("waiting for "))
    return table


class Progress:
    """Shows progress until closed; `update()` is called about once a second."""

    def __init__(self, status_url: str, store_data: Path | list[Path], console: Console) -> None:
        self.status_url, self.store_data, self.console = status_url, store_data, console
        self.started = time.monotonic()
        self.last: dict = {}
        self._plain_at = 0.0
        self._live = None
        if console.is_terminal:
            from rich.live import Live  # a terminal's only (the opening comment)

            self._live = Live(console=console, refresh_per_second=2)
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


def headline(last_status: dict, finished: bool) -> tuple[str, str | None]:
    """How the crawl ended: the summary's first words, and its finish-reason line."""
    reason = last_status.get("finish_reason")
    if not finished or reason == "interrupted":
        return "Crawl stopped (run the same command again to resume)", reason and "  finish reason: interrupted"
    if reason is None or reason == "done":
        return "Crawl finished", reason and "  finish reason: done (nothing left to fetch)"
    if reason.startswith("limit reached"):
        return "Crawl ended", f"  finish reason: {reason} (the same command with a higher limit continues)"
    return "Crawl ended", f"  finish reason: {reason} (nothing else fetchable within --linger)"


def deferred_lines(last_status: dict) -> list[str]:
    """What waits for a later run: how many, until when, a few of them."""
    deferred = last_status.get("deferred") or {}
    if not deferred.get("urls"):
        return []
    until = deferred.get("until")
    when = f", the first due at {clock(until)}" if until else ""
    out = [f"  deferred: {deferred['urls']} URLs wait for a retry{when}; run the same command again to fetch them"]
    for item in deferred.get("sample", []):
        out.append(f"    {item['url']}  due {clock(item['due'])}  ({item['why']})")
    for host in deferred.get("hosts", []):
        due = f" until {clock(host['due'])}" if host.get("due") else ""
        out.append(f"    {host['origin']}: {host['urls']} URLs ({host['why']}{due})")
    return out


def summary(last_status: dict, store: Counters, elapsed: float, where: Layout, finished: bool) -> str:
    urls = last_status.get("urls", {})
    data = where.root
    read = f"--manifest {where.manifest}" if where.shards > 1 else f"--data {data}"  # every shard, as one
    raw, stored = store.raw_bytes, store.stored_bytes
    ratio = f"{raw / stored:.1f}x" if stored else "-"
    by_state = ", ".join(f"{k.lower()} {v}" for k, v in urls.items() if v) or "nothing yet"
    head, why = headline(last_status, finished)
    counters = last_status.get("counters", {})
    feeds = [f"  feeds: {last_status['feeds']}, fetched {counters.get('feed_fetches', 0)} times this run "
             f"({counters.get('feed_redundant', 0)} redundant), {counters.get('feed_stories', 0)} new stories"
             ] if last_status.get("feeds") else []
    return "\n".join([
        f"{head} in {elapsed:.1f} s.",
        *([why] if why else []),
        f"  URLs: {by_state}",
        *([f"  errors: {errors_text(last_status)}"] if last_status.get("errors_by_kind") else []),
        # this run's links refused at admission, by reason: a trap shows here (docs/operating.md, Spider traps)
        *([f"  filtered this run: {errors_text(last_status, 'filtered_by')}"] if last_status.get("filtered_by")
          else []),
        # seeds an explicit filter refused (urlserver/seedfilter.py): FILTERED, never fetched
        *([f"  seeds refused: {counters['seeds_refused']} (--exclude or a URL filter refuses them: they are "
           "FILTERED, not crawled)"] if counters.get("seeds_refused") else []),
        *deferred_lines(last_status),
        *([f"  retried on request: {counters['retry_requested']} URLs (--retry-errors)"]
          if counters.get("retry_requested") else []),
        *feeds,
        f"  stored: {store.docs} documents, {_human(raw)} ({_human(stored)} on disk, compression {ratio})"
        + (f"; {store.not_modified} not modified (304)" if store.not_modified else ""),
        f"  data: {data}  (logs in {where.logs})",
        "  read it:",
        f"    wreck-dump {read} --all --jsonl | head",
        f"    wreck-dump {read} --url URL --text",
        f"    wreck-dump {read} --all --warc crawl.warc.gz",
    ])  # fmt: skip
