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
_SESSION_NAMES = r"jsessionid|phpsessid|aspsessionid[a-z]*|sessionid|session_id|cfid|cftoken"
_SESSION_NAME = rf"(?:{_SESSION_NAMES})"
_QUERY_SESSION = re.compile(rf"(?i){_SESSION_NAME}=")
_PATH_SESSION = re.compile(rf"(?i);{_SESSION_NAME}=[^/;?]*")
_TOKEN = re.compile(r"[0-9A-Za-z]{32,}")
# The wire carries URLs as printable ASCII tokens without spaces.
_PRINTABLE = bytes(range(0x21, 0x7F))


def _escape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else "%" + match.group(1).upper()


# An absolute http(s) URL already in its normal form is its own normal form,
# whatever the base: proved by the string alone, without ada-url's parse.
# This is the one test of "already normal" in WRECK: the spider's absolute
# links (issue 16: the links a page gives to other sites are mostly new to a
# spider's link cache, and each cost a parse) and the urlserver's every
# link, seed and redirect (a spider is not trusted to have normalised them:
# normalize_parsed costs about 2 us, one anchored regex about 0.25 us) take
# it through normalize(), and urlserver/pagelinks.py through match_normal().
# It is conservative: whatever it does not accept goes to the parse, which
# gives the same answer (tests/shared/test_urlnorm_fast.py and
# tests/shared/test_urlnorm_normal.py compare the two). It accepts:
# - scheme http or https, lower-case, then '//' and no user:password;
# - a host of lower-case ASCII labels (letters, digits, '-', '_') whose last
#   label starts with a letter (a last label that is a number makes the host
#   an IPv4 address, which the URL Standard rewrites: '127.1', '0x7f.1'),
#   none starting 'xn--' (punycode is checked, and may be refused); or an
#   IPv4 address in its canonical dotted-decimal form;
# - no port, or a decimal one without leading zero, at most 65535, and not
#   the scheme's default (dropped);
# - a path that starts with '/' and has no segment starting with '.' (no dot
#   segments to remove), then an optional query: both of RFC 3986 unreserved
#   and sub-delim characters, ':', '@', '/' (the path also "'", which the
#   URL Standard's special-query set encodes, 4.4), '?' in the query, and
#   percent-escapes in upper-case hex that do not encode an unreserved
#   character (_escape would rewrite those); no '\\', whitespace or '#';
# - no session id that _strip_sessions would remove: no ';NAME=' in the path
#   and no query parameter 'NAME=' (NAME a session name above, in any case;
#   any 'sid=', where _is_session is stricter), checked only at ';', '?' and
#   '&', so ordinary URLs cost nothing more;
# - at most MAX_URL_LEN octets.
# An absolute URL without a path ('http://a.example', 'http://a.example?q')
# is taken when adding the '/' the URL Standard adds makes it one of these.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"(?:{_OCTET}\.){{3}}{_OCTET}"
# Possessive (++, *+): a label is taken whole with its dot and never given
# back, so a URL refused at its path or port fails at once (no backtracking
# into the host: 'https://a.example' without its '/' cost twice a match).
_LABEL = r"(?!xn--)[a-z0-9_-]++"
_NAME = rf"(?:{_LABEL}\.)*+(?!xn--)[a-z][a-z0-9_-]*+"
_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_NOT_DEFAULT = r"(?(s)(?!443(?![0-9]))|(?!80(?![0-9])))"  # https: not 443; http: not 80
# %XX in upper-case hex, except escapes of unreserved characters (- . 0-9 A-Z _ a-z ~).
_NORMAL_ESCAPE = r"%(?!2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])[0-9A-F]{2}"
_CHAR = r"A-Za-z0-9\-._~!$()*+,=:@"  # sub-delims but '&' and ';': checked for sessions
# the first-letter class fails most parameter names before the case-blind alternation runs
_SESSION = rf"(?=[JjPpAaSsCc])(?i:{_SESSION_NAMES}|sid)="
# Runs of plain characters are taken whole and never given back (possessive
# ++ and *+: the \Z after them decides), which halves the path's cost.
_PATH = rf"(?:[{_CHAR}'&]++|/(?!\.)|;(?!{_SESSION})|{_NORMAL_ESCAPE})*+"
_QUERY = rf"(?!{_SESSION})(?:[{_CHAR};/?]++|&(?!{_SESSION})|{_NORMAL_ESCAPE})*+"
_ORIGIN = rf"(http(?P<s>s)?://({_NAME}|{_IPV4})(?::{_NOT_DEFAULT}{_PORT})?)"
# Groups: 1 the origin, 3 the host name.
_NORMAL = re.compile(rf"(?=.{{1,{limits.MAX_URL_LEN}}}\Z){_ORIGIN}/(?!\.){_PATH}(?:\?{_QUERY})?\Z")
# The same without a path, and one octet shorter: the URL Standard adds '/'.
_PATHLESS = re.compile(rf"(?=.{{1,{limits.MAX_URL_LEN - 1}}}\Z){_ORIGIN}(?:\?{_QUERY})?\Z")

