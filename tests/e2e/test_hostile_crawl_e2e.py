"""The hostile host through a whole crawl: wreck-crawl (store server,
urlserver, spider) crawls evil.wreck.test from its index, which links every
failure mode and trap of tests/web/hostile.py, with short timeouts. Each case
ends in the state an operator would expect (read from the urlserver's saved
state), bounded in tries and bytes (the test web's request log), the
endless URL spaces stop at the depth, repeated-segment and per-host budget
limits, and the crawl finishes."""

from __future__ import annotations

import collections
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from wreck.storeserver.store import ReadStore
from tests.e2e_helpers import url_states as _url_states
from tests.web import HOSTILE_NAME, UNRESOLVABLE_NAME, HostileSpec, RunningWeb, SiteSpec

MAX_DEPTH = 6
MAX_PAGES = 100  # per-host budget: the traps run into it or into MAX_DEPTH
MAX_RETRIES = 2
MAX_REDIRECTS = 5  # the urlserver's default
MAX_DOC = 1 << 20
LONG_CHAIN = 40  # /redirect/chain/40, seeded: far longer than MAX_REDIRECTS
SPEC = SiteSpec(hosts=1, pages_per_host=3, hostile_spec=HostileSpec(
    retry_after=1,  # Retry-After of 503/429: the retry waits for it
    bomb_inflated_bytes=64 << 20,  # still 64 times Max_Doc_Size, cheaper to build
))  # everything else as hostile as the defaults: an hour of drip, 50 MiB, 1 GiB chunked

RETRIED = f"after {MAX_RETRIES} tries"
# path on evil.wreck.test -> (final state, words its reason holds: any of them)
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "/slow-drip": ("ERROR", ("TOO_SLOW",)),
    "/stall-after-headers": ("ERROR", ("TOO_SLOW", "TIMEOUT")),
    "/no-answer": ("ERROR", ("TOO_SLOW", "TIMEOUT")),
    "/close-without-response": ("ERROR", ("RESET",)),
    "/headers-then-close": ("FETCHED", ("",)),  # its 100 bytes, kept once as received (WARC-Truncated: disconnect)
    "/reset-mid-body": ("ERROR", ("RESET",)),
    "/big": ("ERROR", ("TOO_BIG",)),
    "/big-chunked": ("ERROR", ("TOO_BIG",)),
    "/gzip-bomb": ("ERROR", ("TOO_BIG",)),
    "/bad-gzip": ("ERROR", ("DECODE_ERROR",)),
    "/bad-chunked": ("ERROR", ("BAD_RESPONSE", "RESET")),
    "/malformed-status": ("ERROR", ("BAD_RESPONSE",)),
    "/malformed-headers": ("ERROR", ("BAD_RESPONSE",)),
    "/no-status-line": ("ERROR", ("BAD_RESPONSE",)),
    "/huge-headers": ("ERROR", ("HEADERS_TOO_BIG",)),
    "/huge-header-line": ("ERROR", ("HEADERS_TOO_BIG",)),
    "/length-mismatch": ("FETCHED", ("",)),  # the 10 announced bytes are the page
    "/status/404": ("ERROR", ("HTTP 404",)),
    "/status/410": ("ERROR", ("HTTP 410",)),
    **{f"/status/{c}": ("ERROR", (f"HTTP {c}) {RETRIED}",)) for c in (408, 429, 500, 503)},
    "/redirect/no-location": ("ERROR", ("redirect without a usable Location",)),
    "/redirect/non-http": ("ERROR", ("redirect without a usable Location",)),
    "/meta-refresh": ("REDIRECTED", ("/target",)),
    "/redirect/loop": ("REDIRECTED", ("/redirect/loop-back",)),
    "/redirect/loop-back": ("REDIRECTED", ("/redirect/loop",)),
    "/redirect/self": ("REDIRECTED", ("/redirect/self",)),
    "/redirect/relative": ("REDIRECTED", ("/target",)),
    "/redirect/cross-host": ("REDIRECTED", ("h0.wreck.test",)),
    "/redirect/unresolvable": ("REDIRECTED", (UNRESOLVABLE_NAME,)),
    "/redirect/chain/5": ("REDIRECTED", ("/redirect/chain/4",)),
    **{f"/redirect/{c}": ("REDIRECTED", ("/target",)) for c in (301, 302, 303, 307, 308)},
    **{p: ("FETCHED", ("",)) for p in ("/target", "/robots.txt", "/doc.pdf", "/image.png", "/notes.txt",
                                         "/data.json", "/no-content-type", "/mislabeled", "/story/0")},
}
FEEDS = ("/feed.rss", "/feed.atom")  # fetched; where feeds are polled, waiting for their next poll
TRANSIENT = {"/slow-drip", "/stall-after-headers", "/no-answer", "/close-without-response", "/reset-mid-body", "/bad-gzip", "/bad-chunked", "/malformed-status",
             "/malformed-headers", "/no-status-line", "/huge-headers", "/huge-header-line"}
