"""Proof by a real client: wreck-crawl crawls the local test web, recrawling
until the news host has answered 304 for each of its unchanging pages (then
Ctrl-C), wreck-dump
writes the WARC, its CDXJ, a WACZ of that export and a WACZ of the files the
crawl wrote with --warc-dir (`--from-warc-dir`), pywb loads each (`wb-manager`) and
`wayback` replays them on loopback. Every page replays byte for byte as
the test web serves it; a 304 server-not-modified revisit replays as pywb
replays one; an identical-payload-digest revisit resolves to its original
(the WARC for that case is built here with warcio from the same crawl,
until WRECK's own export writes such revisits); `warcio check` passes on
every file."""

from __future__ import annotations

import http.client
import io
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from wreck.storeserver.reader import StoreError, open_crawl
from wreck.storeserver.warc import iso_date, parse_head, warc_headers
from tests.web import RevisitSpec, RunningWeb, SiteSpec
from tests.web.revisit import NEWS

pytest.importorskip("pywb", reason="pywb is a test dependency (pip install -e '.[test]')")

BIN = Path(sys.executable).parent  # wb-manager, wayback, wreck-dump: installed beside this Python
READY_TIMEOUT = 60.0  # seconds wayback may take to listen on a loaded box
CHANGING = "/clock.html"  # news' page that changes between fetches: no fixed truth
COLLECTIONS = ("warc", "cdxj", "wacz", "waczdir", "dedup")
REPLAYED = ["warc", "cdxj", "wacz", "waczdir"]  # WRECK's own outputs
CRAWL_WAIT = 120.0  # seconds the crawl may take to reach _recrawled on a loaded box
STATICS = [f"/static-{k}.html" for k in range(RevisitSpec().static_pages)]


