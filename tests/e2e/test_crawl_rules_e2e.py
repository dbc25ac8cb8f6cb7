"""The crawl's rules, end to end: the real store server, urlserver and
spider run as three subprocesses against the local test web, and the web's
own request log says whether the rules held -- the per-IP delay and
concurrency cap, addresses outside --allow-net never contacted, and a
kill -9 of the urlserver mid-crawl that loses and duplicates nothing."""

from __future__ import annotations

import os
import signal
import time
from urllib.parse import urlsplit


from tests.web import (
    HOSTILE_IP, HOSTILE_NAME, RunningWeb, SiteSpec, compute_truth, gaps_by_ip, max_concurrency,
)  # fmt: skip
from tests.e2e_helpers import CRAWL_TIMEOUT, FAST_RETRIES, Trio, crawl_to_the_end, stored_urls, url_states
from wreck.urlserver.urlstate import UrlState

# The float rounding of two wall-clock readings near today's epoch (an ulp is
# 2.4e-7 s); the only slack the politeness check below allows.
CLOCK_RESOLUTION = 1e-6


def test_per_ip_delay_and_concurrency_cap_hold_across_hosts_sharing_an_address(tmp_path):
    ip_delay = 0.15
    spec = SiteSpec(hosts=6, pages_per_host=6, hosts_per_ip=3, hostile=False)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test"), web.url("h3.wreck.test")]
        records = crawl_to_the_end(tmp_path, web, seeds, [
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.05", "--ip-delay", str(ip_delay),
            "--ip-concurrency", "1", *FAST_RETRIES,
        ])  # fmt: skip
        truth = compute_truth(web.site, seeds, scope="any")
    ips = {spec.host_ip(i) for i in range(spec.hosts)}
    assert len(ips) == 2 and {r.server_ip for r in records} == ips
    # One transaction per address at a time, the next handed out ip_delay after
    # the previous DONE, which left the spider after its request arrived: so
    # arrivals are ip_delay apart on the urlserver's clock (wall time).
    for ip, gaps in gaps_by_ip(records, clock="wall_time").items():
        assert min(gaps) >= ip_delay - CLOCK_RESOLUTION, (ip, sorted(gaps)[:3])
    assert set(max_concurrency(records, by="server_ip").values()) == {1}
    stored = stored_urls(tmp_path)
    assert len(stored) == len(set(stored)) and set(stored) == set(truth.fetched)


def test_an_address_outside_allow_net_is_never_contacted(tmp_path):
    spec = SiteSpec(hosts=6, pages_per_host=6, hosts_per_ip=3)
    with RunningWeb(spec) as web:
        web.dns.override("h3.wreck.test", HOSTILE_IP)  # served, but outside the admitted range
        web.dns.override("h4.wreck.test", "127.0.2.7")
        seeds = [web.url(name) for name in ("h0.wreck.test", "h3.wreck.test", "h4.wreck.test", HOSTILE_NAME)]
        records = crawl_to_the_end(tmp_path, web, seeds, [
            "--allow-net", "127.0.1.0/24", "--scope", "any", "--delay", "0.05", *FAST_RETRIES,
        ])  # fmt: skip
        truth = compute_truth(web.site, seeds[:1], scope="any")
    assert records and all(r.server_ip.startswith("127.0.1.") for r in records)
    assert not [r for r in records if r.host in ("h3.wreck.test", "h4.wreck.test", HOSTILE_NAME)]
    barred = {url: rec for url, rec in url_states(tmp_path / "frontier").items()
              if urlsplit(url).hostname in ("h3.wreck.test", "h4.wreck.test", HOSTILE_NAME)}
    assert {urlsplit(u).hostname for u in barred} == {"h3.wreck.test", "h4.wreck.test", HOSTILE_NAME}
    for url, rec in barred.items():
        assert rec.state == UrlState.ERROR and "forbidden address" in rec.reason, (url, rec.as_dict())
    stored = stored_urls(tmp_path)
    assert stored and len(stored) == len(set(stored)) and set(stored) <= set(truth.fetched)
    assert not {u for u in stored if u in barred}


def test_kill_9_of_the_urlserver_mid_crawl_then_restart_stores_every_page_once(tmp_path):
    spec = SiteSpec(hosts=4, pages_per_host=15, hosts_per_ip=2, hostile=False)
    with RunningWeb(spec) as web:
        seeds = [web.url("h0.wreck.test")]
        trio = Trio(tmp_path, web, seeds, [
            "--allow-net", "127.0.0.0/8", "--scope", "any", "--delay", "0.1", *FAST_RETRIES,
        ])  # fmt: skip
        try:
            web.log.wait_for(lambda records: len(records) >= 20, timeout=CRAWL_TIMEOUT)
            # Freeze the spider (its workers share its process group) until the
            # urlserver surely holds claims, then kill it: those claims were
            # committed, and the spider may still store their pages after it
            # wakes, under the doc ids the restarted urlserver hands out again.
            os.killpg(trio.spider.proc.pid, signal.SIGSTOP)
            # A claim is committed before its assignment leaves, so one with a
            # doc id above every committed one now went to the frozen spider,
            # which cannot answer it: poll for one (not a sleep).
            frontier = tmp_path / "frontier"
            newest = max(rec.doc_id for rec in url_states(frontier).values())
            deadline = time.monotonic() + CRAWL_TIMEOUT
            while not any(rec.state == UrlState.IN_FLIGHT and rec.doc_id > newest
                          for rec in url_states(frontier).values()):
                assert time.monotonic() < deadline, "no claim went to the frozen spider\n" + trio.logs()
                time.sleep(0.05)
            os.kill(trio.urlserver.proc.pid, signal.SIGKILL)
            assert trio.urlserver.proc.wait(10) == -signal.SIGKILL
            os.killpg(trio.spider.proc.pid, signal.SIGCONT)
            before = len(web.log.records())
            trio.urlserver = trio.start_urlserver()
            assert trio.wait() == 0, trio.logs()
        finally:
            os.killpg(trio.spider.proc.pid, signal.SIGCONT)
            trio.stop()
        records = web.log.records()
        truth = compute_truth(web.site, seeds, scope="any")
    assert before < len(records), "the crawl went on after the restart"
    assert "event=claims_requeued" in (tmp_path / "urlserver.log").read_text()
    stored = stored_urls(tmp_path)
    assert len(stored) == len(set(stored)), "a page was stored twice"
    assert set(stored) == set(truth.fetched)
    assert all(rec.state != UrlState.IN_FLIGHT for rec in url_states(tmp_path / "frontier").values())
