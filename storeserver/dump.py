# `wreck-dump`: read the store, safely while a storeserver writes to it
# (LMDB read transactions never block the writer).
#
#   wreck-dump DOCID --data DIR [--headers | --body | --text | --json]
#   wreck-dump --url URL --data DIR [...]   (the URL's current doc: the latest
#                                            that is not a 304 revisit record;
#                                            URL normalised as the crawler does)
#   wreck-dump --all --jsonl --data DIR     (one JSON object per doc, stdout)
#   wreck-dump --all --warc FILE --data DIR (WARC/1.1; FILE.gz: gzipped; -: stdout)
#   wreck-dump --all --warc FILE --since-last-export --data DIR
#                                           (only what was committed since the
#                                            last such export; kept in the store)
#   wreck-dump --all --parquet FILE [--bodies] (one row per document, docs/reading.md)
#   wreck-dump --all --wacz FILE --data DIR (WACZ 1.2: the WARC export, its CDXJ, pages)
#   wreck-dump --wacz FILE --from-warc-dir DIR (WACZ 1.2 of the closed files
#                                            storeserver --warc-dir wrote; no --data)
#   wreck-dump --cdxj WARC [--cdxj WARC...] (each WARC's CDXJ index, written beside it)
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
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, Optional

import msgspec
import typer

from wreck import cmdline, oneline, options
from wreck.options import setting
from wreck.urlnorm import normalize

