"""Retry on request (issue 13), in the engine without sockets: a start with
--retry-errors queues ERROR URLs and retries waiting for their due time
again, now, with their full tries; --only narrows it to matching URLs; an
unreachable robots.txt is fetched again; FETCHED URLs stay as they are; the
flags belong to one start, so the next start without them requeues nothing."""

from __future__ import annotations

import pytest

from tests.urlserver_helpers import run_until_idle
from wreck.options import SettingsError
from wreck.protocol import Done, Specific, Status
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.settings import Settings


def _crawl(tmp_path, now=0.0, **kw):
    base = dict(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False,
                exit_when_done=True, retry_delay=1000.0, max_retries=3, robots_retry=1000.0,
                robots_max_tries=1, linger=10.0)
    base.update(kw)
    return Crawl.open(Settings(**base), clock=lambda: now)


def _ok(a, *links):
    return Done(a.trans_id, Status.FETCHED, 200, Specific.OK, 1, outlinks=links)


def _broken(a):
    """robots.txt 404 but on down.test (500); /gone 404; /busy 503; the seed links them."""
    if a.url == "http://down.test/robots.txt":
        return Done(a.trans_id, Status.FETCH_ERROR, 500, Specific.HTTP_ERROR, 1)
    if a.url.endswith("/robots.txt") or a.url.endswith("/gone"):
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    if a.url.endswith("/busy"):
        return Done(a.trans_id, Status.FETCH_ERROR, 503, Specific.HTTP_ERROR, 1)
    return _ok(a, "http://up.test/fine", "http://up.test/gone", "http://up.test/busy")  # 503 last: it slows the host


def _fixed(a):
    if a.url.endswith("/robots.txt"):
        return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
    return _ok(a)


def _first_run(tmp_path):
    c = _crawl(tmp_path)
    c.add_seed("http://up.test/")
    c.add_seed("http://down.test/")
    run_until_idle(c, 0.0, _broken)
    states = {u: c.lookup(u)["state"] for u in ("http://up.test/gone", "http://up.test/busy",
                                                 "http://up.test/fine", "http://down.test/")}
    assert states == {"http://up.test/gone": "ERROR", "http://up.test/busy": "FETCH_ERROR",
                      "http://up.test/fine": "FETCHED", "http://down.test/": "ERROR"}
    c.close()


def test_retry_errors_queues_error_and_waiting_urls_again_with_their_full_tries(tmp_path):
    _first_run(tmp_path)
    c = _crawl(tmp_path, now=1.0, retry_errors=True)  # long before any due time
    assert c.stats["retry_requested"] == 3
    busy = c.lookup("http://up.test/busy")
    assert busy["state"] == "PENDING" and busy["tries"] == 0 and busy["reason"] == "retry requested"
    again = run_until_idle(c, 1.0, _fixed)
    assert sorted(again) == ["http://down.test/", "http://down.test/robots.txt",
                             "http://up.test/busy", "http://up.test/gone"]  # /fine is not fetched again
    for url in ("http://up.test/gone", "http://up.test/busy", "http://up.test/fine", "http://down.test/"):
        assert c.lookup(url)["state"] == "FETCHED", url
    assert c.finish_reason(1.0) == "done"
    c.close()


def test_only_requeues_the_urls_its_regex_matches(tmp_path):
    _first_run(tmp_path)
    c = _crawl(tmp_path, now=1.0, retry_errors=True, retry_only=r"/gone$")
    assert c.stats["retry_requested"] == 1
    assert run_until_idle(c, 1.0, _fixed) == ["http://up.test/gone"]
    assert c.lookup("http://up.test/gone")["state"] == "FETCHED"
    assert c.lookup("http://up.test/busy")["state"] == "FETCH_ERROR"  # still waits for its due time
    assert c.lookup("http://down.test/")["state"] == "ERROR"
    c.close()


def test_a_start_without_the_flag_requeues_nothing(tmp_path):
    _first_run(tmp_path)
    c = _crawl(tmp_path, now=1.0, retry_errors=True, retry_only="gone")
    c.close()  # requeued, not fetched
    c = _crawl(tmp_path, now=2.0)
    assert "retry_requested" not in c.stats
    assert run_until_idle(c, 2.0, _fixed) == ["http://up.test/gone"]  # the one queued by the start before
    assert c.lookup("http://up.test/busy")["state"] == "FETCH_ERROR"
    assert c.lookup("http://down.test/")["state"] == "ERROR"
    c.close()
    c = _crawl(tmp_path, now=3.0)
    assert run_until_idle(c, 3.0, _fixed) == []
    c.close()


def test_only_without_retry_errors_is_refused_naming_the_flag():
    with pytest.raises(SettingsError, match="--retry-errors") as caught:
        Settings(data="d", retry_only="x")
    assert caught.value.flag == "--only"
    with pytest.raises(SettingsError, match="not a regular expression") as caught:
        Settings(data="d", retry_errors=True, retry_only="([")
    assert caught.value.flag == "--only"


def test_a_host_waiting_for_its_robots_txt_retry_is_served_now(tmp_path):
    c = _crawl(tmp_path, robots_max_tries=5)  # the robots.txt 500 is retried: its URLs wait, PENDING
    c.add_seed("http://down.test/")
    assert run_until_idle(c, 0.0, _broken) == ["http://down.test/robots.txt"]
    assert c.lookup("http://down.test/")["state"] == "PENDING"
    c.close()
    c = _crawl(tmp_path, now=1.0, robots_max_tries=5, retry_errors=True, retry_only="down")
    assert run_until_idle(c, 1.0, _fixed) == ["http://down.test/robots.txt", "http://down.test/"]
    assert c.lookup("http://down.test/")["state"] == "FETCHED"
    c.close()
