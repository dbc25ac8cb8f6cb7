# `wreck-dump`: read the store, safely while a storeserver writes to it
# (LMDB read transactions never block the writer).
#
#   wreck-dump DOCID --data DIR [--headers | --body | --text | --json]
#   wreck-dump --url URL --data DIR [...]   (the URL's current doc: the latest
#                                            that is not a 304 revisit record;
#                                            URL normalised as the crawler does)
#   wreck-dump --all --jsonl --data DIR     (one JSON object per doc, stdout)
#   wreck-dump --all --warc FILE --data DIR (WARC/1.1; FILE.gz: gzipped; -: stdout)
#   wreck-dump ... --data DIR1 --data DIR2  (a sharded crawl's stores read as
#   wreck-dump ... --manifest FILE           one: reader.open_stores)
#
# Which document(s) (DOCID, --url, --all and its filters: dumpfilter.py)
# and how they are written are chosen apart; each output format is one small
# function below (`_write_*`). The JSON schema of --json and --jsonl is
# dumprecord.py's, described in docs/dump.md. Options that contradict each
# other are refused in one line, exit 2, before the store is opened.
# Main text (--text) is extracted with resiliparse (bench: 6x faster than
# trafilatura on the same pages, same article text, fewer dependencies).
"""The wreck-dump command."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Optional

import msgspec
import typer

from wreck import cmdline, oneline, options
from wreck.options import setting
from wreck.urlnorm import normalize

from .compress import CorruptDocument
from .dumpfilter import Filter, FilterError, parse_hosts, parse_statuses, parse_time
from .dumprecord import FieldError, fields_from, main_text, record
from .layout import StoredDoc
from .reader import open_stores, stores_of
from .store import NotFound, ReadStore, StoreError
from .warc import write_warc

STDOUT = "-"  # --warc -: the WARC to standard output
EXIT_FAILED = 1  # no such document, a corrupt one, no store
EXIT_USAGE = 2  # options that contradict each other
app = cmdline.app("Print documents from a WRECK store.")
EXAMPLES = cmdline.examples(
    ("The page stored for a URL", "wreck-dump --data crawl --url https://example.com/"),
    ("Every 2xx page of one host as JSON lines, without bodies",
     "wreck-dump --data crawl --all --jsonl --no-body --status 2xx --host h.test"),
    ("Every document as a gzipped WARC file", "wreck-dump --data crawl --all --warc crawl.warc.gz"),
    ("A crawl sharded over three stores, as one", "wreck-dump --manifest frontier/crawl.json --all --jsonl"),
)
IN, OUT, WHICH = options.INPUT, options.OUTPUT, options.SCOPE  # --help panels


class Usage(Exception):
    """Options that contradict each other, or a value that does not parse."""


def _fail(message: str, code: int = EXIT_FAILED) -> typer.Exit:
    typer.echo(f"wreck-dump: {message}", err=True)
    return typer.Exit(code)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DumpOptions:
    """wreck-dump's options, declared once (wreck/options.py); which of them
    go together is _refuse_conflicts'."""

    data: tuple[str, ...] = setting((), help="The store's data directory (storeserver's --data, wreck-crawl's "
                                    "--data); repeat it for each shard of a sharded crawl, in --store order",
                                    repeatable=True, metavar="DIR", panel=IN)
    manifest: str | None = setting(None, help="Read every store of a sharded crawl named in this manifest (the "
                                   "urlserver's DATA/crawl.json, or its --data)", metavar="FILE", panel=IN)
    url: str | None = setting(None, help="The current document of this URL (the latest, 304 revisits aside)",
                              metavar="URL", panel=IN)
    all_docs: bool = setting(False, flag="--all", help="Every document (those the filters keep)", panel=IN)
    status: str | None = setting(None, help="With --all: only these HTTP statuses, e.g. 200,3xx (none: no HTTP "
                                 "response)", metavar="CODES", default_help="any", panel=WHICH)
    host: str | None = setting(None, help="With --all: only URLs of these hosts (comma-separated)", metavar="HOSTS",
                               default_help="any", panel=WHICH)
    since: str | None = setting(None, help="With --all: only documents stored at or after TIME (ISO 8601, UTC; or "
                                "Unix seconds)", metavar="TIME", default_help="any", panel=WHICH)
    until: str | None = setting(None, help="With --all: only documents stored before TIME", metavar="TIME",
                                default_help="any", panel=WHICH)
    headers: bool = setting(False, help="Print the status line and headers", panel=OUT)
    body: bool = setting(False, help="Print the body", default_help="on when no other output is given", panel=OUT)
    text: bool = setting(False, help="Print the page's main text; with --json or --jsonl, add it as \"text\"",
                         panel=OUT)
    as_json: bool = setting(False, flag="--json", help="Print the document as one indented JSON object "
                            "(docs/dump.md)", panel=OUT)
    jsonl: bool = setting(False, help="One JSON object a line to standard output (docs/dump.md)", panel=OUT)
    warc: str | None = setting(None, help="Write WARC/1.1 records to FILE (FILE.gz: gzipped; -: standard output)",
                               metavar="FILE", panel=OUT)
    fields: str | None = setting(None, help="With --json or --jsonl: only these fields, in this order",
                                 metavar="A,B,C", default_help="all but text", panel=OUT)
    no_body: bool = setting(False, help="With --json or --jsonl: leave out body, body_base64 and charset",
                            panel=OUT)