# Of those, the answers a status line came with and whose body or framing cannot be
# read: the server's own answer, ended at once (urlserver/retry.py), not retried
ANSWERS = {"/bad-gzip", "/bad-chunked", "/malformed-status", "/malformed-headers"}
NOT_RETRIED = "the server's answer, not retried"
# Paths answered by a close without a word, which libcurl retries by itself
SILENT = {"/close-without-response"}
LIBCURL_REUSE_RETRIES = 5


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    with RunningWeb(SPEC) as web:
        evil = f"http://{HOSTILE_NAME}:{web.port}"
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", f"{evil}/", f"{evil}/redirect/chain/{LONG_CHAIN}",
            "--data", str(tmp / "crawl"), "--dns", f"{dns_ip}:{dns_port}", "--allow-net", "127.0.0.0/8",
            "--scope", "any", "--delay", "0.02", "--host-concurrency", "4", "--timeout-req", "1.5",
            "--max-doc-size", str(MAX_DOC), "--retry-delay", "0.2", "--max-retries", str(MAX_RETRIES),
            "--robots-retry", "0.2", "--max-depth", str(MAX_DEPTH), "--max-pages", str(MAX_PAGES),
            "--procs", "1", "--concurrency", "20",
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        records = [r for r in web.log.records() if r.host == HOSTILE_NAME]
    states = {url: rec for url, rec in _url_states(tmp / "crawl" / "frontier").items()}
    reader = ReadStore(tmp / "crawl")
    try:
        sizes = [len(doc or b"") for _, doc in reader.iter_docs()]
    finally:
        reader.close()
    return run, evil, records, states, sizes


def test_the_crawl_finishes(crawled):
    run, *_ = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Crawl finished" in run.stdout


def test_every_case_ends_in_the_right_state(crawled):
    _, evil, _, states, _ = crawled
    wrong = []
    for path, (state, words) in CASES.items():
        rec = states.get(evil + path)
        got = rec.as_dict() if rec else {"state": "UNKNOWN", "reason": ""}
        if got["state"] != state or not any(w in got["reason"] for w in words):
            wrong.append(f"{path}: {got['state']} {got['reason']!r}, want {state} with one of {words}")
        elif path in TRANSIENT and RETRIED not in got["reason"] and not (
                path in ANSWERS and NOT_RETRIED in got["reason"]):
            wrong.append(f"{path}: {got['reason']!r} was not retried {MAX_RETRIES} times")
    assert not wrong, "\n".join(wrong)
    for path in FEEDS:
        got = states[evil + path].as_dict()
        assert got["state"] == "FETCHED" or (got["state"] == "PENDING" and got["reason"].startswith("feed:")), got
    nowhere = states[f"http://{UNRESOLVABLE_NAME}:{urlsplit(evil).port}/"]
    assert (nowhere.as_dict()["state"], nowhere.reason) == ("ERROR", "dns: NXDOMAIN")


