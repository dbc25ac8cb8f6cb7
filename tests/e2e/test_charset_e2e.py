"""wreck-crawl end to end on intl.wreck.test (tests/web/intl.py): pages in
windows-1252, ISO-8859-1, Shift_JIS, EUC-JP, GB18030, windows-1251 and
UTF-16, a late <meta>, a header that disagrees with the <meta>. Every link
target exists only at the URL the WHATWG rules give, so the stored set
equals the truth only if every page was read in its own encoding."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from wreck.storeserver.store import ReadStore
from tests.web import RunningWeb, SiteSpec
from tests.web.intl import INTL, PAGES, IntlHost, targets

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("intl")
    spec = SiteSpec(hosts=1, pages_per_host=1, hostile=False, intl=True)
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        seed = web.url(INTL)
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", seed, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--scope", "host", "--delay", "0.01",
            "--procs", "1", "--concurrency", "10",
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        records = web.log.records()
    reader = ReadStore(tmp / "crawl")
    docs = {_target(meta.url): meta.doc_id for meta, _ in reader.iter_docs(with_documents=False)
            if _target(meta.url) != "/robots.txt"}
    reader.close()
    return run, records, docs, tmp / "crawl"


def _target(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_every_page_in_every_encoding_leads_to_its_targets_and_nothing_else(crawled):
    run, records, docs, _ = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    assert set(docs) == IntlHost().truth()
    for page in PAGES:
        assert set(targets(page)) <= set(docs), page.path


def test_no_request_carries_a_replacement_character_or_gets_a_404(crawled):
    _, records, _, _ = crawled
    asked = [r for r in records if r.host == INTL and r.target != "/robots.txt"]
    assert asked
    assert not [r.target for r in asked if "%EF%BF%BD" in r.target.upper()]
    assert not [r.target for r in asked if r.status == 404]


def test_wreck_dump_text_reads_a_page_in_its_declared_encoding(crawled):
    _, _, docs, data = crawled
    page = docs["/disagree.html"]  # windows-1251 by the header, UTF-8 by a lying <meta>
    out = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", str(page), "--data", str(data),
                          "--text"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "мир" in out.stdout
