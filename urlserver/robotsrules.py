# One robots.txt body, parsed once for the crawler's product token, then
# asked per URL. It follows RFC 9309 as Google's reference parser reads it;
# tests/urlserver/data/google_robotstxt_suite.json holds Google's 145
# reference cases and tests/urlserver/test_robots_suite.py runs every one
# through this module.
#
# Parsing works on bytes, line by line (LF, CR or CRLF):
# - a UTF-8 byte-order mark at the start, whole or cut short, is skipped;
# - at most MAX_PARSED bytes are read (RFC 9309 2.5), and of each line only
#   its first MAX_LINE bytes (and none after a NUL), so one huge line cannot
#   hide the rest;
# - `#` starts a comment; a line is `key: value`, or `key value` when the
#   colon is forgotten; keys are case-insensitive and common misspellings
#   are accepted (`useragent`, `disalow`, `site-map`...);
# - a group is a run of User-agent lines and the rules after it; only an
#   Allow or Disallow line ends the run of User-agent lines, so Sitemap,
#   Crawl-delay and unknown lines between two User-agent lines do not split
#   a group (RFC 9309 2.2.4: other records must not interfere);
# - a User-agent value is compared by its product token, the leading run of
#   letters, `_` and `-` (`wreck/1.0` and `WRECK bot` both name `wreck`,
#   RFC 9309 2.2.1), case-insensitively; `*` alone names every crawler;
# - Allow/Disallow values are %-encoded once here (bytes outside ASCII as
#   %XX, %xx written %XX), RFC 9309 2.2.2; URLs are compared as given, so the
#   caller passes them %-encoded, as the urlserver's normalised URLs are.
#   An Allow's escapes of unreserved characters are kept (`Allow: /%62az`
#   does not allow `/baz`): the reference cases expect that, where
#   RFC 9309 2.2.2 would decode them. A Disallow's are decoded, as RFC
#   9309 2.2.2 says: the urlserver's URLs never hold one (docs/urls.md,
#   section 3), so `Disallow: /%7Ejoe/` kept as written would never match
#   the `/~joe/` WRECK asks; the difference errs on the site's side. For the
#   same reason a rule's characters that the URL Standard escapes (and so
#   WRECK's URLs never hold raw) are escaped: a blank, `"`, `<`, `>`, and in
#   the path `` ` ``, `{`, `}`, `^`, in the query `'` (`Disallow: /my
#   folder/` refuses `/my%20folder/`).
# Only the groups naming our token are kept (or, if none does, those of
# `*`), as rules sorted longest first, Allow before Disallow at equal length:
# the first rule that matches a path decides (RFC 9309 2.2.2, the longest
# match wins, Allow on a tie). `*` matches any run of characters and a final
# `$` the end of the path; rules are split at `*` into literal pieces found
# with str.find, so no pattern can make a match backtrack.
"""Parse a robots.txt body once; answer allowed(url), crawl_delay() and sitemaps()."""

from __future__ import annotations

import math
import re

MAX_PARSED = 500 * 1024  # RFC 9309 2.5: parse at least the first 500 KiB
MAX_LINE = 2083 * 8 - 1  # bytes read of one line; the reference parser's buffer (16,664 with its NUL)

_BOM = b"\xef\xbb\xbf"

# Key prefixes, lower-case, as the reference parser accepts them (a key is
# the directive if it starts with one of these).
_USER_AGENT = (b"user-agent", b"useragent", b"user agent")
_ALLOW = (b"allow",)
_DISALLOW = (b"disallow", b"dissallow", b"dissalow", b"disalow", b"diasllow", b"disallaw")
_SITEMAP = (b"sitemap", b"site-map")
_CRAWL_DELAY = (b"crawl-delay",)

_PRODUCT_TOKEN = re.compile(rb"[A-Za-z_-]*")
_PERCENT_HEX = re.compile(rb"%[0-9A-Fa-f]{2}")
_NON_ASCII = re.compile(rb"[\x80-\xff]")
# What the URL Standard percent-encodes in a path and in a query (its path and
# special-query percent-encode sets, printable ASCII only; `#` starts a comment)
_PATH_ESCAPED = re.compile(rb'[ "<>`{}^]')
_QUERY_ESCAPED = re.compile(rb"[ \"<>']")
_URL_ESCAPED = re.compile(rb"[ \"<>`{}^']")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")  # RFC 3986 2.3
_PATH_START = re.compile(r"[/?;]")
PREFIX = 4  # characters of a rule's first piece it is filed under (allowed())