@cmdline.command(app, EXAMPLES)
@options.command(DumpOptions)
@cmdline.logging_options("warning")
def dump(
    doc_id: Optional[int] = typer.Argument(None, metavar="DOCID", show_default=False,
                                           help="The doc id to print."),
    *,
    chosen: dict[str, Any],
    log_level: int,
) -> None:
    """Print one stored document, or stream them all."""
    o = DumpOptions(**chosen)
    try:
        _refuse_conflicts(doc_id, o)
        keep = Filter(statuses=parse_statuses(o.status) if o.status else frozenset(),
                      hosts=parse_hosts(o.host) if o.host else frozenset(),
                      since=parse_time(o.since, "--since") if o.since else None,
                      until=parse_time(o.until, "--until") if o.until else None)
        names = fields_from(o.fields, body=not o.no_body, with_text=o.text)
    except (Usage, FilterError, FieldError) as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    # as the crawler stored it: http://h3.example is http://h3.example/
    url = None if o.url is None else normalize(o.url) or o.url
    try:
        store = _open(o)
    except StoreError as exc:
        raise _fail(str(exc)) from None
    out = sys.stdout.buffer
    try:
        docs = store.iter_docs() if o.all_docs else [_one(store, doc_id, url)]
        docs = (d for d in docs if keep.keeps(*d)) if keep.any else docs
        if o.warc is not None:
            _write_warc(store, docs, o.warc, out)
        elif o.jsonl:
            _write_jsonl(store, docs, names, out)
        else:
            meta, document = next(iter(docs))
            if o.as_json:
                _write_json(store, meta, document, names, out)
            elif o.headers:
                out.write(document[: meta.head_len])
            elif o.text:
                out.write(main_text(meta, document).encode("utf-8") + b"\n")
            else:
                out.write(document[meta.head_len :])
        out.flush()
    except NotFound as exc:
        raise _fail(str(exc)) from None
    except CorruptDocument as exc:
        raise _fail(f"CORRUPT: {exc}") from None
    except BrokenPipeError:  # `wreck-dump --all --jsonl | head`
        sys.stderr.close()
    finally:
        store.close()


