"""Near duplicates and plugins in a real crawl: wreck-crawl crawls the local
test web (whose hosts each serve an original page, an exact copy and a
near copy) with the pattern plugin, an external `grep -v` filter, the
JSON-lines report, a document hook and a plugin that raises from every
hook. The test web's request log shows the filtered URLs were never
fetched; wreck-dump shows the duplicate marks and the hook's metadata."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from urllib.parse import urlsplit

import msgspec
import pytest

from wreck.storeserver.store import ReadStore
from tests.plugin_helpers import install_test_plugins
from tests.web import RunningWeb, SiteSpec
from tests.web.pages import resolve
from tests.web.site import COPY_PATHS
from tests.web.truth import normalize

PATTERN_DROPS = "/section-"  # the pattern plugin's file
COMMAND_DROPS = "/files/"  # the external command's grep -v


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugins")
    (tmp / "deny.txt").write_text(f"# section pages are not wanted\n{PATTERN_DROPS}\n")
    env = {**os.environ, "PYTHONPATH": str(install_test_plugins(tmp / "site"))}
    spec = SiteSpec(hosts=4, pages_per_host=10, copies=True, hostile=False)
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        seeds = [web.url("h0.wreck.test")]
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05",
            "--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "1",
            "--procs", "2", "--concurrency", "10",
            "--plugin", f"pattern={tmp / 'deny.txt'}", "--plugin", f"jsonl-report={tmp / 'report.jsonl'}",
            "--plugin", "wordcount", "--plugin", "raising", "--stats-interval", "0.5", "--near-dups",
            "--url-filter-cmd", f"grep --line-buffered -v {COMMAND_DROPS}",
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        records = web.log.records()
        site = web.site
    reader = ReadStore(tmp / "crawl")
    docs = {meta.doc_id: (meta, reader.annotations(meta.doc_id)) for meta, _ in reader.iter_docs(with_documents=False)}
    reader.close()
    report = [msgspec.json.decode(line) for line in (tmp / "report.jsonl").read_bytes().splitlines()]
    return tmp, run, records, site, docs, report


def test_the_crawl_finishes_despite_a_plugin_that_raises_from_every_hook(crawled):
    tmp, run, *_ = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    for log in ("urlserver.log", "storeserver.log"):
        assert "event=plugin_disabled plugin=raising" in (tmp / "crawl" / "logs" / log).read_text()


def test_filtered_urls_are_never_fetched(crawled):
    _, _, records, site, docs, report = crawled
    fetched = [r.target for r in records]
    assert fetched, "nothing was fetched"
    assert not [t for t in fetched if PATTERN_DROPS in t or COMMAND_DROPS in t]
    # ...though the site links to such pages, and the crawl saw and filtered them
    filtered = report[-1]["filtered_by"]
    assert filtered.get("plugin pattern", 0) > 0 and filtered.get("url-filter-cmd", 0) > 0
    assert not [m.url for m, _ in docs.values() if PATTERN_DROPS in m.url or COMMAND_DROPS in m.url]


def test_the_report_has_a_line_per_interval_and_names_the_disabled_plugin(crawled):
    *_, report = crawled
    assert len(report) >= 2
    last = report[-1]
    assert last["urls"]["FETCHED"] > 0 and last["finished"] is True
    assert [line["urls"]["FETCHED"] for line in report] == sorted(line["urls"]["FETCHED"] for line in report)
    assert "raising" in last["plugins"]["disabled"] and last["plugins"]["errors"]["raising"] == 1
    assert "pattern" in last["plugins"]["enabled"]


def test_wreck_dump_json_shows_the_duplicate_marks_and_the_document_hook_metadata(crawled):
    tmp, _, _, _, docs, _ = crawled
    copy = next(doc_id for doc_id, (meta, marks) in docs.items()
                if marks.get("duplicate_of") is not None and meta.url.endswith(".html"))
    out = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", str(copy), "--data", str(tmp / "crawl"), "--json"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    fields = msgspec.json.decode(out)
    assert fields["duplicate_of"] == docs[copy][1]["duplicate_of"]
    assert fields["body_hash"] == docs[fields["duplicate_of"]][1]["body_hash"]
    assert fields["extra"]["wordcount"]["words"] > 0
    assert fields["extra"]["wordcount"]["status"] == fields["status"] == 200
    assert "raising" not in fields["extra"]


def _body(site, url: str) -> bytes:
    parts = urlsplit(url)
    return resolve(site.hosts[parts.hostname], parts.path).body


def test_exact_duplicates_point_at_the_first_stored_page_with_the_same_body(crawled):
    _, _, _, site, docs, _ = crawled
    groups = defaultdict(list)  # the test web's own bytes say which pages are identical
    for doc_id, (meta, marks) in docs.items():
        if "body_hash" in marks:  # a fingerprinted page
            groups[_body(site, normalize(meta.url))].append(doc_id)
    assert any(len(g) > 1 for g in groups.values())
    for group in groups.values():
        firsts = [d for d in group if docs[d][1]["duplicate_of"] is None]
        assert len(firsts) == 1, [docs[d][0].url for d in group]
        assert all(docs[d][1]["duplicate_of"] == firsts[0] for d in group if d != firsts[0])


def test_near_copies_are_marked_and_no_other_page_is(crawled):
    _, _, _, site, docs, _ = crawled
    by_url = {normalize(meta.url): doc_id for doc_id, (meta, _) in docs.items()}
    trios = {}
    for host in site.hosts.values():
        trio = [by_url.get(site.url(host.name, path)) for path in COPY_PATHS]
        if None not in trio:
            trios[host.name] = trio
    assert len(trios) >= 2, "the crawl should reach several hosts' copies"
    in_trios = set()
    for name, (original, exact, near) in trios.items():
        in_trios |= {original, exact, near}
        marks = {d: docs[d][1] for d in (original, exact, near)}
        unmarked = [d for d, m in marks.items() if m["duplicate_of"] is None and m["near_duplicate_of"] is None]
        assert len(unmarked) == 1, (name, marks)  # the first of the three to be stored
        assert marks[near]["duplicate_of"] is None  # its body differs from both
        for d, m in marks.items():
            target = m["duplicate_of"] or m["near_duplicate_of"]
            assert d in unmarked or target in (original, exact, near), (name, d, m)
            if m["near_duplicate_of"] is not None:
                assert 0 <= m["near_distance"] <= 3
        assert marks[near]["near_duplicate_of"] is not None or near in unmarked
    others = [meta.url for d, (meta, m) in docs.items() if m.get("near_duplicate_of") is not None and d not in in_trios]
    assert others == []
