"""Issue 16: the urlserver's LMDB commit runs on its writer thread (db.py,
WRITER), off the event loop, and still nothing of a transaction leaves
before the transaction is durable (docs/protocol.txt 5.9)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.urlserver_helpers import FakeSpider, fetched, running, settings_for, site_responder, until
from tests.web import write_hosts_file
from wreck.urlserver import db as d
from wreck.urlserver.db import StateError

HOSTS = {"a.test": "127.0.0.2"}


def _settings(tmp_path, **kw):
    return settings_for(tmp_path, hosts_file=str(write_hosts_file(HOSTS, tmp_path / "hosts")), sync=True, **kw)


def test_an_assignment_leaves_only_once_its_commit_is_durable_while_the_loop_goes_on(tmp_path):
    pages = {"http://a.test/": ("http://a.test/1",), "http://a.test/1": ()}

    async def main():
        async with running(_settings(tmp_path), ["http://a.test/"]) as (server, addr):
            crawl, db = server.crawl, server.crawl.db
            await until(lambda: server.settled and not crawl.dns_wanted and not crawl.dns_running)  # a.test known
            gate, synced = threading.Event(), db._sync_meta
            db._sync_meta = lambda: (gate.wait(), synced())[1]  # the meta page's fsync, held
            spider = FakeSpider(addr, respond=site_responder(pages), credit=4)
            await spider.start()
            await until(lambda: server._outgoing)  # robots.txt assigned, its commit not yet durable
            held = list(spider.assignments)
            status = server.crawl.stats["robots_handouts"]
            gate.set()
            await until(lambda: "http://a.test/1" in spider.urls())
            await spider.close()
            return held, status, spider.urls()

    held, status, urls = asyncio.run(main())
    assert held == [] and status == 1  # handed out, committed, but not sent until durable
    assert urls == ["http://a.test/robots.txt", "http://a.test/", "http://a.test/1"]


def test_a_commit_that_fails_on_the_writer_thread_sends_nothing_and_stops_the_server(tmp_path):
    async def main():
        async with running(_settings(tmp_path), ["http://a.test/"]) as (server, addr):
            db = server.crawl.db

            def full():
                raise StateError("MapFullError: mdb_put: MDB_MAP_FULL")

            db._sync_meta = full
            spider = FakeSpider(addr, respond=lambda a: fetched(a), credit=4)
            await spider.start()
            await asyncio.wait_for(server.finished.wait(), 10)
            await spider.close()
            return server.broken, spider.urls()

    broken, urls = asyncio.run(main())
    assert isinstance(broken, StateError) and urls == []


def test_every_write_transaction_is_begun_and_ended_on_the_writer_thread(tmp_path):
    # LMDB's writer lock is a mutex only its owner may release: a transaction
    # ended on another thread would leave it held, and the next begin hangs.
    database = d.Db(str(tmp_path / "data"), sync=False)
    try:
        seen = set()
        real_begin = database.env.begin

        class Env:
            def __getattr__(self, name):
                return getattr(database.env_real, name)

            def begin(self, **kw):
                if kw.get("write"):
                    seen.add(threading.current_thread().name)
                return real_begin(**kw)

        database.env_real, database.env = database.env, Env()
        for _ in range(3):
            txn = database.begin(write=True)
            txn.put(b"k", b"v", db=database.meta)
            committed, durable = database.commit_soon(txn)
            durable.result()
        database.abort(database.begin(write=True))
        database.commit(database.begin(write=True))
    finally:
        database.env = database.env_real
        database.close()
    assert len(seen) == 1 and next(iter(seen)).startswith("urlserver-lmdb-writer")


@pytest.mark.parametrize("ending", ["commit", "abort", "none"])
def test_closing_with_a_write_transaction_open_never_leaves_the_lock_held(tmp_path, ending):
    path = str(tmp_path / "data")
    database = d.Db(path, sync=False)
    txn = database.begin(write=True)
    txn.put(b"k", b"v", db=database.meta)
    if ending == "commit":
        database.commit_soon(txn)  # the writer has begun the next one: close() ends it
    elif ending == "abort":
        database.abort(txn)
    database.close()
    again = d.Db(path, sync=False)  # hangs if the lock were left held
    again.commit(again.begin(write=True))
    again.close()
