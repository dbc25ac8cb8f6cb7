"""Recrawl and bandwidth, end to end: the real store server, urlserver and
spider against the test web's revisit hosts (tests/web/revisit.py), judged
by the web's request log and the store. A second round asks conditionally
and stores nothing new for unchanged pages; changed pages are stored anew
and revisited sooner; HEAD spares unwanted types, and hosts whose HEAD is
broken get GETs aborted at the headers; a host answering 429 and 5xx is
slowed down as a whole."""

from __future__ import annotations

import io
import re
from collections import defaultdict

import lmdb
import msgspec
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Specific
from wreck.storeserver.store import ReadStore
from wreck.storeserver.warc import write_warc
from wreck.urlserver.db import Db, fingerprint
from wreck.urlserver.recrawl import Revisit
from tests.e2e_helpers import Trio
from tests.web import RevisitSpec, RunningWeb, SiteSpec
from tests.web.revisit import (
    BUSY, FILES, HEAD501, HEADBODY, HEADRESET, LIAR, MISNAMED, MOVED, NEWS, NOHEAD, SMALL_FILES, VIDEO,
)  # fmt: skip

WAIT = 40.0  # seconds a whole scenario may take on a loaded box
DELAY = 0.05  # --delay
BASE = ["--allow-net", "127.0.0.0/8", "--delay", str(DELAY), "--retry-delay", "0.2"]
RECRAWL, RECRAWL_MIN, RECRAWL_MAX = 1.0, 0.5, 4.0  # --recrawl, --recrawl-min, --recrawl-max (factor 2)
# The float rounding of two wall-clock readings near today's epoch (an ulp is
# 2.4e-7 s); the only slack the schedule checks allow. Gaps are measured on
# the urlserver's clock (wall time): it schedules a URL's next fetch, or a
# host's next request, from the DONE of the previous one, which left the
# spider after that request reached the web; so a gap is never shorter than
# the wait the urlserver set, however loaded the machine is.
CLOCK_RESOLUTION = 1e-6


def _web(**revisit) -> RunningWeb:
    return RunningWeb(SiteSpec(hosts=1, pages_per_host=2, hostile=False, revisit=RevisitSpec(**revisit)))


def _by_path(records, host: str) -> dict[str, list]:
    out = defaultdict(list)
    for r in sorted(records, key=lambda r: r.mono_time):
        if r.host == host and r.target != "/robots.txt":
            out[r.target].append(r)
    return out


def _gaps(records) -> list[float]:
    times = [r.wall_time for r in records]
    return [b - a for a, b in zip(times, times[1:])]


def _recrawl_waits(changed: list[bool]) -> list[float]:
    """The wait after each fetch (urlserver/recrawl.py's rule): --recrawl after
    the first, then halved if the page changed, doubled if not, within
    [--recrawl-min, --recrawl-max]."""
    waits, wait = [], 0.0
    for change in changed:
        wait = RECRAWL if not wait else wait / 2 if change else wait * 2
        wait = min(RECRAWL_MAX, max(RECRAWL_MIN, wait))
        waits.append(wait)
    return waits


def _at_least(gaps: list[float], waits: list[float]) -> bool:
    return all(gap >= wait - CLOCK_RESOLUTION for gap, wait in zip(gaps, waits))


def _revisit_intervals(frontier, urls: list[str]) -> dict[str, float]:
    """url -> the recrawl interval the urlserver last set for it (its `revisits` database)."""
    env = lmdb.open(str(frontier), readonly=True, max_dbs=len(Db.NAMES), lock=True, create=False)
    try:
        with env.begin() as txn:
            revisits = env.open_db(b"revisits", txn=txn, create=False)
            return {url: msgspec.msgpack.decode(txn.get(fingerprint(url), db=revisits), type=Revisit).interval
                    for url in urls}
    finally:
        env.close()


