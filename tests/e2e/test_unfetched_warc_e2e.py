"""Issue 18 end to end: wreck-crawl --warc-dir on the local test web, whose
pages link to a host that does not resolve (nowhere.wreck.test, NXDOMAIN)
and whose DNS answers a name with a refused address (127.99.0.1, outside
--allow-net). Neither is ever connected to (a Tripwire listens on the
refused address; the test web's request log names neither host), yet the
WARC files, which pass `warcio check`, say what was tried for each URL:
a metadata record with the failure, the host, the reason and the
addresses refused (docs/protocol.txt 5.3 nofetch=, docs/warc.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.web import UNRESOLVABLE_NAME, RunningWeb, SiteSpec
from tests.web.tripwire import Tripwire

FORBIDDEN = "127.99.0.1"  # loopback, but outside the admitted networks below
ADMIT = ["--allow-net", "127.0.0.0/16", "--allow-net", "127.66.0.0/16"]
REBIND = "rebind.wreck.test"  # the test web's DNS answers it with FORBIDDEN


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("unfetched")
    with Tripwire([FORBIDDEN]) as wire, RunningWeb(SiteSpec(hosts=2, pages_per_host=4)) as web:
        web.dns.override(REBIND, FORBIDDEN)
        refused = [f"http://{REBIND}:{wire.port}/a", f"http://{REBIND}:{wire.port}/b"]
        unresolvable = f"http://{UNRESOLVABLE_NAME}:{web.port}/"  # linked from h0's first page
        dns_ip, dns_port = web.dns_address
        cmd = [
            sys.executable, "-m", "wreck.local.cli", web.url("h0.wreck.test"), *refused,
            "--data", str(tmp / "crawl"), "--hosts", str(web.write_hosts_file(tmp / "hosts")),
            "--dns", f"{dns_ip}:{dns_port}", *ADMIT, "--scope", "any", "--delay", "0.02",
            "--robots-retry", "0.2", "--retry-delay", "0.2", "--max-retries", "1", "--procs", "1",
            "--warc-dir", str(tmp / "warcs"),
        ]  # fmt: skip
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        hosts_asked = {r.host for r in web.log.records()}
        hits = wire.hits()
    return run, tmp / "warcs", refused, unresolvable, hosts_asked, hits


def _failed_fetches(warcs) -> dict[str, dict[str, list[str]]]:
    """URL -> the fields of its failed-fetch metadata record, from every file (each checked)."""
    found: dict[str, dict[str, list[str]]] = {}
    files = sorted(warcs.iterdir())
    assert files and not [f for f in files if f.name.endswith(".open")]
    for path in files:
        check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "metadata":
                    continue
                fields: dict[str, list[str]] = {}
                for line in rec.content_stream().read().decode().splitlines():
                    name, _, value = line.partition(": ")
                    fields.setdefault(name, []).append(value)
                if "fetchStatus" in fields:
                    found[rec.rec_headers.get_header("WARC-Target-URI")] = fields
    return found


def test_urls_never_connected_to_are_in_the_warc_with_what_was_tried(crawled):
    run, warcs, refused, unresolvable, hosts_asked, hits = crawled
    assert run.returncode == 0, run.stdout + run.stderr
    assert hits == []  # no connection reached the refused address
    assert REBIND not in hosts_asked and UNRESOLVABLE_NAME not in hosts_asked
    failed = _failed_fetches(warcs)
    nowhere = failed[unresolvable]
    assert nowhere["fetchStatus"] == ["DNS_FAILED"] and nowhere["host"] == [UNRESOLVABLE_NAME]
    assert nowhere["reason"] == ["dns: NXDOMAIN"] and nowhere["connectionAttempted"] == ["no"]
    for url in refused:
        fields = failed[url]
        assert fields["fetchStatus"] == ["FORBIDDEN_ADDRESS"] and fields["host"] == [REBIND]
        assert fields["refusedAddress"] == [FORBIDDEN] and fields["connectionAttempted"] == ["no"]
        assert fields["reason"] == [f"forbidden address {FORBIDDEN} (loopback)"]
