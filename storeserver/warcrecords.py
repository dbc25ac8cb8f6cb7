# The WARC/1.1 records of one stored capture (warcio builds and digests them;
# docs/warc.md lists every record type and field beside Heritrix's).
#
# A capture with an HTTP response becomes, in this order:
#   request   the request as the spider sent it (when the spider kept it),
#             WARC-Concurrent-To the capture's main record;
#   response  the status line and headers (made consistent with the decoded
#             body, see warc_headers), the body, WARC-IP-Address and
#             WARC-Truncated ("length"/"time") when known; or
#   revisit   identical-payload-digest when the store's dedup marked the body
#             an exact duplicate of an earlier page (dedup.py), or
#             server-not-modified for a 304 to a recrawl; both name the
#             record they repeat (WARC-Refers-To, -Target-URI, -Date), which
#             pywb needs to replay them;
#   metadata  Heritrix's fields: "seed:" for a seed, else "via: URL" (the URL
#             it was first found on) and "hopsFromSeed: PATH" (lineage of
#             docs/protocol.txt 5.3, kept by the store with the document);
#             fetchTimeMs; one "outlink: URL L" per link found;
#             WARC-Concurrent-To the main record.
# A transaction that got no response (timeout, refused, reset) becomes a
# metadata record saying what was tried (the same seed/via/hopsFromSeed,
# fetchStatus, the address, the request if one was sent), so the WARC holds
# the whole fetch log. So does a
# URL the urlserver never let a spider connect for (a record-only
# transaction, docs/protocol.txt 5.3 nofetch=: its host's DNS failed for
# good, or its addresses are refused): the host, the urlserver's reason, each
# address refused, and that no connection was attempted.
#
# Record ids are derived (UUID 5) from the crawl and the doc id, so a revisit
# names its original without looking for it in earlier files, and writing a
# capture again (an export after the fact, a resumed writer) gives the same
# records.
"""records(capture) -> the WARC records of one stored document."""

from __future__ import annotations

import base64
import datetime
import hashlib
import io
import uuid
from typing import NamedTuple
from urllib.parse import urlsplit

from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date

from wreck.protocol import Specific

from . import layout as L

_RENAMED = ("content-encoding", "transfer-encoding")
ORIG = "X-Archive-Orig-"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
WARC_FIELDS = "application/warc-fields"
REQUEST_TYPE = "application/http; msgtype=request"
# Heritrix's hop type of a link found in a page (Hop.NAVLINK, 'L').
LINK_HOP = "L"
SEED_HOPS = "-"  # a seed's hop path in the store (docs/protocol.txt 5.3 hops=): written as Heritrix's "seed:"
# WARC-Protocol for the HTTP versions Heritrix marks (its response records
# carry h2 and h3 only); libcurl's status line names the version.
_PROTOCOLS = {"HTTP/2": "h2", "HTTP/3": "h3"}


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
    """The HTTP headers made consistent with a decoded body of body_len bytes.

    The spider decoded the body (Content-Encoding and chunking undone), so
    the original headers would misdescribe the payload. Following the
    web-archive convention (pywb's), each header that no longer holds is
    kept under an X-Archive-Orig- name, and Content-Length is set to the
    stored body's length."""
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