def strip_bom(body: bytes) -> bytes:
    """`body` without a leading UTF-8 byte-order mark, whole or its first one
    or two bytes (Google's parser skips those too)."""
    skip = 0
    while skip < len(_BOM) and body[skip : skip + 1] == _BOM[skip : skip + 1]:
        skip += 1
    return body[skip:]


class RobotsTxt:
    """The rules of one robots.txt for one crawler product token.

    `body` is the robots.txt as fetched (bytes) or decoded as UTF-8 (str);
    `token` is the crawler's product token (letters, `_`, `-`), e.g. "wreck".
    `directives` and `unknown` count the lines read as a directive and the
    key-value lines with any other key, for logs and tests.
    """

    __slots__ = ("_short", "_by_prefix", "_crawl_delay", "_sitemaps", "directives", "unknown")

    def __init__(self, body: bytes | str, token: str) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8", "replace")
        body = strip_bom(body[:MAX_PARSED])
        self._sitemaps: list[str] = []
        self.directives = 0
        self.unknown = 0
        self._parse(body, token.lower().encode("ascii", "replace"))

    def _parse(self, body: bytes, token: bytes) -> None:
        # Two scopes, as in RFC 9309 2.2.1: rules of groups naming our token
        # ("specific"), and rules of `*` groups ("any"), used only if no group
        # names our token. A group naming both is ours.
        rules: dict[bool, list[tuple[bytes, bool]]] = {True: [], False: []}
        delays: dict[bool, float] = {}
        in_ours = in_any = False  # the current group names our token / `*`
        after_rule = False  # a rule was read since the last User-agent line
        named_ours = False  # some group names our token
        has_nul = b"\x00" in body
        for line in body.splitlines():
            if has_nul:  # the reference parser reads a line up to a NUL byte
                line = line.partition(b"\x00")[0]
            key, value = _key_value(line[:MAX_LINE])
            if key is None:
                continue
            key = key.lower()
            if key.startswith(_USER_AGENT):
                self.directives += 1
                if after_rule:  # a new group starts
                    in_ours = in_any = after_rule = False
                if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
                    in_any = True
                elif _PRODUCT_TOKEN.match(value).group().lower() == token:
                    in_ours = named_ours = True
            elif key.startswith(_ALLOW) or key.startswith(_DISALLOW):
                self.directives += 1
                if in_ours or in_any:
                    after_rule = True
                    allow = key.startswith(_ALLOW)
                    rules[in_ours].append((_escape(value, decode_unreserved=not allow), allow))
            elif key.startswith(_SITEMAP):
                self.directives += 1
                self._sitemaps.append(value.decode("utf-8", "replace"))
            elif key.startswith(_CRAWL_DELAY):
                self.directives += 1
                delay = _seconds(value)
                if (in_ours or in_any) and delay is not None:
                    # Two delays for one scope: the larger, the polite reading.
                    delays[in_ours] = max(delays.get(in_ours, 0.0), delay)
            else:
                self.unknown += 1
        # A rule can match only paths that start with its first piece, so
        # rules whose first piece is at least PREFIX characters long are
        # filed under those characters and a path is checked against one
        # file and the short rules only.
        self._short: list[_Rule] = []
        self._by_prefix: dict[str, list[_Rule]] = {}
        for rule in _compile(rules[named_ours]):
            first = rule[2]
            if len(first) < PREFIX:
                self._short.append(rule)
            else:
                self._by_prefix.setdefault(first[:PREFIX], []).append(rule)
        self._crawl_delay = delays.get(named_ours, 0.0)

    def allowed(self, url: str) -> bool:
        """May the crawler fetch `url` (absolute, %-encoded)?"""
        path = path_of(url)
        best = _first_match(self._short, path)
        filed = self._by_prefix.get(path[:PREFIX])
        if filed:
            other = _first_match(filed, path)
            if best is None or other is not None and other[:2] > best[:2]:  # longer, or Allow on a tie
                best = other
        return True if best is None else best[1]

    def crawl_delay(self) -> float:
        """Seconds between fetches asked of the crawler, 0.0 if none."""
        return self._crawl_delay

    def sitemaps(self) -> list[str]:
        """The Sitemap: URLs of the robots.txt (any group), as written."""
        return list(self._sitemaps)


