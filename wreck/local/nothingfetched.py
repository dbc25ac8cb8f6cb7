# Why a one-shot crawl that fetched nothing did so, in one line. An operator
# who typed a wrong host name or port saw "done" and exit 0: now, when a
# crawl ends (done, or only deferred retries left) with no page fetched, no
# redirect followed and no URL refused by robots.txt (a robots.txt refusal
# is the site's answer, not a mistake: unchanged), and its URLs ended in an
# error or wait for a retry, wreck-crawl says so on stderr and exits
# EXIT_NOTHING_FETCHED (docs/operating.md, "wreck-crawl's exit codes").
# A crawl whose store holds a response (its robots.txt read, a page that
# answered 503) is unchanged too: a server answered at the names and ports
# typed, and the summary's errors say what it answered. The reason named is
# the first failure the store recorded (every attempt, failed or not, is a
# record: docs/protocol.txt 6.3), read through the store's public read
# API; the urlserver's final /status gives the counts and the DNS
# failure's exact kind. Addresses refused by the policy get
# their own line, with the --allow-net hint. A crawl that admitted none of
# its seeds (every URL it knows FILTERED: longer than --max-url-len, say;
# a line that is not a URL is refused at the start, docs/operating.md) gets
# one line too, naming the reasons, and the same exit code.
"""The one line for a crawl whose every seed failed, or none was admitted."""

from __future__ import annotations

from pathlib import Path

from wreck.protocol import Specific
from wreck.protocol.codes import HTTP_NONE
from wreck.storeserver.reader import StoreError, open_stores

EXIT_NOTHING_FETCHED = 3
FORBIDDEN = "FORBIDDEN_ADDRESS"  # the urlserver's error kind (urlserver/errorkind.py)
# States a URL reaches only once something was fetched, or robots.txt was
# read and refused it (docs/url-states.md): any of them and the crawl did fetch.
FETCHED_STATES = ("FETCHED", "REDIRECTED", "DISALLOWED")
# States of a URL that failed, or waits for a retry after failing.
FAILED_STATES = ("ERROR", "FETCH_ERROR", "PENDING")
# Store records looked at for the first failure: a crawl that fetched nothing
# holds about one per seed host (its robots.txt or the record of why not),
# so the first failure is near the start; the bound keeps a large store's
# scan short should a crawl have fetched before (a resumed one).
MAX_RECORDS_LOOKED = 1000
# What each failure means, in an operator's words (protocol/codes.py
# Specific, and the urlserver's own DNS kinds of urlserver/errorkind.py).
WORDS = {
    "DNS_NXDOMAIN": "its host name does not exist",
    "DNS_NO_ADDRESS": "its host name has no address (no A or AAAA record)",
    "DNS_FAILED": "its host name did not resolve",
    "CONNECT_FAILED": "the connection was refused, or the host is unreachable",
    "CONNECT_TIMEOUT": "no connection within the connect timeout",
    "TIMEOUT": "the transfer took longer than --timeout-req",
    "TOO_SLOW": "the transfer was too slow",
    "RESET": "the connection was reset before the response was complete",
    "TLS_ERROR": "the TLS handshake or certificate check failed",
    "BAD_RESPONSE": "the response was not HTTP, or malformed",
    "ROBOTS_UNREACHABLE": "its robots.txt stayed unreachable",
}
SEEDS_HINT = "check the seeds' host names and ports"
MAX_REASONS = 3  # filtering reasons named in the nothing-admitted line: the line stays one line
_SPECIFICS = frozenset(Specific)


def why_nothing(last: dict, store_dirs: list[Path]) -> str | None:
    """The line to print when the finished crawl of final status `last`
    (the urlserver's /status) fetched nothing and its URLs failed, or all
    were FILTERED; None when it fetched something, robots.txt refused its
    seeds, or a limit or a stop ended it."""
    if last.get("finish_reason") not in ("done", "deferred retries"):
        return None  # a limit or a stop ended it before its seeds' turn
    urls = last.get("urls", {})
    if any(urls.get(state, 0) for state in FETCHED_STATES):
        return None
    kinds = last.get("errors_by_kind", {})
    forbidden = kinds.get(FORBIDDEN, 0)
    if forbidden:
        return (f"nothing fetched: {forbidden} URL(s) resolved to addresses the crawl refuses (loopback, private, "
                f"reserved); to crawl them, give --allow-net with their network, e.g. --allow-net 127.0.0.0/8")
    failed = sum(urls.get(state, 0) for state in FAILED_STATES)
    if not failed:
        return _nothing_admitted(last)
    first = _first_failure(store_dirs, kinds)
    if first is None:
        return None
    return f"no seed could be fetched: {first}; {failed} URL(s) failed or wait for a retry: {SEEDS_HINT}"


def _nothing_admitted(last: dict) -> str | None:
    """The line for a crawl whose every URL was refused at admission (all
    FILTERED, none in another state), with this run's reasons; else None."""
    urls = last.get("urls", {})
    filtered = urls.get("FILTERED", 0)
    if not filtered or any(n for state, n in urls.items() if state != "FILTERED"):
        return None
    by = last.get("filtered_by") or {}
    reasons = ", ".join(f"{why} {n}" for why, n in sorted(by.items(), key=lambda kv: -kv[1])[:MAX_REASONS])
    return f"no seed was admitted: {filtered} URL(s) refused" + (f" ({reasons})" if reasons else "") + \
        ": nothing to crawl; check the seeds against the crawl's settings (--print-config shows them)"


def _first_failure(store_dirs: list[Path], kinds: dict[str, int]) -> str | None:
    """'URL: what went wrong (OUTCOME)' of the first failed record in the
    store (or the urlserver's most frequent error kind when it holds none);
    None when a record holds a response (a robots.txt read, a page answered
    503): a server answered at the seeds' names and ports, so the operator
    typed them right and the summary's errors say the rest."""
    first = None
    try:
        store = open_stores(store_dirs)
    except StoreError:
        store = None
    if store is not None:
        try:
            for looked, (meta, _) in enumerate(store.iter_docs(with_documents=False)):
                if looked >= MAX_RECORDS_LOOKED:
                    break
                if meta.success or meta.http != HTTP_NONE:
                    return None
                if first is None:
                    outcome = Specific(meta.specific).name if meta.specific in _SPECIFICS else str(meta.specific)
                    first = f"{meta.url}: {_words(outcome, kinds)}"
        except StoreError:
            pass
        finally:
            store.close()
    if first is not None:
        return first
    kind = max(kinds, key=kinds.get) if kinds else None
    return _words(kind, kinds) if kind else "every URL failed"


def _words(outcome: str, kinds: dict[str, int]) -> str:
    """An outcome in an operator's words, its name in brackets; a DNS
    failure named by the urlserver's exact kind when it counted one."""
    if outcome == "DNS_FAILED":
        outcome = next((k for k in sorted(kinds, key=kinds.get, reverse=True) if k.startswith("DNS_")), outcome)
    return f"{WORDS[outcome]} ({outcome})" if outcome in WORDS else outcome
