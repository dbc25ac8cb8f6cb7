"""The operator API (docs/api.md) through real HTTP against a running
urlserver with a scripted spider: every endpoint, the token rule, the error
format, and that the state each change leaves is the one a user asks for."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import urllib.error
import urllib.request

from wreck.urlserver.http import HttpStatus
from tests.urlserver_helpers import FakeSpider, running, settings_for, site_responder, until
from tests.web import write_hosts_file

HOSTS = {"a.test": "127.0.0.2", "b.test": "127.0.0.3"}
TOKEN = "a-token-of-enough-characters"


def _settings(tmp_path, **kw):
    hosts = write_hosts_file(HOSTS, tmp_path / "hosts")
    return settings_for(tmp_path, hosts_file=str(hosts), **kw)


def _call(port: int, method: str, path: str, body: object = None, *, token: str | None = None,
          raw: bytes | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _declared_too_big(port: int) -> tuple[int, dict]:
    """A POST declaring a 2 MiB body: answered before any of it is sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /api/seeds HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {2 << 20}\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def call(port: int, method: str, path: str, body: object = None, **kw) -> tuple[int, dict]:
    """One request from a client thread (the server runs on this loop)."""
    return await asyncio.to_thread(_call, port, method, path, body, **kw)


def test_pause_stops_every_handout_and_resume_starts_them_again(tmp_path):
    async def main():
        async with running(_settings(tmp_path), ["http://a.test/"]) as (server, addr):
            web = HttpStatus(server)
            _, port = await web.start("127.0.0.1:0")
            spider = FakeSpider(addr, respond=site_responder({"http://a.test/": ()}))
            await spider.start()
            await until(lambda: "http://a.test/" in spider.urls())
            assert await call(port, "POST", "/api/pause") == (200, {"seq": 1, "action": "pause", "target": "crawl"})
            code, added = await call(port, "POST", "/api/seeds", {"urls": ["http://b.test/x", "http://a.test/",
                                                                          "ftp://b.test/", "b.test/y"]})
            assert code == 200 and (added["new"], added["known"], added["refused"]) == (1, 1, 2)
            assert [r["outcome"] for r in added["results"]] == ["new", "known", "refused", "refused"]
            assert "ftp: URLs are not crawled" in added["results"][2]["why"]
            assert added["results"][3]["why"] == "no scheme: did you mean https://b.test/y?"
            handouts = server.crawl.stats["handouts"] + server.crawl.stats["robots_handouts"]
            server.pump()  # what the timer would do: nothing is handed out while paused
            assert server.crawl.stats["handouts"] + server.crawl.stats["robots_handouts"] == handouts
            status = json.loads(web.respond("/status")[2])
            assert status["paused"] is True and not status["finished"]
            assert (await call(port, "POST", "/api/resume"))[0] == 200
            await until(lambda: "http://b.test/x" in spider.urls())
            assert json.loads(web.respond("/status")[2])["paused"] is False
            code, found = await call(port, "GET", "/api/urls?u=http://b.test/x")
            await spider.close()
            await web.stop()
            return code, found

    code, found = asyncio.run(main())
    assert code == 200 and found["url"] == "http://b.test/x" and found["fetches"] >= 1
    events = [m["event"] for m in found["history"]]
    assert events[:2] == ["DISCOVERED", "CLAIMED"]
    assert found["history"][0]["at"].endswith("Z")


