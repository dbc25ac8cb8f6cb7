"""CDXJ indexes (storeserver/cdxj.py, `wreck-dump --cdxj`): pywb's format,
sorted, written beside each WARC, every line pointing at its record."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.cdxj import cdxj_path, index_beside
from wreck.storeserver.dump import app
from wreck.storeserver.store import ReadStore
from wreck.storeserver.warc import write_warc_file

from tests.store_helpers import filled_store, make_record

NOT_MODIFIED = Record(40, True, Specific.NOT_MODIFIED, http_enum(304), 3, "http://127.0.0.1:8080/page/7", None,
                      b"HTTP/1.1 304 Not Modified\r\n\r\n")  # fmt: skip
# URLs in an order that is not their SURT order, on two hosts
RECORDS = [make_record(i, url=f"http://{host}/page/{i}") for i, host in
           zip(range(1, 40), ["b.test:8080", "127.0.0.1:8080", "a.test"] * 13)] + [NOT_MODIFIED]  # fmt: skip


@pytest.fixture(scope="module")
def warcs(tmp_path_factory):
    path = filled_store(tmp_path_factory.mktemp("store"), RECORDS)
    store = ReadStore(path)
    try:
        out = []
        for name in ("crawl-00001.warc.gz", "plain.warc"):
            write_warc_file(store, path / name)
            out.append(path / name)
    finally:
        store.close()
    return out


def _lines(path):
    return path.read_text().splitlines()


def test_wreck_dump_cdxj_writes_a_sorted_index_beside_each_warc(warcs):
    result = CliRunner().invoke(app, ["--cdxj", str(warcs[0]), "--cdxj", str(warcs[1])])
    assert result.exit_code == 0, result.output
    gz_index, plain_index = warcs[0].with_name("crawl-00001.cdxj"), warcs[1].with_name("plain.cdxj")
    assert cdxj_path(warcs[0]) == gz_index and gz_index.exists() and plain_index.exists()
    lines = _lines(gz_index)
    assert len(lines) == len(RECORDS)  # every response and the revisit; no warcinfo
    assert lines == sorted(lines)  # pywb binary-searches the file
    keys = [line.split(" ", 2) for line in lines]
    assert all(key[0].startswith(("test,a)/", "test,b:8080)/", "1,0,0,127:8080)/")) for key in keys)
    assert all(len(key[1]) == 14 and key[1].isdigit() for key in keys)  # SURT key, then a 14-digit timestamp
    fields = [json.loads(key[2]) for key in keys]
    assert {f["filename"] for f in fields} == {"crawl-00001.warc.gz"}
    revisit = [f for f in fields if f["mime"] == "warc/revisit"]
    assert len(revisit) == 1 and revisit[0]["url"] == NOT_MODIFIED.url
    page = next(f for f in fields if f["url"] == RECORDS[0].url)
    assert page["status"] == "200" and page["mime"] == "text/html" and page["digest"].startswith("sha1:")


@pytest.mark.parametrize("which", [0, 1])
def test_each_line_points_at_its_record(warcs, which):
    index = index_beside(warcs[which])
    data = warcs[which].read_bytes()
    for line in _lines(index):
        fields = json.loads(line.split(" ", 2)[2])
        chunk = data[int(fields["offset"]): int(fields["offset"]) + int(fields["length"])]
        if warcs[which].name.endswith(".gz"):
            chunk = gzip.decompress(chunk)  # one gzip member per record
        record = next(iter(ArchiveIterator(io.BytesIO(chunk))))
        assert record.rec_headers.get_header("WARC-Target-URI") == fields["url"]
        assert record.rec_type in ("response", "revisit")


def test_a_file_that_is_not_a_warc_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.warc.gz"
    bad.write_bytes(b"this is not a WARC file\n" * 10)
    result = CliRunner().invoke(app, ["--cdxj", str(bad)])
    assert result.exit_code == 1 and "cannot index" in result.stderr
    assert not list(tmp_path.glob("*.cdxj*"))  # no index, not even a partial one
