# Spiders send outlinks already normalised by wreck/urlnorm, but a spider
# is not trusted, so the urlserver must not take their word for it. Running
# normalize() on every link costs about 2 µs, most of the per-link budget;
# is_normal() is one anchored regex (about 0.25 µs) that accepts only URLs
# whose normal form is certainly themselves, and everything it does not
# accept goes through normalize() as before. It accepts, and nothing else:
#   - scheme http or https, lowercase;
#   - a host of lowercase ASCII labels (letters, digits, '-', '_') whose last
#     label starts with a letter (so WHATWG never reads it as an IPv4
#     number), without 'xn--' (punycode is validated by the slow path), or
#     a canonical dotted-quad IPv4 address;
#   - an optional port without leading zeros, not the scheme's default;
#   - a path that starts with '/' and has no segment starting with '.' (no
#     dot segments to remove), then an optional query; both made of RFC 3986
#     unreserved and sub-delim characters, ':', '@', '/', '?' and
#     percent-escapes in uppercase hex that do not encode an unreserved
#     character (normalize() would decode those);
#   - no fragment, no user:password, at most MAX_URL_LEN octets;
#   - no session id normalize() would strip: no ';NAME=' in the path and no
#     query parameter 'NAME=' (NAME a session name of wreck/urlnorm, in
#     any case; any 'sid=', where normalize() is stricter). Checked only at
#     ';', '?' and '&', so ordinary URLs cost nothing more.
# tests/test_urlserver_normal.py checks normalize(u) == u for every URL this
# accepts, over generated URLs.
"""is_normal(url): a cheap, conservative test that normalize(url) == url."""

from __future__ import annotations

import re

from wreck.protocol import limits
from wreck.urlnorm import normalize

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"(?:{_OCTET}\.){{3}}{_OCTET}"
_LABEL = r"(?!xn--)[a-z0-9_-]+"
_NAME = rf"(?:{_LABEL}\.)*(?!xn--)[a-z][a-z0-9_-]*"
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_NOT_DEFAULT = r"(?(s)(?!443/)|(?!80/))"  # https: not 443; http: not 80
# %XX in uppercase hex, except escapes of unreserved characters (- . 0-9 A-Z _ a-z ~).
_ESCAPE = r"%(?!2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])[0-9A-F]{2}"
_CHAR = r"A-Za-z0-9\-._~!$()*+,=:@"  # sub-delims but '&' and ';': checked below
# the first-letter class fails most parameter names before the case-blind alternation runs
_SESSION = r"(?=[JjPpAaSsCc])(?i:jsessionid|phpsessid|aspsessionid[a-z]*|sessionid|session_id|cfid|cftoken|sid)="
# Runs of plain characters are taken whole and never given back (possessive
# ++ and *+: the \Z after them decides), which halves the path's cost.
_PATH = rf"(?:[{_CHAR}&]++|/(?!\.)|;(?!{_SESSION})|{_ESCAPE})*+"
_QUERY = rf"(?!{_SESSION})(?:[{_CHAR};/?]++|&(?!{_SESSION})|{_ESCAPE})*+"
# Groups: 1 the origin, 3 the host name.
_NORMAL = re.compile(
    rf"(?=.{{1,{limits.MAX_URL_LEN}}}\Z)(http(?P<s>s)?://({_NAME}|{_IPV4})(?::{_NOT_DEFAULT}{_PORT})?)"
    rf"/(?!\.){_PATH}(?:\?{_QUERY})?\Z"
)

match_normal = _NORMAL.match
"""match_normal(url): a match (group 1 the origin, 3 the host name) only if
normalize(url) would return `url` unchanged; else None."""


def is_normal(url: str) -> bool:
    """True only if normalize(url) would return `url` unchanged."""
    return _NORMAL.match(url) is not None


def normal(url: str, base: str | None = None) -> str | None:
    """normalize(url, base), skipped when `url` is already in normal form."""
    return url if _NORMAL.match(url) is not None else normalize(url, base)
