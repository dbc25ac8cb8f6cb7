# The crawl settings a urlserver announces in its handshake (SET lines),
# as one typed, frozen object. Both the urlserver (to_wire) and the spider
# (from_wire) use this, so the two can never disagree on a key or a unit.
"""CrawlSettings: what a spider learns from the urlserver's handshake."""

from __future__ import annotations

import ipaddress
import re

import msgspec

from . import limits
from .errors import RemoteProtocolError, shown
from .handshake import is_crawl_id

REQUIRED = ("store", "timeout_update_ms", "timeout_req_ms", "max_doc_size", "user_agent")


class CrawlSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Settings every spider of a crawl runs with (docs/protocol.txt 5.1)."""

    store: tuple[str, ...]  # HOST:PORT of each store server; doc d goes to store d mod n
    timeout_update_ms: int  # send WORKING for in-flight transactions before this
    timeout_req_ms: int  # whole-transfer bound
    max_doc_size: int  # bytes of decoded body; larger transfers are aborted
    user_agent: str
    allow_net: tuple[str, ...] = ()  # CIDRs admitted beyond public unicast
    connect_timeout_ms: int = 10_000
    spider_id: str = ""
    # media types (type/subtype or type/*) a page fetch may receive; empty: any
    accept_type: tuple[str, ...] = ()
    # the crawl's identity (32 lowercase hex digits), sent to every store (6.1); empty: none announced
    crawl_id: str = ""
    # the crawl's urlserver partitions' control addresses in partition order, and
    # this urlserver's index among them (5.1, 5.10); empty: one urlserver
    partitions: tuple[str, ...] = ()
    partition: int = 0
    # a page's redirect to itself that sets a cookie is asked again with it (5.3.2); False: never
    cookies: bool = True
    # the urlserver hands a page out again with raw=1 after a DONE's again=raw (5.5); False: an
    # older urlserver, so the spider asks such a page again at once itself, as before
    raw_again: bool = False

    def to_wire(self) -> dict[str, str]:
        wire = {
            "store": ",".join(self.store),
            "timeout_update_ms": str(self.timeout_update_ms),
            "timeout_req_ms": str(self.timeout_req_ms),
            "max_doc_size": str(self.max_doc_size),
            "user_agent": self.user_agent,
            "allow_net": ",".join(self.allow_net),
            "connect_timeout_ms": str(self.connect_timeout_ms),
            "spider_id": self.spider_id,
        }
        if self.crawl_id:  # a urlserver always has one; a test or older server may not
            wire["crawl_id"] = self.crawl_id
        if self.accept_type:  # sent only when set, so older spiders' view is unchanged
            wire["accept_type"] = ",".join(self.accept_type)
        if self.partitions:  # sent only by a partitioned crawl's urlservers
            wire["partitions"] = ",".join(self.partitions)
            wire["partition"] = str(self.partition)
        if not self.cookies:  # sent only when off, so older spiders' view is unchanged
            wire["cookies"] = "0"
        if self.raw_again:  # sent only when on: absent, a spider keeps its older way
            wire["raw_again"] = "1"
        return wire

    @classmethod
    def from_wire(cls, values: dict[str, str]) -> CrawlSettings:
        """Typed settings from SET lines; unknown keys are ignored."""
        missing = [k for k in REQUIRED if k not in values]
        if missing:
            raise RemoteProtocolError(f"urlserver did not announce {', '.join(missing)}")
        store = tuple(s for s in values["store"].split(",") if s)
        for address in store:
            try:
                split_host_port(address)
            except ValueError as exc:
                raise RemoteProtocolError(f"store: {exc}") from None
        allow = tuple(s for s in values.get("allow_net", "").split(",") if s)
        for cidr in allow:
            try:
                ipaddress.ip_network(cidr)
            except ValueError:
                raise RemoteProtocolError(f"allow_net: {shown(cidr)} is not a CIDR") from None
        if not store:
            raise RemoteProtocolError("store: no store server announced")
        accept = tuple(t for t in values.get("accept_type", "").split(",") if t)
        for media in accept:
            if not is_media_range(media):
                raise RemoteProtocolError(f"accept_type: {shown(media)} is not type/subtype or type/*")
        crawl_id = values.get("crawl_id", "")
        if crawl_id and not is_crawl_id(crawl_id):
            raise RemoteProtocolError(f"crawl_id: {shown(crawl_id)} is not 32 lowercase hex digits")
        partitions = tuple(p for p in values.get("partitions", "").split(",") if p)
        for address in partitions:
            try:
                split_host_port(address)
            except ValueError as exc:
                raise RemoteProtocolError(f"partitions: {exc}") from None
        partition = values.get("partition", "0")
        if not (partition.isascii() and partition.isdigit()) or len(partition) > 4 or (
                partitions and int(partition) >= len(partitions)):
            raise RemoteProtocolError(f"partition: {shown(partition)} is not an index of partitions")
        cookies = values.get("cookies", "1")
        if cookies not in ("0", "1"):
            raise RemoteProtocolError(f"cookies: {shown(cookies)} is not 0 or 1")
        raw_again = values.get("raw_again", "0")
        if raw_again not in ("0", "1"):
            raise RemoteProtocolError(f"raw_again: {shown(raw_again)} is not 0 or 1")
        return cls(
            store=store,
            timeout_update_ms=_positive(values, "timeout_update_ms"),
            timeout_req_ms=_positive(values, "timeout_req_ms"),
            max_doc_size=min(_positive(values, "max_doc_size"), limits.MAX_DOC_LEN),
            user_agent=values["user_agent"],
            allow_net=allow,
            connect_timeout_ms=_positive(values, "connect_timeout_ms", 10_000),
            spider_id=values.get("spider_id", ""),
            accept_type=accept,
            crawl_id=crawl_id,
            partitions=partitions,
            partition=int(partition),
            cookies=cookies == "1",
            raw_again=raw_again == "1",
        )


_MEDIA_RANGE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)")


def is_media_range(text: str) -> bool:
    """A lowercase media type or `type/*`, without parameters (RFC 9110 8.3.1)."""
    return bool(_MEDIA_RANGE.fullmatch(text)) and len(text) <= 127


def _positive(values: dict[str, str], key: str, default: int | None = None) -> int:
    text = values.get(key)
    if text is None and default is not None:
        return default
    if not text or not (text.isascii() and text.isdigit()) or text[0] == "0" or len(text) > 12:
        raise RemoteProtocolError(f"{key} must be a positive whole number, got {shown(text)}")
    return int(text)


def split_host_port(address: str, *, listen: bool = False) -> tuple[str, int]:
    """Split HOST:PORT (IPv6 hosts in brackets); ValueError if malformed.

    Port 0 (any free port) makes sense only for an address to listen on.
    """
    host, sep, port = address.rpartition(":")
    lowest = 0 if listen else 1
    if not sep or not host or not (port.isascii() and port.isdigit()) or not lowest <= int(port) < 65536:
        raise ValueError(f"{address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