def _recrawled(data: Path) -> bool:
    """The store holds a 304 to a recrawl of every news static, and both hosts' copies."""
    try:
        crawl = open_crawl(data)
    except StoreError:
        return False  # not created yet
    with crawl:
        paths = [(d.host, urlsplit(d.url).path, d.status) for d in crawl.documents(status={200, 304}, revisits=True)]
    confirmed = {path for host, path, status in paths if host == NEWS and status == 304}
    copies = {(host, path) for host, path, status in paths if path.startswith("/copies/") and status == 200}
    return confirmed >= set(STATICS) and len(copies) == 6  # original, exact and near copy on h0 and h1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(*cmd, cwd: Path) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cmd}: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def _served(web: RunningWeb, url: str) -> bytes:
    """The body the test web serves for `url` now (its truth), fetched directly."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(web.site.addresses()[parts.hostname], parts.port, timeout=10)
    try:
        conn.request("GET", parts.path, headers={"Host": parts.netloc, "Accept-Encoding": "identity"})
        return conn.getresponse().read()
    finally:
        conn.close()


def _dedup_warc(data: Path, out: Path) -> dict[str, str]:
    """A WARC of the crawl's 200s where a body already written becomes an
    identical-payload-digest revisit of its first capture (WARC 1.1 6.7.2.1);
    returns {revisit URL: original URL}."""
    first: dict[str, tuple[str, str]] = {}
    revisits = {}
    with open(out, "wb") as fh, open_crawl(data) as crawl:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        for doc in crawl.documents(status=200):
            protocol, status, headers = parse_head(doc.headers)
            http_headers = StatusAndHeaders(status, warc_headers(headers, len(doc.body)), protocol=protocol)
            date = iso_date(doc.meta.stored_at)
            if doc.digest in first:
                orig_url, orig_date = first[doc.digest]
                record = writer.create_revisit_record(doc.url, doc.digest, orig_url, orig_date, http_headers=http_headers,
                                                      warc_headers_dict={"WARC-Date": date})  # fmt: skip
                revisits[doc.url] = orig_url
            else:
                first[doc.digest] = (doc.url, date)
                record = writer.create_warc_record(doc.url, "response", payload=io.BytesIO(doc.body), length=len(doc.body),
                                                   http_headers=http_headers, warc_headers_dict={"WARC-Date": date})  # fmt: skip
            writer.write_record(record)
    return revisits


class Wayback:
    """pywb's `wayback` on a loopback port, serving the collections under `root`."""

    def __init__(self, root: Path) -> None:
        self.port = _free_port()
        self.log = open(root / "wayback.log", "wb")
        self.proc = subprocess.Popen([str(BIN / "wayback"), "-p", str(self.port), "-b", "127.0.0.1"],
                                     cwd=root, stdout=self.log, stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + READY_TIMEOUT
        while True:  # ready when it accepts a connection; each try is bounded
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert self.proc.poll() is None and time.monotonic() < deadline, (root / "wayback.log").read_text()
                time.sleep(0.1)

    def get(self, coll: str, ts: str, url: str) -> http.client.HTTPResponse:
        """The capture of `url` closest to `ts`, unrewritten (pywb's id_ mode)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", f"/{coll}/{ts}id_/{url}")
        resp = conn.getresponse()
        resp.body = resp.read()
        conn.close()
        return resp

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def _ts(unix: float) -> str:
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(unix))


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    spec = SiteSpec(hosts=2, pages_per_host=6, hostile=False, copies=True, revisit=RevisitSpec())
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test"), web.url(NEWS)]
        dns_ip, dns_port = web.dns_address
        cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
               "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
               "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05",
               "--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "2",
               "--procs", "1", "--concurrency", "10", "--recrawl", "1s", "--warc-dir", str(tmp / "warcs")]  # fmt: skip
        crawl = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:  # recrawling until Ctrl-C: stopped once news' statics were confirmed by a 304 and the copies stored
            deadline = time.monotonic() + CRAWL_WAIT
            while not _recrawled(tmp / "crawl"):
                assert crawl.poll() is None and time.monotonic() < deadline, "the crawl never stored a 304 for each static"
                time.sleep(0.2)  # a look at the store; each look is bounded
        finally:
            crawl.send_signal(signal.SIGINT)
            output = crawl.communicate(timeout=60)[0]
        assert crawl.returncode == 130, output  # interrupted: recrawls were still scheduled
        with open_crawl(tmp / "crawl") as crawl:
            pages = {d.url: d.meta.stored_at for d in crawl.documents(status=200) if not d.url.endswith(CHANGING)}
            revisits = []  # (URL, 304's time, the time and body of the capture it confirmed)
            for d in crawl.documents(status=304, revisits=True):
                confirmed = [c for c in crawl.captures(d.url) if c.doc_id < d.doc_id and c.status == 200][-1]
                revisits.append((d.url, d.meta.stored_at, confirmed.meta.stored_at, confirmed.body))
        truth = {url: _served(web, url) for url in pages}
    dump = BIN / "wreck-dump"
    _run(dump, "--all", "--warc", "crawl.warc.gz", "--data", "crawl", cwd=tmp)
    _run(dump, "--all", "--wacz", "crawl.wacz", "--data", "crawl", cwd=tmp)
    _run(dump, "--cdxj", "crawl.warc.gz", cwd=tmp)
    _run(dump, "--wacz", "dir.wacz", "--from-warc-dir", "warcs", cwd=tmp)  # closed at the crawl's Ctrl-C
    deduped = _dedup_warc(tmp / "crawl", tmp / "dedup.warc.gz")
    for coll in COLLECTIONS:
        _run(BIN / "wb-manager", "init", coll, cwd=tmp)
    _run(BIN / "wb-manager", "add", "warc", "crawl.warc.gz", cwd=tmp)  # indexed by pywb itself
    shutil.copy(tmp / "crawl.warc.gz", tmp / "collections/cdxj/archive")  # indexed by WRECK's CDXJ alone
    shutil.copy(tmp / "crawl.cdxj", tmp / "collections/cdxj/indexes")
    _run(BIN / "wb-manager", "add", "--unpack-wacz", "wacz", "crawl.wacz", cwd=tmp)  # the WACZ's own index
    _run(BIN / "wb-manager", "add", "--unpack-wacz", "waczdir", "dir.wacz", cwd=tmp)
    _run(BIN / "wb-manager", "add", "dedup", "dedup.warc.gz", cwd=tmp)
    wayback = Wayback(tmp)
    try:
        yield tmp, wayback, pages, truth, revisits, deduped
    finally:
        wayback.stop()


@pytest.mark.parametrize("coll", REPLAYED)
def test_every_page_replays_byte_for_byte_as_the_site_served_it(replay, coll):
    _, wayback, pages, truth, _, _ = replay
    assert len(pages) >= 15  # both hosts' pages, robots.txt, news' statics
    for url, stored_at in pages.items():
        resp = wayback.get(coll, _ts(stored_at), url)
        assert resp.status == 200, (coll, url, resp.status)
        assert resp.body == truth[url], (coll, url)


@pytest.mark.parametrize("coll", REPLAYED)
def test_a_304_revisit_replays_as_the_servers_not_modified_answer_to_its_capture(replay, coll):
    _, wayback, _, truth, revisits, _ = replay
    assert revisits, "the recrawl round got no 304: nothing to replay"
    for url, stored_at, confirmed_at, confirmed_body in revisits:
        resp = wayback.get(coll, _ts(stored_at), url)
        # pywb 2.10 replays a server-not-modified revisit as what it records,
        # the 304 with the validators it confirmed, dated at the revisit...
        assert resp.status == 304 and resp.body == b"", (coll, url)
        assert resp.getheader("Memento-Datetime") == time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(stored_at))
        assert resp.getheader("X-Archive-Orig-ETag")
        # ...and the capture it confirmed still replays in full at its own time
        # (as the site served it then: news' clock page changes, its statics do not)
        original = wayback.get(coll, _ts(confirmed_at), url)
        assert original.status == 200 and original.body == confirmed_body, (coll, url)
        assert url not in truth or confirmed_body == truth[url]


def test_an_identical_payload_revisit_resolves_to_its_original(replay):
    tmp, wayback, pages, truth, _, deduped = replay
    copies = {u: o for u, o in deduped.items() if u.endswith("/copies/exact.html")}
    assert len(copies) == 2  # each host's byte-identical copy of its original
    with open(tmp / "dedup.warc.gz", "rb") as fh:
        types = {r.rec_headers["WARC-Target-URI"]: r.rec_type for r in ArchiveIterator(fh)}
    for url, original in copies.items():
        assert types[url] == "revisit" and types[original] == "response"
        resp = wayback.get("dedup", _ts(pages[url]), url)
        assert resp.status == 200 and resp.body == truth[url] == truth[original]
    # Once WRECK's own export writes identical-payload-digest revisits, each
    # of them must resolve the same way (none before: then this checks nothing).
    with open(tmp / "crawl.warc.gz", "rb") as fh:
        own = [(r.rec_headers["WARC-Target-URI"], r.rec_headers["WARC-Date"]) for r in ArchiveIterator(fh)
               if r.rec_type == "revisit" and "identical-payload-digest" in (r.rec_headers["WARC-Profile"] or "")]  # fmt: skip
    for url, date in own:
        for coll in ("warc", "waczdir"):
            resp = wayback.get(coll, date.replace("-", "").replace(":", "").replace("T", "")[:14], url)
            assert resp.status == 200 and resp.body and resp.body == truth.get(url, resp.body), (coll, url)


def test_warcio_check_passes_on_every_file(replay):
    tmp, *_ = replay
    with zipfile.ZipFile(tmp / "crawl.wacz") as zf:
        zf.extract("archive/crawl.warc.gz", tmp / "unzipped")
    with zipfile.ZipFile(tmp / "dir.wacz") as zf:
        packaged = [name for name in zf.namelist() if name.startswith("archive/")]
        zf.extractall(tmp / "unzipped-dir", packaged)
    files = [tmp / "crawl.warc.gz", tmp / "dedup.warc.gz", tmp / "unzipped/archive/crawl.warc.gz",
             *(tmp / "unzipped-dir" / name for name in packaged)]
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", *map(str, files)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest fail" not in check.stdout


def test_the_cdxj_beside_the_warc_lists_what_pywb_indexes(replay):
    tmp, *_ = replay
    ours = {(line.split(" ")[0], line.split(" ")[1], json.loads(line.split(" ", 2)[2])["offset"])
            for line in (tmp / "crawl.cdxj").read_text().splitlines()}  # fmt: skip
    pywbs = {(line.split(" ")[0], line.split(" ")[1], json.loads(line.split(" ", 2)[2])["offset"])
             for line in (tmp / "collections/warc/indexes/index.cdxj").read_text().splitlines()}  # fmt: skip
    assert ours == pywbs
