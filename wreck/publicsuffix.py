# The Public Suffix List, read through tldextract's bundled snapshot (never
# fetched: a crawl's rules do not change with the network). Shared by the
# urlserver's scope and partitions and by the spider's cookie rules
# (RFC 6265 5.3 step 5: a cookie's Domain may not be a public suffix). The
# snapshot takes ~40 ms to load, so it is loaded at the first question only.
"""psl_domain(host) and is_public_suffix(domain), by the Public Suffix List."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class _Snapshot:
    extract: Any = None  # tldextract.TLDExtract, made at the first question


_SNAPSHOT = _Snapshot()


def _extract(host: str, private: bool):
    if _SNAPSHOT.extract is None:
        # Imported here: it brings requests and urllib3, which a crawl in host
        # or any scope without a cookie never needs (issue 16).
        import tldextract

        _SNAPSHOT.extract = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)
    return _SNAPSHOT.extract(host, include_psl_private_domains=private)


def psl_domain(host: str, *, private: bool = False) -> str | None:
    """The registrable domain of `host` when the Public Suffix List knows its
    suffix (its ICANN section, and its private one if `private`); None for an
    IP literal or a name under a suffix it does not know."""
    parts = _extract(host, private)
    return f"{parts.domain}.{parts.suffix}" if parts.suffix and parts.domain else None


def is_public_suffix(domain: str) -> bool:
    """Whether `domain` (no leading dot) is itself a public suffix, by the
    whole list, private section included, as browsers' cookie rules read it
    (github.io, ltd.uk, com)."""
    parts = _extract(domain, True)
    return bool(parts.suffix) and not parts.domain and not parts.subdomain