def test_each_case_is_tried_a_bounded_number_of_times(crawled):
    _, evil, records, states, _ = crawled
    tries = collections.Counter(r.target for r in records)

    def bound(path: str) -> int:
        # A transaction that expired (its spider starved past Timeout_Update on a
        # loaded machine) goes back to its queue without a try counted:
        # --max-expiries bounds those, and the URL's record counts them.
        rec = states.get(evil + path)
        transactions = MAX_RETRIES + (rec.expiries if rec else 0)
        # A server that closes a kept-alive connection without answering gets the
        # request again on a fresh connection from libcurl (an idempotent retry,
        # RFC 9110 9.2.2), when the connection happened to be reused; if that one
        # was reused too (another idle one of the pool), again: at most
        # CONN_MAX_RETRIES (5, libcurl's lib/transfer.c) times a transaction.
        return transactions * (1 + LIBCURL_REUSE_RETRIES if path in SILENT else 1)

    over = {p: n for p, n in tries.items() if n > bound(p)}
    assert not over, over
    for path in TRANSIENT:  # retried, then given up (the URL's state says how often: see above)
        assert 1 <= tries[path] <= bound(path), path
        # A request the server is still dripping or stalling when the crawl
        # ends is logged only once the server notices, maybe after the log is read.


def test_bytes_are_bounded(crawled):
    _, _, records, _, sizes = crawled
    sent = collections.Counter()
    for r in records:
        sent[r.target] += r.bytes_sent
    offered = SPEC.hostile_spec
    # the server pushes what socket buffers take before the spider hangs up:
    # a few MiB at most, against 50 MiB and 1 GiB offered
    assert sent["/big"] < 16 << 20 < offered.big_bytes
    assert sent["/big-chunked"] < 16 << 20 < offered.big_chunked_cap
    assert sent["/slow-drip"] < offered.drip_bytes  # cut off long before its hour
    assert max(sizes) <= MAX_DOC + 64 * 1024  # body within Max_Doc_Size, plus the header block


def test_redirect_chains_stop_at_max_redirects(crawled):
    _, evil, records, states, _ = crawled
    long_chain = {int(r.target.rsplit("/", 1)[1]) for r in records
                  if r.target.startswith("/redirect/chain/") and int(r.target.rsplit("/", 1)[1]) > 5}
    assert long_chain == set(range(LONG_CHAIN - MAX_REDIRECTS, LONG_CHAIN + 1))
    beyond = states[f"{evil}/redirect/chain/{LONG_CHAIN - MAX_REDIRECTS - 1}"]
    assert (beyond.as_dict()["state"], beyond.reason) == ("FILTERED", "too many redirects")


def test_endless_url_spaces_stop_at_the_limits(crawled):
    _, evil, records, states, _ = crawled
    requested = {r.target for r in records}
    pages = requested - {"/robots.txt"}
    assert len(pages) <= MAX_PAGES  # the per-host budget holds
    admitted = [u for u, rec in states.items() if u.startswith(evil) and rec.as_dict()["state"] != "FILTERED"]
    assert len(admitted) <= MAX_PAGES
    assert all(rec.depth <= MAX_DEPTH for u, rec in states.items() if rec.as_dict()["state"] != "FILTERED")
    # each trap grows by a fixed number of URLs per level of depth
    calendar = [t for t in requested if t.startswith("/calendar/")]
    sessions = [t for t in requested if t.startswith(("/s/", "/s;"))]
    deep = [t for t in requested if t.startswith("/deep/")]
    params = [t for t in requested if t.startswith("/params")]
    assert 3 <= len(calendar) <= 2 * MAX_DEPTH - 1  # one month back and one forward per level
    assert 2 <= len(sessions) <= MAX_DEPTH and not [t for t in requested if "jsessionid" in t.lower()]
    assert set(deep) <= {"/deep/", "/deep/a/", "/deep/a/a/", "/deep/a/a/a/"}  # a 4th 'a' is a trap
    assert 3 <= len(params) <= 3 * MAX_DEPTH
    reasons = collections.Counter(rec.reason for rec in states.values() if rec.as_dict()["state"] == "FILTERED")
    assert reasons["repeated path segments (trap)"] >= 1
    assert reasons["too deep"] + reasons["host page budget exhausted"] >= 1, reasons
    assert set(reasons) <= {"repeated path segments (trap)", "too deep", "host page budget exhausted",
                            "too many redirects"}, reasons
