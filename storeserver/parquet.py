# A crawl's documents as one Parquet file (pyarrow writes it), for pandas,
# DuckDB, polars, Spark and Hugging Face `datasets`, which read it as is.
#
# One row per Document of storeserver/documents.py (its as_dict()), in doc order (the rows
# `for doc in crawl` yields: 304 revisit records left out, so the row count
# is the store's `docs` counter). Rows are gathered into a row group of at
# most ROWS_PER_GROUP rows or GROUP_BYTES bytes of text and bodies, written,
# and forgotten: memory stays bounded whatever the crawl's size. The file is
# written under a temporary name and renamed when complete, so a killed
# export never leaves a truncated file behind the final name.
"""Parquet export of a store."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .documents import Crawl

ROWS_PER_GROUP = 10_000  # rows a reader skips or reads as one unit; Arrow's advice is 10^4-10^6
GROUP_BYTES = 16 * 1024 * 1024  # text and body bytes held before a group is written: a few times this is the peak memory (make bench-export)
COMPRESSION = "zstd"  # every reader named above decodes it; smaller than snappy on text


def schema(*, bodies: bool) -> pa.Schema:
    """The export's columns (docs/reading.md, Parquet)."""
    fields = [
        pa.field("doc_id", pa.uint32(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("host", pa.string()),
        pa.field("status", pa.int16(), nullable=False),  # 0: no response came
        pa.field("content_type", pa.string()),
        pa.field("fetched_at", pa.timestamp("ms", tz="UTC"), nullable=False),
        pa.field("title", pa.string()),
        pa.field("text", pa.string()),
        pa.field("outlinks", pa.list_(pa.string())),  # null: the store kept none
        pa.field("digest", pa.string()),
        pa.field("via", pa.string()),  # the URL it was first found on; null: a seed, or not known
        pa.field("hops", pa.string()),  # its hop path from the seed ("LL"); "": a seed; null: not known
    ]
    if bodies:
        fields.append(pa.field("body", pa.binary()))
    return pa.schema(fields, metadata={"source": "WRECK store (wreck-dump --parquet)"})


def write_parquet(crawl: Crawl, path: Path, *, bodies: bool = False) -> int:
    """Write every document of `crawl` to `path`; returns the rows written."""
    path = Path(path)
    part = path.with_name(path.name + ".part")
    columns = schema(bodies=bodies)
    rows: list[dict] = []
    held = written = 0
    try:
        with pq.ParquetWriter(part, columns, compression=COMPRESSION) as writer:
            for doc in crawl:
                row = doc.as_dict(body=bodies)
                rows.append(row)
                held += len(row["text"]) + (len(doc.body) if bodies else 0)
                if len(rows) >= ROWS_PER_GROUP or held >= GROUP_BYTES:
                    writer.write_table(pa.Table.from_pylist(rows, schema=columns))
                    written += len(rows)
                    rows, held = [], 0
            if rows or not written:  # an empty crawl still gets a readable, typed file
                writer.write_table(pa.Table.from_pylist(rows, schema=columns))
                written += len(rows)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return written
