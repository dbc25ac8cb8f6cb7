# TEMPORARY stand-in for the spider branch's shared URL normaliser, with the
# same API; replaced by the spider's version when it lands. Lower-cases the
# scheme and host (IDNA-encodes non-ASCII hosts), drops the fragment and the
# default port, keeps path and query, accepts http and https only.
"""normalize(url, base=None) -> canonical URL or None (temporary version)."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit, urlunsplit

_DEFAULT_PORT = {"http": 80, "https": 443}


def normalize(url: str, base: str | None = None) -> str | None:
    """The canonical form of `url` (resolved against `base`), or None if unusable."""
    try:
        if base is not None:
            url = urljoin(base, url.strip())
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORT:
            return None
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host.lower()
    except UnicodeError:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORT[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    if not (path + parts.query).isascii() or " " in path + parts.query:
        from urllib.parse import quote

        path = quote(path, safe="/%:@!$&'()*+,;=-._~")
        query = quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    else:
        query = parts.query
    return urlunsplit((scheme, netloc, path, query, ""))