def test_a_paused_host_gets_no_request_until_resumed_while_others_are_crawled(tmp_path):
    pages = {"http://a.test/": ("http://a.test/1",), "http://a.test/1": (), "http://b.test/": ()}

    async def main():
        async with running(_settings(tmp_path), ["http://a.test/", "http://b.test/"]) as (server, addr):
            web = HttpStatus(server)
            _, port = await web.start("127.0.0.1:0")
            assert (await call(port, "POST", "/api/hosts/B.test/pause"))[0] == 200  # any case, as URLs are
            spider = FakeSpider(addr, respond=site_responder(pages))
            await spider.start()
            await until(lambda: "http://a.test/1" in spider.urls() and not server.crawl.claims)
            server.pump()
            during = [u for u in spider.urls() if "b.test" in u]
            code, host = await call(port, "GET", "/api/hosts/b.test")
            assert (await call(port, "POST", "/api/hosts/b.test/resume"))[0] == 200
            await until(lambda: "http://b.test/" in spider.urls())
            await spider.close()
            await web.stop()
            return during, code, host

    during, code, host = asyncio.run(main())
    assert during == []
    assert code == 200 and host["paused"] is True and host["blocked"] is False
    assert host["origins"][0]["queued"] == 1 and host["origins"][0]["waiting"] == "paused"
    assert [c["action"] for c in host["changes"]] == ["host_pause"]


def test_block_ends_queued_urls_blocked_and_unblock_queues_them_again(tmp_path):
    seeds = ["http://a.test/", "http://b.test/1", "http://b.test/2"]

    async def main():
        async with running(_settings(tmp_path), seeds) as (server, addr):
            web = HttpStatus(server)
            _, port = await web.start("127.0.0.1:0")
            code, blocked = await call(port, "POST", "/api/hosts/b.test/block")
            states = [(await call(port, "GET", f"/api/urls?u={u}"))[1]["state"] for u in seeds[1:]]
            spider = FakeSpider(addr, respond=site_responder({"http://a.test/": ("http://b.test/3",)}))
            await spider.start()
            await until(lambda: server.crawl.frontier.lookup("http://b.test/3") is not None
                        and server.crawl.frontier.lookup("http://b.test/3")["state"] == "BLOCKED")
            assert not [u for u in spider.urls() if "b.test" in u]
            code2, unblocked = await call(port, "POST", "/api/hosts/b.test/unblock")
            await until(lambda: {"http://b.test/1", "http://b.test/2", "http://b.test/3"} <= set(spider.urls()))
            await spider.close()
            await web.stop()
            return code, blocked, states, code2, unblocked

    code, blocked, states, code2, unblocked = asyncio.run(main())
    assert code == 200 and blocked["urls"] == 2 and states == ["BLOCKED", "BLOCKED"]
    assert code2 == 200 and unblocked["urls"] == 3


def test_a_host_delay_spaces_its_requests_and_retry_requeues_errors(tmp_path):
    seeds = [f"http://a.test/{i}" for i in range(3)]
    broken = {"on": True}

    def respond(a):
        if broken["on"] and not a.url.endswith("robots.txt"):
            from wreck.protocol import Done, Specific, Status
            return Done(a.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1)
        return site_responder({u: () for u in seeds})(a)

    async def main():
        async with running(_settings(tmp_path), seeds) as (server, addr):
            web = HttpStatus(server)
            _, port = await web.start("127.0.0.1:0")
            spider = FakeSpider(addr, respond=respond)
            await spider.start()
            await until(lambda: server.crawl.frontier.counts["ERROR"] == 3)
            broken["on"] = False
            code, bad = await call(port, "PUT", "/api/hosts/a.test/delay", {"seconds": "soon"})
            assert code == 400 and "number of seconds" in bad["error"]
            assert (await call(port, "PUT", "/api/hosts/a.test/delay", {"seconds": 0.3}))[0] == 200
            code, retried = await call(port, "POST", "/api/retry", {"state": "ERROR", "glob": "http://a.test/*"})
            await until(lambda: server.crawl.frontier.counts["FETCHED"] == 3)
            times = sorted(t for t, a in spider.assignments if not a.url.endswith("robots.txt"))[-3:]
            _, host = await call(port, "GET", "/api/hosts/a.test")
            _, log = await call(port, "GET", "/api/log?limit=2")
            await spider.close()
            await web.stop()
            return code, retried, times, host, log

    code, retried, times, host, log = asyncio.run(main())
    assert code == 200 and retried["urls"] == 3 and retried["errors"] == 3
    assert all(b - a >= 0.3 for a, b in zip(times, times[1:])), times  # handout times, as the server sent them
    assert host["delay"]["set"] == 0.3 and host["delay"]["effective"] == 0.3
    assert [c["action"] for c in log["changes"]] == ["retry", "host_delay"]  # newest first


