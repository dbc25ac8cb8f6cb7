"""Where each capture was found, end to end (issue 18): wreck-crawl
--warc-dir on the local test web writes, in each capture's metadata record,
Heritrix's "seed:" for a seed, else "via:" (the page that links to it, or
the URL that redirected to it) and "hopsFromSeed:" (one letter per hop, as
long as the URL's depth in the frontier for links, ending in R after a
redirect), in the metadata of a URL never fetched (its host does not
resolve) too."""

from __future__ import annotations

import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from wreck.urlserver.db import UrlRecord, saved_items
from tests.web import RunningWeb, SiteSpec
from tests.web.spec import UNRESOLVABLE_NAME


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lineage")
    # no cross links: h0's only link off its host names a host that does not
    # resolve (tests/web/site.py); the chain's /target links nowhere
    spec = SiteSpec(hosts=2, pages_per_host=8, cross_links_per_page=0)
    with RunningWeb(spec) as web:
        seed = web.url("h0.wreck.test")
        chain = web.url("evil.wreck.test", "/redirect/chain/1")  # -> /redirect/chain/0 -> /target
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", seed, chain, "--data", str(tmp / "crawl"),
            "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.02", "--robots-retry", "0.2",
            "--retry-delay", "0.2", "--max-retries", "1", "--procs", "1", "--concurrency", "8",
            "--warc-dir", str(tmp / "warcs"),
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    fields: dict[str, dict[str, list[str]]] = {}  # URL -> metadata field -> values
    for path in sorted((tmp / "warcs").iterdir()):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "metadata":
                    continue
                lines = rec.content_stream().read().decode().split("\r\n")
                got = fields.setdefault(rec.rec_headers.get_header("WARC-Target-URI"), {})
                for line in filter(None, lines):
                    name, _, value = line.partition(":")
                    got.setdefault(name, []).append(value.strip())
    records = {rec.url: rec for rec in (UrlRecord.unpack(raw) for _, raw in
                                        saved_items(str(tmp / "crawl" / "frontier"), "urls"))}
    return seed, chain, fields, records


def test_a_seed_is_marked_as_heritrix_marks_it(crawled):
    seed, chain, fields, _ = crawled
    for url in (seed, chain):
        assert fields[url].get("seed") == [""] and "via" not in fields[url] and "hopsFromSeed" not in fields[url]


def test_a_pages_via_links_to_it_and_its_hop_path_is_as_long_as_its_depth(crawled):
    seed, _, fields, records = crawled
    pages = [url for url, got in fields.items() if url.startswith(seed) and "via" in got and url in records
             and not records[url].path.endswith("R")]
    assert len(pages) >= 5
    for url in pages:
        [via], [hops] = fields[url]["via"], fields[url]["hopsFromSeed"]
        assert f"{url} L" in fields[via]["outlink"], f"{via} does not link to {url}"
        assert hops == "L" * records[url].depth, (url, hops, records[url].depth)
        assert hops == (fields[via].get("hopsFromSeed", [""])[0]) + "L"  # one link more than its via


def test_a_redirects_target_was_found_on_the_redirecting_url_and_its_path_ends_in_r(crawled):
    _, chain, fields, _ = crawled
    middle = chain.replace("/chain/1", "/chain/0")
    target = chain.replace("/redirect/chain/1", "/target")
    assert (fields[middle]["via"], fields[middle]["hopsFromSeed"]) == ([chain], ["R"])
    assert (fields[target]["via"], fields[target]["hopsFromSeed"]) == ([middle], ["RR"])


def test_a_url_whose_host_does_not_resolve_is_recorded_with_its_via(crawled):
    seed, _, fields, _ = crawled
    gone = seed.replace("h0.wreck.test", UNRESOLVABLE_NAME)
    assert (fields[gone]["via"], fields[gone]["hopsFromSeed"]) == ([seed], ["L"])
    assert "fetchStatus" in fields[gone]  # a failed fetch's metadata record
