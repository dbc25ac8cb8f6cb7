# Stored documents as WARC/1.1 `response` records (warcio writes them).
#
# The spider decoded the body (Content-Encoding and chunking undone), so the
# original headers would misdescribe the payload. Following the web-archive
# convention (pywb's), each header that no longer holds is kept under an
# X-Archive-Orig- name: Content-Encoding and Transfer-Encoding are renamed,
# and Content-Length is set to the stored body's length (the original kept
# as X-Archive-Orig-Content-Length when it differed). Every other header,
# and the status line, is written as received. WARC-Date is the store time
# (the fetch ended at most the record's `ms` before it); WARC-Wreck-Doc-Id
# names the doc. Records without an HTTP response (a timeout, a refused
# connection: no status line stored) are skipped and counted. A 304 to a
# recrawl's conditional request becomes a `revisit` record of the WARC 1.1
# server-not-modified profile, referring to the URL's current document.
"""WARC export of the store."""

from __future__ import annotations

import datetime
import io
from pathlib import Path
from typing import BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

from wreck.protocol import Specific

from .store import ReadStore

_RENAMED = ("content-encoding", "transfer-encoding")
ORIG = "X-Archive-Orig-"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    """(protocol, 'code reason', headers) of a stored header block."""
    lines = head.decode("iso-8859-1").replace("\r\n", "\n").split("\n")
    protocol, _, status = lines[0].partition(" ")
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        if line[0] in " \t" and headers:  # obsolete line folding
            name, value = headers[-1]
            headers[-1] = (name, value + " " + line.strip())
            continue
        name, _, value = line.partition(":")
        headers.append((name.strip(), value.strip()))
    return protocol, status.strip(), headers


def warc_headers(headers: list[tuple[str, str]], body_len: int) -> list[tuple[str, str]]:
    """The HTTP headers made consistent with a decoded body of body_len bytes."""
    out = []
    for name, value in headers:
        lower = name.lower()
        if lower in _RENAMED:
            out.append((ORIG + name, value))
        elif lower == "content-length":
            if value != str(body_len):
                out.append((ORIG + name, value))
        else:
            out.append((name, value))
    out.append(("Content-Length", str(body_len)))
    return out


def iso_date(unix: float) -> str:
    dt = datetime.datetime.fromtimestamp(unix, datetime.timezone.utc).replace(tzinfo=None)
    return datetime_to_iso_date(dt, use_micros=True)


def write_warc(store: ReadStore, out: BinaryIO, *, gzip: bool, filename: str = "wreck.warc") -> tuple[int, int]:
    """Write every stored response; returns (records written, docs skipped)."""
    writer = WARCWriter(out, gzip=gzip, warc_version="1.1")
    info = store.meta_info()
    writer.write_record(writer.create_warcinfo_record(filename, {
        "software": "WRECK storeserver (wreck-dump)", "format": "WARC File Format 1.1",
        "wreck-store-created": str(info.get("created", "")),
        "wreck-docs": str(info.get("docs", 0)),
    }))  # fmt: skip
    written = skipped = 0
    for meta, document in store.iter_docs():
        if meta.head_len == 0 or meta.http == 0:
            skipped += 1
            continue
        protocol, status, headers = parse_head(document[: meta.head_len])
        if meta.specific == Specific.NOT_MODIFIED:
            writer.write_record(_revisit(writer, store, meta, StatusAndHeaders(status, headers, protocol=protocol)))
            written += 1
            continue
        body = document[meta.head_len :]
        http_headers = StatusAndHeaders(status, warc_headers(headers, len(body)), protocol=protocol)
        record = writer.create_warc_record(
            meta.url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http_headers,
            warc_headers_dict={"WARC-Date": iso_date(meta.stored_at), "WARC-Wreck-Doc-Id": str(meta.doc_id)},
        )  # fmt: skip
        writer.write_record(record)
        written += 1
    return written, skipped


def _revisit(writer: WARCWriter, store: ReadStore, meta, http_headers: StatusAndHeaders):
    """A server-not-modified revisit record (WARC 1.1, 6.7.2.2) for a stored 304."""
    fields = {"WARC-Date": iso_date(meta.stored_at), "WARC-Wreck-Doc-Id": str(meta.doc_id),
              "WARC-Profile": NOT_MODIFIED_PROFILE, "WARC-Refers-To-Target-URI": meta.url}
    earlier = [d for d in store.doc_ids_for_url(meta.url) if d < meta.doc_id]
    for doc_id in reversed(earlier):
        before = store.get(doc_id)[0]
        if before.specific != Specific.NOT_MODIFIED:
            fields["WARC-Refers-To-Date"] = iso_date(before.stored_at)
            break
    return writer.create_warc_record(meta.url, "revisit", http_headers=http_headers, warc_headers_dict=fields)


def write_warc_file(store: ReadStore, path: Path) -> tuple[int, int]:
    with open(path, "wb") as fh:
        return write_warc(store, fh, gzip=path.name.endswith(".gz"), filename=path.name)
