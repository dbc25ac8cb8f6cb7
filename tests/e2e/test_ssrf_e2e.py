"""SSRF through a whole crawl: the store server, urlserver and spider run as
subprocesses against the local test web, with a Tripwire listening on
addresses the crawl must never contact -- 127.99.0.1 (loopback, but outside
the admitted 127.0.0.0/16 and 127.66.0.0/16) and ::1 (not admitted). The
crawl is sent there every way the issue names: alternate spellings of the
address as seeds and as links, names that resolve there (DNS answer, hosts
file, trailing dot), 301/302/307/308 redirects, a meta refresh, and a
robots.txt redirect chain. Zero connections reach the tripwire, and every
refused URL ends ERROR with a reason an operator reads at /url?u=URL."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request

from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES, Trio
from tests.web import HOSTILE_NAME, HostileSpec, RunningWeb, SiteSpec
from tests.web.tripwire import Tripwire

FORBIDDEN_V4 = "127.99.0.1"
ADMIT = ["--allow-net", "127.0.0.0/16", "--allow-net", "127.66.0.0/16"]
POLL_S = 0.1


class OperatorTrio(Trio):
    """The trio with the urlserver's status listener on and no --exit-when-done,
    so the test asks it what an operator would once the crawl is done."""

    def start_urlserver(self):
        child = self._child("urlserver", "wreck.urlserver.cli", [
            *self.seeds, *self.args, "--data", str(self.tmp / "frontier"), "--store", self.store_address,
            "--dns", self.dns, "--listen", self.listen, "--http", "127.0.0.1:0",
        ])  # fmt: skip
        child.read_line("urlserver listening on ")
        self.status_url = child.read_line("urlserver status on ").rstrip("/")
        child.drain()
        return child

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.status_url + path, timeout=5) as response:
            return json.loads(response.read())

    def url_state(self, url: str) -> dict:
        try:
            return self.get("/url?u=" + urllib.parse.quote(url, safe=""))
        except urllib.error.HTTPError as exc:  # 404: unknown
            return json.loads(exc.read())

    def wait_finished(self) -> None:
        deadline = time.monotonic() + CRAWL_TIMEOUT
        while not self.get("/status")["finished"]:
            assert time.monotonic() < deadline, self.logs()
            time.sleep(POLL_S)


def _crawl(tmp, web, seeds, args, check) -> None:
    trio = OperatorTrio(tmp, web, seeds, [*ADMIT, "--scope", "any", "--delay", "0.02", *FAST_RETRIES, *args])
    try:
        trio.wait_finished()
        check(trio)
    finally:
        trio.stop()


def test_no_spelling_name_or_redirect_reaches_a_forbidden_address(tmp_path):
    spec = SiteSpec(hosts=1, pages_per_host=2)
    with Tripwire([FORBIDDEN_V4, "::1"]) as wire, RunningWeb(spec) as web:
        port = wire.port
        web.dns.override("rebind.wreck.test", FORBIDDEN_V4)  # a name whose answer is forbidden
        hosts = web.write_hosts_file(tmp_path / "hosts")
        with open(hosts, "a") as f:
            f.write(f"{FORBIDDEN_V4} static.wreck.test\n::1 static6.wreck.test\n")
        evil = f"http://{HOSTILE_NAME}:{web.port}"

        def at(host: str, path: str) -> str:
            return f"http://{host}:{port}/{path}"

        seeded = [at("2137194497", "decimal"), at("0x7f630001", "hex"), at("[::1]", "v6-loopback"),
                  at("rebind.wreck.test", "dns"), at("static.wreck.test", "hosts-file")]
        linked = [at("0177.0143.0.01", "octal"), at("127.99.1", "short"), at("127.99.0.1.", "dot"),
                  at("[::ffff:127.99.0.1]", "mapped"), at("static6.wreck.test", "hosts-file-v6"),
                  at("rebind.wreck.test.", "dns-dot"), at("localhost", "localhost")]
        redirected = {301: at("0x7f.99.0.1", "r301"), 302: at("[::1]", "r302"),
                      307: at("rebind.wreck.test", "r307"), 308: at("[::ffff:7f63:1]", "r308")}
        refreshed = at("%31%32%37.99.0.1", "refresh")

        def q(value: str) -> str:
            return urllib.parse.quote(value, safe="")

        pointers = {f"{evil}/redirect/to?code={code}&url={q(url)}": url for code, url in redirected.items()}
        refresh_page = f"{evil}/refresh/to?url={q(refreshed)}"
        links_page = f"{evil}/links/to?" + "&".join(f"url={q(u)}" for u in linked)
        seeds = [*seeded, *pointers, refresh_page, links_page]

        def check(trio: OperatorTrio) -> None:
            for url in (*seeded, *linked, *redirected.values(), refreshed):
                state = trio.url_state(url)
                why = state.get("reason", "")
                assert state["state"] == "ERROR", (url, state)
                if "localhost" in url:  # not in DNS: never resolved by anyone else either
                    assert "NXDOMAIN" in why, (url, state)
                elif "::1" in url or "static6" in url:
                    assert why == "forbidden address ::1 (loopback)", (url, state)
                else:  # the address itself, or its IPv4-mapped form
                    assert why in ("forbidden address 127.99.0.1 (loopback)",
                                   "forbidden address ::ffff:7f63:1 (IPv4-mapped 127.99.0.1: loopback)"), (url, state)
            for pointer in (*pointers, refresh_page):
                assert trio.url_state(pointer)["state"] == "REDIRECTED", pointer
            assert trio.url_state(links_page)["state"] == "FETCHED"
            assert trio.get("/status")["errors_by_kind"]

        _crawl(tmp_path, web, seeds, ["--hosts", str(hosts)], check)
        fetched = {r.target for r in web.log.records() if r.host == HOSTILE_NAME}
    assert wire.hits() == [], wire.hits()
    assert len(fetched) == len(pointers) + 3  # the pointers, the link page and robots.txt


def test_a_robots_txt_redirect_to_a_forbidden_address_is_not_followed(tmp_path):
    with Tripwire([FORBIDDEN_V4, "::1"]) as wire:
        # robots.txt -> /redirect/to (same host, followed) -> [::1] (refused)
        target = urllib.parse.quote(f"http://[::1]:{wire.port}/robots.txt", safe="")
        spec = SiteSpec(hosts=1, pages_per_host=2, hostile_spec=HostileSpec(
            robots_redirect=f"/redirect/to?url={target}"))
        with RunningWeb(spec) as web:
            page = f"http://{HOSTILE_NAME}:{web.port}/target"

            def check(trio: OperatorTrio) -> None:
                state = trio.url_state(page)
                assert state["state"] == "ERROR" and "robots.txt" in state["reason"], state
                assert "forbidden address ::1 (loopback)" in state["reason"], state

            _crawl(tmp_path, web, [page], ["--robots-retry", "0.05"], check)
            targets = [r.target for r in web.log.records()]
    assert wire.hits() == [], wire.hits()
    assert "/target" not in targets and targets.count("/robots.txt") >= 1
