"""The operator API against a real crawl (issue 17): store, urlserver and
spider as processes, the local test web, and the API driven over HTTP as
docs/api.md shows. One continuous crawl is steered through a script, then
each test checks one promise against the test web's request log, the URL
states and the store:

- a host paused before its seed is added gets no request (robots.txt
  included) until it is resumed, then it is crawled and stored;
- a seed added to the running crawl is crawled and stored;
- a blocked host gets no request and its URLs end BLOCKED;
- a host's delay set through the API spaces its requests in the log;
- an ERROR URL retried after the site answers again is fetched and stored;
- a change answered 200 holds after kill -9 of the urlserver.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.e2e_helpers import Trio, stored_urls, url_states
from tests.web import RunningWeb, SiteSpec, gaps_by_host
from tests.web.spec import RevisitSpec

pytestmark = pytest.mark.e2e

BUSY = "busy.wreck.test"  # its /p-0.html answers 503 once, then 200 (tests/web/revisit.py)
DELAY = 0.4  # the delay set for one host through the API (the crawl's --delay is 0.02)
WAIT_S = 60.0  # a condition on a crawl of a few dozen pages, on a loaded CI box


class ApiTrio(Trio):
    """The e2e trio with the urlserver's HTTP port on a fixed loopback port."""

    def __init__(self, *args, http_port: int, **kw) -> None:
        self.http_port = http_port
        super().__init__(*args, **kw)

    def start_urlserver(self):
        child = self._child("urlserver", "wreck.urlserver.cli", [
            *self.seeds, *self.args, "--data", str(self.tmp / "frontier"), "--store", self.store_address,
            "--dns", self.dns, "--listen", self.listen, "--http", f"127.0.0.1:{self.http_port}",
        ])  # fmt: skip
        child.read_line("urlserver listening on ")
        child.read_line("urlserver status on ")
        child.drain()
        return child

    def api(self, method: str, path: str, body: object = None) -> dict:
        """One API call; its JSON answer (asserting a 200)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"{method} {path}: {exc.code} {exc.read()!r}\n{self.logs()}") from None

    def until(self, what: str, predicate) -> None:
        """Poll the API until predicate() holds (a condition, not a timing)."""
        deadline = time.monotonic() + WAIT_S
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"not reached in {WAIT_S:g} s: {what}\n{self.logs()}")
            time.sleep(0.05)

    def host_idle(self, name: str) -> bool:
        host = self.api("GET", f"/api/hosts/{name}")
        return all(o["queued"] == 0 and o["in_flight"] == 0 and o["robots"] == "KNOWN" for o in host["origins"])


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def steered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    spec = SiteSpec(hosts=4, pages_per_host=4, cross_links_per_page=0, robots_variants=("allow-all",),
                    hostile=False, revisit=RevisitSpec(busy_pages=1, busy_429=0, busy_5xx=1))
    out: dict = {"tmp": tmp}
    with RunningWeb(spec, log_path=tmp / "web.jsonl") as web:
        seeded, paused, blocked, slowed = (spec.host_name(i) for i in range(4))
        out["names"] = {"seeded": seeded, "paused": paused, "blocked": blocked, "slowed": slowed}
        trio = ApiTrio(tmp, web, [web.url(seeded)], ["--allow-net", "127.0.0.0/8", "--delay", "0.02",
                                                     "--max-retries", "1", "--retry-delay", "0"],
                       exit_when_done=False, http_port=_free_port())
        try:
            trio.api("POST", f"/api/hosts/{paused}/pause")
            trio.api("POST", f"/api/hosts/{blocked}/block")
            trio.api("PUT", f"/api/hosts/{slowed}/delay", {"seconds": DELAY})
            out["seeds"] = trio.api("POST", "/api/seeds", {"urls": [
                web.url(paused), web.url(blocked), web.url(slowed), web.url(BUSY, "/p-0.html"),
                web.url(seeded)]})
            busy = web.url(BUSY, "/p-0.html")
            trio.until("the others crawled", lambda: all(trio.host_idle(n) for n in (seeded, slowed, BUSY)))
            out["busy_before"] = trio.api("GET", f"/api/urls?u={busy}")
            out["paused_host"] = trio.api("GET", f"/api/hosts/{paused}")
            out["during_pause"] = web.log.records()
            out["retry"] = trio.api("POST", "/api/retry", {"state": "ERROR", "pattern": r"/p-0\.html$"})
            trio.until("the retried page fetched", lambda: trio.api("GET", f"/api/urls?u={busy}")["state"] == "FETCHED")
            out["busy_after"] = trio.api("GET", f"/api/urls?u={busy}")
            trio.api("POST", f"/api/hosts/{paused}/resume")
            trio.until("the resumed host crawled", lambda: trio.host_idle(paused))
            # a change, its 200, then kill -9 of the urlserver at once
            trio.api("POST", f"/api/hosts/{seeded}/pause")
            trio.urlserver.proc.kill()
            trio.urlserver.proc.wait(30)
            trio.urlserver = trio.start_urlserver()
            out["after_kill"] = trio.api("GET", f"/api/hosts/{seeded}")
            out["blocked_host"] = trio.api("GET", f"/api/hosts/{blocked}")
            out["log"] = trio.api("GET", "/api/log")["changes"]
        finally:
            trio.stop()
        out["records"] = web.log.records()
    out["stored"] = stored_urls(tmp)
    out["states"] = url_states(tmp / "frontier")
    return out


def _hosts_of(records) -> set[str]:
    return {r.host for r in records}


def test_a_paused_host_gets_no_request_until_resumed_then_it_is_crawled_and_stored(steered):
    paused = steered["names"]["paused"]
    assert paused not in _hosts_of(steered["during_pause"])  # not even robots.txt
    assert steered["paused_host"]["paused"] is True and steered["paused_host"]["origins"][0]["queued"] == 1
    assert steered["paused_host"]["origins"][0]["waiting"] == "paused"
    assert paused in _hosts_of(steered["records"])
    assert any(paused in url for url in steered["stored"])


def test_a_seed_added_to_the_running_crawl_is_crawled_and_stored(steered):
    seeds = steered["seeds"]
    assert (seeds["new"], seeds["known"], seeds["refused"]) == (4, 1, 0)
    slowed = steered["names"]["slowed"]
    assert any(slowed in url for url in steered["stored"])


def test_a_blocked_host_gets_no_request_and_its_urls_end_blocked(steered):
    blocked = steered["names"]["blocked"]
    assert blocked not in _hosts_of(steered["records"])
    states = {url: rec.state for url, rec in steered["states"].items() if blocked in url}
    assert states and set(states.values()) == {9}  # UrlState.BLOCKED
    assert steered["blocked_host"]["blocked"] is True


def test_a_delay_set_through_the_api_spaces_the_hosts_requests(steered):
    slowed = steered["names"]["slowed"]
    gaps = gaps_by_host(steered["records"], clock="wall_time")[slowed]
    assert len(gaps) >= 3  # robots.txt and the pages
    assert min(gaps) >= DELAY - 0.01, gaps  # the urlserver's handout times, seen at the server
    others = gaps_by_host(steered["records"], clock="wall_time")[steered["names"]["seeded"]]
    assert min(others) < DELAY  # the crawl's own --delay elsewhere


def test_an_error_url_retried_after_the_site_answers_again_is_fetched_and_stored(steered):
    before, after = steered["busy_before"], steered["busy_after"]
    assert before["state"] == "ERROR" and before["last_error"]
    assert steered["retry"]["errors"] == 1
    assert after["state"] == "FETCHED" and after["fetches"] == 2
    assert [m["event"] for m in after["history"]][-3:] == ["RETRY_REQUESTED", "CLAIMED", "FETCHED"]
    assert any(url.endswith("/p-0.html") and BUSY in url for url in steered["stored"])


def test_a_change_answered_200_holds_after_kill_9_of_the_urlserver(steered):
    assert steered["after_kill"]["paused"] is True
    actions = [c["action"] for c in steered["log"]]
    assert actions[:4] == ["host_pause", "host_resume", "retry", "seeds"]