def _key_value(line: bytes) -> tuple[bytes | None, bytes]:
    """A line's key and value, or (None, b"") if it has none."""
    hash_at = line.find(b"#")
    if hash_at >= 0:
        line = line[:hash_at]
    line = line.strip()
    sep = line.find(b":")
    if sep < 0:
        # The colon forgotten: `disallow /x` is read as `disallow: /x`, but
        # only if the line is exactly two words.
        words = line.split(None, 1)
        if len(words) != 2 or len(words[1].split(None, 1)) != 1:
            return None, b""
        return words[0], words[1]
    key = line[:sep].strip()
    if not key:
        return None, b""
    return key, line[sep + 1 :].strip()


def _escape(pattern: bytes, *, decode_unreserved: bool = False) -> bytes:
    """RFC 9309 2.2.2: non-ASCII octets %-encoded, and the characters the
    URL Standard encodes; existing %xx in upper case (or, with
    `decode_unreserved`, decoded when they name an unreserved character:
    `%7E` is `~`)."""
    if b"%" in pattern:
        pattern = _PERCENT_HEX.sub(_unreserved if decode_unreserved else _upper, pattern)
    if not pattern.isascii():
        pattern = _NON_ASCII.sub(lambda m: b"%%%02X" % m.group()[0], pattern)
    if _URL_ESCAPED.search(pattern):
        path, mark, query = pattern.partition(b"?")
        pattern = _PATH_ESCAPED.sub(_escaped, path) + mark + _QUERY_ESCAPED.sub(_escaped, query)
    return pattern


def _escaped(char: re.Match[bytes]) -> bytes:
    return b"%%%02X" % char.group()[0]


def _upper(escape: re.Match[bytes]) -> bytes:
    return escape.group().upper()


def _unreserved(escape: re.Match[bytes]) -> bytes:
    octet = int(escape.group()[1:], 16)
    return bytes((octet,)) if octet in _UNRESERVED else escape.group().upper()


def _seconds(value: bytes) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


# (length, allow, first piece, the pieces after each `*`, ends with `$`,
# the longest of those pieces: a path without it is passed over at once)
_Rule = tuple[int, bool, str, tuple[str, ...], bool, str]


def _compile(rules: list[tuple[bytes, bool]]) -> list[_Rule]:
    """The rules, longest first and Allow before Disallow at equal length: the first match decides."""
    out = []
    for pattern, allow in rules:
        if not pattern:
            continue  # an empty rule matches at length 0, which decides nothing
        patterns = [pattern]
        slash = pattern.rfind(b"/")
        if allow and pattern[slash:].startswith(b"/index.htm"):
            # Allowing /d/index.html allows /d/ too (the reference parser's reading).
            patterns.append(pattern[: slash + 1] + b"$")
        for p in patterns:
            text = p.decode("ascii")
            anchored = text.endswith("$")
            first, *rest = (text[:-1] if anchored else text).split("*")
            out.append((len(text), allow, first, tuple(rest), anchored, max(rest, key=len, default="")))
    out.sort(key=lambda rule: (-rule[0], not rule[1]))
    return out


def _first_match(rules: list[_Rule], path: str) -> _Rule | None:
    """The first of `rules` (sorted longest first) that matches `path`."""
    for rule in rules:
        _length, _allow, first, rest, anchored, needed = rule
        if not path.startswith(first) or needed not in path:
            continue
        if rest:
            if _rest_matches(path, len(first), rest, anchored):
                return rule
        elif not anchored or len(path) == len(first):
            return rule
    return None


def _rest_matches(path: str, pos: int, rest: tuple[str, ...], anchored: bool) -> bool:
    """Do the pieces after the first `*` follow in `path` from `pos`?

    Finding each piece leftmost is enough: a match exists if and only if
    the leftmost one does. With `$`, the last piece must end the path.
    """
    for piece in rest[:-1]:
        found = path.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    last = rest[-1]
    if anchored:
        return path.endswith(last) and len(path) - len(last) >= pos
    return path.find(last, pos) >= 0


def path_of(url: str) -> str:
    """The path, params and query of `url`, "/" if empty; the fragment dropped."""
    start = 2 if url.startswith("//") else 0
    scheme_end = url.find("://", start)
    early = _PATH_START.search(url, start)
    if scheme_end >= 0 and not (early and early.start() < scheme_end):
        after_host = _PATH_START.search(url, scheme_end + 3)
    else:
        after_host = _PATH_START.search(url, start)
    if after_host is None:
        return "/"
    begin = after_host.start()
    hash_at = url.find("#", start)
    if 0 <= hash_at < begin:
        return "/"
    path = url[begin : hash_at if hash_at >= 0 else len(url)]
    return path if path[0] == "/" else "/" + path