def test_tokens_bad_input_and_the_error_format(tmp_path):
    async def main():
        async with running(_settings(tmp_path), ["http://a.test/"]) as (server, addr):
            web = HttpStatus(server, token=TOKEN)
            _, port = await web.start("127.0.0.1:0")
            out = {
                "no token": await call(port, "POST", "/api/pause"),
                "wrong token": await call(port, "POST", "/api/pause", token="not-it"),
                "read on loopback": await call(port, "GET", "/api/hosts/a.test"),
                "right token": await call(port, "POST", "/api/pause", token=TOKEN),
                "unknown host": await call(port, "GET", "/api/hosts/z.test"),
                "bad host": await call(port, "POST", "/api/hosts/a.test%2Fx/pause", token=TOKEN),
                "no json": await call(port, "POST", "/api/seeds", raw=b"{nope", token=TOKEN),
                "no urls": await call(port, "POST", "/api/seeds", {"url": "http://a.test/"}, token=TOKEN),
                "bad state": await call(port, "POST", "/api/retry", {"state": "FETCHED"}, token=TOKEN),
                "bad regex": await call(port, "POST", "/api/retry", {"state": "ERROR", "pattern": "("},
                                        token=TOKEN),
                "wrong method": await call(port, "GET", "/api/pause"),
                "no such endpoint": await call(port, "GET", "/api/nope"),
                "too big": await asyncio.to_thread(_declared_too_big, port),
                "unknown url": await call(port, "GET", "/api/urls?u=http://z.test/"),
                "bad limit": await call(port, "GET", "/api/log?limit=0"),
                "index": await call(port, "GET", "/api/"),
            }
            await web.stop()
            exposed = HttpStatus(server, token=TOKEN, exposed=True)
            _, port = await exposed.start("127.0.0.1:0")
            out["read exposed"] = await call(port, "GET", "/api/log")
            out["read exposed with token"] = await call(port, "GET", "/api/log", token=TOKEN)
            await exposed.stop()
            return out

    out = asyncio.run(main())
    assert out["no token"] == (401, {"error": "this endpoint needs 'Authorization: Bearer TOKEN' "
                                              "(docs/api.md, Authentication)"})
    assert out["wrong token"] == (401, {"error": "wrong API token"})
    assert out["read on loopback"][0] == 200 and out["right token"][0] == 200
    expected = {"unknown host": (404, "no such host in this crawl: z.test"),
                "bad host": (400, "not a host name"), "no json": (400, "the body is not valid JSON"),
                "no urls": (400, 'give {"urls"'), "bad state": (400, '"state" must be "ERROR" or "DEFERRED"'),
                "bad regex": (400, '"pattern" is not a regular expression'),
                "wrong method": (405, "GET is not allowed on /api/pause: use POST"),
                "no such endpoint": (404, "no such endpoint: /api/nope"),
                "too big": (413, "at most 1048576 are read"), "unknown url": (404, "no such URL in this crawl"),
                "bad limit": (400, "limit must be a number from 1 to 1000"),
                "read exposed": (401, "this endpoint needs")}
    for name, (code, text) in expected.items():
        got_code, body = out[name]
        assert got_code == code and text in body["error"] and list(body) == ["error"], (name, out[name])
        assert "\n" not in body["error"]
    assert out["read exposed with token"][0] == 200
    assert out["index"][0] == 200 and "PUT /api/hosts/{host}/delay" in out["index"][1]["endpoints"]