def payload_digest(body: bytes) -> str:
    """sha1 in base32, as warcio, Heritrix and pywb write WARC-Payload-Digest."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


class Original(NamedTuple):
    """The capture a revisit repeats."""

    doc_id: int
    url: str
    stored_at: float


class Capture(NamedTuple):
    """One stored document and what is known about it, ready to write."""

    meta: L.StoredDoc
    document: bytes
    fetch: L.FetchInfo | None = None
    duplicate_of: Original | None = None  # an earlier page with the same body (dedup)
    not_modified_of: Original | None = None  # a 304's earlier document of the URL


class RecordMaker:
    """Builds the records of captures of one crawl (one store)."""

    def __init__(self, crawl_key: str) -> None:
        self.builder = RecordBuilder(warc_version="1.1")
        self._ns = uuid.uuid5(uuid.NAMESPACE_URL, "wreck-crawl:" + crawl_key)

    def record_id(self, doc_id: int, kind: str) -> str:
        return f"<urn:uuid:{uuid.uuid5(self._ns, f'{doc_id}/{kind}')}>"

    def warcinfo(self, filename: str, fields: dict[str, str]):
        return self.builder.create_warcinfo_record(filename, fields)

    def records(self, c: Capture) -> list:
        """Every record of capture `c`, main record first after its request."""
        meta = c.meta
        date = iso_date(meta.stored_at)
        common = {"WARC-Date": date, "WARC-Wreck-Doc-Id": str(meta.doc_id)}
        if c.fetch is not None and c.fetch.ip:
            common["WARC-IP-Address"] = c.fetch.ip
        if meta.head_len == 0 or meta.http == 0:
            return self._failed(c, common)
        main_id = self.record_id(meta.doc_id, "main")
        out = []
        if c.fetch is not None and c.fetch.request:
            out.append(self._request(c, common, main_id))
        out.append(self._main(c, common, main_id))
        out.append(self._metadata(c, {**common, "WARC-Concurrent-To": main_id}, self._fields(c)))
        return out

    def _main(self, c: Capture, common: dict, main_id: str):
        meta = c.meta
        protocol, status, headers = parse_head(c.document[: meta.head_len])
        body = c.document[meta.head_len :]
        fields = {**common, "WARC-Record-ID": main_id}
        if meta.specific == Specific.NOT_MODIFIED or c.duplicate_of is not None:
            http = StatusAndHeaders(status, warc_headers(headers, len(body)), protocol=protocol)
            if c.duplicate_of is not None:
                fields["WARC-Profile"] = IDENTICAL_PROFILE
                fields["WARC-Payload-Digest"] = payload_digest(body)
                fields.update(self._refers(c.duplicate_of))
            else:
                fields["WARC-Profile"] = NOT_MODIFIED_PROFILE
                fields["WARC-Refers-To-Target-URI"] = meta.url
                if c.not_modified_of is not None:
                    fields.update(self._refers(c.not_modified_of))
            return self.builder.create_warc_record(meta.url, "revisit", http_headers=http, warc_headers_dict=fields)
        if c.fetch is not None and c.fetch.truncated:
            fields["WARC-Truncated"] = c.fetch.truncated
        if protocol in _PROTOCOLS:
            fields["WARC-Protocol"] = _PROTOCOLS[protocol]
        http = StatusAndHeaders(status, warc_headers(headers, len(body)), protocol=protocol)
        return self.builder.create_warc_record(
            meta.url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
            warc_headers_dict=fields,
        )  # fmt: skip

    def _refers(self, original: Original) -> dict[str, str]:
        return {"WARC-Refers-To": self.record_id(original.doc_id, "main"),
                "WARC-Refers-To-Target-URI": original.url, "WARC-Refers-To-Date": iso_date(original.stored_at)}

    def _request(self, c: Capture, common: dict, concurrent_to: str):
        request = c.fetch.request
        fields = {**common, "WARC-Record-ID": self.record_id(c.meta.doc_id, "request"),
                  "WARC-Concurrent-To": concurrent_to}
        return self.builder.create_warc_record(
            c.meta.url, "request", payload=io.BytesIO(request), length=len(request),
            warc_content_type=REQUEST_TYPE, warc_headers_dict=fields,
        )  # fmt: skip

    @staticmethod
    def _lineage(c: Capture) -> list[tuple[str, str]]:
        """Where the capture's URL was found, as Heritrix writes it: a lone
        "seed" label for a seed, else via and hopsFromSeed; nothing when the
        store does not know (robots.txt, a crawl before them)."""
        hops = c.fetch.hops if c.fetch is not None else ""
        if hops == SEED_HOPS:
            return [("seed", "")]
        out = [("via", c.fetch.via)] if hops and c.fetch.via else []
        return out + [("hopsFromSeed", hops)] if hops else out

    def _fields(self, c: Capture) -> list[tuple[str, str]]:
        """Heritrix's metadata fields that WRECK knows, in Heritrix's order."""
        out = [*self._lineage(c), ("fetchTimeMs", str(c.meta.ms))]
        if c.meta.new_url:
            out.append(("outlink", f"{c.meta.new_url} R"))  # Heritrix's hop type of a redirect
        if c.fetch is not None:
            out.extend(("outlink", f"{link} {LINK_HOP}") for link in c.fetch.outlinks)
        return out

    def _metadata(self, c: Capture, fields: dict, lines: list[tuple[str, str]]):
        # a field without a value is a lone label ("seed:"), as Heritrix's ANVL writes it
        body = "".join(f"{name}: {value}\r\n" if value else f"{name}:\r\n" for name, value in lines).encode("utf-8")
        fields = {**fields, "WARC-Record-ID": self.record_id(c.meta.doc_id, "metadata")}
        return self.builder.create_warc_record(
            c.meta.url, "metadata", payload=io.BytesIO(body), length=len(body),
            warc_content_type=WARC_FIELDS, warc_headers_dict=fields,
        )  # fmt: skip

    def _failed(self, c: Capture, common: dict) -> list:
        """A transaction without an HTTP response: what was tried, as metadata."""
        lines = [*self._lineage(c), ("fetchStatus", Specific(c.meta.specific).name), ("fetchTimeMs", str(c.meta.ms))]
        if c.fetch is not None and c.fetch.ip:
            lines.append(("ip", c.fetch.ip))
        if c.fetch is not None and (c.fetch.nofetch or c.fetch.refused):
            lines.append(("host", _host_of(c.meta.url)))
            if c.fetch.nofetch:
                lines.append(("reason", c.fetch.nofetch))
            lines.extend(("refusedAddress", ip) for ip in c.fetch.refused)
            lines.append(("connectionAttempted", "no"))
        meta_id = self.record_id(c.meta.doc_id, "metadata")
        out = []
        if c.fetch is not None and c.fetch.request:
            out.append(self._request(c, common, meta_id))
            lines.append(("requestSent", "yes"))
        out.append(self._metadata(c, common, lines))
        return out


def _host_of(url: str) -> str:
    """The host a URL names, as the urlserver looked it up ('' if none)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # a malformed IPv6 literal: the URL says what was tried
        return ""
