"""`wreck-dump --all --parquet`: read back by pyarrow, DuckDB, pandas and
Hugging Face datasets as they are, one row per stored document, typed
columns, streamed in row groups."""

from __future__ import annotations

import datetime

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver import parquet as export
from wreck.storeserver.dump import app
from wreck.storeserver.reader import payload_digest, read_counters

from tests.store_helpers import filled_store, make_record, running_server

TITLED = Record(1, True, Specific.OK, http_enum(200), 9, "http://127.0.0.1:8080/", None,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                b"<html><head><title>Home \xe2\x80\x94 caf\xc3\xa9</title></head><body><p>"
                + b"A welcome text of some length for the main content. " * 10 + b"</p></body></html>",
                hops="-")  # fmt: skip
TIMEOUT = Record(2, False, Specific.TIMEOUT, 0, 30_000, "http://127.0.0.1:8080/slow", None, b"")
NOT_MODIFIED = Record(3, True, Specific.NOT_MODIFIED, http_enum(304), 3, TITLED.url, None, b"HTTP/1.1 304 Not Modified\r\n\r\n")
PAGES = [make_record(4).__replace__(via=TITLED.url, hops="L")] + [make_record(i) for i in range(5, 30)] + [
    make_record(30, status=404)]
ALL = [TITLED, TIMEOUT, NOT_MODIFIED, *PAGES]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return filled_store(tmp_path_factory.mktemp("store"), ALL)


def dump(*args) -> object:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def test_pyarrow_reads_one_typed_row_per_stored_document(data, tmp_path):
    out = tmp_path / "crawl.parquet"
    assert "wrote 29 rows" in dump("--all", "--parquet", out, "--data", data).stderr
    table = pq.read_table(out)
    assert table.num_rows == read_counters(data).docs == 29  # the 304 record holds no new content
    assert table.schema.field("doc_id").type == pa.uint32() and table.schema.field("status").type == pa.int16()
    assert table.schema.field("fetched_at").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("outlinks").type == pa.list_(pa.string())
    assert "body" not in table.column_names
    rows = table.to_pylist()
    home = rows[0]
    assert (home["url"], home["host"], home["status"], home["content_type"]) == (TITLED.url, "127.0.0.1", 200, "text/html")
    assert home["title"] == "Home — café" and "welcome text" in home["text"]
    assert home["digest"] == payload_digest(TITLED.document.split(b"\r\n\r\n", 1)[1])
    assert home["fetched_at"].tzinfo is not None
    assert datetime.datetime.now(datetime.timezone.utc) - home["fetched_at"] < datetime.timedelta(minutes=10)
    assert home["outlinks"] is None
    assert (rows[1]["status"], rows[1]["title"], rows[1]["text"]) == (0, "", "")  # the timeout: tried, no response
    assert [r["doc_id"] for r in rows] == [1, 2, *range(4, 31)]
    # where each was found: the seed has the empty path, a link of it its via and "L", others are not known
    assert (home["via"], home["hops"]) == (None, "") and (rows[2]["via"], rows[2]["hops"]) == (TITLED.url, "L")
    assert (rows[3]["via"], rows[3]["hops"]) == (None, None)


def test_duckdb_queries_the_file_as_is_with_bodies(data, tmp_path):
    out = tmp_path / "with-bodies.parquet"
    dump("--all", "--parquet", out, "--bodies", "--data", data)
    con = duckdb.connect()
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{out}')").fetchall())
    assert types["status"] == "SMALLINT" and types["doc_id"] == "UINTEGER" and types["body"] == "BLOB"
    assert types["fetched_at"] == "TIMESTAMP WITH TIME ZONE" and types["outlinks"] == "VARCHAR[]"
    assert con.execute(f"SELECT count(*) FROM '{out}'").fetchone()[0] == read_counters(data).docs
    by_status = dict(con.execute(f"SELECT status, count(*) FROM '{out}' GROUP BY status").fetchall())
    assert by_status == {200: 27, 0: 1, 404: 1}
    body = con.execute(f"SELECT body FROM '{out}' WHERE url = ?", [PAGES[0].url]).fetchone()[0]
    assert body == PAGES[0].document.split(b"\r\n\r\n", 1)[1]


def test_rows_are_streamed_in_row_groups_and_nothing_is_left_half_written(data, tmp_path, monkeypatch):
    monkeypatch.setattr(export, "ROWS_PER_GROUP", 7)
    out = tmp_path / "grouped.parquet"
    dump("--all", "--parquet", out, "--data", data)
    meta = pq.ParquetFile(out).metadata
    assert meta.num_row_groups == 5 and meta.num_rows == 29  # 7+7+7+7+1: never the whole crawl at once
    assert [p.name for p in tmp_path.iterdir()] == ["grouped.parquet"]  # the .part file was renamed


def test_an_empty_store_gives_an_empty_typed_file(tmp_path):
    with running_server(tmp_path / "store"):
        pass
    out = tmp_path / "empty.parquet"
    assert "wrote 0 rows" in dump("--all", "--parquet", out, "--data", tmp_path / "store").stderr
    table = pq.read_table(out)
    assert table.num_rows == 0 and table.schema.field("url").type == pa.string()


def test_pandas_reads_the_file_as_is_with_typed_columns(data, tmp_path):
    out = tmp_path / "crawl.parquet"
    dump("--all", "--parquet", out, "--bodies", "--data", data)
    frame = pd.read_parquet(out)
    assert len(frame) == read_counters(data).docs == 29
    assert str(frame["doc_id"].dtype) == "uint32" and str(frame["status"].dtype) == "int16"
    assert isinstance(frame["fetched_at"].dtype, pd.DatetimeTZDtype) and str(frame["fetched_at"].dt.tz) == "UTC"
    assert pd.api.types.is_string_dtype(frame["url"]) and pd.api.types.is_string_dtype(frame["title"])
    home = frame.set_index("doc_id").loc[1]
    assert (home["url"], home["status"], home["title"]) == (TITLED.url, 200, "Home — café")
    assert home["body"] == TITLED.document.split(b"\r\n\r\n", 1)[1]
    assert frame.groupby("status").size().to_dict() == {0: 1, 200: 27, 404: 1}


def test_hugging_face_datasets_loads_the_file_as_is_with_typed_features(data, tmp_path, monkeypatch):
    # offline, its caches in tmp_path: datasets reads these when it is imported
    for name, value in (("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_OFFLINE", "1"), ("HF_HOME", str(tmp_path / "hf"))):
        monkeypatch.setenv(name, value)
    import datasets  # here, after the variables above
    out = tmp_path / "crawl.parquet"
    dump("--all", "--parquet", out, "--bodies", "--data", data)
    ds = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == read_counters(data).docs == 29
    features = ds.features
    assert features["doc_id"] == datasets.Value("uint32") and features["status"] == datasets.Value("int16")
    assert features["fetched_at"] == datasets.Value("timestamp[ms, tz=UTC]")
    assert features["url"] == datasets.Value("string") and features["body"] == datasets.Value("binary")
    assert features["outlinks"].feature == datasets.Value("string")  # a list of strings
    home = ds[0]
    assert (home["doc_id"], home["url"], home["title"]) == (1, TITLED.url, "Home — café")
    assert home["fetched_at"].tzinfo is not None and home["body"] == TITLED.document.split(b"\r\n\r\n", 1)[1]
    assert ds.filter(lambda row: row["status"] == 200).num_rows == 27
