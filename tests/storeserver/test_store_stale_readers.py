"""wreck-dump processes killed (-9) mid-read while the store writes: each
leaves an LMDB reader slot pinning the snapshot it read, which would stop
LMDB reusing freed pages (the file grows with every commit) and fill the
reader table. The store server clears dead readers, so the data file stays
as small as in the same run without kills, and no slot of a dead process
is left."""

from __future__ import annotations

import os
import subprocess
import sys

from wreck.storeserver.store import ReadStore

from tests.store_helpers import Client, ServerProcess, make_record

ROUNDS = 120  # commits: one small batch each, acked before the next
BATCH = 4
KILL_EVERY = 40  # rounds between kills
SLACK = 1.5  # the killed run's file may be this much larger than the calm one
# wreck-dump reads 1,000 documents per read transaction and closes it before
# printing them, so a kill mostly lands between transactions and leaves only
# a dead reader slot. This reader is killed inside its transaction, pinning
# the snapshot it read: the case that makes the file grow.
MID_READ = """
import sys, time
from wreck.storeserver.store import ReadStore
store = ReadStore(sys.argv[1])
txn = store.env.begin()
assert txn.stat(store.docs)["entries"]
print("reading", flush=True)
time.sleep(60)
"""


def _read_and_kill(args: list[str]) -> int:
    """Start a reader, let it read (one line out), kill -9 it; its pid."""
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout.readline(), "the reader printed nothing"
    proc.kill()
    proc.wait()
    return proc.pid


def _write_while(data, *, kill_dumps: bool) -> tuple[int, list[int], set[int]]:
    """After ROUNDS commits: the store's data file size, pids of killed
    dumps, and pids holding reader slots (read while the server runs: the
    first process to open an environment resets its reader table)."""
    server = ServerProcess(data, "--commit-window-ms", "0")
    killed = []
    try:
        client = Client(server.port)
        for r in range(ROUNDS):
            client.send([make_record(r * BATCH + i + 1, size=1500) for i in range(BATCH)])
            client.acks(BATCH)
            if kill_dumps and r % KILL_EVERY == 0:
                killed.append(_read_and_kill(["-m", "wreck.storeserver.dump", "--all", "--jsonl", "--data", str(data)]))
                killed.append(_read_and_kill(["-c", MID_READ, str(data)]))
        client.send([make_record(ROUNDS * BATCH + 1)])
        client.acks(1)
        client.close()
        readers = _reader_pids(data)
    finally:
        assert server.stop() == 0
    return (data / "store" / "data.mdb").stat().st_size, killed, readers


def _reader_pids(data) -> set[int]:
    store = ReadStore(data)
    try:
        lines = store.env.readers().splitlines()[1:]  # "pid thread txnid" rows
    finally:
        store.close()
    return {int(line.split()[0]) for line in lines if line.split() and line.split()[0].isdigit()}


def test_killed_readers_do_not_make_the_store_grow(tmp_path):
    calm, _, _ = _write_while(tmp_path / "calm", kill_dumps=False)
    grown, killed, readers = _write_while(tmp_path / "killed", kill_dumps=True)
    assert len(killed) == 2 * ROUNDS // KILL_EVERY
    assert grown <= calm * SLACK, (grown, calm)
    assert not readers & set(killed), "a dead reader still holds a slot"
    assert not any(os.path.exists(f"/proc/{pid}") for pid in killed)
