# The research view of a store: each stored capture as a Document with the
# metadata a researcher asks for first (URL, HTTP status, media type, fetch
# time, title, decoded main text, outlinks, payload digest), and a Crawl
# that iterates, filters and looks documents up by URL. Where the crawl
# found each URL (via, and its hop path from the seed) comes from what the
# spider kept for the archive (docs/storage.txt, fetch).
#
# Cheap fields come from the stored metadata; the title and the text are
# computed on first use (one HTML parse serves both), so filtering a large
# crawl by host or status decompresses nothing it skips. Text is decoded as
# the spider read the page when it extracted links (wreck/htmlcharset.py:
# BOM, HTTP charset, <meta> prescan) and reduced to its main content with
# resiliparse, exactly as `wreck-dump --text` prints it.
#
# Reading is safe while a crawl runs: every chunk of an iteration and every
# lookup is its own LMDB read transaction (storeserver/store.py), so a
# notebook never blocks the storeserver, and a new iteration sees every
# batch committed before it reached that point.
"""Documents of a store, with metadata and text, for notebooks and exports."""

from __future__ import annotations

import base64
import datetime
import hashlib
from collections.abc import Collection, Iterator
from functools import cached_property
from pathlib import Path

from wreck import htmlcharset
from wreck.mediatype import media_type
from wreck.protocol import Specific, http_code
from wreck.urlnorm import host_of, normalize

from .layout import FetchInfo, StoredDoc
from .store import ReadStore, StoreError

# Title and text come from a page's first MAX_PARSE_BYTES only: resiliparse's
# time grows with the page, and an export must not stall on one huge body
# (a store may hold bodies up to the crawl's --max-doc-size).
MAX_PARSE_BYTES = 4 * 1024 * 1024
_TEXT_TYPES = ("text/plain",)


def payload_digest(body: bytes) -> str:
    """`sha1:BASE32` of a body: the WARC-Payload-Digest and CDXJ `digest` form,
    so exports and indexes of the same crawl join on it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def _header(head: bytes, name: bytes) -> bytes | None:
    """The first value of header `name` (lowercase) in a stored header block."""
    for line in head.split(b"\n")[1:]:
        key, sep, value = line.partition(b":")
        if sep and key.strip().lower() == name:
            return value.strip()
    return None


class Document:
    """One stored capture. Metadata attributes are plain; `title`, `text`,
    `encoding`, `host` and `digest` are computed on first access."""

    def __init__(self, meta: StoredDoc, document: bytes, extra: dict, fetch: FetchInfo | None = None) -> None:
        self.meta = meta
        self.doc_id: int = meta.doc_id
        self.url: str = meta.url
        self.redirect: str | None = meta.new_url  # the Location followed, for a 3xx
        self.outcome: str = Specific(meta.specific).name  # OK, REDIRECT, TIMEOUT... (docs/protocol.txt)
        self.ok: bool = meta.success
        self.headers: bytes = document[: meta.head_len]  # status line, headers, blank line
        self.body: bytes = document[meta.head_len :]  # decoded: no Content-Encoding, no chunking
        raw_type = _header(self.headers, b"content-type") if meta.head_len else None
        self.content_type_header: str = raw_type.decode("latin-1") if raw_type else ""
        self.content_type: str = media_type(raw_type)  # 'text/html', '' when none was sent
        self.status: int = status_of(meta, self.headers)  # the HTTP status, 0 when none came
        self.fetched_at = datetime.datetime.fromtimestamp(meta.stored_at, datetime.timezone.utc)
        found = extra.get("outlinks")
        # The links the crawl kept for this page (an `outlinks` entry of the
        # store's per-document metadata), or None when the store keeps none.
        self.outlinks: list[str] | None = list(found) if isinstance(found, list) else None
        # The URL this one was first found on (None: a seed, or not known) and its
        # hop path from the seed, one letter per hop ('LL', 'LR'; '' for a seed,
        # None when not known: a crawl before them). docs/reading.md.
        self.via: str | None = fetch.via or None if fetch is not None else None
        hops = fetch.hops if fetch is not None else ""
        self.hops: str | None = "" if hops == "-" else hops or None

    def __repr__(self) -> str:
        return f"<Document {self.doc_id} {self.status} {self.content_type or '-'} {self.url}>"

    @cached_property
    def host(self) -> str:
        return host_of(self.url) or ""

    @cached_property
    def digest(self) -> str:
        """The body's `sha1:BASE32` digest (as in WARC and CDXJ)."""
        return payload_digest(self.body)

    @cached_property
    def _decoded(self) -> tuple[str, str]:
        return htmlcharset.decode(self.body[:MAX_PARSE_BYTES], self.content_type_header or None)

    @cached_property
    def encoding(self) -> str:
        """The codec the page is read with (WHATWG sniffing)."""
        return self._decoded[0]

    @cached_property
    def _tree(self):
        from resiliparse.parse.html import HTMLTree  # imported on first use: a notebook may never parse

        return HTMLTree.parse(self._decoded[1])

    def _is_html(self) -> bool:
        return bool(self.body) and self.content_type in ("", "text/html", "application/xhtml+xml")

    @cached_property
    def title(self) -> str:
        """The HTML <title>, whitespace collapsed; '' for other types."""
        if not self._is_html():
            return ""
        return " ".join((self._tree.title or "").split())

    @cached_property
    def text(self) -> str:
        """The main text (boilerplate removed) of an HTML page, a plain text
        body as is (both from the first MAX_PARSE_BYTES); '' for other types."""
        if not self.body:
            return ""
        if self.content_type in _TEXT_TYPES:
            return self._decoded[1]
        if not self._is_html():
            return ""
        from resiliparse.extract.html2text import extract_plain_text

        return extract_plain_text(self._tree, main_content=True)


    def as_dict(self, *, body: bool = False) -> dict:
        """The research fields as a dict (a Parquet row; pandas.DataFrame(d.as_dict() for d in ...))."""
        out = {"doc_id": self.doc_id, "url": self.url, "host": self.host, "status": self.status,
               "content_type": self.content_type, "fetched_at": self.fetched_at, "title": self.title,
               "text": self.text, "outlinks": self.outlinks, "digest": self.digest, "via": self.via,
               "hops": self.hops}  # fmt: skip
        if body:
            out["body"] = self.body
        return out