match_normal = _NORMAL.match
"""match_normal(url): a match (group 1 the origin, 3 the host name) only if
normalize(url) is `url` itself, proved by its characters (see above); else None."""


def is_normal(url: str) -> bool:
    """True only if normalize(url) is `url` itself, proved by its characters."""
    return _NORMAL.match(url) is not None


def _rooted(url: str) -> str | None:
    """`url` with the path '/' it lacks, when that is its normal form."""
    found = _PATHLESS.match(url)
    if found is None:
        return None
    end = found.end(1)
    return url[:end] + "/" + url[end:]


def normal_absolute(url: str) -> str | None:
    """normalize(url) when `url` proves it by its characters alone (see
    above: an absolute http(s) URL in its normal form, or lacking only the
    path '/'), else None: then only normalize_parsed() can tell."""
    return url if _NORMAL.match(url) is not None else _rooted(url)


def normalize(url: str, base: str | None = None) -> str | None:
    """The canonical form of `url` (resolved against `base` if given).

    None when the result is not a usable http/https URL: unparseable,
    another scheme (javascript:, mailto:, data:, ftp: ...), no host, not
    printable ASCII, or longer than limits.MAX_URL_LEN. An absolute URL
    already in its normal form is returned as it is, whatever `base`.
    """
    if _NORMAL.match(url) is not None:  # the usual link: one regex (normal_absolute, inlined)
        return url
    return _rooted(url) or normalize_parsed(url, base)


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
    # Only from the path on: a host may hold ';NAME=' too ('http://a;sid=1/'
    # is the host 'a;sid=1' to the URL Standard), and stripping there made
    # another host, or none ('https:///p'), which normalised again differs.
    start = href.find("/", href.find("//") + 2)  # ada-url's href: scheme://host[:port]/path
    origin, href = href[:start], href[start:]
    path, mark, query = href.partition("?")
    path = _PATH_SESSION.sub("", path)
    if query:
        kept = [p for p in query.split("&") if not _is_session(p)]
        query = "&".join(kept)
        mark = "?" if kept else ""
    return origin + path + mark + query


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


def _percent_encode(raw: bytes) -> str:
    return "".join(f"%{b:02X}" if b >= 0x80 or b in _QUERY_SET else chr(b) for b in raw)


def _encode_run(encoding: str, match: re.Match[str]) -> str:
    # URL Standard 1.3, "percent-encode after encoding": a character the
    # encoding has no bytes for is written '%26%23NNNN%3B' ('&#NNNN;' with its
    # three marks escaped: a form parser reads one value, not a new '&'
    # parameter and a '#' fragment); the bytes it has as the query set says
    text, out = match.group(), []
    while True:
        try:
            return "".join(out) + _percent_encode(text.encode(encoding))
        except UnicodeEncodeError as exc:  # the text before it encodes: the error is the first
            out += (_percent_encode(text[:exc.start].encode(encoding)),
                    *(f"%26%23{ord(c)}%3B" for c in text[exc.start:exc.end]))
            text = text[exc.end:]


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
