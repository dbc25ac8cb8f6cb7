"""storeserver --warc-dir: WARC files written as documents are committed,
rolled at --warc-size, each closed file complete (warcio check), every
acknowledged document in exactly one record set, across restarts and
kill -9 during the writing."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.storeserver.dump import app

from tests.store_helpers import Client, ServerProcess, make_record, running_server

NAME = re.compile(r"WRECK-\d{20}-\d{5}-[A-Za-z0-9._]+\.warc\.gz")


def warcio_check(path: Path) -> None:
    check = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, f"{path.name}: {check.stdout}{check.stderr}"


def docs_in(warc_dir: Path) -> Counter:
    """doc id -> how many main records (response or revisit) the closed files hold."""
    found: Counter = Counter()
    for path in sorted(warc_dir.glob("*.warc.gz")):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type in ("response", "revisit"):
                    found[int(rec.rec_headers.get_header("WARC-Wreck-Doc-Id"))] += 1
    return found


def test_files_roll_at_the_size_and_are_closed_at_a_clean_stop(tmp_path):
    warc_dir = tmp_path / "warcs"
    with running_server(tmp_path / "data", warc_dir=str(warc_dir), warc_size=64 * 1024, warc_prefix="WRECK",
                        operator="ops@example.org") as (_, port):
        c = Client(port)
        for start in range(1, 301, 50):
            c.send([make_record(i, size=3000) for i in range(start, start + 50)])
            c.acks(50)
    files = sorted(warc_dir.iterdir())
    assert len(files) > 3 and all(NAME.fullmatch(f.name) for f in files)  # no .open left after a clean stop
    assert warc_dir.stat().st_mode & 0o777 == 0o700 and {f.stat().st_mode & 0o777 for f in files} == {0o600}
    assert [f.name.split("-")[2] for f in files] == [f"{n:05d}" for n in range(1, len(files) + 1)]
    for f in files:
        warcio_check(f)
        with open(f, "rb") as fh:
            first = next(iter(ArchiveIterator(fh)))
            assert first.rec_type == "warcinfo" and b"operator: ops@example.org" in first.content_stream().read()
    assert docs_in(warc_dir) == Counter(range(1, 301))
    # the same records, byte for byte, as an export after the fact writes them
    export = tmp_path / "export.warc.gz"
    result = CliRunner().invoke(app, ["--all", "--warc", str(export), "--data", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert records_of(files) == records_of([export])


def records_of(paths: list[Path]) -> list:
    """(WARC headers, block) of every record but warcinfo, in file order."""
    out = []
    for path in paths:
        with open(path, "rb") as fh:
            out += [(rec.rec_headers.headers, rec.raw_stream.read()) for rec in ArchiveIterator(fh, no_record_parse=True)
                    if rec.rec_type != "warcinfo"]
    return out


def test_a_restart_resumes_after_the_last_document_written(tmp_path):
    warc_dir = tmp_path / "warcs"
    for start in (1, 41):
        with running_server(tmp_path / "data", warc_dir=str(warc_dir)) as (_, port):
            c = Client(port)
            c.send([make_record(i) for i in range(start, start + 40)])
            c.acks(40)
            c.send([make_record(start)])  # a resend: acked DUPLICATE, written once
            c.acks(1)
    assert docs_in(warc_dir) == Counter(range(1, 81))
    assert len(list(warc_dir.iterdir())) == 2


def test_kill_9_during_warc_writing_leaves_closed_files_whole_and_every_acked_document_once(tmp_path):
    data, warc_dir = tmp_path / "data", tmp_path / "warcs"
    args = ("--warc-dir", str(warc_dir), "--warc-size", "256KiB")
    acked: set[int] = set()
    next_id = 1
    for _ in range(4):  # kill -9 repeatedly, each time while records are being written
        server = ServerProcess(data, *args)
        stop = threading.Event()

        def send(first: int) -> None:
            c = Client(server.port)
            i = first
            try:
                while not stop.is_set():
                    c.send([make_record(j, size=4000) for j in range(i, i + 20)])
                    acked.update(a.doc_id for a in c.acks(20))
                    i += 20
            except (OSError, AssertionError):
                pass  # killed under us

        sender = threading.Thread(target=send, args=(next_id,))
        sender.start()
        while len(acked) < next_id - 1 + 300 or not any(warc_dir.glob("*.open")):
            sender.join(0.05)
        server.kill()
        stop.set()
        sender.join(30)
        next_id = max(acked) + 1000  # the next round sends new doc ids (what was unacked is lost to us)
        for closed in warc_dir.glob("*.warc.gz"):
            warcio_check(closed)
    server = ServerProcess(data, *args)  # recovery, then a clean stop closes the last file
    assert server.stop() == 0
    assert not list(warc_dir.glob("*.open"))
    for closed in warc_dir.glob("*.warc.gz"):
        warcio_check(closed)
    found = docs_in(warc_dir)
    assert acked <= set(found) and set(found.values()) == {1}  # every acked doc, each exactly once


def test_a_torn_record_after_the_last_position_is_cut_off_at_restart(tmp_path):
    data, warc_dir = tmp_path / "data", tmp_path / "warcs"
    args = ("--warc-dir", str(warc_dir))
    server = ServerProcess(data, *args)
    c = Client(server.port)
    c.send([make_record(i) for i in range(1, 101)])
    c.acks(100)
    while not (opened := list(warc_dir.glob("*.open"))) or docs_in_open(opened[0]) < 100:
        time.sleep(0.05)  # until the writer has caught up (its recorded position may lag)
    [open_file] = opened
    server.kill()
    with open(open_file, "ab") as fh:  # a record cut in two by the kill
        fh.write(gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 9999\r\n\r\n<html>")[:40])
    server = ServerProcess(data, *args)
    assert server.stop() == 0
    assert any("event=warc_truncate" in line for line in server.lines)
    assert not list(warc_dir.glob("*.open"))
    for closed in warc_dir.glob("*.warc.gz"):
        warcio_check(closed)
    assert docs_in(warc_dir) == Counter(range(1, 101))


def docs_in_open(path: Path) -> int:
    """Whole main records in a file being written (a torn last one ends the count)."""
    n = 0
    try:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                n += rec.rec_type in ("response", "revisit")
    except Exception:  # noqa: BLE001 - the writer is mid-record
        pass
    return n


def test_an_open_file_lost_while_down_is_written_again_into_a_new_one(tmp_path):
    data, warc_dir = tmp_path / "data", tmp_path / "warcs"
    args = ("--warc-dir", str(warc_dir), "--warc-size", "64KiB")
    server = ServerProcess(data, *args)
    c = Client(server.port)
    c.send([make_record(i, size=3000) for i in range(1, 61)])
    c.acks(60)
    while not (opened := list(warc_dir.glob("*.open"))) or docs_in_open(opened[0]) < 60 - len(docs_in(warc_dir)):
        time.sleep(0.05)
    server.kill()
    opened[0].unlink()  # an operator's slip, a lost disk
    server = ServerProcess(data, *args)
    assert server.stop() == 0
    assert any("event=warc_lost" in line for line in server.lines)
    assert docs_in(warc_dir) == Counter(range(1, 61))
