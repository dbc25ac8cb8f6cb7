# URL normalisation shared by the spider (outlinks, redirect targets) and the
# urlserver (seeds, dedup keys), so both agree on what "the same URL" is.
#
# Parsing and resolving follow the WHATWG URL Standard, as browsers do, via
# ada-url (a C++ parser): scheme and host lowercased, IDNA to punycode, IPv4
# forms canonicalised, default port dropped, dot segments removed, whitespace
# stripped, non-ASCII and unsafe bytes percent-encoded. On top of that this
# module applies what WHATWG leaves alone but a crawler's dedup needs
# (RFC 3986 6.2.2): percent-escapes in uppercase hex, escapes of unreserved
# characters decoded; and it drops the fragment and any user:password.
#
# It also strips session ids, as Heritrix (StripSessionIDs,
# StripSessionCFIDs) and Nutch (regex-normalize) do: a server that puts a
# fresh session id in every link otherwise makes one page an endless
# series of new URLs (a spider trap), and the page is the same without it
# (servlet containers, PHP and ColdFusion fall back to a new session).
# Removed: path parameters ';NAME=value' and query parameters 'NAME=value'
# whose NAME is, in any case, jsessionid, phpsessid, aspsessionid...,
# sessionid, session_id, cfid or cftoken; and 'sid' only with a value of
# 32 or more letters and digits (a short 'sid' is often a real id).
# Pure: no I/O, no state.
"""normalize(url, base) -> canonical http(s) URL text, or None."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable

import ada_url

from wreck.protocol import limits

SCHEMES = ("http://", "https://")

# RFC 3986 2.3: these never need an escape, so %41 and A are the same URL.
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
# A cheap test that a URL may hold a session id (then _strip_sessions runs).
_SESSION_HINT = re.compile(r"(?i)ssion|sessid|[;?&](?:sid|cfid|cftoken)=")
_SESSION_NAME = r"(?:jsessionid|phpsessid|aspsessionid[a-z]*|sessionid|session_id|cfid|cftoken)"
_QUERY_SESSION = re.compile(rf"(?i){_SESSION_NAME}=")
_PATH_SESSION = re.compile(rf"(?i);{_SESSION_NAME}=[^/;?]*")
_TOKEN = re.compile(r"[0-9A-Za-z]{32,}")
# The wire carries URLs as printable ASCII tokens without spaces.
_PRINTABLE = bytes(range(0x21, 0x7F))


def _escape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else "%" + match.group(1).upper()


# An absolute http(s) URL already in its normal form is its own normal form
# (plus '/' for an empty path): proved by the string alone, without ada-url's
# parse (issue 16: the links a page gives to other sites are mostly new to a
# spider's link cache, and each cost a parse). The proof is conservative:
# whatever it does not cover goes to the full path, which gives the same
# answer (tests/shared/test_urlnorm_fast.py compares the two). It covers:
# - a lower-case scheme, then '//' and no user:password;
# - a host of lower-case labels of letters, digits and '-', the last one
#   starting with a letter (a last label that is a number makes the host an
#   IPv4 address, which the URL Standard rewrites: '127.1', '0x7f.1'), none
#   holding 'xn--' (punycode is checked, and may be refused); or an IPv4
#   address in its canonical dotted-decimal form;
# - no port, or a decimal one without leading zero, at most 65535, and
#   neither 80 nor 443 (a scheme's default port is dropped);
# - a path and query of characters the URL Standard's percent-encode sets
#   leave alone (URL Standard 4.4: unreserved and sub-delimiters, ':', '@',
#   '/'; the query neither "'" -- the special-query set encodes it), with no
#   '%' (escapes are rewritten here), no '\\' (a '/' in special URLs), no
#   whitespace, no '#', and no '/.' (dot segments are removed);
# - and no session id (_SESSION_HINT).
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_NORMAL_ABSOLUTE = re.compile(
    r"https?://"
    rf"((?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*|(?:{_OCTET}\.){{3}}{_OCTET})"  # host
    r"(?::([1-9][0-9]{0,4}))?"  # port
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?"  # path
    r"(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?]*)?"  # query
)
_DEFAULT_PORTS = ("80", "443")  # either, whatever the scheme: 'http://a:443' is rare, and parsed


def normal_absolute(url: str) -> str | None:
    """normalize(url) when `url` proves it by its characters alone (see
    above: an absolute http(s) URL already in its normal form), else None:
    then only normalize() can tell."""
    found = _NORMAL_ABSOLUTE.fullmatch(url)
    if found is None or len(url) >= limits.MAX_URL_LEN:
        return None
    host, port, path = found.groups()
    if port is not None and (port in _DEFAULT_PORTS or (len(port) == 5 and port > "65535")):
        return None
    if "xn--" in host or (path is not None and "/." in path) or ("=" in url and _SESSION_HINT.search(url)):
        return None
    if path is None:  # 'http://a.example?q' is 'http://a.example/?q'
        end = found.end(2 if port is not None else 1)
        return url[:end] + "/" + url[end:]
    return url


def normalize(url: str, base: str | None = None) -> str | None:
    """The canonical form of `url` (resolved against `base` if given).

    None when the result is not a usable http/https URL: unparseable,
    another scheme (javascript:, mailto:, data:, ftp: ...), no host, not
    printable ASCII, or longer than limits.MAX_URL_LEN.
    """
    if base is None and (fast := normal_absolute(url)) is not None:
        return fast
    return normalize_parsed(url, base)


def normalize_parsed(url: str, base: str | None = None) -> str | None:
    """normalize(url, base) always by ada-url's parse, without the string
    fast path of normal_absolute(): what that path is checked against."""
    if len(url) > limits.MAX_URL_LEN:
        return None
    try:
        # join_url/normalize_url return the href in one call: three times
        # cheaper than building a URL object and reading its attributes.
        href = ada_url.join_url(base, url) if base is not None else ada_url.normalize_url(url)
    except ValueError:
        return None
    if not href.startswith(SCHEMES):
        return None
    if "#" in href:
        href = href.partition("#")[0]
    if "@" in href:
        href = _drop_userinfo(href)
    if "%" in href:
        href = _ESCAPE.sub(_escape, href)
    if _SESSION_HINT.search(href):
        href = _strip_sessions(href)
    if len(href) > limits.MAX_URL_LEN or not href.isascii():
        return None
    if href.encode("ascii").translate(None, _PRINTABLE):
        return None
    return href


def _is_session(param: str) -> bool:
    if _QUERY_SESSION.match(param):
        return True
    name, _, value = param.partition("=")
    return name.lower() == "sid" and _TOKEN.fullmatch(value) is not None


def _strip_sessions(href: str) -> str:
    """`href` without session-id path and query parameters (see the opening comment)."""
    path, mark, query = href.partition("?")
    path = _PATH_SESSION.sub("", path)
    if query:
        kept = [p for p in query.split("&") if not _is_session(p)]
        query = "&".join(kept)
        mark = "?" if kept else ""
    return path + mark + query


def _drop_userinfo(href: str) -> str:
    parsed = ada_url.URL(href)
    if parsed.username or parsed.password:
        parsed.username = ""
        parsed.password = ""
    return parsed.href


# A reference made only of these characters, without dot segments, resolves
# to plain concatenation under WHATWG rules and needs no escaping: the fast
# path of BaseUrl.resolve. (No '%', no quote, no backslash, no whitespace.)
_PLAIN = re.compile(r"[A-Za-z0-9\-._~/?=&+,;:@!$()*]*")
# Whether a reference takes the fast path depends on the reference alone, and
# a site's pages repeat the same ones (menus, "/p/12.html"): the answers for
# the last PLAIN_REFS references are kept, so each is tested once, not once a
# page (issue 16: the test was most of a spider's link resolution). About
# 100 octets a reference: under 2 MB.
PLAIN_REFS = 16_384
# An OrderedDict: its oldest key is evicted in O(1) (next(iter()) on a dict
# scans the slots of earlier deletions: spider/outlinks.py).
_plain_refs: OrderedDict[str, int] = OrderedDict()  # ref -> _ROOTED, _RELATIVE, _OTHER or -N (N x '../'), oldest first
_ROOTED, _RELATIVE, _OTHER = 1, 2, 0
_UP = "../"
# A relative reference that climbs ('../../index.html', Javadoc's and
# Doxygen's usual link) resolves to the page's directory less one segment
# per '../' (never above the root: WHATWG's "shorten a path"), then the rest
# as a plain relative reference. Climbs deeper than this go to normalize().
MAX_UPS = 32
# An absolute link (http:// or https://, both slashes: the base plays no
# part, URL Standard) has one normal form whatever page it is on, and the
# same ones come back page after page (a site's links to other sites,
# navigation written in full): the normal forms of the last ABSOLUTE_REFS
# are kept, so each is worked out once, not on every page (issue 16: link
# resolution was 12 % of a spider worker's CPU). About 150 octets each: a
# few MB.
ABSOLUTE_REFS = 16_384
_absolute_refs: OrderedDict[str, str | None] = OrderedDict()  # ref -> normalize(ref), oldest first
_MISS = object()


def _kind(ref: str) -> int:
    """How BaseUrl.resolve joins `ref`: origin + ref, directory + ref,
    directory less N segments + the rest (-N), or normalize()."""
    ups = 0
    while ref.startswith(_UP, 3 * ups) and ups < MAX_UPS:
        ups += 1
    rest = ref[3 * ups :] if ups else ref
    if not (len(ref) < 1024 and (rest or ups) and "/." not in rest and _PLAIN.fullmatch(rest)
            and ("=" not in rest or not _SESSION_HINT.search(rest))):
        return _OTHER
    if not rest:
        return -ups  # '../../': a directory itself
    first = rest[0]
    if first == "/":
        return _ROOTED if rest[1:2] != "/" and not ups else _OTHER  # '//host/...' names another host
    if first == "." or first == "?" or ":" in rest:
        return _OTHER
    return -ups if ups else _RELATIVE


class BaseUrl:
    """A page's base URL, resolving its links: normalize(ref, base), faster.

    Most links on a page are plain relative paths ('/news/1.html',
    'item?id=3', '../../index.html'); those are joined by string operations, which WHATWG
    parsing would leave unchanged; absolute http(s) links come from the
    cache of their normal forms; everything else goes to normalize().
    """

    __slots__ = ("base", "origin", "directory")

    def __init__(self, base: str) -> None:
        self.base = normalize(base) or base
        scheme_end = self.base.find("//") + 2
        path_start = self.base.find("/", scheme_end)
        ok = self.base.startswith(SCHEMES) and path_start > 0
        self.origin = self.base[:path_start] if ok else None
        path = self.base.split("?", 1)[0]
        self.directory = path[: path.rfind("/") + 1] if ok else None

    def resolve_all(self, refs: Iterable[str]) -> list[str | None]:
        """[resolve(ref) for ref in refs], with the usual kinds of link
        joined in the loop (a call less a link: issue 16)."""
        origin, directory, resolve = self.origin, self.directory, self.resolve
        if origin is None:
            return [resolve(ref) for ref in refs]
        kinds = _plain_refs.get
        urls: list[str | None] = []
        add = urls.append
        for ref in refs:
            kind = kinds(ref)
            if kind == _ROOTED:
                add(origin + ref)
            elif kind == _RELATIVE and len(directory) + len(ref) <= limits.MAX_URL_LEN:  # type: ignore[arg-type]
                add(directory + ref)  # type: ignore[operator]
            else:
                add(resolve(ref))
        return urls

    def resolve(self, ref: str) -> str | None:
        """Same result as normalize(ref, base)."""
        if ref.startswith(SCHEMES):
            return _resolve_absolute(ref)
        if self.origin is not None:
            kind = _plain_refs.get(ref)
            if kind is None:
                kind = _plain_refs[ref] = _kind(ref)
                _evict(_plain_refs, PLAIN_REFS)
            if kind == _ROOTED:
                return self.origin + ref
            if kind == _RELATIVE:
                url = self.directory + ref
                if len(url) <= limits.MAX_URL_LEN:
                    return url
            elif kind < 0:
                directory = self.directory
                root = len(self.origin) + 1  # the directory's path is at least '/'
                for _ in range(-kind):
                    if len(directory) == root:
                        break
                    directory = directory[: directory.rfind("/", 0, len(directory) - 1) + 1]
                url = directory + ref[-3 * kind :]
                if len(url) <= limits.MAX_URL_LEN:
                    return url
        return normalize(ref, self.base)


def _resolve_absolute(ref: str) -> str | None:
    """normalize(ref) for an absolute http(s) link, kept for the next pages."""
    url = _absolute_refs.get(ref, _MISS)
    if url is _MISS:
        url = _absolute_refs[ref] = normalize(ref)
        _evict(_absolute_refs, ABSOLUTE_REFS)
    return url  # type: ignore[return-value]


def _evict(cache: OrderedDict, bound: int) -> None:
    """Drop `cache`'s oldest entries beyond `bound`."""
    while len(cache) > bound:  # a spider's parse thread evicts too, at the same time:
        try:  # the oldest may be gone already (the other thread evicted it)
            cache.popitem(last=False)
        except KeyError:
            pass  # look again: the bound holds whoever evicted