from .compress import CorruptDocument
from .documents import Crawl
from .dumpfilter import Filter, FilterError, parse_hosts, parse_statuses, parse_time
from .dumprecord import FETCH_FIELDS, FieldError, fields_from, main_text, record
from .layout import StoredDoc
from .reader import open_stores, stores_of
from .store import NotFound, ReadStore, StoreError
from .layout import META_EXPORTED
from .store import record_position
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
    ("The closed WARC files of a --warc-dir crawl as one WACZ", "wreck-dump --wacz crawl.wacz --from-warc-dir warcs"),
    ("A crawl sharded over three stores, as one", "wreck-dump --manifest frontier/crawl.json --all --jsonl"),
)
ALL_VIEWS = ("--jsonl", "--warc", "--parquet", "--wacz")  # what --all writes
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
                                    repeatable=True, metavar="DIR", default_help="required but with --cdxj", panel=IN)
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
    warc: str | None = setting(None, help="Write WARC/1.1 records (request, response, revisit, metadata; "
                               "docs/warc.md) to FILE (FILE.gz: gzipped; -: standard output)", metavar="FILE",
                               panel=OUT)
    since_last_export: bool = setting(False, help="With --all --warc: only the documents committed since the last "
                                      "export made with this flag (the store keeps where it ended)", panel=OUT)
    operator: str = setting("", help="With --warc: who runs the crawl, with a contact (warcinfo's operator)",
                            metavar="TEXT", default_help="none", panel=OUT)
    crawl_name: str = setting("", help="With --warc: the crawl's name (warcinfo's isPartOf); with --from-warc-dir: the package's title", metavar="NAME",
                              default_help="none", panel=OUT)
    parquet: str | None = setting(None, help="With --all: one row per document to FILE, Parquet (docs/reading.md)",
                                  metavar="FILE", panel=OUT)
    bodies: bool = setting(False, help="With --parquet: add each body as a binary column", panel=OUT)
    wacz: str | None = setting(None, help="With --all: a WACZ 1.2 package to FILE (WARC, CDXJ index, pages, "
                               "datapackage.json; docs/archives.md)", metavar="FILE", panel=OUT)
    from_warc_dir: str | None = setting(None, help="With --wacz: package the closed WARC files a crawl wrote "
                                        "with --warc-dir DIR, as they are (a NAME.open file, still being "
                                        "written, is left out and named); no --data needed", metavar="DIR",
                                        panel=IN)
    cdxj: tuple[str, ...] = setting((), repeatable=True, help="Write the CDXJ index (pywb's format, sorted) of this WARC file beside "
                                    "it; repeatable; no --data needed", metavar="WARC", default_help="none", panel=OUT)
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
    if o.cdxj:
        return _write_cdxj(o.cdxj)
    if o.from_warc_dir is not None:
        return _write_dir_wacz(doc_id, o)
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
        if o.wacz is not None:
            from .wacz import write_store_wacz  # loads only for this export

            captures, pages = write_store_wacz(Crawl(store), Path(o.wacz))
            typer.echo(f"wrote {o.wacz}: {captures} captures indexed, {pages} pages", err=True)
        elif o.parquet is not None:
            from .parquet import write_parquet  # pyarrow loads only for this export

            rows = write_parquet(Crawl(store), Path(o.parquet), bodies=o.bodies)
            typer.echo(f"wrote {rows} rows to {o.parquet}", err=True)
        elif o.warc is not None:
            whole = o.all_docs and not keep.any
            upto = _write_warc(store, None if whole else docs, o, out)
            if o.since_last_export:
                store.close()  # one environment per path and process: the reader goes first
                record_position(Path(o.data[0]), META_EXPORTED, upto)
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
    except OSError as exc:  # a full disk, /dev/full, a directory that cannot be written
        _quiet_stdout()
        target = next((f for f in (o.wacz, o.parquet, o.warc) if f not in (None, STDOUT)), "standard output")
        raise _fail(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        store.close()


def _quiet_stdout() -> None:
    """Point standard output at /dev/null: what it still buffers would
    fail again at exit, with a traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _refuse_conflicts(doc_id: int | None, o: DumpOptions) -> None:
    """Usage if the options contradict each other (or choose nothing)."""
    url, all_docs, text = o.url, o.all_docs, o.text
    if bool(o.data) == (o.manifest is not None):
        raise Usage("--data and --manifest: give one of them" if o.data else "give --data DIR or --manifest FILE")
    views = {"--headers": o.headers, "--body": o.body, "--json": o.as_json, "--jsonl": o.jsonl,
             "--warc": o.warc is not None, "--parquet": o.parquet is not None, "--wacz": o.wacz is not None}
    chosen = {"--fields": o.fields is not None, "--no-body": o.no_body}
    if o.since_last_export and (len(o.data) > 1 or o.manifest is not None):
        raise Usage("--since-last-export keeps its place in one store: export each shard with its own --data")
    if o.since_last_export and not (all_docs and o.warc is not None):
        raise Usage("--since-last-export chooses what --all --warc FILE writes: give both")
    if (o.operator or o.crawl_name) and o.warc is None and o.wacz is None:
        raise Usage("--operator and --crawl-name go into a WARC's warcinfo: give --warc FILE")
    if o.bodies and o.parquet is None:
        raise Usage("--bodies adds the bodies to --parquet FILE: give it")
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
    if all_docs and given and given[0] not in ALL_VIEWS:
        raise Usage(f"--all and {given[0]}: --all writes --jsonl, --warc FILE, --parquet FILE or --wacz FILE")
    if all_docs and not given:
        raise Usage("--all needs --jsonl, --warc FILE, --parquet FILE or --wacz FILE")
    whole = [name for name in ("--parquet", "--wacz") if name in given]
    if whole and not all_docs:
        raise Usage(f"{whole[0]} exports the whole store: give --all")
    _refuse_special(o.parquet, "--parquet")
    _refuse_special(o.wacz, "--wacz")
    json_options = [name for name, on in chosen.items() if on]
    if json_options and not (given and given[0] in ("--json", "--jsonl")):
        raise Usage(f"{json_options[0]} chooses the fields of --json or --jsonl: give one of them")
    filtering = [name for name, value in filters.items() if value is not None]
    if filtering and not all_docs:
        raise Usage(f"{filtering[0]} chooses among --all: give --all")
    if filtering and o.since_last_export:
        raise Usage(f"{filtering[0]} and --since-last-export: an incremental export takes every new document")
    if filtering and whole:
        raise Usage(f"{filtering[0]} and {whole[0]}: {whole[0]} exports the whole store")


def _refuse_special(path: str | None, flag: str) -> None:
    """Usage if `path` is a device, a FIFO or a directory: --parquet and
    --wacz write FILE.part and rename it over FILE, which would replace
    /dev/full or /dev/stdout with a plain file."""
    if path is not None and os.path.lexists(path) and not os.path.isfile(path):
        raise Usage(f"{flag} {path} is not a regular file (the export is written beside it, then renamed over it): "
                    f"give a file path")


def _write_cdxj(warcs: tuple[str, ...]) -> None:
    from .cdxj import CdxjError, index_beside  # cdxj-indexer loads only for this

    for path in warcs:
        try:
            typer.echo(f"wrote {index_beside(Path(path))}", err=True)
        except (CdxjError, OSError) as exc:
            raise _fail(str(exc)) from None


def _write_dir_wacz(doc_id: int | None, o: DumpOptions) -> None:
    from .wacz import NoWarcFiles, write_dir_wacz  # loads only for this export

    others = [name for name, given in (("DOCID", doc_id is not None), ("--data", o.data), ("--manifest", o.manifest),
                                       ("--url", o.url), ("--all", o.all_docs), ("--jsonl", o.jsonl), ("--warc", o.warc),
                                       ("--parquet", o.parquet), ("--json", o.as_json)) if given]  # fmt: skip
    if o.wacz is None:
        raise _fail("--from-warc-dir DIR packages that directory's WARC files: give --wacz FILE", EXIT_USAGE)
    try:
        _refuse_special(o.wacz, "--wacz")
    except Usage as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    if others:
        raise _fail(f"--from-warc-dir and {others[0]}: the package is made of the directory's files alone", EXIT_USAGE)
    try:
        captures, pages, left = write_dir_wacz(Path(o.from_warc_dir), Path(o.wacz), title=o.crawl_name)
    except (NoWarcFiles, OSError) as exc:
        raise _fail(str(exc)) from None
    for path in left:
        typer.echo(f"left out {path.name}: not closed (still being written, or left by a kill -9; the store "
                   "closes it at --warc-size or when it stops)", err=True)
    typer.echo(f"wrote {o.wacz}: {captures} captures indexed, {pages} pages", err=True)


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
    line = record(meta, document, store.annotations(meta.doc_id), names, _fetch(store, meta, names))
    out.write(msgspec.json.format(msgspec.json.encode(line)) + b"\n")


def _write_jsonl(store: ReadStore, docs: Iterable[tuple[StoredDoc, bytes]], names: tuple[str, ...],
                 out: BinaryIO) -> None:
    enc = msgspec.json.Encoder()
    for meta, document in docs:
        out.write(enc.encode(record(meta, document, store.annotations(meta.doc_id), names,
                                    _fetch(store, meta, names))) + b"\n")


def _fetch(store: ReadStore, meta: StoredDoc, names: tuple[str, ...]):
    """What the spider kept about the fetch, read only when a field needs it (referrer, truncated)."""
    return store.fetch_info(meta.doc_id) if any(name in names for name in FETCH_FIELDS) else None


def _write_warc(store: ReadStore, docs: Iterable[tuple[StoredDoc, bytes]] | None, o: DumpOptions,
                out: BinaryIO) -> int:
    """Write the chosen documents (None: the whole store, or what is new with
    --since-last-export) as WARC; returns the journal sequence written up to."""
    after, upto = (store.position(META_EXPORTED), store.last_seq()) if o.since_last_export else (0, None)
    chosen = None if docs is None else (meta.doc_id for meta, _ in docs)
    fields = {"operator": o.operator, "is_part_of": o.crawl_name, "after": after, "upto": upto, "doc_ids": chosen}
    if o.warc == STDOUT:
        counts = write_warc(store, out, gzip=False, **fields)
        where = "standard output"
    else:
        path = Path(o.warc)
        with open(path, "wb") as fh:
            counts = write_warc(store, fh, gzip=path.name.endswith(".gz"), filename=path.name, **fields)
        where = str(path)
    typer.echo(f"wrote {counts.summary()} to {where}", err=True)
    return upto or 0


def main() -> None:
    oneline.main(app, "wreck-dump")


if __name__ == "__main__":
    main()
