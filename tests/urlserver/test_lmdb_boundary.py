"""The engine meets LMDB only through db.py: StateError, never lmdb's errors,
and an engine built over a database its caller opened."""

from __future__ import annotations

import lmdb
import pytest

from tests.urlserver_helpers import crawl_engine
from wreck.protocol import Done, Specific, Status
from wreck.urlserver.crawl import Crawl
from wreck.urlserver.db import Db, StateError, fingerprint
from wreck.urlserver.dns import Resolution
from wreck.urlserver.settings import Settings


def test_a_full_lmdb_map_surfaces_as_a_state_error(tmp_path):
    crawl = crawl_engine(tmp_path, map_size=256 * 1024, scope="any")
    with pytest.raises(StateError) as caught:
        for n in range(20_000):
            crawl.add_seed(f"http://h{n}.test/{'x' * 200}")
        crawl.commit()
    assert isinstance(caught.value.__cause__, lmdb.MapFullError)
    assert "MapFullError" in str(caught.value)
    crawl.abandon()  # the open transaction is dropped; closing raises nothing


def test_a_damaged_state_file_cannot_be_opened_and_says_so(tmp_path):
    data = tmp_path / "d"
    data.mkdir(mode=0o700)
    (data / "data.mdb").write_bytes(b"not an lmdb file" * 512)
    with pytest.raises(StateError) as caught:
        Crawl.open(Settings(data=str(data), sync=False))
    assert isinstance(caught.value.__cause__, lmdb.Error)


def test_the_engine_runs_over_a_database_its_caller_opened_and_its_claims_survive_a_restart(tmp_path):
    settings = Settings(data=str(tmp_path / "d"), delay=0.0, allow_net=("127.0.0.0/8",), sync=False)
    database = Db(settings.data, map_size=settings.map_size, sync=False)
    crawl = Crawl(settings, database, clock=lambda: 0.0)
    assert crawl.db is database
    assert crawl.add_seed("http://a.test/") == "queued"
    crawl.take("s", 0.0)
    for host in crawl.dns_requests():
        crawl.dns_result(host, Resolution("127.0.0.2", "", 1e12), 0.0)
    robots = crawl.take("s", 0.0)
    crawl.done("s", Done(robots.trans_id, Status.ERROR, 404, Specific.HTTP_ERROR, 1), 0.0)
    page = crawl.take("s", 0.0)
    assert crawl.claims.get(page.trans_id).fp == fingerprint(page.url)
    crawl.close()  # as after a kill -9 once the claim was committed: it is in the claims table
    again = Crawl.open(settings, clock=lambda: 0.0)
    assert again.lookup(page.url)["state"] == "PENDING"
    assert again.lookup(page.url)["reason"] == "requeued after restart"
    assert again.claims.take_saved(again.frontier.txn) == []  # given back once
    again.close()