# URL Standard 4.4 (query state): the bytes of a query that are
# percent-encoded, besides every non-ASCII byte; others are written as-is.
_QUERY_SET = frozenset(b'\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f'
                       b'\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'
                       b' "#<>\'\x7f')
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _encode_run(encoding: str, match: re.Match[str]) -> str:
    # an unencodable character becomes '&#NNNN;' (the standard's "html" error mode)
    raw = match.group().encode(encoding, "xmlcharrefreplace")
    return "".join(f"%{b:02X}" if b >= 0x80 or b in _QUERY_SET else chr(b) for b in raw)


def encode_query(ref: str, encoding: str) -> str:
    """`ref` with the non-ASCII characters of its query percent-encoded in `encoding`.

    The URL Standard encodes a link's path as UTF-8 but its query in the
    document's encoding (docs/urls.md); ada-url only knows UTF-8, so a
    page's links are passed through this first when the page is not UTF-8.
    `encoding` is a Python codec name; UTF-8 leaves `ref` as it is.
    """
    if ref.isascii():
        return ref
    head, hash_, fragment = ref.partition("#")
    path, mark, query = head.partition("?")
    if not mark or query.isascii():
        return ref
    query = _NON_ASCII.sub(lambda m: _encode_run(encoding, m), query)
    return path + mark + query + hash_ + fragment


def host_of(url: str) -> str | None:
    """The host name (or IP literal) of a normalised URL."""
    try:
        return ada_url.URL(url).hostname or None
    except ValueError:
        return None