def test_recrawl_asks_conditionally_keeps_unchanged_pages_and_revisits_changing_ones_sooner(tmp_path):
    with _web(change_interval=0.25) as web:
        statics = [f"/static-{k}.html" for k in range(3)]

        def enough(records) -> bool:
            pages = _by_path(records, NEWS)
            return all(len(pages[p]) >= 3 for p in statics) and len(pages["/clock.html"]) >= 4

        trio = Trio(tmp_path, web, [web.url(NEWS)],
                    [*BASE, "--recrawl", f"{RECRAWL}s", "--recrawl-min", f"{RECRAWL_MIN}s",
                     "--recrawl-max", f"{RECRAWL_MAX}s"],
                    exit_when_done=False)  # continuous: it would stop after the first round
        try:
            web.log.wait_for(enough, timeout=WAIT)
        finally:
            trio.stop()
        pages = _by_path(web.log.records(), NEWS)
    scheduled = _revisit_intervals(tmp_path / "frontier", [web.url(NEWS, p) for p in [*statics, "/clock.html"]])
    for path in statics:
        first, *later = pages[path]
        assert first.if_none_match is None and first.status == 200
        # every later round sends the stored validators and gets 304
        assert all(r.if_none_match and r.if_modified_since and r.status == 304 for r in later), later
        # unchanged: revisited less often (1 s, 2 s, 4 s), and never sooner than scheduled
        waits = _recrawl_waits([True] + [False] * len(later))
        assert waits[:3] == [1.0, 2.0, 4.0]
        assert scheduled[web.url(NEWS, path)] in waits[-2:]  # the last DONE may be cut short by the stop
        assert _at_least(_gaps(pages[path]), waits), (path, _gaps(pages[path]), waits)
    clock = pages["/clock.html"]
    assert all(r.status == 200 for r in clock)  # it changed every time
    # changing: revisited sooner (1 s, then the 0.5 s floor), and never sooner than scheduled
    waits = _recrawl_waits([True] * len(clock))
    assert waits[:2] == [1.0, 0.5] and scheduled[web.url(NEWS, "/clock.html")] == 0.5
    assert scheduled[web.url(NEWS, "/clock.html")] < min(scheduled[web.url(NEWS, p)] for p in statics)
    assert _at_least(_gaps(clock), waits), (_gaps(clock), waits)
    reader = ReadStore(tmp_path / "store")
    try:
        info = reader.meta_info()
        news_200 = sum(r.status == 200 for rs in pages.values() for r in rs)
        news_304 = sum(r.status == 304 for rs in pages.values() for r in rs)
        # the store gained a document for each 200 only (and one robots.txt);
        # each 304 is a header-only revisit record, counted apart
        assert info["docs"] == news_200 + 1
        assert info["not_modified"] == news_304 > 0
        for path in statics:
            url = web.url(NEWS, path)
            ids = reader.doc_ids_for_url(url)
            assert len(ids) >= 3 and reader.current_doc_for_url(url) == ids[0]  # the first stays current
            meta, document = reader.get(ids[0])
            assert b"same same" in document[meta.head_len:]
            assert all(reader.get(i)[0].specific == Specific.NOT_MODIFIED for i in ids[1:])
        url = web.url(NEWS, "/clock.html")
        ids = reader.doc_ids_for_url(url)
        assert reader.current_doc_for_url(url) == ids[-1]  # changed: the newest body is current
        bodies = {reader.get(i)[1].partition(b"\r\n\r\n")[2] for i in ids}
        assert len(bodies) == len(ids)  # each round stored its own body
        out = io.BytesIO()
        write_warc(reader, out, gzip=False)
        revisits = [r for r in ArchiveIterator(io.BytesIO(out.getvalue())) if r.rec_type == "revisit"]
        not_modified = [r for r in revisits if "server-not-modified" in r.rec_headers["WARC-Profile"]]
        assert len(not_modified) == news_304  # each 304 is a server-not-modified revisit record
        assert all(r.rec_headers["WARC-Refers-To-Date"] for r in not_modified)
        # the rest: statics whose body another page had first (docs/warc.md)
        assert all("identical-payload-digest" in r.rec_headers["WARC-Profile"] for r in revisits if r not in not_modified)
    finally:
        reader.close()


