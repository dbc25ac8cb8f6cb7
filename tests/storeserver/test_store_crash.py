"""The real storeserver command: kill -9 mid-burst, graceful SIGTERM, the
listen rule, a full disk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from wreck.protocol import Ack, AckResult, NoticeCode, Notice, Record, Specific, http_enum
from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, ServerProcess, make_record, running_server
from tests.disk_helpers import SMALL_DISK, free_bytes, small_tmpfs

SENDERS = 4
PER_SENDER = 1500


def sender_records(k: int) -> list[Record]:
    return [make_record(k * 100_000 + i, size=1000 + (i * 37) % 3000) for i in range(PER_SENDER)]


def test_kill_9_mid_burst_loses_no_acked_record_and_duplicates_none(tmp_path):
    server = ServerProcess(tmp_path)
    acked: dict[int, list[int]] = {k: [] for k in range(SENDERS)}
    enough = threading.Event()

    def send(k: int) -> None:
        c = Client(server.port, name=f"box-{k}")
        recs = sender_records(k)
        try:
            for i in range(0, PER_SENDER, 25):
                c.send(recs[i : i + 25])
                if i >= 100:  # keep a window of records in flight, like a spider
                    acked[k].extend(a.doc_id for a in c.acks(25))
                    if sum(map(len, acked.values())) > 1500:
                        enough.set()
        except (OSError, AssertionError):
            pass  # the server died under us, as planned

    threads = [threading.Thread(target=send, args=(k,)) for k in range(SENDERS)]
    for t in threads:
        t.start()
    assert enough.wait(30)
    server.kill()  # SIGKILL mid-burst
    for t in threads:
        t.join(30)
    total_acked = sum(map(len, acked.values()))
    assert 1500 < total_acked < SENDERS * PER_SENDER

    server = ServerProcess(tmp_path)  # restart on the same data
    store = ReadStore(tmp_path)
    for k in range(SENDERS):
        recs = {r.doc_id: r for r in sender_records(k)}
        for doc_id in acked[k]:
            meta, document = store.get(doc_id)
            assert document == recs[doc_id].document and meta.url == recs[doc_id].url
    # Every spider resends everything it had not seen acked (here: everything).
    for k in range(SENDERS):
        c = Client(server.port)
        recs = sender_records(k)
        c.send(recs)
        acks = {a.doc_id: a.result for a in c.acks(PER_SENDER)}
        assert all(acks[d] is AckResult.DUPLICATE for d in acked[k])
        c.close()
    assert server.stop() == 0
    ids = [m.doc_id for m, _ in store.iter_docs(with_documents=False)]
    assert len(ids) == len(set(ids)) == SENDERS * PER_SENDER == store.meta_info()["docs"]
    r = sender_records(2)[-1]
    assert store.doc_ids_for_url(r.url) == [r.doc_id]


def test_sigterm_commits_and_acks_what_is_in_hand(tmp_path):
    server = ServerProcess(tmp_path)
    c = Client(server.port)
    recs = [make_record(i) for i in range(1, 301)]
    c.send(recs[:100])
    first = c.acks(100)
    c.send(recs[100:])
    server.proc.send_signal(signal.SIGTERM)
    later = [e for e in c.until_closed() if type(e) is Ack]
    assert server.proc.wait(15) == 0
    assert any("stopped" in line for line in server.lines)
    store = ReadStore(tmp_path)
    for ack in first + later:
        assert store.get(ack.doc_id)[1] == recs[ack.doc_id - 1].document
    with pytest.raises(OSError):
        Client(server.port)


def test_listening_beyond_loopback_needs_a_secret(tmp_path):
    cmd = [sys.executable, "-m", "storeserver", "--data", str(tmp_path), "--listen", "0.0.0.0:0"]
    env = {k: v for k, v in os.environ.items() if k != "WRECK_SECRET"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env)
    assert done.returncode == 2 and "refusing to listen on 0.0.0.0 without a shared secret" in done.stderr


def test_a_secret_from_the_environment_is_required_of_spiders(tmp_path):
    secret = "correct-horse-battery-staple"
    server = ServerProcess(tmp_path, env={"WRECK_SECRET": secret})
    try:
        ok = Client(server.port, secret=secret.encode())
        ok.send([make_record(7)])
        assert ok.acks(1) == [Ack(7, AckResult.STORED)]
        assert Client(server.port, handshake=False).handshake().code.name == "AUTH"
    finally:
        assert server.stop() == 0


class FlakyDisk:
    """A WriteStore whose commits fail with ENOSPC until `heal()`."""

    def __init__(self, store) -> None:
        self._store = store
        self.broken = True

    def __getattr__(self, name):
        return getattr(self._store, name)

    def commit(self, batch, new_dict=None, **kw):
        import lmdb

        if self.broken:
            raise lmdb.DiskError("mdb_txn_commit: No space left on device")
        return self._store.commit(batch, new_dict, **kw)


def test_disk_full_holds_acks_says_so_and_recovers(tmp_path):
    from wreck.storeserver.settings import MAX_MAP_GROWTH
    from wreck.storeserver.store import WriteStore

    disk = FlakyDisk(WriteStore(tmp_path, map_size=1 << 20, max_growth=MAX_MAP_GROWTH))
    with running_server(tmp_path, store=disk) as (_, port):
        c = Client(port)
        c.send([make_record(1), make_record(2)])
        notice = c.until(lambda e: type(e) is Notice)
        assert notice.code == NoticeCode.FULL and "No space left" in notice.text
        c.send([make_record(3)])  # still served: received and held
        c.sock.settimeout(0.3)
        with pytest.raises(TimeoutError):  # no ack while nothing can commit
            c.until(lambda e: type(e) is Ack)
        c.sock.settimeout(15)
        disk.broken = False
        acks = c.acks(3)
        assert [a.doc_id for a in acks] == [1, 2, 3]
        assert any(type(e) is Notice and e.code == NoticeCode.RESUMED for e in c.events)
    store = ReadStore(tmp_path)
    assert [store.get(i)[1] for i in (1, 2, 3)] == [make_record(i).document for i in (1, 2, 3)]


ROOM = 3 << 20  # left free for the store: its files and a few dozen records


def test_a_really_full_disk_then_space_returns(tmp_path):
    with small_tmpfs(tmp_path / "small", SMALL_DISK) as mnt:
        ballast = mnt / "ballast"
        ballast.write_bytes(b"\0" * (free_bytes(mnt) - ROOM))  # 100 records of 50 kB do not fit in ROOM
        data = mnt / "data"
        server = ServerProcess(data, "--map-size", "64MiB")
        c = Client(server.port)
        recs = [Record(i, True, Specific.OK, http_enum(200), 1, f"http://127.0.0.1/b/{i}", None,
                       b"HTTP/1.1 200 OK\r\n\r\n" + os.urandom(50_000)) for i in range(1, 101)]  # fmt: skip
        c.send(recs)
        c.until(lambda e: type(e) is Notice and e.code == NoticeCode.FULL)
        events = list(c.events)
        acked_before = [e.doc_id for e in events if type(e) is Ack]
        assert len(acked_before) < 100
        ballast.unlink()  # space returns
        c.events.clear()
        acked_after = [a.doc_id for a in c.acks(100 - len(acked_before))]
        assert sorted(acked_before + acked_after) == list(range(1, 101))
        assert any(type(e) is Notice and e.code == NoticeCode.RESUMED for e in c.events)
        assert server.stop() == 0
        assert any("cannot commit" in line for line in server.lines)
        store = ReadStore(data)
        assert all(store.get(r.doc_id)[1] == r.document for r in recs)
        store.close()
