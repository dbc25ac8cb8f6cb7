"""wreck-crawl --warc-dir end to end: the WARC files written as the crawl
goes hold every stored document once, with the request as sent, the
address, the outlinks, and pass `warcio check`."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from warcio.archiveiterator import ArchiveIterator

from wreck.storeserver.store import ReadStore
from tests.web import RunningWeb, SiteSpec


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("crawl")
    spec = SiteSpec(hosts=3, pages_per_host=10)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test"), web.url("h1.wreck.test")]
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05", "--robots-retry", "0.2",
            "--retry-delay", "0.2", "--max-retries", "1", "--procs", "1", "--concurrency", "10",
            "--warc-dir", str(tmp / "warcs"), "--warc-size", "64KiB", "--operator", "ops@example.org",
            "--crawl-name", "e2e",
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        addresses = web.site.addresses()
    reader = ReadStore(tmp / "crawl")
    docs = {meta.doc_id: meta for meta, _ in reader.iter_docs(with_documents=False)}
    bodies = {d: reader.get(d)[1] for d in docs}
    reader.close()
    return run, tmp / "warcs", docs, bodies, addresses


def test_every_stored_document_is_in_the_closed_warc_files_once(crawled):
    run, warcs, docs, bodies, addresses = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    files = sorted(warcs.iterdir())
    assert len(files) > 1 and not [f for f in files if f.name.endswith(".open")]  # rolled, all closed
    seen: Counter = Counter()
    outlinks = 0
    for path in files:
        check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        with open(path, "rb") as fh:
            records = list(_read(fh))
        assert records[0][0].rec_type == "warcinfo" and b"isPartOf: e2e" in records[0][1]
        requests = {r.rec_headers.get_header("WARC-Concurrent-To"): body for r, body in records if r.rec_type == "request"}
        outlinks += sum(1 for r, body in records if r.rec_type == "metadata" and b"\r\noutlink: http://" in body)
        for rec, payload in records:
            doc_id = rec.rec_headers.get_header("WARC-Wreck-Doc-Id")
            if rec.rec_type not in ("response", "revisit") or doc_id is None:
                continue
            meta = docs[int(doc_id)]
            seen[meta.doc_id] += 1
            host = meta.url.split("/")[2].split(":")[0]
            assert rec.rec_headers.get_header("WARC-IP-Address") == addresses[host]
            target = "/" + meta.url.split("/", 3)[3]
            sent = requests[rec.rec_headers.get_header("WARC-Record-ID")]
            assert sent.startswith(f"GET {target} HTTP/1.1\r\n".encode()) and b"\r\nUser-Agent: " in sent
            if rec.rec_type == "response":
                assert payload == bodies[meta.doc_id][meta.head_len :]
    with_response = {d for d, m in docs.items() if m.head_len}
    assert set(seen) == with_response and set(seen.values()) == {1}
    assert outlinks > 10  # the pages' links, as Heritrix writes them


def _read(fh):
    for rec in ArchiveIterator(fh):
        if rec.rec_type == "request":
            yield rec, rec.http_headers.to_bytes() + rec.content_stream().read()
        else:
            yield rec, rec.content_stream().read()
