"""wreck-dump as a user drives it: --url normalised as the crawler does,
`-` for standard output, contradicting options refused in one line, one
JSON schema (docs/dump.md) on every record, --fields, --no-body and the
--all filters."""

from __future__ import annotations

import datetime
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from wreck.protocol import Record, Specific, http_enum
from wreck.storeserver.dumprecord import BODY_FIELDS, DEFAULT_FIELDS, FIELDS

from tests.store_helpers import store_with

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dump.md"


def _rec(doc_id: int, url: str, status: int, head: str, body: bytes, specific=Specific.OK) -> Record:
    return Record(doc_id, status < 400, specific, http_enum(status), 10, url, None,
                  f"HTTP/1.1 {status} X\r\n{head}\r\n\r\n".encode() + body)


RECORDS = [
    _rec(1, "http://h3.example/", 200, "Content-Type: text/html; charset=utf-8", "<p>café</p>".encode()),
    _rec(2, "http://h3.example/latin", 200, "Content-Type: text/plain; charset=iso-8859-1", "déjà".encode("latin-1")),
    _rec(3, "http://other.example/a.bin", 200, "Content-Type: application/octet-stream", b"\x00\xff\x10").__replace__(
        truncated="disconnect"),  # the server closed before the body's end
    _rec(4, "http://h3.example/gone", 404, "Content-Type: text/html", b"<p>no</p>", Specific.HTTP_ERROR),
    Record(5, False, Specific.TIMEOUT, 0, 30_000, "http://other.example/slow", None, b""),
    _rec(6, "http://h3.example/moved", 301, "Location: /", b"", Specific.REDIRECT).__replace__(
        via="http://h3.example/", hops="L"),  # found on the first page
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return store_with(tmp_path_factory.mktemp("store"), RECORDS)


def dump(data: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed wreck-dump command, as a user runs it."""
    exe = Path(sys.executable).parent / "wreck-dump"
    return subprocess.run([str(exe), "--data", str(data), *args], capture_output=True, timeout=60, cwd=cwd)


def jsonl(data: Path, *args: str) -> list[dict]:
    done = dump(data, "--all", "--jsonl", *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_url_is_normalised_as_the_crawler_normalises_it(data):
    for given in ("http://h3.example", "HTTP://H3.Example:80", "http://h3.example/#top"):
        done = dump(data, "--url", given)
        assert done.returncode == 0 and done.stdout == "<p>café</p>".encode(), given


def test_warc_dash_writes_the_warc_to_standard_output_and_no_file(data, tmp_path):
    done = dump(data, "--all", "--warc", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "-").exists() and "to standard output" in done.stderr.decode()
    records = list(ArchiveIterator(io.BytesIO(done.stdout)))
    assert [r.rec_headers.get_header("WARC-Target-URI") for r in records if r.rec_type == "response"] == [
        r.url for r in RECORDS if r.document]


@pytest.mark.parametrize("args, words", [
    (["1", "--all", "--jsonl"], "DOCID and --all"),
    (["--url", "http://h3.example/", "1"], "DOCID and --url"),
    (["--all", "--jsonl", "--warc", "x.warc"], "--jsonl and --warc"),
    (["--all"], "--all needs --jsonl, --warc FILE, --parquet FILE or --wacz FILE"),
    ([], "give a DOCID, --url URL or --all"),
    (["1", "--headers", "--json"], "--headers and --json"),
    (["--all", "--json"], "--all and --json"),
    (["1", "--status", "200"], "--status chooses among --all"),
    (["1", "--fields", "url"], "--fields chooses the fields of --json or --jsonl"),
    (["1", "--no-body"], "--no-body chooses the fields"),
    (["--all", "--warc", "-", "--text"], "--text and --warc"),
    (["--all", "--jsonl", "--fields", "url,nope"], "no field nope"),
    (["--all", "--jsonl", "--status", "2x"], "--status: '2x' is not a status"),
    (["--all", "--jsonl", "--since", "yesterday"], "--since: 'yesterday' is not a time"),
])  # fmt: skip
def test_contradicting_options_are_refused_in_one_line_exit_2(data, tmp_path, args, words):
    done = dump(data, *args, cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and words in err and len(err.splitlines()) == 1, err
    assert done.stdout == b"" and not list(tmp_path.iterdir())


def _documented_fields() -> list[str]:
    """The keys of docs/dump.md's record table, in order."""
    table = DOCS.read_text(encoding="utf-8").split("## The JSON record", 1)[1].split("###", 1)[0]
    return re.findall(r"^\| `([a-z_0-9]+)` \|", table, re.MULTILINE)


def test_every_record_has_the_same_documented_keys_null_where_absent(data):
    assert _documented_fields() == list(FIELDS)
    lines = jsonl(data)
    assert [x["doc_id"] for x in lines] == [1, 2, 3, 4, 5, 6]
    assert all(list(x) == list(DEFAULT_FIELDS) for x in lines)
    page, latin, binary, missing, timeout, moved = lines
    assert (page["body"], page["body_base64"], page["charset"], page["content_type"]) == (
        "<p>café</p>", None, "utf-8", "text/html; charset=utf-8")
    assert latin["body"] == "déjà" and latin["body_base64"] is None
    assert binary["body"] is None and binary["body_base64"] == "AP8Q" and binary["charset"] is None
    assert (missing["status"], missing["outcome"], missing["success"]) == (404, "HTTP_ERROR", False)
    assert (timeout["status"], timeout["headers"], timeout["content_type"], timeout["body"]) == (None, None, None, "")
    assert moved["status"] == 301 and moved["outcome"] == "REDIRECT"
    assert all(x["depth"] is None for x in lines)
    assert [x["referrer"] for x in lines] == [None] * 5 + ["http://h3.example/"]  # the via the store kept
    assert [x["truncated"] for x in lines] == [None, None, "disconnect", None, None, None]
    assert page["body_hash"] and page["duplicate_of"] is None and "duplicate_of" in timeout
    assert not any(k in page for k in ("specific_code", "http_enum", "dict_id"))  # no internal codes


def test_fields_choose_and_order_the_keys_and_no_body_leaves_the_body_out(data):
    assert jsonl(data, "--fields", "status,url")[0] == {"status": 200, "url": "http://h3.example/"}
    bare = jsonl(data, "--no-body")
    assert all(list(x) == [f for f in DEFAULT_FIELDS if f not in BODY_FIELDS] for x in bare)
    one = json.loads(dump(data, "1", "--json", "--fields", "doc_id,text").stdout)
    assert one == {"doc_id": 1, "text": "café"}


def test_filters_keep_the_documents_of_a_status_a_host_and_a_time(data):
    assert [x["doc_id"] for x in jsonl(data, "--status", "200")] == [1, 2, 3]
    assert [x["doc_id"] for x in jsonl(data, "--status", "3xx,4xx")] == [4, 6]
    assert [x["doc_id"] for x in jsonl(data, "--status", "none")] == [5]
    assert [x["doc_id"] for x in jsonl(data, "--host", "OTHER.example")] == [3, 5]
    assert [x["doc_id"] for x in jsonl(data, "--host", "h3.example", "--status", "2xx")] == [1, 2]
    every = jsonl(data, "--fields", "doc_id,stored_at")
    middle = every[3]["stored_at"]
    assert [x["doc_id"] for x in jsonl(data, "--since", middle)] == [x["doc_id"] for x in every
                                                                      if x["stored_at"] >= middle]
    assert [x["doc_id"] for x in jsonl(data, "--until", middle)] == [x["doc_id"] for x in every
                                                                      if x["stored_at"] < middle]
    tomorrow = (datetime.date.today() + datetime.timedelta(days=2)).isoformat()
    assert jsonl(data, "--since", tomorrow) == [] and len(jsonl(data, "--until", tomorrow)) == 6
    warc = dump(data, "--all", "--warc", "-", "--status", "404")
    assert [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(io.BytesIO(warc.stdout))
            if r.rec_type == "response"] == ["http://h3.example/gone"]