def status_of(meta: StoredDoc, head: bytes) -> int:
    """The literal HTTP status: from the stored enumeration, else the status line."""
    code = http_code(meta.http)
    if code is None and head:
        parts = head.split(b" ", 2)
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return code or 0


class Crawl:
    """A crawl's stored documents, read-only and safe while the crawl runs.

    Use as a context manager, or close() it. Iterating yields every capture
    that holds content (304 revisit records, which only confirm an earlier
    capture, are left out unless asked for) in doc order.
    """

    def __init__(self, store: ReadStore) -> None:
        self.store = store  # closed by close(): LMDB allows one open environment per path and process

    def __enter__(self) -> Crawl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def __iter__(self) -> Iterator[Document]:
        return self.documents()

    def _document(self, meta: StoredDoc, document: bytes) -> Document:
        return Document(meta, document, self.store.annotations(meta.doc_id).get("extra") or {},
                        self.store.fetch_info(meta.doc_id))

    def documents(self, *, status: int | Collection[int] | None = None, content_type: str | None = None,
                  host: str | None = None, revisits: bool = False, after: int = 0) -> Iterator[Document]:
        """Documents in doc order, filtered.

        status: an HTTP status or a collection of them (0: no response came);
        content_type: a media type ('text/html') or a prefix ending in '/' ('image/');
        host: a host name, matched exactly (case-insensitive);
        revisits: also yield the header-only records of 304 answers;
        after: only documents with a greater doc id (what came since a doc
        seen before, while the crawl runs).
        """
        wanted = {status} if isinstance(status, int) else set(status) if status is not None else None
        host = host.lower().rstrip(".") if host else None
        ctype = content_type.lower() if content_type else None
        for meta, _ in self.store.iter_docs(with_documents=False, after_id=after):
            if meta.specific == Specific.NOT_MODIFIED and not revisits:
                continue
            if host is not None and host_of(meta.url) != host:
                continue
            code = http_code(meta.http)
            if wanted is not None and code is not None and code not in wanted:
                continue
            doc = self.get_id(meta.doc_id)
            if wanted is not None and doc.status not in wanted:
                continue
            if ctype is not None and not (doc.content_type.startswith(ctype) if ctype.endswith("/")
                                          else doc.content_type == ctype):
                continue
            yield doc

    def get_id(self, doc_id: int) -> Document:
        """The document of `doc_id`; NotFound if there is none."""
        return self._document(*self.store.get(doc_id))

    def get(self, url: str) -> Document | None:
        """The current capture of `url` (normalised as the crawl normalises
        URLs: the latest that is not a 304 revisit), or None."""
        found = self.store.current_doc_for_url(normalize(url) or url)
        return None if found is None else self.get_id(found)

    def captures(self, url: str) -> list[Document]:
        """Every capture of `url`, oldest first (304 revisit records included)."""
        return [self.get_id(doc_id) for doc_id in self.store.doc_ids_for_url(normalize(url) or url)]


def open_crawl(data: Path) -> Crawl:
    """The documents of the store in `data` (a storeserver's or wreck-crawl's --data).

    Raises StoreError if there is no store there or it cannot be opened.
    """
    try:
        return Crawl(ReadStore(Path(data)))
    except OSError as exc:
        raise StoreError(f"cannot open the store in {data}: {exc}") from None