def test_head_first_for_unwanted_extensions_with_fallback_and_early_aborts(tmp_path):
    big = 40 * 1024 * 1024
    with _web(big_bytes=big) as web:
        hosts = (FILES, HEADBODY, NOHEAD, HEAD501, LIAR, HEADRESET)
        trio = Trio(tmp_path, web, [web.url(h) for h in hosts],
                    [*BASE, "--accept-type", "text/html,application/xhtml+xml", "--max-doc-size", str(2 * big)])
        try:
            assert trio.wait() == 0, trio.logs()
        finally:
            trio.stop()
        records = web.log.records()
    binaries = [*SMALL_FILES, VIDEO]
    for host in (FILES, HEADBODY):  # headbody sends bodies after HEADs: its connections are not reused
        files = _by_path(records, host)
        for path in binaries:  # a correct HEAD settles it: no GET at all
            assert [r.method for r in files[path]] == ["HEAD"], path
        assert [r.method for r in files[MISNAMED]] == ["HEAD", "GET"]  # HEAD said HTML: fetched
        assert [(r.method, r.status) for r in files[MOVED]] == [("HEAD", 301)]  # a redirect needs no GET
        assert all(r.status in (200, 301) for rs in files.values() for r in rs)  # nothing failed
    for host, code in ((NOHEAD, 405), (HEAD501, 501), (LIAR, 200), (HEADRESET, 0)):
        paths = _by_path(records, host)
        first, *rest = binaries  # queue order: the first binary link is tried with HEAD
        *heads, get = [(r.method, r.status) for r in paths[first]]
        assert heads and set(heads) == {("HEAD", code)} and get == ("GET", 200), host
        for path in rest:  # the host's HEAD is known unusable: GET only
            assert [r.method for r in paths[path]] == ["GET"], (host, path)
        video = paths[VIDEO][-1]
        assert not video.completed and video.bytes_sent < big / 4  # aborted at the headers
    reader = ReadStore(tmp_path / "store")
    try:
        for host in hosts:
            meta, document = reader.get(reader.current_doc_for_url(web.url(host, VIDEO)))
            assert meta.specific == Specific.UNWANTED_TYPE and meta.doc_len == meta.head_len  # no body
            meta, document = reader.get(reader.current_doc_for_url(web.url(host, MISNAMED)))
            assert meta.specific == Specific.OK and b"<html>" in document
            meta, _ = reader.get(reader.current_doc_for_url(web.url(host, MOVED)))
            assert meta.specific == Specific.REDIRECT and meta.new_url == web.url(host, "/report.pdf")
    finally:
        reader.close()


def test_a_host_answering_429_and_5xx_is_slowed_down_then_recovers(tmp_path):
    with _web(busy_pages=6, busy_429=1, busy_5xx=2, retry_after=1) as web:
        trio = Trio(tmp_path, web, [web.url(BUSY)], [*BASE, "--max-retries", "5"])
        try:
            assert trio.wait() == 0, trio.logs()
        finally:
            trio.stop()
        busy = sorted((r for r in web.log.records() if r.host == BUSY and r.target != "/robots.txt"),
                      key=lambda r: r.mono_time)
    statuses = [r.status for r in busy]
    assert statuses[:4] == [200, 429, 503, 503] and set(statuses[4:]) == {200}
    # the urlserver's own decisions (its log): the host's delay doubles from
    # the floor (0.25 s, five times --delay) with each 429 or 5xx answer
    slowed = re.findall(r"event=host_slowed origin=\S+ http=(\d+) delay=(\S+)$",
                        (tmp_path / "urlserver.log").read_text(), re.M)
    assert slowed == [("429", "0.25"), ("503", "0.5"), ("503", "1")], slowed
    gaps = _gaps(busy)  # gaps[i]: from request i to request i+1
    after_429, after_503, after_second_503 = gaps[1:4]
    # the whole host waits (every page of it), and the web saw it: the 429's
    # Retry-After (1 s) held the host beyond its doubled delay (0.25 s), then
    # 5xx after 5xx the delay doubled (0.5 s, 1 s)
    assert _at_least([after_429, after_503, after_second_503], [1.0, 0.5, 1.0]), gaps
    # each success halves the delay again (1 s, 0.5, 0.25, ... down to the
    # plain --delay; the wait after an answer is set before it halves): never
    # sooner than that on the way down
    recovering = [max(DELAY, 1.0 / 2**k) for k in range(len(gaps) - 4)]
    assert _at_least(gaps[4:], recovering), (gaps, recovering)
