# The one JSON schema of a stored document, as wreck-dump --jsonl and --json
# write it (docs/dump.md is its normative description): FIELDS, in order,
# every key on every record, null where a document has no value. A body is
# `body` (text) when the document is textual and decodes in its charset
# (wreck/htmlcharset.py: BOM, the Content-Type charset, a <meta> prescan, as
# the spider read it), else `body_base64`: both keys are always there, one of
# them null. referrer is the URL the document's URL was first found on (the
# fetch record's VIA, kept in the store's fetch database), truncated why its
# body is shorter than the server's (the record's TRUNCATED); depth is null: the
# store is told the hop path, not the urlserver's depth (docs/dump.md).
# Pure: a record is built from what the store read API returns.
"""record(meta, document, marks) -> the JSON-ready dict of FIELDS."""

from __future__ import annotations

import base64
import datetime

from wreck import htmlcharset
from wreck.protocol import Specific, http_code

from .layout import FetchInfo, StoredDoc
from .warc import parse_head

# Every field, in the order a record lists them (docs/dump.md). BODY_FIELDS
# are left out by --no-body; "text" (the page's main text, slow to extract)
# only comes with --text or when --fields names it.
FIELDS = (
    "doc_id", "url", "redirect_to", "success", "outcome", "status", "content_type", "depth", "referrer",
    "fetch_ms", "stored_at", "header_len", "body_len", "truncated", "stored_len", "headers", "charset", "body", "body_base64",
    "body_hash", "duplicate_of", "near_duplicate_of", "near_distance", "simhash", "extra", "text",
)  # fmt: skip
BODY_FIELDS = ("charset", "body", "body_base64")
FETCH_FIELDS = ("referrer", "truncated")  # read from the store's fetch database (ReadStore.fetch_info)
DEFAULT_FIELDS = tuple(f for f in FIELDS if f != "text")
# The duplicate marks and plugin metadata (ReadStore.annotations): null when a
# document has none (a store without dedup, a page no plugin annotated).
MARKS = ("body_hash", "duplicate_of", "near_duplicate_of", "near_distance", "simhash", "extra")
# Types whose body is text (any other, or a body that does not decode, is base64).
TEXTUAL = ("text/", "application/json", "application/xml", "application/xhtml", "+xml", "+json", "javascript")


class FieldError(ValueError):
    """--fields names a field the schema does not have."""


def fields_from(text: str | None, *, body: bool = True, with_text: bool = False) -> tuple[str, ...]:
    """The fields of a dump: `text` (--fields a,b,c) or the default ones,
    less the body's (--no-body), plus "text" (--text). FieldError if unknown."""
    if text is None:
        chosen = list(DEFAULT_FIELDS)
    else:
        chosen = [f.strip() for f in text.split(",") if f.strip()]
        unknown = [f for f in chosen if f not in FIELDS]
        if unknown:
            raise FieldError(f"no field {', '.join(unknown)}; the fields are {', '.join(FIELDS)}")
    if with_text and "text" not in chosen:
        chosen.append("text")
    return tuple(f for f in dict.fromkeys(chosen) if body or f not in BODY_FIELDS)


def status_code(meta: StoredDoc, document: bytes, _ctype: str | None = None) -> int | None:
    """The literal HTTP status: from the enumeration, else the status line;
    None without an HTTP response (a timeout, a refused connection)."""
    code = http_code(meta.http)
    if code is None and meta.head_len:
        parts = document[: meta.head_len].split(b" ", 2)
        code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return code or None


def content_type(meta: StoredDoc, document: bytes) -> str | None:
    """The Content-Type header's value, lowercased; None if absent."""
    if not meta.head_len:
        return None
    for name, value in parse_head(document[: meta.head_len])[2]:
        if name.lower() == "content-type":
            return value.lower()
    return None


def decoded_body(body: bytes, ctype: str | None) -> tuple[str | None, str | None]:
    """(codec, text) when the body is textual and decodes in its charset,
    else (None, None): the body is then written as base64."""
    if ctype is not None and not any(t in ctype for t in TEXTUAL):
        return None, None
    codec = htmlcharset.sniff(body, ctype)
    try:
        text = body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None, None
    return codec, text.removeprefix("\ufeff")


def main_text(meta: StoredDoc, document: bytes) -> str:
    """The page's main text (boilerplate removed); empty for non-HTML."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    body = document[meta.head_len :]
    if not body:
        return ""
    ctype = content_type(meta, document) or ""
    if ctype.startswith("text/plain"):
        return body.decode("utf-8", "replace")
    # decoded as the spider read it when extracting links (wreck/htmlcharset.py)
    tree = HTMLTree.parse(htmlcharset.decode(body, ctype)[1])
    return extract_plain_text(tree, main_content=True)


def record(meta: StoredDoc, document: bytes, marks: dict, fields: tuple[str, ...] = DEFAULT_FIELDS,
           fetch: FetchInfo | None = None) -> dict:
    """One document as a JSON-ready dict of `fields` (FIELDS' names), given
    its duplicate marks and plugin metadata (`marks`, ReadStore.annotations)
    and what the spider kept about its fetch (`fetch`, ReadStore.fetch_info:
    the referrer)."""
    ctype = content_type(meta, document)
    out: dict = {}
    for name in fields:
        if name in MARKS:
            out[name] = marks.get(name)
        elif name in BODY_FIELDS:
            if "body" not in out:
                body = document[meta.head_len :]
                codec, text = decoded_body(body, ctype)
                out.update(charset=codec, body=text,
                           body_base64=None if text is not None else base64.b64encode(body).decode("ascii"))
        elif name == "text":
            out[name] = main_text(meta, document)
        elif name == "referrer":
            out[name] = fetch.via or None if fetch is not None else None
        elif name == "truncated":
            out[name] = fetch.truncated or None if fetch is not None else None
        else:
            out[name] = _PLAIN[name](meta, document, ctype)
    return {name: out[name] for name in fields}


def _stored_at(meta: StoredDoc) -> str:
    stored = datetime.datetime.fromtimestamp(meta.stored_at, datetime.timezone.utc)
    return stored.isoformat().replace("+00:00", "Z")


# The fields read from the metadata and headers: (meta, document, content type) -> value.
_PLAIN = {
    "doc_id": lambda m, d, c: m.doc_id,
    "url": lambda m, d, c: m.url,
    "redirect_to": lambda m, d, c: m.new_url,
    "success": lambda m, d, c: m.success,
    "outcome": lambda m, d, c: Specific(m.specific).name,
    "status": status_code,
    "content_type": lambda m, d, c: c,
    "depth": lambda m, d, c: None,  # not in the store (docs/dump.md)
    "fetch_ms": lambda m, d, c: m.ms,
    "stored_at": lambda m, d, c: _stored_at(m),
    "header_len": lambda m, d, c: m.head_len,
    "body_len": lambda m, d, c: m.doc_len - m.head_len,
    "stored_len": lambda m, d, c: m.stored_len,
    "headers": lambda m, d, c: d[: m.head_len].decode("iso-8859-1") if m.head_len else None,
}
assert set(FIELDS) == {*_PLAIN, *MARKS, *BODY_FIELDS, *FETCH_FIELDS, "text"}, "every field is built"