def _start_urlserver(data, env) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "wreck.urlserver.cli", "http://a.test/1", "http://b.test/1",
                             "--data", str(data), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
                             "--store", "127.0.0.1:1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    for line in proc.stdout:
        if line.startswith("urlserver status on "):
            return proc, int(line.strip().rstrip("/").rsplit(":", 1)[1])
    raise AssertionError(f"urlserver ended with {proc.wait()}")


def test_every_change_survives_a_kill_9_right_after_its_answer(tmp_path):
    """No spider: nothing else commits between the answer and the kill."""
    env = {**os.environ, "WRECK_SECRET": "s" * 32}
    data = tmp_path / "frontier"
    proc, port = _start_urlserver(data, env)
    try:
        token = (data / "api-token").read_text().strip()  # derived from the secret, left for the operator
        assert stat.S_IMODE((data / "api-token").stat().st_mode) == 0o600
        assert _call(port, "POST", "/api/pause")[0] == 401  # a token exists: writes need it, even on loopback
        answers = [_call(port, "POST", "/api/pause", token=token),
                   _call(port, "POST", "/api/hosts/a.test/pause", token=token),
                   _call(port, "POST", "/api/hosts/b.test/block", token=token),
                   _call(port, "PUT", "/api/hosts/a.test/delay", {"seconds": 7}, token=token),
                   _call(port, "POST", "/api/seeds", {"urls": ["http://a.test/2"]}, token=token)]
        assert [code for code, _ in answers] == [200] * 5
        proc.kill()  # SIGKILL right after the last 200
        proc.wait(30)
        proc, port = _start_urlserver(data, env)
        status = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=10).read())
        a_host = _call(port, "GET", "/api/hosts/a.test")[1]
        b_host = _call(port, "GET", "/api/hosts/b.test")[1]
        seed = _call(port, "GET", "/api/urls?u=http://a.test/2")[1]
        blocked = _call(port, "GET", "/api/urls?u=http://b.test/1")[1]
        changes = _call(port, "GET", "/api/log")[1]["changes"]
    finally:
        proc.kill()
        proc.wait(30)
    assert status["paused"] is True
    assert a_host["paused"] is True and a_host["delay"]["set"] == 7 and a_host["origins"][0]["queued"] == 2
    assert b_host["blocked"] is True and b_host["origins"][0]["blocked_urls"] == 1
    assert seed["state"] == "PENDING" and blocked["state"] == "BLOCKED"
    assert blocked["history"][-1]["event"] == "BLOCKED"
    assert [c["action"] for c in changes] == ["seeds", "host_delay", "host_block", "host_pause", "pause"]


def test_a_url_record_carries_its_last_moves_and_older_records_still_read():
    from wreck.urlserver.db import UrlRecord, record_state
    from wreck.urlserver.history import HISTORY_MOVES, described, noted
    from wreck.urlserver.urlstate import UrlEvent, UrlState

    old = UrlRecord("http://a.test/x", state=UrlState.PENDING, reason="why\nnot").pack()  # as before histories
    rec = UrlRecord.unpack(old)
    assert (rec.state, rec.history, rec.reason) == (UrlState.PENDING, b"", "why\nnot")
    for i in range(40):  # a URL recrawled for long: the history stays bounded
        event = UrlEvent.CLAIMED if i % 2 == 0 else UrlEvent.FETCH_FAILED
        rec.history = noted(rec.history, event, UrlState.IN_FLIGHT, 1000.0 + i)
    raw = rec.pack()
    back = UrlRecord.unpack(raw)
    assert (back.url, back.state, back.reason) == ("http://a.test/x", UrlState.PENDING, "why\nnot")
    assert record_state(raw) == UrlState.PENDING
    history = described(back.history)
    assert history["fetches"] == 20 and len(history["moves"]) == HISTORY_MOVES
    assert history["moves"][-1] == {"time": 1039.0, "at": "1970-01-01T00:17:19.000Z", "event": "FETCH_FAILED",
                                    "state": "IN_FLIGHT"}
