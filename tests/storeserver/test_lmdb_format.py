"""Both daemons' LMDB environments carry a format marker and are checked
against their file's size before any page is read (issue 14, finding 10):
a urlserver pointed at a store's directory (and the reverse) is refused in
one line, and a truncated data.mdb gives a one-line error, not SIGBUS."""

from __future__ import annotations

import os
import subprocess
import sys

import lmdb
import pytest

from wreck.storeserver import settings as S
from wreck.storeserver.store import ReadStore, StoreError, WriteStore, store_path
from wreck.urlserver.db import Db, StateError

from tests.store_helpers import Client, make_record, running_server


def _store(data) -> None:
    WriteStore(data, map_size=S.DEFAULT_MAP_SIZE, max_growth=S.MAX_MAP_GROWTH).close()


def test_a_urlserver_pointed_at_a_stores_directory_is_refused_and_writes_nothing(tmp_path):
    _store(tmp_path)
    before = (store_path(tmp_path) / "data.mdb").read_bytes()
    with pytest.raises(StateError, match="holds a WRECK storeserver's data, not a urlserver's"):
        Db(str(store_path(tmp_path)))
    assert (store_path(tmp_path) / "data.mdb").read_bytes() == before
    ReadStore(tmp_path).close()  # the store is intact


def test_a_store_pointed_at_a_urlservers_directory_is_refused(tmp_path):
    Db(str(store_path(tmp_path))).close()  # a urlserver's state where a store would be
    with pytest.raises(StoreError, match="holds a WRECK urlserver's data, not a storeserver's"):
        WriteStore(tmp_path, map_size=S.DEFAULT_MAP_SIZE, max_growth=S.MAX_MAP_GROWTH)
    with pytest.raises(StoreError, match="holds a WRECK urlserver's data"):
        ReadStore(tmp_path)


def test_an_environment_made_before_the_marker_is_recognised_by_its_databases(tmp_path):
    path = str(tmp_path / "old")
    env = lmdb.open(path, max_dbs=16)
    env.open_db(b"docs")  # a store's database, no marker
    env.close()
    with pytest.raises(StateError, match="storeserver's data"):
        Db(path)
    path = str(tmp_path / "mine")
    Db(path).close()
    Db(path).close()  # its own marked environment opens again


@pytest.mark.parametrize("command", ["wreck-dump", "storeserver"])
def test_a_truncated_data_mdb_is_one_line_of_error_not_sigbus(tmp_path, command):
    with running_server(tmp_path) as (_, port):
        c = Client(port)
        c.send([make_record(i, size=20_000) for i in range(1, 101)])
        c.acks(100)
    data_mdb = store_path(tmp_path) / "data.mdb"
    with open(data_mdb, "r+b") as f:
        f.truncate(os.path.getsize(data_mdb) // 3)
    module = {"wreck-dump": "wreck.storeserver.dump", "storeserver": "wreck.storeserver.cli"}[command]
    args = ["--all", "--jsonl"] if command == "wreck-dump" else ["--listen", "127.0.0.1:0"]
    proc = subprocess.run([sys.executable, "-m", module, "--data", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode > 0, (proc.returncode, proc.stderr)  # an exit code, not a signal
    assert "is truncated" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
