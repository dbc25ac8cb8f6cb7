"""Compression on the spiders, end to end (docs/protocol.txt 6.7): wreck-crawl
with a store that trains its dictionary early gives it to its spiders, which
send the rest of the crawl's documents compressed; wreck-dump reads every
page back byte for byte as the test web served it. The same crawl with
--spider-compression off (the spiders send raw, as a spider without the
capability does) stores the same bytes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from tests.web import RunningWeb, SiteSpec
from tests.web.pages import render_html

pytestmark = pytest.mark.e2e

TRAIN = 20  # documents the store trains on: the rest of the crawl can come compressed
SPEC = SiteSpec(hosts=3, pages_per_host=40)


def crawl(tmp, web, seeds, *, spider_compression: bool) -> dict:
    """Crawl into tmp/NAME; (wreck-crawl's result, the store's log, url -> body)."""
    name = "on" if spider_compression else "off"
    config = tmp / f"{name}.toml"
    config.write_text(f'[storeserver]\ndict_train_docs = {TRAIN}\ndict_size = "16KiB"\n'
                      f"spider_compression = {'true' if spider_compression else 'false'}\n")
    dns_ip, dns_port = web.dns_address
    data = tmp / name
    cmd = [sys.executable, "-m", "wreck.local.cli", *seeds, "--data", str(data), "--config", str(config),
           "--hosts", str(web.write_hosts_file(tmp / "hosts")), "--dns", f"{dns_ip}:{dns_port}",
           "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05", "--procs", "2"]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    dump = subprocess.run([sys.executable, "-m", "wreck.storeserver.dump", "--data", str(data), "--all", "--jsonl",
                           "--fields", "url,status,charset,body,body_base64"], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    bodies = {}
    for line in dump.stdout.splitlines():
        doc = json.loads(line)
        if doc["status"] == 200:  # a text body is given decoded in its charset (docs/dump.md)
            raw = doc["body_base64"]
            bodies[doc["url"]] = base64.b64decode(raw) if raw is not None else doc["body"].encode(doc["charset"])
    return {"log": (data / "logs" / "storeserver.log").read_text(), "bodies": bodies}


def served(web, url: str) -> bytes | None:
    """The body the test web serves for `url` (an HTML page of its model), or None."""
    parts = urlsplit(url)
    host = web.site.hosts.get(parts.hostname)
    page = host.pages.get(parts.path + (f"?{parts.query}" if parts.query else "")) if host else None
    if page is None or page.status != 200:
        return None
    return page.raw_body if page.raw_body is not None else render_html(page)


def test_pages_compressed_by_the_spiders_read_back_byte_for_byte(tmp_path):
    with RunningWeb(SPEC) as web:
        seeds = [web.url(f"h{i}.wreck.test") for i in range(SPEC.hosts)]
        on = crawl(tmp_path, web, seeds, spider_compression=True)
        off = crawl(tmp_path, web, seeds, spider_compression=False)
        expected = {url: served(web, url) for url in on["bodies"]}
    assert "event=dict_offered" in on["log"] and "event=spider_frames" in on["log"]  # the work moved
    assert "event=dict_offered" not in off["log"] and "event=spider_frames" not in off["log"]
    checked = [url for url, body in expected.items() if body is not None]
    assert len(checked) > 3 * TRAIN  # most pages came after the training, compressed by the spiders
    assert all(on["bodies"][url] == expected[url] for url in checked)
    assert on["bodies"] == off["bodies"]  # with or without the capability, the same bytes