def _refuse_conflicts(doc_id: int | None, o: DumpOptions) -> None:
    """Usage if the options contradict each other (or choose nothing)."""
    url, all_docs, text = o.url, o.all_docs, o.text
    if bool(o.data) == (o.manifest is not None):
        raise Usage("--data and --manifest: give one of them" if o.data else "give --data DIR or --manifest FILE")
    views = {"--headers": o.headers, "--body": o.body, "--json": o.as_json, "--jsonl": o.jsonl,
             "--warc": o.warc is not None}
    chosen = {"--fields": o.fields is not None, "--no-body": o.no_body}
    filters = {"--status": o.status, "--host": o.host, "--since": o.since, "--until": o.until}
    if doc_id is not None and doc_id < 0:
        raise Usage(f"DOCID {doc_id}: a doc id is 1 or more")
    which = [name for name, given in (("DOCID", doc_id is not None), ("--url", url is not None),
                                      ("--all", all_docs)) if given]
    if len(which) != 1:
        raise Usage(f"{' and '.join(which)}: give one of them" if which else "give a DOCID, --url URL or --all")
    given = [name for name, on in views.items() if on]
    if len(given) > 1:
        raise Usage(f"{' and '.join(given)}: give one of them")
    if text and given and given[0] not in ("--json", "--jsonl"):
        raise Usage(f"--text and {given[0]}: --text prints the main text, or adds it to --json or --jsonl")
    if all_docs and given and given[0] not in ("--jsonl", "--warc"):
        raise Usage(f"--all and {given[0]}: --all writes --jsonl or --warc FILE")
    if all_docs and not given:
        raise Usage("--all needs --jsonl or --warc FILE")
    json_options = [name for name, on in chosen.items() if on]
    if json_options and not (given and given[0] in ("--json", "--jsonl")):
        raise Usage(f"{json_options[0]} chooses the fields of --json or --jsonl: give one of them")
    filtering = [name for name, value in filters.items() if value is not None]
    if filtering and not all_docs:
        raise Usage(f"{filtering[0]} chooses among --all: give --all")


def _open(o: DumpOptions) -> ReadStore:
    """The store chosen: one --data, or several shards read as one."""
    dirs = [Path(d) for d in o.data] if o.data else stores_of(Path(o.manifest))
    return ReadStore(dirs[0]) if len(dirs) == 1 else open_stores(dirs)


def _one(store: ReadStore, doc_id: int | None, url: str | None) -> tuple[StoredDoc, bytes]:
    if url is not None:
        doc_id = store.current_doc_for_url(url)
        if doc_id is None:
            raise NotFound(f"no document stored for URL {url}")
    return store.get(doc_id)


def _write_json(store: ReadStore, meta: StoredDoc, document: bytes, names: tuple[str, ...], out: BinaryIO) -> None:
    line = record(meta, document, store.annotations(meta.doc_id), names)
    out.write(msgspec.json.format(msgspec.json.encode(line)) + b"\n")


def _write_jsonl(store: ReadStore, docs: Iterable[tuple[StoredDoc, bytes]], names: tuple[str, ...],
                 out: BinaryIO) -> None:
    enc = msgspec.json.Encoder()
    for meta, document in docs:
        out.write(enc.encode(record(meta, document, store.annotations(meta.doc_id), names)) + b"\n")


class _Chosen:
    """The store as write_warc reads it, its documents those chosen."""

    def __init__(self, store: ReadStore, docs: Iterable[tuple[StoredDoc, bytes]]) -> None:
        self._store, self._docs = store, docs

    def iter_docs(self) -> Iterator[tuple[StoredDoc, bytes]]:
        return iter(self._docs)

    def __getattr__(self, name: str) -> Any:  # meta_info, get, doc_ids_for_url: the store's
        return getattr(self._store, name)


def _write_warc(store: ReadStore, docs: Iterable[tuple[StoredDoc, bytes]], target: str, out: BinaryIO) -> None:
    if target == STDOUT:
        written, skipped = write_warc(_Chosen(store, docs), out, gzip=False)
        where = "standard output"
    else:
        path = Path(target)
        with open(path, "wb") as fh:
            written, skipped = write_warc(_Chosen(store, docs), fh, gzip=path.name.endswith(".gz"),
                                          filename=path.name)
        where = str(path)
    typer.echo(f"wrote {written} response records to {where} ({skipped} without an HTTP response skipped)", err=True)


def main() -> None:
    oneline.main(app, "wreck-dump")


if __name__ == "__main__":
    main()
