"""kill -9 of the urlserver mid-crawl, then a restart on the same --data:
the crawl continues with nothing lost and nothing done twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from tests.e2e_helpers import url_states
from tests.urlserver_helpers import FakeSpider, fetched, not_found
from wreck.urlserver.urlstate import UrlState
from tests.web import write_hosts_file

HOSTS = {f"h{i}.test": f"127.0.9.{i + 1}" for i in range(3)}
PAGES = 20


def site() -> dict[str, tuple[str, ...]]:
    pages = {}
    for i in range(3):
        for j in range(PAGES):
            links = [f"http://h{i}.test/p{k}" for k in (j + 1, j + 2) if k < PAGES]
            links.append(f"http://h{(i + 1) % 3}.test/p{j}")
            pages[f"http://h{i}.test/p{j}"] = tuple(links)
    return pages


async def start_server(tmp_path) -> tuple[subprocess.Popen, tuple[str, int]]:
    hosts = write_hosts_file(HOSTS, tmp_path / "hosts")
    cmd = [sys.executable, "-m", "wreck.urlserver.cli", "http://h0.test/p0", "--data", str(tmp_path / "data"),
           "--listen", "127.0.0.1:0", "--http", "off", "--hosts", str(hosts), "--allow-net", "127.0.0.0/8",
           "--delay", "0", "--scope", "any", "--exit-when-done", "--timeout-update", "30"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = await asyncio.get_running_loop().run_in_executor(None, proc.stdout.readline)
    host, _, port = line.split()[-1].rpartition(":")
    return proc, (host, int(port))


def committed(frontier, done: dict[str, int]) -> bool:
    """Whether every URL of `done` is FETCHED in the frontier's last commit."""
    states = url_states(frontier)
    return all(url in states and states[url].state == UrlState.FETCHED for url in done)


def test_kill_9_then_resume(tmp_path):
    pages = site()
    done_before: dict[str, int] = {}  # url -> doc_id, DONE sent before the kill
    silent: dict[str, int] = {}  # url -> doc_id, assigned but never answered

    def first_respond(a):
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        if len(done_before) >= 25:
            silent[a.url] = a.doc_id
            return None
        done_before[a.url] = a.doc_id
        return fetched(a, *pages[a.url])

    def second_respond(a):
        if a.url.endswith("/robots.txt"):
            return not_found(a)
        return fetched(a, *pages[a.url])

    async def main():
        proc, addr = await start_server(tmp_path)
        spider = FakeSpider(addr, respond=first_respond, credit=4)
        await spider.start()
        while len(silent) < 2:
            await asyncio.sleep(0.01)
        # Kill only once every DONE sent is committed (a claim is committed
        # before its assignment leaves): polled in the urlserver's own LMDB.
        async with asyncio.timeout(30):
            while not committed(tmp_path / "data", done_before):
                await asyncio.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        await spider.close()
        proc, addr = await start_server(tmp_path)
        spider2 = FakeSpider(addr, respond=second_respond, credit=4)
        await spider2.start()
        code = await asyncio.get_running_loop().run_in_executor(None, proc.wait, 30)
        await spider2.close()
        return code, spider, spider2

    code, first, second = asyncio.run(main())
    assert code == 0
    after = {a.url: a.doc_id for _, a in second.assignments if not a.url.endswith("/robots.txt")}
    assert not set(after) & set(done_before), "a URL done before the kill was handed out again"
    assert set(done_before) | set(after) == set(pages), "a URL was lost"
    for url, doc_id in silent.items():  # in flight at the kill: redone with the same doc_id
        assert after[url] == doc_id
    doc_ids = list(done_before.values()) + [d for u, d in after.items() if u not in silent]
    assert len(doc_ids) == len(set(doc_ids))
